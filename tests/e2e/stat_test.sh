#!/usr/bin/env bash
# End-to-end test of pf-record --stat against perf stat on the same commands (and -o FILE,
# and its usage errors): the table's
# layout is perf's line for line (the numbers masked), in the default form, with -e, in CSV
# (-x,) and with -I; the counts of deterministic events agree (page faults of
# tests/programs/waits within 10%; the context switches of 2,000 round trips of
# tests/programs/pingpong pinned to one CPU, two a round trip, within 10%; task-clock the
# command's user and system time); -x and -I without --stat are usage errors.
#
# Usage: stat_test.sh PF_RECORD WAITS PINGPONG
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (perf_event_open refused here).

set -u
set -o pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 PF_RECORD WAITS PINGPONG" >&2
  exit 2
fi
REC=$1 WAITS=$2 PINGPONG=$3

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pf-stat-e2e.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C

"$REC" --stat -- true 2>"$tmp/probe.err" >/dev/null ||
  { grep -q "cannot open event" "$tmp/probe.err" && skip "perf_event_open is refused here"; \
    fail "pf-record --stat -- true: $(cat "$tmp/probe.err")"; }
grep -q "Performance counter stats for 'true':" "$tmp/probe.err" || fail "no table: $(cat "$tmp/probe.err")"

for bad in "-x, -- true" "--stat -I 5 -- true" "--stat --off-cpu -- true"; do
  # shellcheck disable=SC2086
  "$REC" $bad 2>"$tmp/u.err" >/dev/null
  [ $? -eq 2 ] || fail "pf-record $bad is not a usage error: $(cat "$tmp/u.err")"
done
# -o FILE takes the table instead of standard error.
"$REC" --stat -e task-clock -o "$tmp/table.txt" -- true 2>"$tmp/o.err" >/dev/null ||
  fail "--stat -o failed: $(cat "$tmp/o.err")"
grep -q " task-clock " "$tmp/table.txt" || fail "--stat -o FILE: no table in it: $(cat "$tmp/table.txt")"
grep -q "Performance counter stats" "$tmp/o.err" && fail "--stat -o FILE: the table also went to stderr"

# value EVENT FILE: the count of EVENT in a table.
value() { awk -v e="$1" '$0 ~ " "e" " || $0 ~ " "e"$" { gsub(",", "", $1); print $1; exit }' "$2"; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { exit !(b > 0 && a >= b * (1 - t) && a <= b * (1 + t)) }'; }

"$REC" --stat -- "$WAITS" 2>"$tmp/pf.txt" >/dev/null || fail "pf-record --stat -- waits failed"
"$REC" --stat -e page-faults,context-switches,task-clock -- "$WAITS" 2>"$tmp/pf-e.txt" >/dev/null
grep -v '^waits:' "$tmp/pf.txt" > "$tmp/pf.table"
pf_faults=$(value page-faults "$tmp/pf-e.txt")
pf_cs=$(value context-switches "$tmp/pf-e.txt")
pf_clock=$(value task-clock "$tmp/pf-e.txt")
# task-clock is the command's CPU time: its user and system time, as the table gives them
# (a loaded machine gives the CPU loop less than its 200 ms, both figures alike).
cpu_ms=$(awk '/seconds user|seconds sys/ { s += $1 } END { printf "%.2f", s * 1000 }' "$tmp/pf-e.txt")
echo "pf-record --stat: $pf_faults page faults, $pf_cs context switches, $pf_clock msec task-clock, $cpu_ms ms user+sys"
awk -v a="$pf_clock" -v b="$cpu_ms" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 20 && (d <= 10 || d <= 0.2 * b)) }' ||
  fail "task-clock $pf_clock msec against $cpu_ms ms of user and system time"

if ! command -v perf >/dev/null 2>&1; then
  echo "note: perf is not installed: the table is not compared with perf stat's"
  echo "PASS"
  exit 0
fi
# (A rate's K, M or G prefix follows its value, which a loaded machine moves across 1,000.)
mask() { grep -v '^waits:' "$1" | sed -E 's/[0-9][0-9.,]*//g; s/ [KMG]\/sec/ \/sec/; s/,[KMG]\/sec/,\/sec/; s/ +/ /g'; }
same_layout() {  # NAME ARGS...: pf-record --stat ARGS and perf stat ARGS print alike
  local name=$1
  shift
  "$REC" --stat "$@" -- "$WAITS" 2>"$tmp/a" >/dev/null
  perf stat "$@" -- "$WAITS" 2>"$tmp/b" >/dev/null
  # Widths too: only the digits are masked, the padding must match once they are equal.
  diff <(mask "$tmp/a") <(mask "$tmp/b") >/dev/null ||
    fail "$name: the table differs from perf stat's: $(diff <(mask "$tmp/a") <(mask "$tmp/b") | head -6)"
  if [ "$name" != CSV ]; then  # (CSV's fields are as wide as their numbers)
    awk '{ print length($0) }' <(grep -v '^waits:' "$tmp/a" | grep -v 'seconds\|Performance') >"$tmp/la"
    awk '{ print length($0) }' <(grep -v '^waits:' "$tmp/b" | grep -v 'seconds\|Performance') >"$tmp/lb"
    cmp -s "$tmp/la" "$tmp/lb" || fail "$name: line widths differ from perf stat's"
  fi
  echo "$name: perf stat's layout"
}
same_layout "default events"
same_layout "-e" -e page-faults,cs,task-clock,cycles
same_layout "CSV" -x, -e task-clock,page-faults
perf stat -e page-faults,context-switches,task-clock -- "$WAITS" 2>"$tmp/perf-e.txt" >/dev/null
perf_faults=$(value page-faults "$tmp/perf-e.txt")
echo "perf stat: $perf_faults page faults"
near "$pf_faults" "$perf_faults" 0.10 || fail "page faults: pf $pf_faults, perf $perf_faults"
# Context switches: 2,000 round trips on one CPU are 4,000 (and a few preemptions).
if command -v taskset >/dev/null; then
  "$REC" --stat -e context-switches -- taskset -c 0 "$PINGPONG" 60 2000 2>"$tmp/pf-cs.txt" >/dev/null
  perf stat -e context-switches -- taskset -c 0 "$PINGPONG" 60 2000 2>"$tmp/perf-cs.txt" >/dev/null
  pf_cs=$(value context-switches "$tmp/pf-cs.txt")
  perf_cs=$(value context-switches "$tmp/perf-cs.txt")
  echo "context switches of 2000 round trips: pf $pf_cs, perf $perf_cs"
  near "$pf_cs" 4000 0.10 && near "$perf_cs" 4000 0.10 ||
    fail "context switches of 2000 round trips: pf $pf_cs, perf $perf_cs (expected ~4000)"
fi
"$REC" --stat -I 50 -e task-clock -- "$WAITS" 2>"$tmp/i" >/dev/null
grep -q '^#           time             counts unit events$' "$tmp/i" || fail "-I: no header: $(cat "$tmp/i")"
n=$(grep -c 'msec task-clock' "$tmp/i")
[ "$n" -ge 4 ] || fail "-I 50 on a 300 ms run printed $n intervals"
echo "PASS"
