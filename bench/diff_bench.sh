#!/usr/bin/env bash
# Benchmark: pf-diff against difffolded.pl (when found) on two profiles of N unique stacks
# (default 1,000,000 each, about 600 MB each): wall time and peak RSS, for sorted files
# (merged line by line), for the same files through a pipe (stack trees) and for the report.
# Not a ctest test: it takes minutes. See bench/README.md.
#
#   bench/diff_bench.sh [--stacks N]        DIFFFOLDED_PL=/path/to/difffolded.pl to compare
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
stacks=1000000
[ "${1:-}" = --stacks ] && stacks=$2
cache=${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench
mkdir -p "$cache"
gen=$repo/../shared/bench/synth_folded.py
PF_DIFF=${PF_DIFF:-$repo/build/bin/pf-diff}
PF_COLLAPSE=${PF_COLLAPSE:-$repo/build/bin/pf-collapse}
DIFFPL=${DIFFFOLDED_PL:-$(command -v difffolded.pl || true)}
[ -x "$PF_DIFF" ] || { echo "pf-diff not built: $PF_DIFF" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
# Two profiles that share two thirds of their stacks (seeds 1 and 2 of the generator give
# different stacks, so the "after" file is a mix), both sorted as pf-collapse writes them.
a=$cache/diff$stacks.before.folded b=$cache/diff$stacks.after.folded
if [ ! -s "$a" ] || [ ! -s "$b" ]; then
  [ -f "$gen" ] || { echo "no $gen to generate the inputs" >&2; exit 2; }
  echo "generating inputs ..." >&2
  python3 "$gen" "$stacks" 1 | "$PF_COLLAPSE" -o "$a"
  { awk 'NR % 3 != 0 { $NF = $NF * 2 + NR % 5; print }' "$a"
    python3 "$gen" $((stacks / 3)) 2; } | "$PF_COLLAPSE" -o "$b"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # run LABEL CMD...
  /usr/bin/time -f '%e %M' -o "$work/t" "${@:2}" >"$work/out" 2>"$work/err"
  local rc=$? t m
  read -r t m <"$work/t"
  printf '%-34s %8.2f s %8.0f MiB  exit %d\n' "$1" "$t" "$((m / 1024))" "$rc"
  echo "$t" >"$work/last"
}
ls -la "$a" "$b" | awk '{ printf "%s %d MB\n", $NF, $5 / 1e6 }'
run "pf-diff (sorted files)" "$PF_DIFF" "$a" "$b"
pf=$(cat "$work/last"); grep -v '^#' "$work/out" >"$work/pf.txt"
run "pf-diff (pipe: stack trees)" sh -c "cat '$b' | '$PF_DIFF' '$a' -"
grep -v '^#' "$work/out" | cmp -s - "$work/pf.txt" || echo "  (output differs from the merge!)"
run "pf-diff --report" "$PF_DIFF" --report "$a" "$b"
if [ -n "$DIFFPL" ]; then
  run "difffolded.pl" perl "$DIFFPL" "$a" "$b"
  pl=$(cat "$work/last")
  LC_ALL=C sort "$work/out" | cmp -s - "$work/pf.txt" && same=identical || same=DIFFERENT
  echo "difffolded.pl / pf-diff: $(echo "$pl / $pf" | bc -l | cut -c1-5)x; sorted output $same"
else
  echo "difffolded.pl not found (set DIFFFOLDED_PL) — peer skipped"
fi
