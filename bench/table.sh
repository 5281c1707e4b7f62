#!/usr/bin/env bash
# The side-by-side table of bench/README.md ("pf and its peers, side by side"): each row
# runs pf and its strongest peer on the same input, in turn, RUNS times each (default 3), and
# prints the best CPU time of each (perf stat's task-clock, children included), the peak RSS
# (GNU time) of each and their ratios, as one markdown table on stdout. Not a ctest test: it
# takes minutes.
#
# Usage: bench/table.sh [--no-fleet]
#   --no-fleet  leave out the rows of 100 host files (2.9 GB of input to make and read)
# Inputs are made once and cached in ${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench/: synthetic
# folded stacks (../shared/bench/synth_folded.py), shuffled with a fixed seed; files of a
# fleet drawn from a pool of stacks; the perf script texts of bench/script_fold_bench.sh; and
# a system-wide recording of the same workload. Peers: inferno (INFERNO_DIR, default the
# directory of inferno-flamegraph on PATH, else ../peers/bin), perf, gprof2dot (GPROF2DOT).
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FLEET=1
[ "${1:-}" = --no-fleet ] && FLEET=0
RUNS=${RUNS:-3}
die() { echo "table.sh: $*" >&2; exit 1; }
B=${PF_BIN:-$ROOT/build/bin}
INF=${INFERNO_DIR:-$(dirname "$(command -v inferno-flamegraph || echo "$ROOT/../peers/bin/x")")}
G2D=${GPROF2DOT:-$ROOT/../peers/gprof2dot/gprof2dot.py}
SYNTH=$ROOT/../shared/bench/synth_folded.py
for t in "$B/pf-flamegraph" "$INF/inferno-flamegraph" /usr/bin/time; do
  [ -x "$t" ] || die "missing $t"
done
[ -f "$SYNTH" ] || die "missing $SYNTH"
C=${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench
mkdir -p "$C" || die "cannot create $C"

# Inputs.
if [ ! -s "$C/t300k.random.folded" ]; then
  python3 "$SYNTH" 300000 1 >"$C/t300k.sorted.folded" || die "synth failed"
  shuf --random-source=<(yes 1) "$C/t300k.sorted.folded" >"$C/t300k.random.folded"
  awk 'NR % 10 != 3 { $NF = int($NF * 1.3) + 1; print }' "$C/t300k.random.folded" \
    >"$C/t300k.random_b.folded"
fi
if [ $FLEET = 1 ] && [ ! -s "$C/fleet/host100.folded" ]; then
  mkdir -p "$C/fleet"
  python3 "$SYNTH" 200000 3 >"$C/fleet/pool"
  for i in $(seq 1 100); do
    shuf -n 50000 --random-source=<(yes "$i") "$C/fleet/pool" >"$C/fleet/host$i.folded"
  done
  rm -f "$C/fleet/pool"
fi
if [ ! -s "$C/script-fold-capture.txt" ] || [ ! -s "$C/script-fold-norepeat.txt" ]; then
  "$ROOT/bench/script_fold_bench.sh" --runs 1 >/dev/null || die "script_fold_bench.sh failed"
fi
if [ ! -s "$C/table-capture.data" ]; then
  perf record -q -a -g -F 999 -o "$C/table-capture.data" -- bash -c '
    for i in 1 2 3; do g++ -std=c++20 -O2 -I"$0/common" -fsyntax-only "$0/common/formats/perf_script.cpp"
      python3 -c "import json; [json.loads(json.dumps(list(range(20000)))) for _ in range(200)]"
      perl -e "my %h; \$h{\$_ % 977} .= \"x\" for 1..2000000"
      seq 1 2000000 | sort -R | gzip -6 >/dev/null; done' "$ROOT" >/dev/null 2>&1 ||
    die "perf record failed"
fi

cpu() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { printf "%.3f", $1 / 1000 }'; }
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b) ? a : b }'; }
row() {  # NAME PF-COMMAND... -- PEER-COMMAND...
  local name=$1 pf=() peer=()
  shift
  while [ "$1" != -- ]; do pf+=("$1"); shift; done
  shift
  peer=("$@")
  local p=1e9 q=1e9 pm qm i
  # The inputs into the page cache first, read as any reader reads them (this VM's kernel
  # reclaims pages left idle for minutes: a cold first run took 4x as long).
  for i in "${pf[@]}"; do [ -f "$i" ] && cat "$i" >/dev/null; done
  for ((i = 0; i < RUNS; i++)); do  # in turn, so a slow spell of the machine hits both
    p=$(min "$p" "$(cpu "${pf[@]}")")
    q=$(min "$q" "$(cpu "${peer[@]}")")
  done
  pm=$(rss "${pf[@]}") qm=$(rss "${peer[@]}")
  awk -v n="$name" -v p="$p" -v q="$q" -v pm="$pm" -v qm="$qm" 'BEGIN {
    printf "| %s | %.3f s, %d MB | %.3f s, %d MB | %.1fx | %.1fx |\n", n, p, pm / 1024, q, qm / 1024,
      q / p, qm / pm }'
}

echo "| work | pf: CPU, peak RSS | peer: CPU, peak RSS | CPU ratio | memory ratio |"
echo "|---|---|---|---|---|"
R=$C/t300k.random.folded S=$C/t300k.sorted.folded
row "flame graph, 300k stacks, random order (inferno-flamegraph)" "$B/pf-flamegraph" "$R" -- "$INF/inferno-flamegraph" "$R"
row "flame graph, 300k stacks, sorted (inferno-flamegraph)" "$B/pf-flamegraph" "$S" -- "$INF/inferno-flamegraph" "$S"
row "pf-diff, two 300k-stack files, random order (inferno-diff-folded)" "$B/pf-diff" "$R" "$C/t300k.random_b.folded" -- "$INF/inferno-diff-folded" "$R" "$C/t300k.random_b.folded"
if [ $FLEET = 1 ]; then
  row "flame graph of 100 host files x 50k stacks (inferno-flamegraph)" "$B/pf-flamegraph" "$C"/fleet/host*.folded -- "$INF/inferno-flamegraph" "$C"/fleet/host*.folded
  row "pf-collapse merge of the 100 host files (inferno-flamegraph reading them)" "$B/pf-collapse" "$C"/fleet/host*.folded -- "$INF/inferno-flamegraph" "$C"/fleet/host*.folded
fi
T=$C/script-fold-capture.txt N=$C/script-fold-norepeat.txt D=$C/table-capture.data
row "fold perf script text of a capture, 1 thread (inferno-collapse-perf)" "$B/pf-collapse" -j1 "$T" -- "$INF/inferno-collapse-perf" -n 1 "$T"
row "fold perf script text, no stack repeats, 1 thread (inferno-collapse-perf)" "$B/pf-collapse" -j1 "$N" -- "$INF/inferno-collapse-perf" -n 1 "$N"
row "fold a recording (perf script \\\\| inferno-collapse-perf)" "$B/pf-collapse" "$D" -- sh -c "perf script -i '$D' 2>/dev/null | '$INF/inferno-collapse-perf'"
[ -f "$G2D" ] && row "call graph of the capture's text (gprof2dot -f perf)" "$B/pf-dot" -q "$T" -- python3 "$G2D" -f perf "$T"
# gprof2dot's cycle search recurses once per function on a path: on 300k random stacks it
# needs a deeper stack than Python's default (RecursionError), and a minute a run (RUNS=1).
if [ -f "$G2D" ]; then
  RUNS=1 row "call graph, 300k stacks, random order (gprof2dot -f collapse)" "$B/pf-dot" -q "$R" -- \
    python3 -c "import runpy, sys, threading
sys.setrecursionlimit(1 << 20); threading.stack_size(1 << 30)
sys.argv = ['gprof2dot', '-f', 'collapse', sys.argv[1]]
t = threading.Thread(target=lambda: runpy.run_path('$G2D', run_name='__main__')); t.start(); t.join()" "$R"
fi
