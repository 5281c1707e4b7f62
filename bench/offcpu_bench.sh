#!/usr/bin/env bash
# Benchmark: what recording every context switch costs. tests/programs/pingpong hands a byte
# between two threads through pipes, each round trip two waits (two context switches). Both
# threads are pinned to CPU 0 (taskset), so the workload keeps that CPU busy and switches as
# fast as it can (no idle states, which on a VM change the wake-up time more than any
# recorder does), and every cost of recording shows: in the kernel, fewer round trips in the
# same time; in the recorder, its own CPU time on the other CPU. It runs alone, under
# `pf-record --off-cpu -g`, and under `perf record -e sched:sched_switch -g` (what perf
# offers without BPF; it records the switches, and computes no waits), in turn, RUNS times
# each (default 5), and prints the medians: round trips a second, CPU seconds of the whole
# run (workload and recorder, from GNU time), microseconds of CPU added per switch, the
# output's bytes per switch, and pf's added cost against perf's. Then it folds pf's
# recording, its off-CPU samples against a cpu-clock recording of as many samples.
#   bench/offcpu_bench.sh [SECONDS]   (default 2 a run)
# Needs perf_event_open with kernel samples (root, or perf_event_paranoid <= 1), perf and
# taskset. Not a ctest test.
set -u -o pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-2}
RUNS=${RUNS:-5}
BIN=${PF_BIN:-$repo/build/bin}
PROG=${PF_PINGPONG:-$repo/build/programs/pingpong}
CALLPATH=${PF_CALLPATH:-$repo/build/programs/callpath}
for f in "$BIN/pf-record" "$BIN/pf-collapse" "$PROG" "$CALLPATH"; do
  [ -x "$f" ] || { echo "missing $f: build first (make -C build)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME CMD...: one run; appends "rate cpu bytes waits" to $work/NAME.
run() {
  local name=$1
  shift
  /usr/bin/time -f "%U %S" -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
    echo "$name failed: $(tail -3 "$work/err")" >&2
    exit 1
  }
  local rate cpu bytes=0 waits=0
  rate=$(awk '/^pingpong:/ { print $(NF-2) }' "$work/out")
  cpu=$(awk '{ print $1 + $2 }' "$work/time")
  case $name in
    pf)
      bytes=$(stat -c %s "$work/pf.pfs")
      waits=$(grep -oE '[0-9]+ off-CPU waits' "$work/err" | awk '{ print $1 }')
      ;;
    perf)
      bytes=$(stat -c %s "$work/perf.data")
      waits=$(perf script -i "$work/perf.data" -F event 2>/dev/null | grep -c sched_switch)
      ;;
  esac
  echo "$rate $cpu $bytes ${waits:-0}" >>"$work/$name"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
column() { awk -v c="$2" '{ print $c }' "$work/$1" | median; }

for i in $(seq "$RUNS"); do
  run alone taskset -c 0 "$PROG" "$secs"
  run pf "$BIN/pf-record" --off-cpu -g -o "$work/pf.pfs" -- taskset -c 0 "$PROG" "$secs"
  run perf perf record -q -e sched:sched_switch -g -o "$work/perf.data" -- \
    taskset -c 0 "$PROG" "$secs"
done

# per_switch NAME: CPU microseconds a switch (two a round trip).
per_switch() {
  awk -v r="$(column "$1" 1)" -v c="$(column "$1" 2)" -v s="$secs" \
    'BEGIN { printf "%.2f", c * 1e6 / (r * s * 2) }'
}
base=$(per_switch alone)
printf '%-40s %14s %9s %14s %14s %12s\n' "pingpong on CPU 0, ${secs} s, medians of $RUNS" \
  "round trips/s" "CPU s" "CPU us/switch" "added us" "bytes/switch"
for name in alone pf perf; do
  rate=$(column $name 1)
  bytes=$(column $name 3)
  per=-
  [ "$bytes" != 0 ] && per=$(awk -v b="$bytes" -v r="$rate" -v s="$secs" \
    'BEGIN { printf "%.0f", b / (r * s * 2) }')
  label=$name
  [ $name = pf ] && label="pf-record --off-cpu -g"
  [ $name = perf ] && label="perf record -e sched:sched_switch -g"
  us=$(per_switch $name)
  printf '%-40s %14s %9s %14s %14s %12s\n' "$label" "$rate" "$(column $name 2)" "$us" \
    "$(awk -v a="$us" -v b="$base" 'BEGIN { printf "%.2f", a - b }')" "$per"
done
echo "pf adds $(awk -v p="$(per_switch pf)" -v q="$(per_switch perf)" -v b="$base" \
  'BEGIN { printf "%.2f", (p - b) / (q - b) }')x of what perf adds a switch (below 1: less)"

# Folding: pf's off-CPU recording against a cpu-clock recording of the same workload (stacks
# as deep: pipes and the scheduler), per sample.
"$BIN/pf-record" -e cpu-clock -c 10000 -g -o "$work/cpu.pfs" -- taskset -c 0 "$PROG" "$secs" \
  >/dev/null 2>&1
fold() {  # FILE EVENT: "SAMPLES MS": the samples folded, best of 5 task-clock milliseconds
  local n ms
  n=$("$BIN/pf-collapse" -q --weight samples --event-filter "$2" "$1" |
    awk '{ s += $NF } END { print s }')
  ms=$(for _ in 1 2 3 4 5; do
    perf stat -x, -e task-clock "$BIN/pf-collapse" --event-filter "$2" "$1" 2>&1 >/dev/null |
      awk -F, '/task-clock/ { print $1 }'
  done | sort -n | head -1)
  echo "$n $ms"
}
read -r n_off ms_off < <(fold "$work/pf.pfs" offcpu-time)
read -r n_cpu ms_cpu < <(fold "$work/cpu.pfs" cpu-clock)
awk -v a="$n_off" -v b="$ms_off" -v c="$n_cpu" -v d="$ms_cpu" 'BEGIN {
  printf "pf-collapse: %d off-CPU samples in %.1f ms (%.3f us each), %d cpu-clock samples in %.1f ms (%.3f us each)\n",
    a, b, b * 1000 / a, c, d, d * 1000 / c }'
