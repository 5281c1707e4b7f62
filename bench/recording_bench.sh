#!/usr/bin/env bash
# Benchmark: folding a perf.data recording. pf-collapse reads it directly; the classic way is
# `perf script | stackcollapse-perf.pl`, the fastest `perf script | inferno-collapse-perf`.
# Also pf-script against perf script (text out).
#   bench/recording_bench.sh [--input perf.data] [--seconds N] [--freq HZ] [--runs N]
#   bench/recording_bench.sh --cpu-only [--runs N] FILE...
# Without --input it records N seconds (default 20) of a mixed workload with
# `perf record -F 999 -g -a` (needs perf and perf_event_open). --cpu-only prints, for each
# recording, the CPU time (user+sys of the process and its children: perf stat's
# task-clock, else GNU time's) of pf-collapse and of perf script | inferno-collapse-perf,
# medians of --runs paired runs (default 5), and their ratio. Not a ctest test.
set -u -o pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
input="" secs=20 freq=999 runs=5 cpu_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --input) input=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --freq) freq=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cpu-only) cpu_only=1; shift; break ;;
    *) echo "usage: $0 [--input perf.data] [--seconds N] [--freq HZ] [--runs N] | --cpu-only FILE..." >&2; exit 2 ;;
  esac
done
if [ $cpu_only -eq 1 ] && [ "${1:-}" = --runs ]; then runs=$2; shift 2; fi
PF_COLLAPSE=${PF_COLLAPSE:-$repo/build/bin/pf-collapse}
PF_SCRIPT=${PF_SCRIPT:-$repo/build/bin/pf-script}
SC=${STACKCOLLAPSE_PL:-$(command -v stackcollapse-perf.pl || true)}
INFERNO=${INFERNO_COLLAPSE_PERF:-$(command -v inferno-collapse-perf || true)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# CPU seconds (user+sys, children included) of `bash -c CMD`, its output to $work/cpu.out.
cpu() {
  if perf stat -x, -e task-clock -o "$work/stat" bash -c "$1" >"$work/cpu.out" 2>/dev/null &&
     grep -q task-clock "$work/stat"; then
    awk -F, '/task-clock/ { printf "%.4f\n", $1 / 1000 }' "$work/stat"
  else
    /usr/bin/time -f "%U %S" -o "$work/stat" bash -c "$1" >"$work/cpu.out" 2>/dev/null
    awk '{ printf "%.4f\n", $1 + $2 }' "$work/stat"
  fi
}
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# pf-collapse against perf script | inferno-collapse-perf on FILE: runs paired, interleaved
# (the machine's load moves both alike), after one warm-up of each (page cache, pf's caches).
cpu_row() {
  local in=$1 i ours=() theirs=() a b
  cpu "'$PF_COLLAPSE' '$in'" >/dev/null
  cpu "perf script -i '$in' | '$INFERNO'" >/dev/null
  for ((i = 0; i < runs; i++)); do
    ours+=("$(cpu "'$PF_COLLAPSE' '$in'")")
    theirs+=("$(cpu "perf script -i '$in' | '$INFERNO'")")
  done
  a=$(printf '%s\n' "${ours[@]}" | median)
  b=$(printf '%s\n' "${theirs[@]}" | median)
  awk -v f="$(basename "$in")" -v m="$(stat -c %s "$in")" -v a="$a" -v b="$b" \
    'BEGIN { printf "%-24s %8.1f MB %10.3f s %10.3f s %7.1fx\n", f, m / 1e6, a, b, b / a }'
}
if [ $cpu_only -eq 1 ]; then
  [ -n "$INFERNO" ] || { echo "inferno-collapse-perf not found (set INFERNO_COLLAPSE_PERF)" >&2; exit 1; }
  [ $# -gt 0 ] || { echo "--cpu-only needs recordings" >&2; exit 2; }
  echo "CPU seconds (user+sys), medians of $runs paired runs"
  printf "%-24s %11s %12s %12s %8s\n" recording size pf-collapse "perf|inferno" ratio
  for f in "$@"; do cpu_row "$f"; done
  exit 0
fi
if [ -z "$input" ]; then
  input=$work/rec.data
  prog=$repo/build/programs/callpath
  echo "recording ${secs}s of a mixed workload ..." >&2
  perf record -F "$freq" -g -a -o "$input" -- sh -c "
    \"$prog\" $secs & python3 -c 'import time,json
t=time.time()
while time.time()-t < $secs: json.dumps(list(range(1000)))' &
    perl -e '\$t=time; while (time-\$t < $secs) { my %h; \$h{\$_}=\$_*2 for 1..1000; }' &
    wait" >/dev/null 2>&1 || { echo "perf record failed" >&2; exit 1; }
fi
samples=$(perf script -i "$input" -F period 2>/dev/null | wc -l)
echo "input: $input ($(stat -c %s "$input") bytes, $samples samples)"
t() {  # t LABEL CMD (a shell pipeline)
  local s e
  s=$(date +%s.%N)
  bash -c "$2" >"$work/$1.out" 2>/dev/null
  e=$(date +%s.%N)
  awk -v a="$s" -v b="$e" -v l="$1" -v n="$samples" 'BEGIN { printf "%-34s %7.3f s  %9.0f samples/s\n", l, b - a, n / (b - a) }'
  echo "$e - $s" | bc > "$work/$1.time"
}
t "pf-collapse perf.data" "'$PF_COLLAPSE' '$input'"
t "pf-script perf.data" "'$PF_SCRIPT' '$input'"
t "perf script" "perf script -i '$input'"
if [ -n "$SC" ]; then
  t "perf script | stackcollapse-perf.pl" "perf script -i '$input' | perl '$SC'"
  # (pf's own notes, such as the weights' unit on a `# pf-unit:` line, are left out.)
  grep -v '^# pf-' "$work/pf-collapse perf.data.out" >"$work/pf.stacks"
  cmp -s "$work/pf.stacks" "$work/perf script | stackcollapse-perf.pl.out" &&
    echo "pf-collapse output identical to perf script | stackcollapse-perf.pl (after pf's # pf- lines)" ||
    echo "outputs DIFFER: $(diff "$work/pf.stacks" "$work/perf script | stackcollapse-perf.pl.out" | grep -c '^[<>]') lines"
  awk -v a="$(cat "$work/pf-collapse perf.data.time")" -v b="$(cat "$work/perf script | stackcollapse-perf.pl.time")" \
    'BEGIN { printf "pf-collapse is %.1fx faster than perf script | stackcollapse-perf.pl\n", b / a }'
else
  echo "stackcollapse-perf.pl not found (set STACKCOLLAPSE_PL): skipped"
fi
if [ -n "$INFERNO" ]; then
  echo
  printf "%-24s %11s %12s %12s %8s\n" recording size pf-collapse "perf|inferno" ratio
  cpu_row "$input"
else
  echo "inferno-collapse-perf not found (set INFERNO_COLLAPSE_PERF): skipped"
fi
cmp -s "$work/pf-script perf.data.out" "$work/perf script.out" && echo "pf-script output identical to perf script" ||
  echo "pf-script differs from perf script: $(diff "$work/pf-script perf.data.out" "$work/perf script.out" | grep -c '^[<>]') lines"
awk -v a="$(cat "$work/pf-script perf.data.time")" -v b="$(cat "$work/perf script.time")" \
  'BEGIN { printf "pf-script is %.1fx faster than perf script\n", b / a }'
