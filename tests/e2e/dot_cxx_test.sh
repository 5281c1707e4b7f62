#!/usr/bin/env bash
# pf-dot on a real C++ recording (tests/programs/cxx_names.cpp, recorded with pf-record):
# two functors' operator(), two lambdas of main and three methods of std::map's red-black tree
# must be separate nodes with labels that tell them apart; long template names are elided in
# the middle (std::_Rb_tree<...>::_M_erase), never at the end; and gprof2dot -f perf gives the
# same operator() and lambda labels where it is installed.
# Usage: dot_cxx_test.sh PF_RECORD PF_DOT CXX_NAMES [GPROF2DOT]
# Exit status: 0 pass, 1 fail, 77 skip (perf_event_open refused here).
set -u -o pipefail
record=$1 dot=$2 prog=$3 gprof2dot=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

if ! "$record" -q -F 999 -g -o "$tmp/rec.pfs" -- "$prog" 40 >/dev/null 2>"$tmp/err"; then
  grep -q "cannot open event" "$tmp/err" && { echo "SKIP: perf_event_open refused"; exit 77; }
  echo "FAIL: pf-record: $(cat "$tmp/err")"
  exit 1
fi
"$dot" -q -n0 -e0 --nodecount=0 "$tmp/rec.pfs" >"$tmp/g.dot" || fail "pf-dot exit $?"
# Node labels are "module\nname\ntotal%\n(self%)": keep the names.
labels=$(grep -o 'label="[^"]*%\\n([^"]*"' "$tmp/g.dot" |
  sed -E 's/^label="[^\\]*\\n//; s/\\n[0-9.]+%\\n\(.*$//' | sort)
for want in 'Hasher::operator()' 'Mixer::operator()' 'main::{lambda(int)#1}::operator()' \
  'main::{lambda(int, int)#2}::operator()' 'std::_Rb_tree<...>::_M_erase'; do
  grep -qxF "$want" <<<"$labels" || fail "no label '$want'"
done
# The tree's methods: at least two, each label distinct, each ending in its own name.
tree=$(grep -F 'std::_Rb_tree<...>::' <<<"$labels" | sort)
[ "$(wc -l <<<"$tree")" -ge 2 ] || fail "fewer than two _Rb_tree methods: $tree"
[ -z "$(uniq -d <<<"$labels")" ] || fail "labels shared by two nodes: $(uniq -d <<<"$labels")"
grep -q '_Rb_tree<std::' <<<"$labels" && fail "a tree label not elided"
awk 'length > 210 { exit 1 }' <<<"$labels" || fail "a label longer than 200 characters"
# gprof2dot reads the same names from perf script text (without -s it does not shorten them).
if [ -n "$gprof2dot" ] && [ -f "$gprof2dot" ] && command -v python3 >/dev/null &&
  command -v perf >/dev/null; then
  if perf script -i "$tmp/rec.pfs" >"$tmp/perf.txt" 2>/dev/null; then
    python3 "$gprof2dot" -f perf -n0 -e0 "$tmp/perf.txt" >"$tmp/gp.dot" 2>/dev/null &&
      for want in 'Hasher::operator()' 'main::{lambda(int)#1}::operator()'; do
        grep -qF "\\n$want\\n" "$tmp/gp.dot" || fail "gprof2dot has no '$want'"
      done
  fi
fi
if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "pf-dot C++ name checks passed"
