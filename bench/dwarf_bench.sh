#!/usr/bin/env bash
# Benchmark: DWARF call graphs. Records tests/programs/unwind_prog (no frame pointers) for N
# seconds at -F HZ with perf record --call-graph dwarf and pf-record --call-graph=dwarf
# (unwinding while recording, and --raw-stacks), and prints for each: samples, lost samples,
# bytes a sample, and the recorder's own CPU time (its user+sys minus the workload's). Then
# folds perf's recording with pf-collapse and with perf script | stackcollapse-perf.pl (with
# and without inline frames), and runs pf_unwind_bench on it (unwinds per second: the tables
# against libdw).
#   bench/dwarf_bench.sh [--seconds N] [--freq HZ] [--stack BYTES]
#   bench/dwarf_bench.sh --fold FILE...   (only the folding comparison, on recordings you have:
#                                          perf record --call-graph dwarf files of any program)
# Needs perf_event_open; the peers (perf, stackcollapse-perf.pl: set STACKCOLLAPSE_PL or put
# it on PATH) are run when installed. Not a ctest test.
set -u -o pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
secs=10 freq=999 stack=8192
fold_only=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) secs=$2; shift 2 ;;
    --freq) freq=$2; shift 2 ;;
    --stack) stack=$2; shift 2 ;;
    --fold) shift; fold_only=("$@"); break ;;
    *) echo "usage: $0 [--seconds N] [--freq HZ] [--stack BYTES] | --fold FILE..." >&2; exit 2 ;;
  esac
done
BIN=${PF_BIN:-$repo/build/bin}
PROG=${PF_UNWIND_PROG:-$repo/build/programs/unwind_prog}
SC=${STACKCOLLAPSE_PL:-$(command -v stackcollapse-perf.pl || true)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
have_perf=0
command -v perf >/dev/null 2>&1 && have_perf=1

# --- folding perf's recording --------------------------------------------------------------
t() {  # t LABEL CMD: the best wall time of 5 runs (after a warm-up: the binaries and debug
       # files in the page cache) into $work/LABEL.time, output into $work/LABEL.out. Timed by
       # the shell's own clock ($EPOCHREALTIME, microseconds) around the command, with no shell
       # started per run: a run of pf-collapse on a small recording takes 5 ms, and starting
       # bash took 1-2 ms of that (`time` prints milliseconds: 10 or 11 ms is a tenth apart).
  local best="" i start end LC_ALL=C
  eval "$2" >"$work/$1.out" 2>/dev/null
  for i in 1 2 3 4 5; do
    start=$EPOCHREALTIME
    eval "$2" >"$work/$1.out" 2>/dev/null
    end=$EPOCHREALTIME
    best=$(awk -v s="$start" -v e="$end" -v b="$best" 'BEGIN { r = e - s; print (b == "" || r < b) ? r : b }')
  done
  echo "$best" >"$work/$1.time"
  printf "%-46s %8.4f s\n" "$1" "$best"
}
ratio() { awk -v a="$(cat "$work/$1.time")" -v b="$(cat "$work/$2.time")" 'BEGIN { printf "%.1fx", b / a }'; }
fold() {  # fold FILE: pf-collapse against perf script (| stackcollapse-perf.pl) on FILE
  local in=$1
  echo
  echo "folding $in ($(stat -c %s "$in") bytes)"
  t "pf-collapse" "'$BIN/pf-collapse' '$in'"
  t "pf-collapse --no-inline" "'$BIN/pf-collapse' --no-inline '$in'"
  t "perf script" "perf script -i '$in'"
  t "perf script --no-inline" "perf script --no-inline -i '$in'"
  echo "pf-collapse is $(ratio pf-collapse 'perf script') faster than perf script (inline frames)"
  if [ -n "$SC" ]; then
    t "perf script | stackcollapse-perf.pl" "perf script -i '$in' | perl '$SC'"
    t "perf script --no-inline | stackcollapse-perf.pl" "perf script --no-inline -i '$in' | perl '$SC'"
    echo "pf-collapse is $(ratio pf-collapse 'perf script | stackcollapse-perf.pl') faster than perf script | stackcollapse-perf.pl"
    echo "pf-collapse --no-inline is $(ratio 'pf-collapse --no-inline' 'perf script --no-inline | stackcollapse-perf.pl') faster than perf script --no-inline | stackcollapse-perf.pl"
    local ours theirs
    # (pf's own notes, such as the weights' unit on a `# pf-unit:` line, are left out.)
    for ours in "pf-collapse" "pf-collapse --no-inline"; do
      theirs="perf script${ours#pf-collapse} | stackcollapse-perf.pl"
      grep -v '^# pf-' "$work/$ours.out" >"$work/ours.stacks"
      if cmp -s "$work/ours.stacks" "$work/$theirs.out"; then
        echo "$ours: output identical to $theirs (after pf's # pf- lines)"
      else
        echo "$ours: output differs from $theirs in $(diff "$work/ours.stacks" "$work/$theirs.out" | grep -c '^[<>]') lines"
      fi
    done
  else
    echo "stackcollapse-perf.pl not found (set STACKCOLLAPSE_PL): skipped"
  fi
  /usr/bin/time -f "pf-collapse resident memory: %M KB" "$BIN/pf-collapse" "$in" >/dev/null
}

if [ ${#fold_only[@]} -gt 0 ]; then
  [ $have_perf -eq 1 ] || { echo "perf is not installed: nothing to compare" >&2; exit 1; }
  for f in "${fold_only[@]}"; do fold "$f"; echo; done
  exit 0
fi

# CPU seconds (user+sys) of a command and its children, from /usr/bin/time's format.
cpu_of() { awk '{ print $1 + $2 }' "$1"; }
# The workload alone, for the recorders' own CPU.
/usr/bin/time -f "%U %S" -o "$work/base.time" "$PROG" "$secs"
base=$(cpu_of "$work/base.time")
echo "workload: unwind_prog $secs s, ${base} s CPU; -F $freq, stack copy $stack bytes"
printf "%-34s %8s %6s %11s %12s\n" recorder samples lost "bytes/smpl" "own CPU (s)"

row() {  # row LABEL FILE TIMEFILE SAMPLES LOST
  local bytes per own
  bytes=$(stat -c %s "$2")
  per=$(( $4 > 0 ? bytes / $4 : 0 ))
  own=$(awk -v a="$(cpu_of "$3")" -v b="$base" 'BEGIN { printf "%.2f", a - b }')
  printf "%-34s %8s %6s %11s %12s\n" "$1" "$4" "$5" "$per" "$own"
}

if [ $have_perf -eq 1 ]; then
  /usr/bin/time -f "%U %S" -o "$work/perf.time" \
    perf record -q -F "$freq" --call-graph "dwarf,$stack" -o "$work/perf.data" -- "$PROG" "$secs" \
    >/dev/null 2>&1
  stats=$(perf report -i "$work/perf.data" --stats 2>/dev/null)
  n=$(echo "$stats" | awk '/SAMPLE events:/ { print $3; exit }')
  lost=$(echo "$stats" | awk '/LOST events:/ { print $3; exit }')
  row "perf record --call-graph dwarf" "$work/perf.data" "$work/perf.time" "${n:-0}" "${lost:-0}"
fi
for mode in online raw; do
  extra=""
  [ $mode = raw ] && extra="--raw-stacks"
  # shellcheck disable=SC2086
  /usr/bin/time -f "%U %S" -o "$work/pf-$mode.time" \
    "$BIN/pf-record" -F "$freq" --call-graph="dwarf,$stack" $extra -o "$work/pf-$mode.pfs" \
    -- "$PROG" "$secs" >/dev/null 2>"$work/pf-$mode.err"
  n=$(sed -n 's/^pf-record: \([0-9]*\) samples, \([0-9]*\) lost.*/\1/p' "$work/pf-$mode.err")
  lost=$(sed -n 's/^pf-record: \([0-9]*\) samples, \([0-9]*\) lost.*/\2/p' "$work/pf-$mode.err")
  row "pf-record --call-graph=dwarf $extra" "$work/pf-$mode.pfs" "$work/pf-$mode.time" "${n:-0}" "${lost:-0}"
done

if [ $have_perf -eq 1 ]; then
  fold "$work/perf.data"
  echo
  "$BIN/pf_unwind_bench" "$work/perf.data" 2
else
  echo "perf is not installed: folding and unwinder comparisons skipped"
  "$BIN/pf_unwind_bench" "$work/pf-raw.pfs" 2
fi
