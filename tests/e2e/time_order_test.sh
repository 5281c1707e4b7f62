#!/usr/bin/env bash
# End-to-end test of time in recordings, on tests/programs/phases (phase_one for the first
# half of its run, phase_two for the second): pf-collapse --time-order writes every
# phase_one stack before the first phase_two one and sums to the same total as the plain
# fold; pf-flamegraph --flamechart draws phase_one left of phase_two; the time slices of
# pf-collapse and pf-script (--time 0%-50%, 50%-100%) hold each phase's samples; --per-thread
# starts each stack with comm-PID/TID, and --per-cpu with its CPU (phases pinned to a CPU,
# recorded with -a); --time-order refuses text input.
#
# Usage: time_order_test.sh PF_RECORD PF_COLLAPSE PF_SCRIPT PF_FLAMEGRAPH PHASES
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (perf_event_open refused here).

set -u
set -o pipefail

if [ $# -ne 5 ]; then
  echo "usage: $0 PF_RECORD PF_COLLAPSE PF_SCRIPT PF_FLAMEGRAPH PHASES" >&2
  exit 2
fi
REC=$1 COLLAPSE=$2 SCRIPT=$3 FLAME=$4 PHASES=$5

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pf-time-e2e.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

if ! "$REC" -F 999 -g -o "$tmp/p.pfs" -- "$PHASES" 0.6 2>"$tmp/rec.err"; then
  grep -q "cannot open event" "$tmp/rec.err" && skip "perf_event_open is refused here"
  fail "pf-record -- phases failed: $(cat "$tmp/rec.err")"
fi

# --- the timeline ----------------------------------------------------------------------------
"$COLLAPSE" --time-order "$tmp/p.pfs" >"$tmp/order.folded" || fail "--time-order failed"
last_one=$(grep -n ';phase_one' "$tmp/order.folded" | tail -1 | cut -d: -f1)
first_two=$(grep -n ';phase_two' "$tmp/order.folded" | head -1 | cut -d: -f1)
[ -n "$last_one" ] && [ -n "$first_two" ] || fail "a phase is missing: $(cat "$tmp/order.folded")"
[ "$last_one" -lt "$first_two" ] ||
  fail "phase_one's stacks are not all before phase_two's: $(cat "$tmp/order.folded")"
awk 'prev == $0 && !/^#/ { bad = 1 } { prev = $0 } END { exit bad }' \
  <(sed 's/ [0-9]*$//' "$tmp/order.folded") || fail "two neighbour lines hold the same stack"
sum() { grep -v '^#' "$1" | awk '{ s += $NF } END { print s + 0 }'; }
"$COLLAPSE" "$tmp/p.pfs" >"$tmp/sum.folded"
[ "$(sum "$tmp/order.folded")" = "$(sum "$tmp/sum.folded")" ] ||
  fail "the timeline sums to $(sum "$tmp/order.folded"), the fold to $(sum "$tmp/sum.folded")"
echo "time order: phase_one's last line $last_one, phase_two's first $first_two, $(grep -vc '^#' "$tmp/order.folded") lines"

# --- the flame chart -------------------------------------------------------------------------
"$COLLAPSE" --time-order "$tmp/p.pfs" | "$FLAME" --flamechart >"$tmp/chart.svg" ||
  fail "pf-flamegraph --flamechart failed"
x_of() { grep -o "<title>$1 [^<]*</title><rect x=\"[0-9.]*\"" "$tmp/chart.svg" | head -1 |
  sed 's/.*x="//; s/"//'; }
x1=$(x_of phase_one) x2=$(x_of phase_two)
[ -n "$x1" ] && [ -n "$x2" ] || fail "the flame chart lacks a phase"
awk -v a="$x1" -v b="$x2" 'BEGIN { exit !(a < b) }' || fail "phase_one (x=$x1) is not left of phase_two (x=$x2)"
echo "flame chart: phase_one at x=$x1, phase_two at x=$x2"

# --- time slices -----------------------------------------------------------------------------
share() {  # FOLDED FUNCTION: the share of the weight through FUNCTION
  grep -v '^#' "$1" | awk -v f=";$2" '{ t += $NF; if (index($0, f)) s += $NF } END { printf "%.2f", t ? s / t : 0 }'
}
"$COLLAPSE" --time 0%-50% "$tmp/p.pfs" >"$tmp/first.folded" || fail "--time 0%-50% failed"
"$COLLAPSE" --time 50%-100% "$tmp/p.pfs" >"$tmp/second.folded" || fail "--time 50%-100% failed"
s1=$(share "$tmp/first.folded" phase_one) s2=$(share "$tmp/second.folded" phase_two)
echo "time slices: phase_one $s1 of the first half, phase_two $s2 of the second"
awk -v a="$s1" -v b="$s2" 'BEGIN { exit !(a >= 0.8 && b >= 0.8) }' ||
  fail "the slices do not hold their phases: $s1, $s2"
"$SCRIPT" --time 0%-50% "$tmp/p.pfs" >"$tmp/first.txt" || fail "pf-script --time failed"
grep -q 'phase_one' "$tmp/first.txt" || fail "pf-script --time 0%-50% has no phase_one"
n1=$(grep -c 'phase_two+' "$tmp/first.txt") n2=$(grep -c 'phase_one+' "$tmp/first.txt")
[ "$n1" -lt "$n2" ] || fail "pf-script --time 0%-50%: $n1 phase_two frames, $n2 phase_one"

# --- per CPU ---------------------------------------------------------------------------------
# phases pinned to the last CPU, recorded system-wide: its stacks are all under that CPU's
# frame; the recording folds as pf-script's text of it; the lanes of a timeline go by CPU.
cpu=$(( $(nproc) - 1 ))
printf -v cpu_frame '[cpu %03d]' "$cpu"
if "$REC" -a -F 999 -g -o "$tmp/a.pfs" -- taskset -c "$cpu" "$PHASES" 0.3 2>"$tmp/reca.err"; then
  "$COLLAPSE" --per-cpu "$tmp/a.pfs" >"$tmp/cpu.folded" || fail "--per-cpu failed"
  grep ';phase_' "$tmp/cpu.folded" | grep -vqF "$cpu_frame;phases;" &&
    fail "--per-cpu: a phases stack is not under $cpu_frame: $(grep ';phase_' "$tmp/cpu.folded" | head -3)"
  grep -q "^$(printf '%s' "$cpu_frame" | sed 's/\[/\\[/');phases;.*phase_two" "$tmp/cpu.folded" ||
    fail "--per-cpu: no phase_two under $cpu_frame"
  grep -v '^#' "$tmp/cpu.folded" | grep -qvE '^\[cpu [0-9]{3,}\];' &&
    fail "--per-cpu: a stack does not start with its CPU"
  "$SCRIPT" "$tmp/a.pfs" | "$COLLAPSE" --per-cpu >"$tmp/cpu_text.folded" ||
    fail "--per-cpu of pf-script's text failed"
  cmp -s "$tmp/cpu.folded" "$tmp/cpu_text.folded" ||
    fail "--per-cpu: the recording and its text fold differently: $(diff "$tmp/cpu.folded" "$tmp/cpu_text.folded" | head -5)"
  "$COLLAPSE" --per-cpu --time-order "$tmp/a.pfs" | grep -v '^#' | cut -d';' -f1 | uniq |
    sort -c 2>/dev/null || fail "--per-cpu --time-order: the CPUs' lanes are not in order"
  echo "per CPU: $(grep -c ';phase_' "$tmp/cpu.folded") phases stacks under $cpu_frame"
else
  echo "per CPU: not checked, pf-record -a is refused here: $(head -1 "$tmp/reca.err")"
fi
"$COLLAPSE" --per-cpu "$tmp/p.pfs" >/dev/null 2>"$tmp/nocpu.err"
[ $? -eq 2 ] || fail "--per-cpu of a recording without CPUs is not a usage error"
grep -q 'do not record their CPU' "$tmp/nocpu.err" || fail "--per-cpu: $(cat "$tmp/nocpu.err")"
"$SCRIPT" "$tmp/p.pfs" | "$COLLAPSE" --per-cpu >/dev/null 2>"$tmp/nocpu_text.err"
[ $? -eq 1 ] || fail "--per-cpu of text without CPUs is not an error"
grep -q '<stdin>:1: --per-cpu' "$tmp/nocpu_text.err" || fail "--per-cpu: $(cat "$tmp/nocpu_text.err")"

# --- per thread; text refused ----------------------------------------------------------------
"$COLLAPSE" --per-thread "$tmp/p.pfs" | grep -v '^#' | grep -qvE '^phases-[0-9]+/[0-9]+;' &&
  fail "--per-thread: a stack does not start with comm-PID/TID"
"$SCRIPT" "$tmp/p.pfs" >"$tmp/p.txt"
"$COLLAPSE" --time-order "$tmp/p.txt" >/dev/null 2>"$tmp/text.err"
[ $? -eq 2 ] || fail "--time-order on text is not a usage error: $(cat "$tmp/text.err")"
"$COLLAPSE" --time-order "$tmp/p.pfs" "$tmp/p.pfs" >/dev/null 2>"$tmp/two.err"
[ $? -eq 2 ] || fail "--time-order on two recordings is not a usage error: $(cat "$tmp/two.err")"
"$COLLAPSE" --time-order --format pprof -o "$tmp/x.pb.gz" "$tmp/p.pfs" 2>"$tmp/fmt.err"
[ $? -eq 2 ] || fail "--time-order --format pprof is not a usage error: $(cat "$tmp/fmt.err")"
echo "PASS"
