/*
 * waits.c - threads that wait for known times, for off-CPU and wall-clock profiles.
 *
 * Four threads start together; each does one thing and ends:
 *
 *   pipe_reader   blocks in read(2) on a pipe for 300 ms (main writes to it then)
 *   sleeper       nanosleep(2) for 150 ms
 *   locker        waits 100 ms for a mutex that `holder` holds
 *   spinner       a 200 ms CPU loop
 *
 * `holder` takes the mutex before the threads start, sleeps 100 ms holding it, then lets
 * it go (so it also sleeps 100 ms itself, in hold_lock). main sleeps 300 ms, then writes the
 * byte the reader waits for, and joins the threads. Expected off-CPU time per stack
 * (the functions below are noinline, so each wait has its own caller):
 *
 *   read_pipe      ~300 ms     (in read)
 *   take_nap       ~150 ms     (in nanosleep)
 *   take_lock      ~100 ms     (in the mutex wait, futex)
 *   hold_lock      ~100 ms     (in nanosleep, holding the lock)
 *   spin_for       ~200 ms on the CPU, and nothing much off it
 *
 * Each thread measures its wait (CLOCK_MONOTONIC), and main prints the five on stderr at
 * the end ("waits: read_pipe 300.2 ms"): a loaded machine stretches the waits.
 *
 * Usage: waits [SCALE]   (every time multiplied by SCALE, default 1.0)
 * Build: cc -O1 -fno-omit-frame-pointer -g -pthread -o waits waits.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double scale = 1.0;
static int pipe_fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static volatile unsigned sink;
/* Each wait as the thread measured it (ms), printed at the end: a loaded machine stretches
 * the waits, and a profile is checked against what the program saw. */
static double measured[5];
static const char *const measured_name[5] = {"read_pipe", "take_nap", "take_lock", "hold_lock",
                                             "spin_for"};

static void sleep_ms(double ms)
{
    struct timespec ts;
    double ns = ms * scale * 1e6;
    ts.tv_sec = (time_t)(ns / 1e9);
    ts.tv_nsec = (long)(ns - (double)ts.tv_sec * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void read_pipe(void)
{
    char c;
    if (read(pipe_fds[0], &c, 1) != 1) abort();
}

__attribute__((noinline)) void take_nap(void) { sleep_ms(150); }

__attribute__((noinline)) void take_lock(void)
{
    pthread_mutex_lock(&lock);
    pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) void hold_lock(void)
{
    sleep_ms(100);
    pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) void spin_for(double ms)
{
    double end = now_ms() + ms * scale;
    unsigned acc = 1;
    while (now_ms() < end) {
        for (int i = 0; i < 10000; i++) acc = acc * 1664525u + 1013904223u;
    }
    sink = acc;
}

static void *pipe_reader(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    double t = now_ms();
    read_pipe();
    measured[0] = now_ms() - t;
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    double t = now_ms();
    take_nap();
    measured[1] = now_ms() - t;
    return NULL;
}

static void *locker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    double t = now_ms();
    take_lock();
    measured[2] = now_ms() - t;
    return NULL;
}

static void *spinner(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    double t = now_ms();
    spin_for(200);
    measured[4] = now_ms() - t;
    return NULL;
}

static void *holder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);  /* before the others start: the locker finds it held */
    pthread_barrier_wait(&start);
    double t = now_ms();
    hold_lock();
    measured[3] = now_ms() - t;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) scale = atof(argv[1]);
    if (!(scale > 0) || pipe(pipe_fds) != 0) return 2;
    pthread_barrier_init(&start, NULL, 6);
    void *(*bodies[])(void *) = {holder, pipe_reader, sleeper, locker, spinner};
    pthread_t threads[5];
    for (int i = 0; i < 5; i++) pthread_create(&threads[i], NULL, bodies[i], NULL);
    pthread_barrier_wait(&start);
    sleep_ms(300);
    if (write(pipe_fds[1], "x", 1) != 1) return 1;
    for (int i = 0; i < 5; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < 5; i++) fprintf(stderr, "waits: %s %.1f ms\n", measured_name[i], measured[i]);
    return 0;
}
