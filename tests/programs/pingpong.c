/*
 * pingpong.c - two threads that hand a byte back and forth through two pipes, blocking on
 * every read: a workload that switches context tens of thousands of times a second, for
 * bench/offcpu_bench.sh (what recording every switch costs).
 *
 * Usage: pingpong [SECONDS [ROUND_TRIPS]]   (default 2.0, no limit): stops after SECONDS or
 * ROUND_TRIPS, whichever comes first; prints the round trips made and their rate. Pinned to
 * one CPU (taskset -c 0), a round trip is two context switches, a count tests can check.
 * Build: cc -O2 -fno-omit-frame-pointer -g -pthread -o pingpong pingpong.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int there[2], back[2];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void echo_byte(void)
{
    char c;
    if (read(there[0], &c, 1) != 1) pthread_exit(NULL);
    if (write(back[1], &c, 1) != 1) abort();
}

static void *echo(void *arg)
{
    (void)arg;
    for (;;) echo_byte();
    return NULL;
}

__attribute__((noinline)) static void round_trip(void)
{
    char c = 'x';
    if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1) abort();
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    unsigned long limit = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
    if (!(seconds > 0) || pipe(there) != 0 || pipe(back) != 0) return 2;
    pthread_t t;
    pthread_create(&t, NULL, echo, NULL);
    double start = now_s(), end = start + seconds, t_now = start;
    unsigned long n = 0;
    while (t_now < end && (limit == 0 || n < limit)) {
        unsigned long batch = limit && limit - n < 256 ? limit - n : 256;
        for (unsigned long i = 0; i < batch; i++) round_trip();
        n += batch;
        t_now = now_s();
    }
    close(there[1]);
    pthread_join(t, NULL);
    printf("pingpong: %lu round trips in %.2f s, %.0f a second\n", n, t_now - start,
           (double)n / (t_now - start));
    return 0;
}
