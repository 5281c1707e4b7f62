/*
 * callpath.c - deterministic CPU-bound program with a known call tree.
 *
 * Used by the pf record tests and the demo capture.  Expected call tree
 * (frame-pointer unwinding, perf record -g):
 *
 *   main -> work_a -> spin   ~75% of CPU time
 *   main -> work_b -> spin   ~25% of CPU time
 *
 * Each round calls work_a() three times and work_b() once, with the same
 * amount of work per call, so the split is 3:1 by construction.
 *
 * Usage: callpath [SECONDS]   (default 1.0)
 *
 * Build: cc -O1 -fno-omit-frame-pointer -g -o callpath callpath.c
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime with -std=c99/c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Iterations of spin() per work_X() call; small enough that one round is
 * well under a millisecond so the split is accurate for short runs. */
#define SPIN_ITERS 20000u
/* Rounds between clock checks. */
#define ROUNDS_PER_CHECK 16u

static volatile unsigned sink;

__attribute__((noinline)) unsigned spin(unsigned n)
{
    volatile unsigned acc = 0x9e3779b9u;
    for (unsigned i = 0; i < n; i++) {
        acc = acc * 1664525u + 1013904223u;
        acc ^= acc >> 13;
    }
    return acc;
}

__attribute__((noinline)) void work_a(void)
{
    /* The store after the call keeps this from becoming a tail call. */
    sink += spin(SPIN_ITERS);
}

__attribute__((noinline)) void work_b(void)
{
    sink += spin(SPIN_ITERS);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double duration = 1.0;
    if (argc > 1) {
        char *end = NULL;
        duration = strtod(argv[1], &end);
        if (end == argv[1] || *end != '\0' || !(duration >= 0.0)) {
            fprintf(stderr, "usage: %s [SECONDS]\n", argv[0]);
            return 2;
        }
    }

    const double deadline = now_seconds() + duration;
    unsigned long rounds = 0;
    do {
        for (unsigned r = 0; r < ROUNDS_PER_CHECK; r++) {
            work_a();
            work_a();
            work_a();
            work_b();
        }
        rounds += ROUNDS_PER_CHECK;
    } while (now_seconds() < deadline);

    printf("callpath: %lu rounds in %.2f s (checksum %u)\n",
           rounds, duration, (unsigned)sink);
    return 0;
}
