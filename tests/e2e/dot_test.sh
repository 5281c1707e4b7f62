#!/usr/bin/env bash
# pf-dot as a user meets it: exact totals from perf script text worked out by hand (the numbers
# gprof2dot --total=callstacks gives for it), no process nodes unless --processes, unresolved
# frames by module and address, DOT that Graphviz parses, rendering through libgvc when linked,
# determinism and the usage errors.
# Usage: dot_test.sh PF_DOT
set -u -o pipefail
dot_bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# Five samples, one without a call chain (gprof2dot skips it: the total is 4).
cat >"$tmp/in.txt" <<'PERF'
prog 100 1.000000: 1 cpu-clock:
	          401000 leaf+0x1 (/bin/prog)
	          401100 mid+0x2 (/bin/prog)
	          401200 main+0x3 (/bin/prog)

prog 100 2.000000: 1 cpu-clock:
	          401000 leaf+0x1 (/bin/prog)
	          401200 main+0x3 (/bin/prog)

prog 100 3.000000: 1 cpu-clock:
	          7f00aa [unknown] (/lib/libx.so)
	          401200 main+0x3 (/bin/prog)

other 200 4.000000: 1 cpu-clock:
	          401200 main+0x3 (/bin/prog)

other 200 5.000000: 1 cpu-clock:

PERF
"$dot_bin" -q -n0 -e0 "$tmp/in.txt" >"$tmp/g.dot" || fail "pf-dot exit $?"
# Node labels, exactly gprof2dot's: module, name, total %, (self %).
labels=$(grep -o 'label="[^"]*"' "$tmp/g.dot" | grep '%\\n(' | LC_ALL=C sort)
want='label="libx.so\n7f00aa\n25.00%\n(25.00%)"
label="prog\nleaf\n50.00%\n(50.00%)"
label="prog\nmain\n100.00%\n(25.00%)"
label="prog\nmid\n25.00%\n(0.00%)"'
[ "$labels" = "$want" ] || { fail "node labels"; echo "$labels"; }
grep -qE 'label="(prog|other)\\n[0-9.]+%' "$tmp/g.dot" && fail "process nodes drawn without --processes"
# Edges: main->leaf, main->mid, mid->leaf and main->[libx.so ...], 25% each.
[ "$(grep -c -- '->.*label="25.00%"' "$tmp/g.dot")" = 4 ] || { fail "edges"; grep -- '->' "$tmp/g.dot"; }
"$dot_bin" -q -n0 -e0 --processes "$tmp/in.txt" | grep -q 'label="prog\\n60.00%\\n(0.00%)"' ||
  fail "--processes: prog is 3 of 5 samples"
"$dot_bin" -q -n0 -e0 --merge-unknown "$tmp/in.txt" | grep -q 'label="\[libx.so\]\\n' ||
  fail "--merge-unknown"
"$dot_bin" -q -n0 -e0 --node-label=self-time --node-label=total-time-percentage "$tmp/in.txt" |
  grep -q 'label="prog\\nleaf\\n(2)\\n50.00%"' || fail "--node-label order and raw weights"
"$dot_bin" --node-label=bogus "$tmp/in.txt" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--node-label=bogus: want exit 2"
# Folded input keeps its first frame: another profiler may have put a function there.
printf 'main;a 3\nmain;b 1\n' | "$dot_bin" -q -n0 -e0 | grep -q 'label="main\\n100.00%' ||
  fail "folded: first frame dropped"
# A folded file is read without a stack tree (its distinct stacks listed); standard input
# goes through the tree: the same graph, report and warning either way.
for i in $(seq 300); do
  echo "main;f$((i % 7));g$((i % 5));f$((i % 3)) $((i % 4 + 1))"
done | shuf --random-source=<(yes 3) >"$tmp/any.folded"
printf '# pf-unit: nanoseconds\nmain;a 3\nmain;b 1\n' >"$tmp/ns.folded"
for args in "" "-n0 -e0" "--focus=f3 -n0" "--root=g2 --depth=1" "--format=top" "--format=tree"; do
  # shellcheck disable=SC2086
  "$dot_bin" -q $args "$tmp/any.folded" >"$tmp/list.out" 2>&1 || fail "folded file ($args): exit $?"
  # shellcheck disable=SC2086
  "$dot_bin" -q $args - <"$tmp/any.folded" 2>&1 | cmp -s - "$tmp/list.out" ||
    fail "folded file ($args): not the graph of its tree"
done
"$dot_bin" -q --format=top "$tmp/ns.folded" | grep -q '^Unit: nanoseconds' ||
  fail "folded file: its unit lost"
"$dot_bin" -q --focus=nothing "$tmp/any.folded" >/dev/null 2>&1
[ $? -eq 1 ] || fail "folded file, --focus matching nothing: want exit 1"
# Deterministic, and the same from stdin.
"$dot_bin" -q -n0 -e0 - <"$tmp/in.txt" | cmp -s - "$tmp/g.dot" || fail "stdin or determinism"
# Graphviz parses it.
if command -v dot >/dev/null; then
  dot -Tsvg "$tmp/g.dot" >/dev/null || fail "dot -Tsvg refused the output"
else
  echo "note: Graphviz's dot not installed; DOT parse check skipped"
fi
# Rendering: through libgvc when pf-dot links it, else a usage error naming the pipe.
if ldd "$dot_bin" 2>/dev/null | grep libgvc >/dev/null; then
  "$dot_bin" -q "$tmp/in.txt" -o "$tmp/g.svg" || fail "-o g.svg exit $?"
  grep -q '<svg' "$tmp/g.svg" && grep -q '>main<' "$tmp/g.svg" || fail "svg render"
  "$dot_bin" -q --format=png "$tmp/in.txt" >"$tmp/g.png" || fail "png exit $?"
  [ "$(head -c 4 "$tmp/g.png" | tail -c 3)" = PNG ] || fail "png magic"
  "$dot_bin" -q "$tmp/in.txt" -o "$tmp/g.pdf" || fail "pdf exit $?"
  [ "$(head -c 4 "$tmp/g.pdf")" = "%PDF" ] || fail "pdf magic"
else
  "$dot_bin" -q --format=svg "$tmp/in.txt" 2>"$tmp/err" >/dev/null
  [ $? -eq 2 ] && grep -q 'dot -Tsvg' "$tmp/err" || fail "svg without libgvc: want exit 2 and a hint"
fi
# Usage and data errors.
"$dot_bin" --total=callratios "$tmp/in.txt" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--total=callratios: want exit 2"
"$dot_bin" --format=jpg "$tmp/in.txt" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--format=jpg: want exit 2"
"$dot_bin" -z nosuchfunction "$tmp/in.txt" >/dev/null 2>&1
[ $? -eq 1 ] || fail "-z matching nothing: want exit 1"
# --focus matching nothing is an error too, saying what was read; an empty input is said to be.
"$dot_bin" --focus=nosuchfunction "$tmp/in.txt" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "--focus matching nothing: want exit 1"
grep -qx "pf-dot: error: --focus: no function matches 'nosuchfunction'" "$tmp/err" ||
  fail "--focus message: $(cat "$tmp/err")"
# Filters that match, but together leave no sample, say what was read.
"$dot_bin" --focus=main --ignore=main "$tmp/in.txt" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "--focus with --ignore leaving nothing: want exit 1"
grep -q '^pf-dot: error: --focus=main, --ignore=main left none of the .* read from 5 samples' \
  "$tmp/err" || fail "filters message: $(cat "$tmp/err")"
: >"$tmp/empty.txt"
"$dot_bin" "$tmp/empty.txt" 2>"$tmp/err" >/dev/null
grep -qx 'pf-dot: warning: the input is empty' "$tmp/err" || fail "empty input message: $(cat "$tmp/err")"
"$dot_bin" /nonexistent >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q '^pf-dot: error: ' "$tmp/err" || fail "missing file: want exit 1"
if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "pf-dot checks passed"
