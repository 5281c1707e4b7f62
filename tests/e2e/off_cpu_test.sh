#!/usr/bin/env bash
# End-to-end test of pf-record --off-cpu on tests/programs/waits (threads that wait known
# times: pipe read 300 ms, nanosleep 150 ms, mutex 100 ms, the holder's sleep 100 ms, each
# measured by the program too, as a loaded machine stretches them): in the fold of the
# offcpu-time samples, each wait's stack carries the time the program measured within 10%,
# with the kernel's blocking frames; the wall-clock fold (cpu-clock and offcpu-time together)
# gives the 200 ms CPU loop its time, running plus preempted, and marks the waits with
# [off-cpu]; perf
# script reads the recording, and stackcollapse-perf.pl folds its text as pf-collapse folds
# the recording; DWARF call graphs name the function that called read(2). Usage errors exit 2.
#
# Usage: off_cpu_test.sh PF_RECORD PF_COLLAPSE PF_SCRIPT WAITS [FLAMEGRAPH_DIR]
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (perf_event_open or kernel samples refused).

set -u
set -o pipefail

if [ $# -lt 4 ]; then
  echo "usage: $0 PF_RECORD PF_COLLAPSE PF_SCRIPT WAITS [FLAMEGRAPH_DIR]" >&2
  exit 2
fi
REC=$1 COLLAPSE=$2 SCRIPT=$3 WAITS=$4 FG=${5:-}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pf-offcpu-e2e.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# --- can we record context switches here? -------------------------------------------------
if ! "$REC" --off-cpu -o "$tmp/probe.pfs" -- true 2>"$tmp/probe.err"; then
  if grep -qE "cannot open event|perf_event_paranoid|not allow" "$tmp/probe.err"; then
    skip "context-switch samples are refused here: $(head -c 300 "$tmp/probe.err")"
  fi
  fail "pf-record --off-cpu -- true failed: $(cat "$tmp/probe.err")"
fi

# sum_ms FOLDED REGEX: the milliseconds of the folded lines matching REGEX.
sum_ms() {
  grep -E "$2" "$1" | awk '{ s += $NF } END { printf "%.1f", s / 1e6 }'
}
# near ACTUAL EXPECTED: ACTUAL within 10% of EXPECTED.
near() { awk -v a="$1" -v e="$2" 'BEGIN { exit !(a >= 0.9 * e && a <= 1.1 * e) }'; }

# --- frame pointers: the waits, each under its own stack ------------------------------------
"$REC" --off-cpu -F 999 -g -o "$tmp/w.pfs" -- "$WAITS" 2>"$tmp/w.err" ||
  fail "pf-record --off-cpu -- waits failed: $(cat "$tmp/w.err")"
# measured NAME: the milliseconds the program measured for NAME's wait (near its nominal time).
measured() {
  local ms
  ms=$(awk -v n="$1" '$1 == "waits:" && $2 == n { print $3 }' "$2")
  [ -n "$ms" ] || fail "waits printed no time for $1: $(cat "$2")"
  near "$ms" "$3" || awk -v a="$ms" -v e="$3" 'BEGIN { exit !(a >= 0.9 * e && a <= 2 * e) }' ||
    fail "waits measured $ms ms for $1, far from its $3 ms"
  echo "$ms"
}
grep -qE '^pf-record: [0-9]+ samples, 0 lost \(0\.0%\), [0-9]+ off-CPU waits$' "$tmp/w.err" ||
  fail "no summary with the waits: $(cat "$tmp/w.err")"
"$COLLAPSE" --event-filter offcpu-time "$tmp/w.pfs" >"$tmp/off.folded" || fail "pf-collapse failed"
[ "$(head -1 "$tmp/off.folded")" = "# pf-unit: nanoseconds" ] ||
  fail "the waits are not weighed in nanoseconds: $(head -1 "$tmp/off.folded")"
kernel=0
grep -q ';schedule$\|;schedule ' "$tmp/off.folded" && kernel=1
check() {  # NAME REGEX FUNCTION NOMINAL_MS
  local ms want
  ms=$(sum_ms "$tmp/off.folded" "$2")
  want=$(measured "$3" "$tmp/w.err" "$4") || exit 1
  echo "off-CPU $1: $ms ms (the program measured $want ms, nominal $4 ms)"
  near "$ms" "$want" || fail "$1 waited $ms ms, not $want ms +- 10%: $(cat "$tmp/off.folded")"
}
check "read from a pipe" ';pipe_reader;' read_pipe 300
check "nanosleep" ';take_nap;' take_nap 150
check "mutex" ';locker;.*lock_wait' take_lock 100
check "sleep holding the mutex" ';hold_lock;' hold_lock 100
if [ $kernel -eq 1 ]; then
  grep -E ';pipe_reader;' "$tmp/off.folded" | grep -qE ';(anon_)?pipe_read;' ||
    fail "the pipe wait has no kernel pipe_read frame: $(grep pipe_reader "$tmp/off.folded")"
  grep -E ';take_nap;' "$tmp/off.folded" | grep -q ';do_nanosleep;' ||
    fail "the nanosleep has no kernel do_nanosleep frame"
  grep -E ';locker;' "$tmp/off.folded" | grep -q ';futex_wait' ||
    fail "the mutex wait has no kernel futex frame"
else
  echo "note: no kernel frames (kernel samples not allowed): blocking frames not checked"
fi

# --- wall clock: running and waiting in one fold --------------------------------------------
"$COLLAPSE" --event-filter cpu-clock,offcpu-time "$tmp/w.pfs" >"$tmp/wall.folded" ||
  fail "pf-collapse --event-filter cpu-clock,offcpu-time failed"
[ "$(head -1 "$tmp/wall.folded")" = "# pf-unit: nanoseconds" ] || fail "wall clock: unit lost"
spin=$(sum_ms "$tmp/wall.folded" ';spinner;spin_for')
want=$(measured spin_for "$tmp/w.err" 200) || exit 1
echo "wall clock spin_for: $spin ms (the program measured $want ms)"
near "$spin" "$want" || fail "spin_for's wall time is $spin ms: $(grep spin_for "$tmp/wall.folded")"
grep -E ';take_nap;' "$tmp/wall.folded" | grep -qv ';\[off-cpu\] [0-9]*$' &&
  fail "a wait is not marked [off-cpu]: $(grep take_nap "$tmp/wall.folded")"
grep ';spinner;spin_for [0-9]*$' "$tmp/wall.folded" >/dev/null ||
  fail "spin_for's running time is missing: $(grep spin_for "$tmp/wall.folded")"
# The same from pf-script's text.
"$SCRIPT" "$tmp/w.pfs" | "$COLLAPSE" --event-filter cpu-clock,offcpu-time >"$tmp/wall.text.folded"
cmp -s "$tmp/wall.folded" "$tmp/wall.text.folded" ||
  fail "the wall-clock fold of pf-script's text differs: $(diff "$tmp/wall.folded" "$tmp/wall.text.folded" | head)"

# --- perf script reads it, and FlameGraph's collapser agrees ----------------------------------
if command -v perf >/dev/null 2>&1; then
  perf script -i "$tmp/w.pfs" >"$tmp/w.txt" 2>"$tmp/perf.err" ||
    fail "perf script cannot read the recording: $(head -5 "$tmp/perf.err")"
  n_perf=$(grep -cE '^\S.* offcpu-time: *$' "$tmp/w.txt")
  n_pf=$("$SCRIPT" "$tmp/w.pfs" | grep -cE '^\S.* offcpu-time: *$')
  [ "$n_perf" -gt 5 ] && [ "$n_perf" = "$n_pf" ] ||
    fail "perf script shows $n_perf offcpu-time samples, pf-script $n_pf"
  if [ -n "$FG" ] && [ -f "$FG/stackcollapse-perf.pl" ]; then
    perl "$FG/stackcollapse-perf.pl" --event-filter offcpu-time "$tmp/w.txt" >"$tmp/perl.folded"
    grep -v '^#' "$tmp/off.folded" | cmp -s - "$tmp/perl.folded" ||
      fail "stackcollapse-perf.pl folds perf script's text otherwise: $(diff <(grep -v '^#' "$tmp/off.folded") "$tmp/perl.folded" | head)"
    echo "stackcollapse-perf.pl: the same folded waits"
  fi
else
  echo "note: perf is not installed: perf script is not checked"
fi

# --- DWARF call graphs: the caller of read(2) is known --------------------------------------
if "$REC" --off-cpu --call-graph dwarf -o "$tmp/d.pfs" -- "$WAITS" 2>"$tmp/d.err"; then
  "$COLLAPSE" --event-filter offcpu-time "$tmp/d.pfs" >"$tmp/d.folded"
  ms=$(sum_ms "$tmp/d.folded" ';pipe_reader;read_pipe;')
  want=$(measured read_pipe "$tmp/d.err" 300) || exit 1
  echo "DWARF: pipe_reader;read_pipe waited $ms ms (the program measured $want ms)"
  near "$ms" "$want" || fail "DWARF: read_pipe's wait is $ms ms: $(cat "$tmp/d.folded")"
else
  fail "pf-record --off-cpu --call-graph dwarf failed: $(cat "$tmp/d.err")"
fi

# --- usage -----------------------------------------------------------------------------------
"$REC" --off-cpu --call-graph dwarf --raw-stacks -o "$tmp/x.pfs" -- true 2>"$tmp/u.err"
[ $? -eq 2 ] || fail "--off-cpu --raw-stacks is not a usage error: $(cat "$tmp/u.err")"
echo "PASS"
