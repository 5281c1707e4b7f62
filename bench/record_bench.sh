#!/usr/bin/env bash
# Benchmark: recording overhead of pf-record against perf record, frame-pointer call graphs.
# For each frequency: a CPU-bound program (tests/programs/callpath, fixed work) alone, under
# pf-record and under perf record; prints the target's time (overhead added), the recorder's
# CPU, samples, lost samples and bytes per sample; then start-up time (to the command's
# exec) and an all-CPU run. Not a ctest test; needs perf_event_open.
#   bench/record_bench.sh [--seconds N]
set -u -o pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
secs=5
[ "${1:-}" = "--seconds" ] && secs=$2
PF=${PF_RECORD:-$repo/build/bin/pf-record}
prog=$repo/build/programs/callpath
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v perf >/dev/null || echo "perf not installed: only pf-record is measured"
TIME=/usr/bin/time
[ -x $TIME ] || { echo "needs GNU time (apt-get install time)"; exit 2; }

samples_of() { perf report -i "$1" --stats 2>/dev/null | awk '/SAMPLE events/ { print $3; exit }'; }
lost_of() { perf report -i "$1" --stats 2>/dev/null | awk '/LOST_SAMPLES|LOST/ { s += $NF } END { print s + 0 }'; }

echo "target: callpath $secs s (fixed duration; 'rounds' = work done, fewer = slowed down)"
$TIME -f "%e %U %S" -o "$work/t" "$prog" "$secs" >"$work/alone.out" 2>&1
echo "alone:                 $(cat "$work/alone.out")"
for hz in 99 999; do
  for rec in pf perf; do
    out=$work/$rec-$hz.data
    if [ $rec = pf ]; then
      $TIME -f "%e %U %S" -o "$work/t" "$PF" -q -F $hz -g -o "$out" -- "$prog" "$secs" >"$work/run.out" 2>&1
    else
      command -v perf >/dev/null || continue
      $TIME -f "%e %U %S" -o "$work/t" perf record -q -F $hz -g -o "$out" -- "$prog" "$secs" >"$work/run.out" 2>&1
    fi
    read -r wall user sys <"$work/t"
    n=$(samples_of "$out")
    bytes=$(stat -c %s "$out")
    printf '%-5s %4s Hz: %s | recorder+target CPU %.2f s, %6d samples, %s lost, %5.0f bytes/sample\n' \
      "$rec" "$hz" "$(grep rounds "$work/run.out")" "$(echo "$user + $sys" | bc)" "$n" \
      "$(lost_of "$out")" "$(echo "$bytes / ($n + 1)" | bc -l)"
  done
done
# Start-up: from start to the command running (a command that only prints the time).
for rec in pf perf; do
  best=""
  for i in 1 2 3 4 5; do
    s=$(date +%s%N)
    if [ $rec = pf ]; then
      e=$("$PF" -q -o /dev/null -- date +%s%N 2>/dev/null)
    else
      command -v perf >/dev/null || continue 2
      e=$(perf record -q -o "$work/s.data" -- date +%s%N 2>/dev/null)
    fi
    ms=$(( (e - s) / 1000000 ))
    [ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
  done
  echo "start-up $rec: $best ms to the command's first instruction (best of 5)"
done
# All CPUs at 999 Hz with both CPUs busy.
"$prog" $((secs + 2)) >/dev/null & "$prog" $((secs + 2)) >/dev/null &
sleep 0.5
"$PF" -q -a -F 999 -g -d "$secs" -o "$work/all.pfs" 2>"$work/all.err"
wait
echo "pf-record -a -F 999 -g -d $secs: $(samples_of "$work/all.pfs") samples, $(lost_of "$work/all.pfs") lost, $(stat -c %s "$work/all.pfs") bytes"
