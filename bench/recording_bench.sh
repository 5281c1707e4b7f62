#!/usr/bin/env bash
# Benchmark: folding a perf.data recording. pf-collapse reads it directly; the classic way is
# `perf script | stackcollapse-perf.pl`. Also pf-script against perf script (text out).
#   bench/recording_bench.sh [--input perf.data] [--seconds N] [--freq HZ]
# Without --input it records N seconds (default 20) of a mixed workload with
# `perf record -F 999 -g -a` (needs perf and perf_event_open). Not a ctest test.
set -u -o pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
input="" secs=20 freq=999
while [ $# -gt 0 ]; do
  case $1 in
    --input) input=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --freq) freq=$2; shift 2 ;;
    *) echo "usage: $0 [--input perf.data] [--seconds N] [--freq HZ]" >&2; exit 2 ;;
  esac
done
PF_COLLAPSE=${PF_COLLAPSE:-$repo/build/bin/pf-collapse}
PF_SCRIPT=${PF_SCRIPT:-$repo/build/bin/pf-script}
SC=${STACKCOLLAPSE_PL:-$(command -v stackcollapse-perf.pl || true)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
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
  cmp -s "$work/pf-collapse perf.data.out" "$work/perf script | stackcollapse-perf.pl.out" &&
    echo "pf-collapse output identical to perf script | stackcollapse-perf.pl" ||
    echo "outputs DIFFER: $(diff "$work/pf-collapse perf.data.out" "$work/perf script | stackcollapse-perf.pl.out" | grep -c '^[<>]') lines"
  awk -v a="$(cat "$work/pf-collapse perf.data.time")" -v b="$(cat "$work/perf script | stackcollapse-perf.pl.time")" \
    'BEGIN { printf "pf-collapse is %.1fx faster than perf script | stackcollapse-perf.pl\n", b / a }'
else
  echo "stackcollapse-perf.pl not found (set STACKCOLLAPSE_PL): skipped"
fi
cmp -s "$work/pf-script perf.data.out" "$work/perf script.out" && echo "pf-script output identical to perf script" ||
  echo "pf-script differs from perf script: $(diff "$work/pf-script perf.data.out" "$work/perf script.out" | grep -c '^[<>]') lines"
awk -v a="$(cat "$work/pf-script perf.data.time")" -v b="$(cat "$work/perf script.time")" \
  'BEGIN { printf "pf-script is %.1fx faster than perf script\n", b / a }'
