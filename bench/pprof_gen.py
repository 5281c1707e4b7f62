#!/usr/bin/env python3
"""Writes a large pprof profile.proto (gzipped) for bench/pprof_bench.sh: SAMPLES samples
of stacks 8 to 40 deep, walks down a random call tree of 2 x FUNCTIONS locations (each
calling up to 6 others; every fourth with an inlined function), two sample types (samples/count, cpu/nanoseconds) and a
label on each sample, as Go's CPU profiles have. Deterministic (seeded).
Usage: pprof_gen.py OUT.pb.gz [SAMPLES] [FUNCTIONS]"""
import gzip
import random
import sys


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(tag, wire):
    return varint(tag << 3 | wire)


def ld(tag, body):
    return field(tag, 2) + varint(len(body)) + body


def vi(tag, n):
    return field(tag, 0) + varint(n)


def main():
    out = sys.argv[1]
    samples = int(sys.argv[2]) if len(sys.argv) > 2 else 300000
    functions = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    rng = random.Random(42)
    strings = ["", "samples", "count", "cpu", "nanoseconds", "worker", "/usr/bin/server"]
    parts = []
    parts.append(ld(1, vi(1, 1) + vi(2, 2)))
    parts.append(ld(1, vi(1, 3) + vi(2, 4)))
    parts.append(ld(3, vi(1, 1) + vi(2, 0x400000) + vi(3, 0x9000000) + vi(5, 6)))
    for f in range(1, functions + 1):
        strings.append("pkg%d.(*Type%d).Method%d" % (f % 97, f % 1013, f))
        parts.append(ld(5, vi(1, f) + vi(2, len(strings) - 1)))
    labels = []
    for w in range(8):
        strings.append("w%d" % w)
        labels.append(ld(3, vi(1, 5) + vi(2, len(strings) - 1)))
    locations = functions * 2
    for loc in range(1, locations + 1):
        f = rng.randrange(1, functions + 1)
        lines = ld(4, vi(1, f) + vi(2, loc % 500))
        if loc % 4 == 0:
            lines = ld(4, vi(1, rng.randrange(1, functions + 1)) + vi(2, 1)) + lines
        parts.append(ld(4, vi(1, loc) + vi(2, 1) + vi(3, 0x400000 + 16 * loc) + lines))
    # Stacks are walks down a random call tree (each location calls up to 6 others), as a
    # program's are: distinct stacks that share their callers' prefixes.
    calls = {}
    for _ in range(samples):
        stack, loc = [], 1
        for _ in range(rng.randrange(8, 41)):
            stack.append(loc)
            kids = calls.setdefault(loc, [rng.randrange(1, locations + 1)
                                          for _ in range(rng.randrange(1, 7))])
            loc = rng.choice(kids)
        stack.reverse()  # leaf first
        locs = b"".join(varint(x) for x in stack)
        n = rng.randrange(1, 5)
        values = varint(n) + varint(n * 10000000)
        parts.append(ld(2, ld(1, locs) + ld(2, values) + rng.choice(labels)))
    parts.append(vi(12, 10000000))
    parts.append(ld(11, vi(1, 3) + vi(2, 4)))
    for s in strings:
        parts.append(ld(6, s.encode()))
    with gzip.open(out, "wb", compresslevel=1) as f:
        f.write(b"".join(parts))


main()
