/*
 * unwind_lib.c - the shared library of unwind_prog.c (libunwind_lib.so), reached through
 * the program's PLT. Built like the program: -O2 -g -fomit-frame-pointer.
 */
#define NOINLINE __attribute__((noinline))

NOINLINE long lib_spin(long n)
{
    unsigned long acc = 5;
    for (long i = 0; i < n; i++) acc = (acc * 1103515245UL) ^ (acc >> 11) ^ (unsigned long)i;
    return (long)acc;
}

/* Nearly empty, and called in a tight loop: a good share of the samples of that loop land
 * in the PLT stub that leads here. */
NOINLINE long lib_tiny(long x)
{
    return x ^ (x >> 3);
}
