#!/usr/bin/env bash
# pf-collapse writing other profilers' formats, read back by their own tools: a recording of
# tests/programs/callpath written as pprof (--format=pprof, -o NAME.pb.gz) and as callgrind
# (--format=callgrind, -o callgrind.out.NAME). Go pprof's -raw output, folded again here, must
# equal pf-collapse's folded output stack for stack and in total (skipped with a note when no
# Go pprof is found: $PPROF, PEERS_DIR/bin/pprof or pprof on PATH); callgrind_annotate's
# per-function self costs must equal the leaf sums of the folded output, its inclusive costs
# the once-per-stack totals of the functions that never recur in a stack, and its total the
# folded total; gprof2dot -f callgrind reads the file (PEERS_DIR/gprof2dot/gprof2dot.py, when
# there). Same input, same bytes. The folded oracle is pf-collapse itself: its stacks are
# checked against perf and the Perl scripts by the other tests.
#
# Usage: collapse_out_test.sh PF_RECORD PF_COLLAPSE CALLPATH [PEERS_DIR]
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (perf_event_open refused, or no
# callgrind_annotate).

set -u
set -o pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 PF_RECORD PF_COLLAPSE CALLPATH [PEERS_DIR]" >&2
  exit 2
fi
record=$1 collapse=$2 callpath=$3 peers=${4:-}
gprof2dot=${peers:+$peers/gprof2dot/gprof2dot.py}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pf-collapse-out.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

if ! "$record" -o "$tmp/probe.pfs" -- true 2>"$tmp/probe.err"; then
  grep -q "cannot open event" "$tmp/probe.err" &&
    skip "perf_event_open is refused here: $(head -c 300 "$tmp/probe.err")"
  fail "pf-record -- true failed: $(cat "$tmp/probe.err")"
fi
"$record" -F 999 -g -o "$tmp/cp.pfs" -- "$callpath" 1 >/dev/null 2>"$tmp/rec.err" ||
  fail "pf-record -- callpath failed: $(cat "$tmp/rec.err")"

# The oracle: pf-collapse's folded stacks (the unit's comment line dropped).
"$collapse" "$tmp/cp.pfs" | grep -v '^#' >"$tmp/cp.folded" || fail "pf-collapse failed"
total=$(awk '{ s += $NF } END { print s }' "$tmp/cp.folded")
[ "$total" -gt 0 ] || fail "the recording has no weight"
echo "recording: $(wc -l <"$tmp/cp.folded") stacks, total $total ns"

# --- pprof ---------------------------------------------------------------------------------
"$collapse" -o "$tmp/cp.pb.gz" "$tmp/cp.pfs" || fail "pf-collapse -o cp.pb.gz failed"
[ "$(head -c 2 "$tmp/cp.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] ||
  fail "-o cp.pb.gz is not gzipped"
"$collapse" --format=pprof "$tmp/cp.pfs" >"$tmp/stdout.pb.gz" || fail "--format=pprof failed"
cmp -s "$tmp/cp.pb.gz" "$tmp/stdout.pb.gz" || fail "--format=pprof and -o cp.pb.gz differ"
"$collapse" -o "$tmp/again.pb.gz" "$tmp/cp.pfs" && cmp -s "$tmp/cp.pb.gz" "$tmp/again.pb.gz" ||
  fail "the same recording gave different pprof bytes"
"$collapse" -o "$tmp/plain.pb" "$tmp/cp.pfs" || fail "-o plain.pb failed"
gzip -dc "$tmp/cp.pb.gz" | cmp -s - "$tmp/plain.pb" || fail "-o NAME.pb is not the profile unzipped"

pprof=${PPROF:-}
[ -z "$pprof" ] && [ -n "$peers" ] && [ -x "$peers/bin/pprof" ] && pprof=$peers/bin/pprof
[ -z "$pprof" ] && pprof=$(command -v pprof || true)
if [ -z "$pprof" ] && command -v go >/dev/null && go tool -n pprof >/dev/null 2>&1; then
  pprof=$tmp/pprof  # Debian's golang-go has pprof as a go tool
  printf '#!/bin/sh\nexec go tool pprof "$@"\n' >"$pprof" && chmod +x "$pprof"
fi
if [ -n "$pprof" ]; then
  # -raw prints the samples (value: location ids, leaf first) and each location's function.
  "$pprof" -raw "$tmp/cp.pb.gz" >"$tmp/raw.txt" 2>"$tmp/raw.err" ||
    fail "pprof -raw cannot read it: $(head -3 "$tmp/raw.err")"
  grep -q '^cpu/nanoseconds\[dflt\]$' "$tmp/raw.txt" || fail "pprof: no cpu/nanoseconds sample type"
  "$pprof" -raw "$tmp/plain.pb" 2>/dev/null | cmp -s - "$tmp/raw.txt" || fail "pprof reads NAME.pb otherwise"
  LC_ALL=C awk '
    /^Samples:/ { part = "s"; next }
    /^Locations/ { part = "l"; next }
    /^Mappings/ { part = "" }
    part == "s" && /^ *[0-9]+: / {
      n++; value[n] = $1 + 0; sub(/^ *[0-9]+: /, ""); ids[n] = $0; next }
    part == "l" && /^ *[0-9]+: 0x/ {
      id = $1 + 0; sub(/^ *[0-9]+: 0x[0-9a-f]+ (M=[0-9]+ )?/, ""); sub(/ :0 s=0(\(\))?$/, "")
      name[id] = $0 }
    END {
      for (i = 1; i <= n; i++) {
        k = split(ids[i], loc, " "); stack = ""
        for (j = k; j >= 1; j--) stack = stack (stack == "" ? "" : ";") name[loc[j]]
        sum[stack] += value[i]
      }
      for (s in sum) print s, sum[s]
    }' "$tmp/raw.txt" | LC_ALL=C sort >"$tmp/pprof.folded"
  LC_ALL=C sort "$tmp/cp.folded" | diff -u - "$tmp/pprof.folded" >"$tmp/pprof.diff" ||
    fail "pprof -raw's stacks differ from pf-collapse's: $(head -20 "$tmp/pprof.diff")"
  grep -q "of ${total}ns total" <("$pprof" -top -unit=ns "$tmp/cp.pb.gz" 2>/dev/null) ||
    fail "pprof -top's total is not $total ns: $("$pprof" -top -unit=ns "$tmp/cp.pb.gz" 2>&1 | head -3)"
  echo "pprof: $(wc -l <"$tmp/pprof.folded") stacks and the total equal pf-collapse's"
  # A recording's locations have addresses (a function's start, a file offset in its binary)
  # and its mappings build-ids: main at nm's address, in callpath's mapping with its build-id.
  prog=$(basename "$callpath")
  build_id=$(readelf -n "$callpath" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
  main_at=$(nm "$callpath" | awk '$2 == "T" && $3 == "main" { sub(/^0+/, "", $1); print $1 }')
  map_id=$(awk -v p="$prog" -v b="$build_id" '
    /^Mappings/ { m = 1; next } m && $3 == p && $4 == b { sub(/:$/, "", $1); print $1 }' \
    "$tmp/raw.txt")
  [ -n "$build_id" ] && [ -n "$map_id" ] ||
    fail "pprof: no mapping of $prog with build-id $build_id: $(sed -n '/^Mappings/,$p' "$tmp/raw.txt")"
  grep -Eq "^ +[0-9]+: 0x$main_at M=$map_id main " "$tmp/raw.txt" ||
    fail "pprof: main is not at 0x$main_at in mapping $map_id: $(grep ' main ' "$tmp/raw.txt")"
  echo "pprof: main at its address, $prog's mapping has its build-id"
else
  echo "note: no Go pprof (PPROF, PEERS_DIR/bin/pprof, PATH): its reading is not checked"
fi

# --- callgrind -----------------------------------------------------------------------------
command -v callgrind_annotate >/dev/null || skip "callgrind_annotate (valgrind) is not installed"
"$collapse" -o "$tmp/callgrind.out.cp" "$tmp/cp.pfs" || fail "-o callgrind.out.cp failed"
head -1 "$tmp/callgrind.out.cp" | grep -qx '# callgrind format' ||
  fail "-o callgrind.out.cp did not choose callgrind"
"$collapse" --format=callgrind "$tmp/cp.pfs" | cmp -s - "$tmp/callgrind.out.cp" ||
  fail "--format=callgrind and -o callgrind.out.cp differ"
# FUNCTION COST lines of callgrind_annotate (threshold 100%: every function), "." as 0.
annotate() {
  callgrind_annotate --threshold=100 "$@" "$tmp/callgrind.out.cp" >"$tmp/ann.txt" 2>&1 ||
    fail "callgrind_annotate $*: $(head -3 "$tmp/ann.txt")"
  LC_ALL=C awk '
    /file:function/ { on = 1; next }
    on && /^-+$/ { next }
    on && /\?\?\?:/ {
      cost = $1; gsub(/,/, "", cost); if (cost == ".") cost = 0
      fn = $0; sub(/^.*\?\?\?:/, "", fn); sub(/ \[(\[[^]]*\]|[^]]*)\]$/, "", fn)
      print fn, cost }' "$tmp/ann.txt" | LC_ALL=C sort
}
annotate >"$tmp/self.cg"
LC_ALL=C awk '{ n = split($1, f, ";"); self[f[n]] += $2; for (i = 1; i <= n; i++) seen[f[i]] = 1 }
  END { for (x in seen) print x, self[x] + 0 }' "$tmp/cp.folded" | LC_ALL=C sort >"$tmp/self.pf"
diff -u "$tmp/self.pf" "$tmp/self.cg" >"$tmp/self.diff" ||
  fail "callgrind_annotate's self costs differ from pf's: $(head -20 "$tmp/self.diff")"
commas=$(echo "$total" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')
grep -q "^ *$commas (100.0%)  PROGRAM TOTALS" "$tmp/ann.txt" || fail "callgrind_annotate's total is not $total: $(grep TOTALS "$tmp/ann.txt")"
annotate --inclusive=yes >"$tmp/incl.cg"
LC_ALL=C awk '{ n = split($1, f, ";"); delete in_stack
    for (i = 1; i <= n; i++) { if (f[i] in in_stack) recurs[f[i]] = 1; in_stack[f[i]] = 1 }
    for (x in in_stack) total[x] += $2 }
  END { for (x in total) if (!(x in recurs)) print x, total[x] }' "$tmp/cp.folded" |
  LC_ALL=C sort >"$tmp/incl.pf"
LC_ALL=C join "$tmp/incl.pf" "$tmp/incl.cg" | awk '$2 != $3' >"$tmp/incl.diff"
[ -s "$tmp/incl.diff" ] && fail "inclusive costs differ (function pf callgrind): $(head "$tmp/incl.diff")"
[ "$(wc -l <"$tmp/incl.pf")" -gt 3 ] || fail "too few functions to compare inclusive costs"
echo "callgrind: $(wc -l <"$tmp/self.cg") functions' self and inclusive costs equal pf's"

if [ -n "$gprof2dot" ] && [ -f "$gprof2dot" ] && command -v python3 >/dev/null; then
  python3 "$gprof2dot" -f callgrind "$tmp/callgrind.out.cp" >"$tmp/g.dot" 2>"$tmp/g.err" ||
    fail "gprof2dot -f callgrind cannot read it: $(tail -3 "$tmp/g.err")"
  grep -q 'work_a' "$tmp/g.dot" || fail "gprof2dot's graph has no work_a"
  echo "gprof2dot -f callgrind: read"
else
  echo "note: no gprof2dot under PEERS_DIR ($peers): not checked"
fi
echo "PASS"
