#!/usr/bin/env python3
"""Writes `perf script` text in which no stack repeats, for bench/script_fold_bench.sh: SAMPLES
samples, each a distinct walk (depth 4 to 40) down a random call graph of FUNCTIONS functions
(C++, C, kernel and Rust-like names, in a few dsos), leaf first as perf prints them, with
addresses and offsets that vary from sample to sample as in a real capture, and event lines of
a few comms and threads. Deterministic (seeded). The worst case for a fold that caches whole
samples: every sample is new, only its frames repeat.
Usage: perf_script_gen.py OUT [SAMPLES] [FUNCTIONS]"""
import random
import sys


def main():
    out = sys.argv[1]
    samples = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    nfunc = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    rnd = random.Random(29)
    words = ("read write parse flush alloc free lookup insert hash sort merge encode decode "
             "send recv poll wait run step eval compile visit emit").split()
    spaces = ["std", "app::engine", "boost::asio::detail", "(anonymous namespace)", "folly",
              "v8::internal"]
    targs = ["", "<int>", "<std::string, std::vector<long> >", "<long, double>", "<T*>"]
    dsos = ["/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/app",
            "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", "/usr/lib/libfolly.so.0"]
    funcs = []
    for i in range(nfunc):
        r = rnd.random()
        if r < 0.45:
            name = (f"{rnd.choice(spaces)}::{rnd.choice(words).capitalize()}{i}"
                    f"{rnd.choice(targs)}::{rnd.choice(words)}_{rnd.choice(words)}(long, int)")
            dso = rnd.choice(dsos)
        elif r < 0.65:
            name, dso = f"{rnd.choice(words)}_{rnd.choice(words)}_{i}", "[kernel.kallsyms]"
        elif r < 0.75:
            name = f"_ZN4core3ptr{i}drop_in_place$LT$alloc..vec..Vec$LT$u8$GT$$GT$17h0123456789abcdef"
            dso = "/usr/bin/rustapp"
        elif r < 0.8:
            name, dso = "[unknown]", "[unknown]"
        else:
            name, dso = f"{rnd.choice(words)}_{i}", rnd.choice(dsos)
        funcs.append((name, dso, rnd.randrange(0x400000, 0x7fffffff) & ~0xf))
    callees = [[rnd.randrange(nfunc) for _ in range(rnd.randint(2, 12))] for _ in range(nfunc)]
    roots = [rnd.randrange(nfunc) for _ in range(50)]
    comms = ["cc1plus", "python3", "java", "node", "perl", "gzip", "sort", "postgres"]
    seen = set()
    t = 1000.0
    with open(out, "w") as f:
        while len(seen) < samples:
            depth = 4 + int(rnd.triangular(0, 36, 10))
            at = rnd.choice(roots)
            stack = [at]
            for _ in range(depth):
                at = rnd.choice(callees[at])
                stack.append(at)
            key = tuple(stack)
            if key in seen:
                continue
            seen.add(key)
            comm = rnd.choice(comms)
            pid = 1000 + comms.index(comm)
            t += 0.000513
            lines = [f"{comm} {pid}/{pid + rnd.randrange(4)} [{rnd.randrange(2):03d}] "
                     f"{t:.6f}:    1001001 cpu-clock:ppp: "]
            for fn in reversed(stack):
                name, dso, base = funcs[fn]
                off = rnd.randrange(1, 0x400)
                if name == "[unknown]":
                    lines.append(f"\t{base + off:16x} [unknown] ([unknown])")
                else:
                    lines.append(f"\t{base + off:16x} {name}+0x{off:x} ({dso})")
            f.write("\n".join(lines))
            f.write("\n\n")


if __name__ == "__main__":
    main()
