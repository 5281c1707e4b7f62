/*
 * unwind_prog.c - a CPU-bound program whose stacks only DWARF unwinding recovers.
 *
 * Built without frame pointers (-O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls),
 * linked against libunwind_lib.so (unwind_lib.c). Each round runs every phase below for
 * about the same time; every phase ends in a function that burns CPU, so samples land in
 * it with the whole path above it on the stack.
 *
 *   phase   path (root -> leaf)                                        what it exercises
 *   alpha   main;run;top_a;mid_b;leaf_alpha                            a frameless leaf: fp mode
 *                                                                      loses its caller mid_b
 *   beta    main;run;top_a;mid_b;hot_beta;inl_mix                      inl_mix inlined into hot_beta
 *   gamma   main;run;top_c;big_frame;leaf_gamma                        a 12 KiB frame: complete
 *                                                                      with a 16 KiB stack copy,
 *                                                                      cut at 8 KiB
 *   delta   main;run;recurse x REC_DEPTH;leaf_delta                    recursion
 *   lib     main;run;call_lib;lib_spin (libunwind_lib.so)              a call through the PLT
 *   plt     main;run;call_tiny;lib_tiny@plt / lib_tiny                 samples inside PLT stubs
 *   signal  main;run;signal_site;...raise...;__restore_rt;on_signal;sig_leaf
 *                                                                      a signal handler frame
 *   vdso    main;run;call_vdso;clock_gettime;... (the vdso)            code mapped by the kernel
 *
 * Usage: unwind_prog [SECONDS]   (default 1.0)
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define REC_DEPTH 20
#define SPIN 200000L

long lib_spin(long n);
long lib_tiny(long x);

volatile long sink;

NOINLINE long leaf_alpha(long n)
{
    unsigned long acc = 1;
    for (long i = 0; i < n; i++) acc = (acc * 6364136223846793005UL) ^ (acc >> 29) ^ (unsigned long)i;
    return (long)acc;
}

static inline __attribute__((always_inline)) long inl_mix(long n, long seed)
{
    long acc = seed;
    for (long i = 0; i < n; i++) {
        acc ^= acc << 13;
        acc ^= acc >> 7;
        acc ^= acc << 17;
    }
    return acc;
}

NOINLINE long hot_beta(long n)
{
    long r = inl_mix(n, n | 1);
    sink = r;
    return r + 1;
}

NOINLINE long mid_b(long n, int which)
{
    long r = which ? hot_beta(n) : leaf_alpha(n);
    sink = r;
    return r;
}

NOINLINE long top_a(long n, int which)
{
    long r = mid_b(n, which);
    sink = r;
    return r;
}

NOINLINE long leaf_gamma(volatile char* buf, long n)
{
    long acc = buf[0];
    for (long i = 0; i < n; i++) acc = acc * 31 + buf[i & 4095];
    return acc;
}

NOINLINE long big_frame(long n)
{
    volatile char buf[12288];
    memset((char*)buf, 1, sizeof buf);
    long r = leaf_gamma(buf, n);
    sink = r + buf[100];
    return r;
}

NOINLINE long top_c(long n)
{
    long r = big_frame(n);
    sink = r;
    return r;
}

NOINLINE long leaf_delta(long n)
{
    unsigned long acc = 7;
    for (long i = 0; i < n; i++) acc = (acc * 0x9E3779B97F4A7C15UL) ^ (acc >> 31) ^ (unsigned long)i;
    return (long)acc;
}

NOINLINE long recurse(int depth, long n)
{
    long r = depth <= 1 ? leaf_delta(n) : recurse(depth - 1, n);
    sink = r;
    return r + depth;
}

NOINLINE long call_lib(long n)
{
    long r = lib_spin(n);
    sink = r;
    return r;
}

NOINLINE long call_tiny(long n)
{
    long acc = 0;
    for (long i = 0; i < 2 * n; i++) acc += lib_tiny(i);
    return acc;
}

static volatile long signal_work;

NOINLINE long sig_leaf(long n)
{
    unsigned long acc = 3;
    for (long i = 0; i < n; i++) acc = (acc * 2862933555777941757UL) ^ (acc >> 27) ^ (unsigned long)i;
    return (long)acc;
}

NOINLINE void on_signal(int sig)
{
    (void)sig;
    signal_work = sig_leaf(signal_work);
}

NOINLINE long signal_site(long n)
{
    signal_work = n;
    raise(SIGUSR1);
    return signal_work;
}

NOINLINE long call_vdso(long n)
{
    struct timespec ts;
    long acc = 0;
    for (long i = 0; i < n / 64; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        acc += ts.tv_nsec;
    }
    return acc;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE void run(double seconds)
{
    double end = now() + seconds;
    do {
        sink = top_a(SPIN, 0);
        sink = top_a(SPIN, 1);
        sink = top_c(SPIN);
        sink = recurse(REC_DEPTH, SPIN);
        sink = call_lib(SPIN);
        sink = call_tiny(SPIN);
        sink = signal_site(SPIN);
        sink = call_vdso(SPIN);
    } while (now() < end);
}

int main(int argc, char** argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, NULL);
    run(seconds);
    return 0;
}
