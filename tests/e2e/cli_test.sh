#!/usr/bin/env bash
# The command line of pf-collapse as a user meets it: help, version, exit codes, messages,
# stdin and files, -o, compressed input, a closed pipe, warnings and -q.
# Usage: cli_test.sh PF_COLLAPSE SOURCE_DIR CORPUS_DIR
set -u -o pipefail
bin=$1
src=$2
corpus=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_rc() {  # expect_rc WANT DESCRIPTION -- COMMAND...
  local want=$1 what=$2
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "$what: exit $rc, want $want ($(head -c 300 "$tmp/err"))"
}

# --help, --version
expect_rc 0 "--help" -- "$bin" --help
grep -q '^Usage: pf-collapse' "$tmp/out" || fail "--help prints no usage line"
[ -s "$tmp/err" ] && fail "--help writes to stderr"
expect_rc 0 "--version" -- "$bin" --version
grep -Eq '^pf-collapse \(pf\) [0-9]+\.[0-9]+\.[0-9]+$' "$tmp/out" || fail "--version: $(cat "$tmp/out")"

# Usage errors: exit 2, the error and a one-line hint.
for args in "--bogus" "--weight=bogus" "--include=(" "--format=xml" "-j" "-n" "-j 1 -n 2"; do
  expect_rc 2 "usage error $args" -- "$bin" $args
  [ "$(wc -l <"$tmp/err")" -eq 2 ] || fail "usage error $args: want 2 lines, got: $(cat "$tmp/err")"
  grep -q "^pf-collapse: error: " "$tmp/err" || fail "usage error $args: $(cat "$tmp/err")"
  grep -q "^Try 'pf-collapse --help'" "$tmp/err" || fail "usage error $args: no hint"
done

# Runtime errors: exit 1, "pf-collapse: error: FILE: what".
expect_rc 1 "missing file" -- "$bin" /nonexistent/in.txt
grep -qx "pf-collapse: error: /nonexistent/in.txt: cannot open: No such file or directory" \
  "$tmp/err" || fail "missing file message: $(cat "$tmp/err")"
head -c 4096 /dev/urandom >"$tmp/random.bin"
expect_rc 1 "binary input" -- "$bin" "$tmp/random.bin"
grep -q "binary data" "$tmp/err" || fail "binary input message: $(cat "$tmp/err")"
printf 'PERFILE2\x68\0\0\0\0\0\0\0' >"$tmp/perf.data"
expect_rc 1 "broken perf.data input" -- "$bin" "$tmp/perf.data"
grep -q "perf.data header is truncated" "$tmp/err" || fail "perf.data message: $(cat "$tmp/err")"

# Files, stdin and "-" agree; gzip input; -o writes a file.
demo="$src/tests/data/demo-perf-script.txt.gz"
gzip -dc "$demo" >"$tmp/demo.txt"
"$bin" "$tmp/demo.txt" >"$tmp/a" || fail "file input"
"$bin" <"$tmp/demo.txt" >"$tmp/b" || fail "stdin input"
"$bin" - <"$tmp/demo.txt" >"$tmp/c" || fail "- input"
"$bin" "$demo" >"$tmp/d" || fail "gzip input"
"$bin" -o "$tmp/e" "$tmp/demo.txt" || fail "-o"
for f in b c d e; do cmp -s "$tmp/a" "$tmp/$f" || fail "output $f differs from file input"; done
grep -q '^callpath;.*main;work_a;spin [0-9]*$' "$tmp/a" || fail "demo: no callpath;...;main;work_a;spin"
[ -s "$tmp/a" ] || fail "demo output empty"
# inferno-collapse-perf's -n/--nthreads is --threads.
"$bin" -n 1 "$tmp/demo.txt" >"$tmp/n1" || fail "-n 1: exit $?"
"$bin" --nthreads=2 "$tmp/demo.txt" >"$tmp/n2" || fail "--nthreads=2: exit $?"
cmp -s "$tmp/a" "$tmp/n1" && cmp -s "$tmp/a" "$tmp/n2" || fail "-n/--nthreads change the output"
# An empty result is said to be, and why.
"$bin" --include=nosuchfunction "$tmp/demo.txt" 2>"$tmp/err" >"$tmp/out" || fail "--include matching nothing: exit $?"
[ -s "$tmp/out" ] && fail "--include matching nothing: output"
grep -q "^pf-collapse: warning: --include left none of the .* read from [0-9]* samples" "$tmp/err" ||
  fail "--include matching nothing: $(cat "$tmp/err")"
# A failing run leaves no output file behind.
"$bin" -o "$tmp/never" /nonexistent 2>/dev/null
[ -e "$tmp/never" ] && fail "-o left a file after an error"
ls "$tmp" | grep -q 'tmp-' && fail "-o left a temporary file"

# Merging folded files sums them.
"$bin" "$tmp/a" "$tmp/a" >"$tmp/twice" || fail "merge"
awk '/^# pf-unit: / { print; next } { n = $NF; sub(/ [0-9]+$/, ""); printf "%s %.0f\n", $0, n * 2 }' \
  "$tmp/a" | cmp -s - "$tmp/twice" || fail "merge does not sum"

# Warnings are counted, one line, and -q silences them.
printf 'prog 1 1.0: 1 cycles:\n\t1 f (x)\n\tnot a frame\n\n' >"$tmp/bad.txt"
expect_rc 0 "skipped lines" -- "$bin" "$tmp/bad.txt"
grep -qx "pf-collapse: warning: 1 line skipped, first at $tmp/bad.txt:3" "$tmp/err" ||
  fail "warning format: $(cat "$tmp/err")"
expect_rc 0 "quiet" -- "$bin" -q "$tmp/bad.txt"
[ -s "$tmp/err" ] && fail "-q still prints: $(cat "$tmp/err")"

# A closed pipe downstream ends quietly with status 0.
awk 'BEGIN { for (i = 0; i < 400000; i++) printf "comm;frame_%d;leaf_%d 1\n", i, i }' >"$tmp/many.folded"
"$bin" "$tmp/many.folded" 2>"$tmp/pipe_err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "closed pipe: exit $rc"
[ -s "$tmp/pipe_err" ] && fail "closed pipe printed: $(cat "$tmp/pipe_err")"

# The peer's CLI case: --all from a file and from stdin.
vx="$corpus/flamegraph/test/perf-vertx-stacks-01.txt"
if [ -f "$vx" ]; then
  "$bin" --all "$vx" | cmp -s - "$corpus/flamegraph/test/results/perf-vertx-stacks-01-collapsed-all.txt" ||
    fail "vertx --all from a file"
  "$bin" --all <"$vx" | cmp -s - "$corpus/flamegraph/test/results/perf-vertx-stacks-01-collapsed-all.txt" ||
    fail "vertx --all from stdin"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all CLI checks passed"
