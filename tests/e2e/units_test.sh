#!/usr/bin/env bash
# Units: a recording of cpu-clock (or its perf script text) is weighed by its samples'
# periods, in nanoseconds, and pf-flamegraph, pf-dot and pf-diff say so ("297 ms"); other
# events' periods are events; folded text stays "samples". The unit crosses a pipe of folded
# text in pf-collapse's `# pf-unit:` line (pf-folded(5)): `pf-collapse REC | pf-flamegraph`
# says what `pf-flamegraph REC` says.
# Usage: units_test.sh PF_RECORD PF_FLAMEGRAPH PF_DOT PF_DIFF PF_COLLAPSE
set -u -o pipefail
rec=$1 fg=$2 dot=$3 diff=$4 collapse=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# perf script text: periods of cpu-clock are nanoseconds, of other events events; text
# without periods counts samples (stackcollapse-perf.pl sums the same numbers).
ev() { printf 'prog 100 %s: %s %s:\n\t401000 leaf+0x1 (/bin/prog)\n\n' "$1" "$2" "$3"; }
{ ev 1.0 250000 cpu-clock; ev 2.0 250000 cpu-clock; ev 3.0 250000 cpu-clock; } >"$tmp/t.txt"
"$fg" "$tmp/t.txt" | grep -q '<title>all (750 us, 100%)</title>' ||
  fail "perf script text of cpu-clock: $("$fg" "$tmp/t.txt" | grep -o '<title>all[^<]*')"
{ ev 1.0 7 page-faults; ev 2.0 5 page-faults; } >"$tmp/e.txt"
"$fg" "$tmp/e.txt" | grep -q '<title>all (12 events, 100%)</title>' ||
  fail "perf script text of page-faults: $("$fg" "$tmp/e.txt" | grep -o '<title>all[^<]*')"
"$fg" --countname=samples "$tmp/t.txt" | grep -q '<title>all (750,000 samples, 100%)</title>' ||
  fail "--countname on perf script text"
# Through a pipe of folded text: the unit's line first, read by every tool.
[ "$("$collapse" "$tmp/t.txt" | head -1)" = "# pf-unit: nanoseconds" ] ||
  fail "pf-collapse of cpu-clock text: no unit line: $("$collapse" "$tmp/t.txt" | head -1)"
[ "$("$collapse" "$tmp/e.txt" | head -1)" = "# pf-unit: events" ] ||
  fail "page-faults: no unit line"
"$collapse" --weight=samples "$tmp/t.txt" | grep -q '^# pf-unit' &&
  fail "--weight=samples names a unit"
"$collapse" "$tmp/t.txt" | "$fg" | grep -q '<title>all (750 us, 100%)</title>' ||
  fail "pf-collapse | pf-flamegraph: $("$collapse" "$tmp/t.txt" | "$fg" | grep -o '<title>all.*')"
"$collapse" "$tmp/t.txt" | "$fg" --flamechart | grep -q '<title>all (750 us, 100%)</title>' ||
  fail "pf-collapse | pf-flamegraph --flamechart"
"$collapse" "$tmp/t.txt" | "$dot" | grep -q 'total weight 750 us' || fail "pf-collapse | pf-dot"
"$collapse" "$tmp/t.txt" >"$tmp/t.folded"
"$collapse" "$tmp/t.txt" | "$diff" --report - "$tmp/t.folded" | head -1 | grep -q ', 750 us$' ||
  fail "pf-collapse | pf-diff --report"
# pf-diff's output keeps it (after its own line), for pf-flamegraph.
"$diff" "$tmp/t.folded" "$tmp/t.folded" | sed -n 2p | grep -qx '# pf-unit: nanoseconds' ||
  fail "pf-diff output: $("$diff" "$tmp/t.folded" "$tmp/t.folded" | head -2)"
"$diff" "$tmp/t.folded" "$tmp/t.folded" | "$fg" | grep -q '<title>all (750 us, 100%)</title>' ||
  fail "pf-diff | pf-flamegraph"
# Folded inputs of different units: summed with a warning, and no unit.
"$collapse" "$tmp/e.txt" >"$tmp/e.folded"
"$collapse" "$tmp/t.folded" "$tmp/e.folded" 2>"$tmp/mix.err" | grep -q '^# pf-unit' &&
  fail "mixed units written as one"
grep -q "warning: the inputs weigh different things (.*: ns, .*: events)" "$tmp/mix.err" ||
  fail "mixed units: $(cat "$tmp/mix.err")"
busy='i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'
if ! "$rec" -e cpu-clock -F 999 -o "$tmp/r.pfs" -- sh -c "$busy" 2>"$tmp/rec.err"; then
  echo "SKIP: pf-record cannot record here: $(cat "$tmp/rec.err")"
  exit 77
fi
time_re='[0-9.]+ (ns|us|ms|s)'
"$fg" "$tmp/r.pfs" >"$tmp/r.svg" || fail "pf-flamegraph exit $?"
grep -qE "<title>all \\($time_re, 100%\\)</title>" "$tmp/r.svg" ||
  fail "flame graph root is not a time: $(grep -o '<title>all[^<]*' "$tmp/r.svg")"
"$fg" --countname=samples "$tmp/r.pfs" | grep -qE '<title>all \([0-9,]+ samples, 100%\)</title>' ||
  fail "--countname does not show the raw count"
"$dot" "$tmp/r.pfs" | grep -qE "total weight $time_re" || fail "pf-dot legend is not a time"
"$diff" --report "$tmp/r.pfs" "$tmp/r.pfs" | head -1 | grep -qE "^before: .*, $time_re\$" ||
  fail "pf-diff report total is not a time: $("$diff" --report "$tmp/r.pfs" "$tmp/r.pfs" | head -1)"
# The recording through a pipe of folded text: the same graph as from the recording.
"$collapse" "$tmp/r.pfs" | "$fg" | cmp -s - "$tmp/r.svg" ||
  fail "pf-collapse REC | pf-flamegraph differs from pf-flamegraph REC"
"$collapse" "$tmp/r.pfs" | "$dot" | grep -qE "total weight $time_re" ||
  fail "pf-collapse REC | pf-dot"
"$collapse" "$tmp/r.pfs" >"$tmp/r.folded"
"$collapse" "$tmp/r.pfs" | "$diff" --report - "$tmp/r.folded" | head -1 |
  grep -qE "^before: .*, $time_re\$" || fail "pf-collapse REC | pf-diff --report"
# Profiles of different units are refused, or with --mixed-units compared with a warning.
"$rec" -q -e page-faults -c 1 -o "$tmp/f.pfs" -- sh -c 'ls / >/dev/null' 2>/dev/null ||
  fail "pf-record -e page-faults"
"$diff" --report "$tmp/r.pfs" "$tmp/f.pfs" 2>"$tmp/err" >"$tmp/out"
rc=$?
[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] &&
  grep -q "error: the profiles weigh different things (.*: ns, .*: events): .*--mixed-units" "$tmp/err" ||
  fail "pf-diff of ns against events: exit $rc, $(cat "$tmp/err")"
"$diff" --mixed-units --report "$tmp/r.pfs" "$tmp/f.pfs" 2>"$tmp/err" >/dev/null
grep -q "warning: the profiles weigh different things (.*: ns, .*: events)" "$tmp/err" ||
  fail "pf-diff --mixed-units of ns against events: $(cat "$tmp/err")"
# Folded text: samples, as before.
printf 'main;f 3\nmain;g 1\n' >"$tmp/f.folded"
"$fg" "$tmp/f.folded" | grep -q '<title>all (4 samples, 100%)</title>' || fail "folded root"
"$dot" "$tmp/f.folded" | grep -q 'total weight 4\\l' || fail "folded pf-dot legend"
"$diff" --report "$tmp/f.folded" "$tmp/f.folded" | head -1 | grep -q ', 4 samples$' ||
  fail "folded pf-diff report"
# Bytes are drawn as sizes (1024-based, as pprof), objects as objects.
printf '# pf-unit: bytes\nmain;malloc 4299161\nmain;f 1024\n' >"$tmp/b.folded"
"$fg" "$tmp/b.folded" | grep -q '<title>all (4.1 MB, 100%)</title>' || fail "bytes root"
"$fg" "$tmp/b.folded" | grep -q '<title>f (1 kB, 0.02%)</title>' || fail "bytes frame"
"$dot" "$tmp/b.folded" | grep -q 'total weight 4.1 MB' || fail "bytes pf-dot legend"
"$diff" --report "$tmp/b.folded" "$tmp/b.folded" | head -1 | grep -q ', 4.1 MB$' ||
  fail "bytes pf-diff report"
[ $failures -eq 0 ] && echo "units: all checks passed"
exit $((failures > 0))
