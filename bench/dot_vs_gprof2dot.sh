#!/usr/bin/env bash
# pf-dot against gprof2dot (not a Debian package: set GPROF2DOT=/path/to/gprof2dot.py).
# Compares every function's total % on the same perf script text with
# `gprof2dot -f perf --total=callstacks` (which weighs each sample 1: pf-dot --weight=samples),
# and times both. Usage: bench/dot_vs_gprof2dot.sh PERF_SCRIPT_TEXT
set -u -o pipefail
in=${1:?usage: $0 PERF_SCRIPT_TEXT}
repo=$(cd "$(dirname "$0")/.." && pwd)
PF_DOT=${PF_DOT:-$repo/build/bin/pf-dot}
G2D=${GPROF2DOT:-$(command -v gprof2dot || true)}
[ -n "$G2D" ] || { echo "gprof2dot not found (set GPROF2DOT)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
s=$(date +%s.%N); python3 "$G2D" -f perf --total=callstacks -n0 -e0 "$in" >"$work/g.dot" 2>"$work/g.err"
rc=$?; e=$(date +%s.%N)
g=$(echo "$e - $s" | bc)
# gprof2dot's recursive cycle search overflows Python's stack on deep or long recorded
# stacks; report the time it took to fail.
[ $rc -eq 0 ] || echo "gprof2dot FAILED after ${g}s: $(tail -1 "$work/g.err")"
s=$(date +%s.%N); "$PF_DOT" -q --weight=samples -n0 -e0 --nodecount=1000000 "$in" >"$work/p.dot"; e=$(date +%s.%N)
p=$(echo "$e - $s" | bc)
echo "gprof2dot ${g}s, pf-dot ${p}s: $(echo "$g / $p" | bc -l | cut -c1-5)x"
python3 - "$work/g.dot" "$work/p.dot" <<'PY'
import re, sys
def labels(path):
    for m in re.finditer(r'label="([^"]*)"', open(path).read()):
        yield m.group(1).split('\\n')
g, p = {}, {}
for parts in labels(sys.argv[1]):   # gprof2dot: module, function, total%, (self%)
    if len(parts) == 4 and parts[2].endswith('%'):
        g[(parts[0], parts[1])] = g.get((parts[0], parts[1]), 0) + float(parts[2].rstrip('%'))
for parts in labels(sys.argv[2]):   # pf-dot: the same (no module when a name has several)
    if len(parts) == 4 and parts[2].endswith('%'):
        p[(parts[0], parts[1])] = float(parts[2].rstrip('%'))
common = set(g) & set(p)
bad = [(n, g[n], p[n]) for n in common if abs(g[n] - p[n]) > 0.011]
print(f"{len(common)} functions (module and name) in both; {len(set(g) - set(p))} only in "
      f"gprof2dot's graph, {len(set(p) - set(g))} only in pf-dot's; "
      f"{len(bad)} totals differ by more than rounding")
for b in sorted(bad, key=lambda t: -abs(t[1] - t[2]))[:10]:
    print("  ", b)
sys.exit(1 if bad else 0)
PY
