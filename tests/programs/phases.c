/*
 * phases.c - a CPU loop in two phases, for time-ordered folds and time slices: first
 * phase_one() for SECONDS/2, then phase_two() for SECONDS/2, on the main thread.
 *
 * Usage: phases [SECONDS]   (default 0.6)
 * Build: cc -O1 -fno-omit-frame-pointer -g -o phases phases.c
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <time.h>

static volatile unsigned sink;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin_until(double end)
{
    unsigned acc = 1;
    while (now_s() < end) {
        for (int i = 0; i < 10000; i++) acc = acc * 1664525u + 1013904223u;
    }
    sink = acc;
}

__attribute__((noinline)) void phase_one(double seconds) { spin_until(now_s() + seconds); sink++; }

__attribute__((noinline)) void phase_two(double seconds) { spin_until(now_s() + seconds); sink++; }

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.6;
    if (!(seconds > 0)) return 2;
    phase_one(seconds / 2);
    phase_two(seconds / 2);
    return 0;
}
