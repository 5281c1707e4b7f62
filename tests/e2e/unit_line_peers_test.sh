#!/usr/bin/env bash
# The `# pf-unit:` line pf-collapse writes first (pf-folded(5)) does not change what the
# peers draw: flamegraph.pl skips it as a line of invalid format (and says "Ignored 1 lines
# with invalid format" on stderr), inferno-flamegraph silently; both draw the same SVG with
# and without it, with their main options. Skips (77) where the peers are not installed.
# Usage: unit_line_peers_test.sh PEERS_DIR PF_COLLAPSE
# (PEERS_DIR holds FlameGraph/flamegraph.pl and bin/inferno-flamegraph; $PF_PEERS_DIR wins.)
set -u -o pipefail
peers=${PF_PEERS_DIR:-$1} collapse=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
fg_pl=$peers/FlameGraph/flamegraph.pl
inferno=$peers/bin/inferno-flamegraph
have_pl=0 have_inferno=0
[ -f "$fg_pl" ] && command -v perl >/dev/null && have_pl=1
[ -x "$inferno" ] && have_inferno=1
if [ $have_pl = 0 ] && [ $have_inferno = 0 ]; then
  echo "SKIP: no flamegraph.pl or inferno-flamegraph under $peers"
  exit 77
fi
# perf script text of cpu-clock: its periods are nanoseconds, so the output names them.
ev() { printf 'prog 100 %s: %s cpu-clock:\n\t401000 %s+0x1 (/bin/prog)\n\t401100 main+0x2 (/bin/prog)\n\n' "$1" "$2" "$3"; }
{ ev 1.0 250000 leaf; ev 2.0 500000 other; ev 3.0 250000 leaf; } >"$tmp/t.txt"
"$collapse" "$tmp/t.txt" >"$tmp/unit.folded" || fail "pf-collapse exit $?"
[ "$(head -1 "$tmp/unit.folded")" = "# pf-unit: nanoseconds" ] ||
  fail "no unit line first: $(head -1 "$tmp/unit.folded")"
tail -n +2 "$tmp/unit.folded" >"$tmp/plain.folded"
grep -q '^prog;main;leaf 500000$' "$tmp/plain.folded" || fail "stacks: $(cat "$tmp/plain.folded")"
# flamegraph.pl walks Perl hashes: a fixed seed makes its output repeatable.
export PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0
for opts in "" "--flamechart" "--reverse" "--inverted"; do
  if [ $have_pl = 1 ]; then
    # shellcheck disable=SC2086
    perl "$fg_pl" $opts "$tmp/plain.folded" >"$tmp/pl-plain.svg" 2>/dev/null
    # shellcheck disable=SC2086
    perl "$fg_pl" $opts "$tmp/unit.folded" >"$tmp/pl-unit.svg" 2>"$tmp/pl.err" ||
      fail "flamegraph.pl $opts exit $?"
    cmp -s "$tmp/pl-plain.svg" "$tmp/pl-unit.svg" ||
      fail "flamegraph.pl $opts draws another SVG with the unit line"
    grep -q '<title>all (1,000,000 samples, 100%)</title>' "$tmp/pl-unit.svg" ||
      fail "flamegraph.pl $opts: root $(grep -o '<title>all[^<]*' "$tmp/pl-unit.svg")"
    grep -q "^Ignored 1 lines with invalid format$" "$tmp/pl.err" ||
      fail "flamegraph.pl $opts stderr: $(cat "$tmp/pl.err")"
  fi
  if [ $have_inferno = 1 ]; then
    # shellcheck disable=SC2086
    "$inferno" $opts "$tmp/plain.folded" >"$tmp/in-plain.svg" 2>/dev/null
    # shellcheck disable=SC2086
    "$inferno" $opts "$tmp/unit.folded" >"$tmp/in-unit.svg" 2>"$tmp/in.err" ||
      fail "inferno-flamegraph $opts exit $?"
    cmp -s "$tmp/in-plain.svg" "$tmp/in-unit.svg" ||
      fail "inferno-flamegraph $opts draws another SVG with the unit line"
    [ -s "$tmp/in.err" ] && fail "inferno-flamegraph $opts stderr: $(cat "$tmp/in.err")"
  fi
done
[ $failures -eq 0 ] && echo "unit line and peers: all checks passed"
exit $((failures > 0))
