#!/usr/bin/env bash
# pf-diff: difffolded.pl's semantics on the peer corpus's diff-folded cases (compared sorted,
# as inferno compares them), the report, and the self-explaining differential flame graph.
# Usage: diff_test.sh PF_DIFF PF_FLAMEGRAPH CORPUS_DIR
set -u -o pipefail
diff_bin=$1 fg=$2 corpus=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
d=$corpus/tests/data/diff-folded
if [ -d "$d" ]; then
  check() {  # check NAME OPTS BEFORE AFTER
    "$diff_bin" -q $2 "$d/$3" "$d/$4" | grep -v '^#' | LC_ALL=C sort >"$tmp/got"
    LC_ALL=C sort "$d/results/$1.txt" >"$tmp/want"
    cmp -s "$tmp/got" "$tmp/want" || { fail "$1 differs"; diff "$tmp/got" "$tmp/want" | head -5; }
  }
  check default "" before.txt after.txt
  check normalize "-n" before.txt after.txt
  check strip_hex "-s" before.txt after.txt
  # Decimal counts are kept, as difffolded.pl keeps them (inferno's expected file truncates
  # them); a fraction is kept to 9 decimals (difffolded.pl prints 15 significant digits).
  "$diff_bin" -q "$d/before_fractionals.txt" "$d/after.txt" >"$tmp/got"
  for want in 'dd;[unknown];read 14.234398324 13' \
      'dd;[unknown];read;system_call_[k];__fdget_pos_[k] 11.98 15' \
      'dd;[unknown];read;system_call_[k];sys_read_[k];vfs_read_[k];fsnotify_[k] 6.2 4'; do
    grep -qxF "$want" "$tmp/got" || fail "fractionals: no line '$want'"
  done
else
  echo "note: peer corpus not found at $corpus; corpus cases skipped"
fi
# Own cases: sorted output, 0 on the missing side, normalize, the header line.
printf 'main;a 10\nmain;b 30\n' >"$tmp/before.folded"
printf 'main;b 20\nmain;c 40\n' >"$tmp/after.folded"
"$diff_bin" "$tmp/before.folded" "$tmp/after.folded" >"$tmp/out" || fail "pf-diff exit $?"
printf '# pf-diff: before=%s after=%s\nmain;a 10 0\nmain;b 30 20\nmain;c 0 40\n' \
  "$tmp/before.folded" "$tmp/after.folded" | cmp -s - "$tmp/out" || { fail "plain output"; cat "$tmp/out"; }
"$diff_bin" -n "$tmp/before.folded" "$tmp/after.folded" | grep -v '^#' >"$tmp/out"
printf 'main;a 15 0\nmain;b 45 20\nmain;c 0 40\n' | cmp -s - "$tmp/out" || { fail "normalize"; cat "$tmp/out"; }
# Two differential profiles are refused, as regular files (the sorted merge) and from a pipe.
printf 'a;b 1 2\na;c 3 4\n' >"$tmp/d.folded"
for before in "$tmp/d.folded" -; do
  "$diff_bin" "$before" "$tmp/d.folded" <"$tmp/d.folded" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q 'not differential ones' "$tmp/err" ||
    fail "two differential profiles ($before): exit $rc, $(head -c 200 "$tmp/out" "$tmp/err")"
done
# Sorted regular files are merged line by line; pipes and unsorted files go through trees.
# Both ways give the same lines (also with -n), and an unsorted file is not mistaken.
printf 'main;a 3\nmain;a;x 2\nmain;b 5\nmain;c 1\n' >"$tmp/s1.folded"
printf 'main;a 1\nmain;b 9\nmain;d 4\n' >"$tmp/s2.folded"
printf 'main;d 4\nmain;b 9\nmain;a 1\n' >"$tmp/u2.folded"
for opt in "" -n; do
  "$diff_bin" $opt "$tmp/s1.folded" "$tmp/s2.folded" | grep -v '^#' >"$tmp/merged"
  "$diff_bin" $opt "$tmp/s1.folded" - <"$tmp/s2.folded" | grep -v '^#' >"$tmp/tree"
  cat "$tmp/s2.folded" | "$diff_bin" $opt "$tmp/s1.folded" - | grep -v '^#' >"$tmp/piped"
  "$diff_bin" $opt "$tmp/s1.folded" "$tmp/u2.folded" | grep -v '^#' >"$tmp/unsorted"
  cmp -s "$tmp/merged" "$tmp/tree" && cmp -s "$tmp/merged" "$tmp/piped" &&
    cmp -s "$tmp/merged" "$tmp/unsorted" || { fail "merge vs tree ($opt)"; diff "$tmp/merged" "$tmp/tree"; }
done
"$diff_bin" "$tmp/s1.folded" "$tmp/s2.folded" | grep -v '^#' |
  cmp -s - <(printf 'main;a 3 1\nmain;a;x 2 0\nmain;b 5 9\nmain;c 1 0\nmain;d 0 4\n') ||
  fail "sorted merge output"
# The report: largest absolute change first, with totals.
"$diff_bin" --report "$tmp/before.folded" "$tmp/after.folded" >"$tmp/report" || fail "report exit"
grep -q "^after:  .*60 samples" "$tmp/report" || fail "report header: $(head -2 "$tmp/report")"
first=$(grep -E '^ +[+-][0-9]' "$tmp/report" | head -1)
echo "$first" | grep -q '+40 .* new .* c$' || fail "report: largest change first, got: $first"
"$diff_bin" --report --top=1 "$tmp/before.folded" "$tmp/after.folded" | grep -cE '^ +[+-][0-9]' |
  grep -qx 1 || fail "--top=1"
# The flame graph explains itself.
"$diff_bin" "$tmp/before.folded" "$tmp/after.folded" | "$fg" >"$tmp/diff.svg" || fail "pf-flamegraph"
grep -q '>Differential Flame Graph<' "$tmp/diff.svg" || fail "no differential title"
grep -q 'before.folded → .*after.folded .*red: grew, blue: shrank' "$tmp/diff.svg" || fail "no explaining subtitle"
# An empty profile is said to be, and why.
: >"$tmp/empty.folded"
"$diff_bin" "$tmp/empty.folded" "$tmp/after.folded" 2>"$tmp/err" >/dev/null || fail "empty BEFORE: exit $?"
grep -q "^pf-diff: warning: BEFORE .*empty.folded: the input is empty" "$tmp/err" ||
  fail "empty BEFORE message: $(cat "$tmp/err")"
# Usage errors.
"$diff_bin" "$tmp/before.folded" >/dev/null 2>&1
[ $? -eq 2 ] || fail "one profile: want exit 2"
"$diff_bin" "$tmp/before.folded" /nonexistent >/dev/null 2>&1
[ $? -eq 1 ] || fail "missing file: want exit 1"
if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "pf-diff checks passed"
