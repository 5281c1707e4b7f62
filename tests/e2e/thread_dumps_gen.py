#!/usr/bin/env python3
"""Random thread dumps for tests/e2e/thread_dumps_test.sh's differential check against
FlameGraph's scripts: lines built from each format's shapes (eu-stack, gdb, jstack), with
the odd cases their regexes meet (missing spaces or addresses, blanks in names, empty
names, thread names with numbers, states, the functions jstack.pl treats as waiting) and a
random character replaced in some lines.

Usage: thread_dumps_gen.py OUT_DIR COUNT   (writes OUT_DIR/{eu,gdb,jstack}-SEED.txt)
"""
import os
import random
import sys

NAMES = ['spin', 'main', 'a b', '', 'operator new(unsigned long)', 'std::map<int, int>::find',
         '??', '<signal handler called>', 'x;y', 'f0x1', '0xdead', '\u00e9']


def dump(r, fmt):
    def sp():
        return ' ' * r.choice([0, 1, 2, 2, 2, 3])

    def hexs():
        return ''.join(r.choice('0123456789abcdefAZ') for _ in range(r.randint(0, 8)))

    def mutate(s):
        if r.random() < 0.15 and s:
            i = r.randrange(len(s))
            s = s[:i] + r.choice([' ', '', '#', '0x', '\t', '(', '"']) + s[i + 1:]
        return s

    out = []
    for _ in range(r.randint(1, 80)):
        k = r.random()
        if fmt == 'eu':
            if k < 0.1:
                line = 'PID %d - process' % r.randint(0, 99)
            elif k < 0.25:
                line = 'TID %d:' % r.randint(0, 99)
            elif k < 0.85:
                line = '#%s%s0x%s%s%s' % (r.choice(['', '0', '1', '10', '23']), sp(), hexs(),
                                          r.choice([' ', '', '  ', ' - 1 ']),
                                          r.choice(NAMES) + r.choice(['', ' - /lib/x.so']))
            else:
                line = '    ' + r.choice(NAMES)
        elif fmt == 'gdb':
            if k < 0.1:
                line = 'Thread %d (Thread 0x7f (LWP %d) "p"):' % (r.randint(1, 9), r.randint(1, 99))
            elif k < 0.8:
                n = r.choice(NAMES)
                line = '#%s%s%s' % (r.choice(['', '0', '1', '12']), sp(), r.choice([
                    '0x%s in %s (a=1, b=2) at x.c:%d' % (hexs(), n, r.randint(1, 99)),
                    '%s (v=1) at x.c:9' % n, '0x%s in %s ()' % (hexs(), n), n,
                    '0x%s in %s () from /lib/libc.so.6' % (hexs(), n)]))
            elif k < 0.9:
                line = ''
            else:
                line = r.choice(['[Inferior 1 (process 5) detached]', '34\t  x = 1;', '[New LWP 5]'])
        else:
            if k < 0.12:
                line = '"%s%s" #%d prio=5' % (
                    r.choice(['pool-1-thread', 'main', 'C2 CompilerThread', 'Signal Dispatcher',
                              'x-y', '']), r.choice(['', '-3', '-', '-12a']), r.randint(1, 30))
            elif k < 0.25:
                line = '   java.lang.Thread.State: %s' % r.choice(
                    ['RUNNABLE', 'WAITING (parking)', 'TIMED_WAITING', 'RUNNABLE '])
            elif k < 0.7:
                line = '%sat %s(%s)' % (r.choice(['\t', '  ', '', '\t ']), r.choice(
                    ['A.spin', 'sun.nio.ch.EPoll.wait', 'x.epollWait', 'java.net.Socket.accept0',
                     'y.socketRead0', 'z.socketAccept', 'a b', 'A$1.run']), 'A.java:4')
            elif k < 0.9:
                line = ''
            else:
                line = r.choice(['\t- locked <0x1>', '#comment', 'JNI global references: 5',
                                 'Full thread dump X:', 'Threads class SMR info:'])
        out.append(mutate(line))
    return '\n'.join(out) + '\n'


def main():
    out_dir, count = sys.argv[1], int(sys.argv[2])
    for fmt in ('eu', 'gdb', 'jstack'):
        for seed in range(count):
            with open(os.path.join(out_dir, '%s-%d.txt' % (fmt, seed)), 'w', encoding='utf-8') as f:
                f.write(dump(random.Random(seed), fmt))


main()
