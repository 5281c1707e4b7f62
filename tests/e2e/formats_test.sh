#!/usr/bin/env bash
# Input and output formats as a user meets them, in pf-collapse, pf-flamegraph, pf-dot and
# pf-diff: other profilers' outputs (tests/data/foreign) are refused with exit 1 and an error
# naming what pf reads; perf script text, folded stacks and their gzip form keep working;
# -f/--input-format takes gprof2dot's names (perf, collapse) and refuses the formats pf does
# not read yet with exit 2; pf-dot refuses binary output on a terminal and an -o suffix it
# cannot write, and --focus matching nothing is an error as -z is.
# Usage: formats_test.sh SOURCE_DIR PF_COLLAPSE PF_FLAMEGRAPH PF_DOT PF_DIFF
set -u -o pipefail
src=$1 collapse=$2 flamegraph=$3 dot=$4 diff=$5
data=$src/tests/data/foreign
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cat >"$tmp/perf.txt" <<'PERF'
prog 100 1.000000: 1 cpu-clock:
	          401000 leaf+0x1 (/bin/prog)
	          401200 main+0x3 (/bin/prog)

prog 100 2.000000: 1 cpu-clock:
	          401200 main+0x3 (/bin/prog)

PERF
printf 'main;leaf 3\nmain 1\n' >"$tmp/in.folded"

# Each foreign input, in each tool: exit 1, "error:", what it looks like, what pf reads.
for f in macos-sample.txt perf-report.txt profile.json random.bin; do
  gzip -c "$data/$f" >"$tmp/$f.gz"
  for input in "$data/$f" "$tmp/$f.gz"; do
    for tool in "$collapse" "$flamegraph" "$dot"; do
      "$tool" "$input" >"$tmp/out" 2>"$tmp/err"
      rc=$?
      name=$(basename "$tool")
      [ $rc -eq 1 ] || fail "$name $f: exit $rc, want 1"
      grep -q "^$name: error: .*pf reads perf script text, folded stacks" "$tmp/err" ||
        { fail "$name $f: no error naming the formats pf reads"; cat "$tmp/err"; }
      [ -s "$tmp/out" ] && fail "$name $f: wrote output"
    done
    "$diff" "$tmp/in.folded" "$input" >"$tmp/out" 2>"$tmp/err"
    [ $? -eq 1 ] && grep -q "pf reads perf script text" "$tmp/err" || fail "pf-diff $f: want exit 1"
  done
done
for pair in 'macos-sample.txt:macOS `sample` report' \
  'perf-report.txt:`perf report` output' \
  'profile.json:looks like JSON' 'random.bin:binary data'; do
  "$collapse" "$data/${pair%%:*}" >/dev/null 2>"$tmp/err"
  grep -qF "${pair#*:}" "$tmp/err" || fail "${pair%%:*} not named: $(cat "$tmp/err")"
done
# A DTrace aggregation is read now (as stackcollapse.pl folds it), by every tool.
"$collapse" "$data/dtrace-ustack.txt" >"$tmp/out" 2>"$tmp/err" || fail "DTrace: exit $?"
grep -qx 'scanner`_start;scanner`main;scanner`scan_file;scanner`hash_block 42' "$tmp/out" ||
  fail "DTrace stacks: $(cat "$tmp/out" "$tmp/err")"
for tool in "$flamegraph" "$dot"; do
  "$tool" "$data/dtrace-ustack.txt" >"$tmp/out" 2>"$tmp/err" || fail "$(basename "$tool") on DTrace: exit $?"
done
# --flamechart reads folded text only (DTrace's would be frames of blanks).
"$flamegraph" --flamechart "$data/dtrace-ustack.txt" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q 'DTrace stack aggregations, not folded stacks' "$tmp/err" ||
  fail "--flamechart on DTrace: want exit 1: $(cat "$tmp/err")"
# Text that is nothing pf knows.
printf 'hello\nworld\n' | "$collapse" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q 'nothing in the input parsed' "$tmp/err" || fail "junk text: want exit 1"

# What pf reads keeps working: perf script, folded (spaces in names, malformed lines), gzip.
"$collapse" "$tmp/perf.txt" | grep -qx 'prog;main;leaf 1' || fail "perf script"
gzip -c "$tmp/perf.txt" >"$tmp/perf.txt.gz"
"$collapse" "$tmp/perf.txt.gz" | grep -qx 'prog;main;leaf 1' || fail "perf script, gzip"
printf 'my prog;operator new(unsigned long) 2\nnot a stack\nmy prog 1\n' >"$tmp/spaces.folded"
out=$("$collapse" "$tmp/spaces.folded" 2>"$tmp/err") || fail "folded with a malformed line: exit $?"
[ "$out" = $'my prog 1\nmy prog;operator new(unsigned long) 2' ] || fail "folded with spaces: $out"
grep -q 'warning: 1 line' "$tmp/err" || fail "malformed folded line not counted"
"$dot" -q "$tmp/spaces.folded" | grep -q 'operator new(unsigned long)' || fail "pf-dot folded"
"$flamegraph" "$tmp/spaces.folded" 2>/dev/null | grep -q '<svg' || fail "pf-flamegraph folded"

# -f/--input-format.
"$dot" -q -f perf -n0 -e0 "$tmp/perf.txt" | grep -q 'label="prog\\nleaf\\n50.00%' || fail "pf-dot -f perf"
"$dot" -q --input-format=collapse "$tmp/in.folded" | grep -q 'label="main\\n100.00%' ||
  fail "pf-dot --input-format=collapse"
"$collapse" -f folded "$tmp/in.folded" | grep -qx 'main;leaf 3' || fail "pf-collapse -f folded"
"$collapse" --format=perf-script "$tmp/perf.txt" | grep -qx 'prog;main 1' || fail "pf-collapse --format"
"$flamegraph" -f collapse "$tmp/in.folded" | grep -q '<svg' || fail "pf-flamegraph -f collapse"
"$diff" -f collapse "$tmp/in.folded" "$tmp/in.folded" | grep -qx 'main;leaf 3 3' || fail "pf-diff -f collapse"
# Forced: folded stacks read as perf script text are not samples.
"$collapse" -f perf "$tmp/in.folded" >/dev/null 2>&1
[ $? -eq 1 ] || fail "pf-collapse -f perf on folded: want exit 1"
for tool in "$collapse" "$flamegraph" "$dot"; do
  for fmt in gprof prof pstats; do
    "$tool" -f $fmt "$tmp/in.folded" >/dev/null 2>"$tmp/err"
    [ $? -eq 2 ] && grep -q "does not read $fmt input; it reads perf" "$tmp/err" ||
      fail "$(basename "$tool") -f $fmt: want exit 2 naming what pf reads"
  done
done
# -f perf-data takes recordings only; -f of another profiler's format lets its reader refuse.
"$collapse" -f perf-data "$tmp/in.folded" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q 'not a perf.data recording' "$tmp/err" ||
  fail "-f perf-data on folded: want exit 1"
"$collapse" -f massif "$tmp/in.folded" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q 'not a massif file' "$tmp/err" ||
  fail "-f massif on folded: want exit 1"
# --value chooses a sample type by name or index; one the profile lacks is an error naming
# those it has; --snapshot takes a number, peak or last.
for tool in "$collapse" "$flamegraph" "$dot"; do
  "$tool" --value=samples "$tmp/in.folded" >/dev/null || fail "$(basename "$tool") --value=samples"
  "$tool" --value=0 "$tmp/in.folded" >/dev/null || fail "$(basename "$tool") --value=0"
  "$tool" --value=alloc_space "$tmp/in.folded" >/dev/null 2>"$tmp/err"
  [ $? -eq 2 ] && grep -q "alloc_space" "$tmp/err" && grep -q "samples" "$tmp/err" ||
    fail "$(basename "$tool") --value=alloc_space: want exit 2 naming the sample types"
  "$tool" --snapshot=first "$tmp/in.folded" >/dev/null 2>&1
  [ $? -eq 2 ] || fail "$(basename "$tool") --snapshot=first: want exit 2"
done
"$diff" --value=samples "$tmp/in.folded" "$tmp/in.folded" | grep -qx 'main;leaf 3 3' ||
  fail "pf-diff --value=samples"
# gprof2dot's spelling, --format=perf, names the input format in pf-dot too.
"$dot" -q --format=perf -n0 -e0 "$tmp/perf.txt" | grep -q 'label="prog\\nleaf\\n50.00%' ||
  fail "pf-dot --format=perf"
"$dot" -q --format=collapse "$tmp/in.folded" -o "$tmp/c.dot" && head -1 "$tmp/c.dot" | grep -q digraph ||
  fail "pf-dot --format=collapse -o c.dot"
"$dot" --format=pstats "$tmp/in.folded" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'does not read pstats' "$tmp/err" || fail "pf-dot --format=pstats: want exit 2"
"$diff" -f pstats "$tmp/in.folded" "$tmp/in.folded" >/dev/null 2>&1
[ $? -eq 2 ] || fail "pf-diff -f pstats: want exit 2"

# pf-dot: --focus matching nothing is an error naming the regex, as -z is.
"$dot" --focus=NOMATCH "$tmp/perf.txt" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "focus: no function matches 'NOMATCH'" "$tmp/err" ||
  { fail "--focus=NOMATCH: want exit 1"; cat "$tmp/err"; }
"$dot" -q --focus=leaf "$tmp/perf.txt" | grep -q 'leaf' || fail "--focus=leaf"

# pf-dot output formats: -o's suffix, refused suffixes, no binary on a terminal.
"$dot" -q "$tmp/perf.txt" -o "$tmp/g.gif" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'cannot write gif' "$tmp/err" || fail "-o g.gif: want exit 2"
[ -e "$tmp/g.gif" ] && fail "-o g.gif: file written"
"$dot" -q "$tmp/perf.txt" -o "$tmp/g.gv" && head -1 "$tmp/g.gv" | grep -q '^digraph' || fail "-o g.gv"
"$dot" -q "$tmp/perf.txt" -o "$tmp/g.dot" && head -1 "$tmp/g.dot" | grep -q '^digraph' || fail "-o g.dot"
"$flamegraph" "$tmp/in.folded" -o "$tmp/f.gif" 2>/dev/null
[ $? -eq 2 ] || fail "pf-flamegraph -o f.gif: want exit 2"
if command -v script >/dev/null; then
  for fmt in png pdf; do
    script -qec "'$dot' -q --format=$fmt '$tmp/perf.txt'" /dev/null >"$tmp/tty" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q "not writing $fmt to a terminal" "$tmp/tty" ||
      fail "pf-dot --format=$fmt on a terminal: exit $rc, want 2"
  done
  # Into a file, not a pipe: grep -q closing the pipe early would kill
  # script with SIGPIPE and fail the pipeline for no fault of pf-dot's.
  script -qec "'$dot' -q '$tmp/perf.txt'" /dev/null >"$tmp/tty" 2>&1
  grep -q digraph "$tmp/tty" || fail "DOT on a terminal"
fi

if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "format checks passed"
