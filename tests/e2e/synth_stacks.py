#!/usr/bin/env python3
"""Folded stacks for browser_page_test.sh's large profile: N distinct stacks (default
100,000), sorted, the same for the same seed. A call graph of 20,000 functions with long
C++-, Java- and kernel-like names, each calling 2 to 8 others; a stack is a walk of depth
4 to 30 from one of 30 roots, the first levels shared (main -> run -> loop), with counts
spread like a profile's (a few heavy stacks, many light ones). A smaller cousin of the
benchmarks' generator (bench/flamegraph_bench.sh), kept here so the test needs nothing else.
Usage: synth_stacks.py [N] [SEED] > out.folded"""
import random
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
words = ("read write parse flush alloc free lookup insert hash sort merge encode decode "
         "send recv poll wait run step eval compile visit emit").split()


def name(i):
    r = rnd.random()
    w = rnd.choice(words)
    if r < 0.5:
        return f"app::engine::{w.capitalize()}{i}<std::string, long>::{rnd.choice(words)}_{w}"
    if r < 0.65:
        return f"{w}_{rnd.choice(words)}_{i}_[k]"
    if r < 0.8:
        return f"org/example/{w}/Svc{i}:::{rnd.choice(words)}"
    return f"{w}_{i}"


F = 20000
names = [name(i) for i in range(F)]
callees = [[rnd.randrange(F) for _ in range(rnd.randint(2, 8))] for _ in range(F)]
roots = [rnd.randrange(F) for _ in range(30)]
seen = {}
while len(seen) < n:
    depth = 4 + int(rnd.triangular(0, 26, 6))
    f = rnd.choice(roots)
    stack = [names[f]]
    for k in range(depth):
        f = rnd.choice(callees[f][:2] if k < 5 else callees[f])
        stack.append(names[f])
    s = ";".join(stack)
    if s not in seen:
        seen[s] = max(1, int(rnd.paretovariate(1.2)))
for s in sorted(seen):
    sys.stdout.write(f"{s} {seen[s]}\n")
