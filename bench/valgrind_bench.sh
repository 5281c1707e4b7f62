#!/usr/bin/env bash
# Benchmark: pf on large valgrind outputs against valgrind's and gprof2dot's readers:
#   - a massif file of every snapshot detailed (--detailed-freq=1 --threshold=0, 400
#     snapshots, about 300 MB): pf-collapse (the peak's tree, and --snapshot=last) against
#     ms_print (which prints every tree);
#   - a callgrind file with --dump-instr, --collect-jumps and --cache-sim (about 5 MB,
#     2,600 functions, 7,500 calls): pf-dot against gprof2dot -f callgrind.
# The files are made once by valgrind running a Python workload (python3 from
# /usr/bin, not a pyenv shim: valgrind must run the interpreter itself) and cached. Wall
# time and peak RSS, best of --runs, and the ratio. Not a ctest test: it takes minutes.
#
#   bench/valgrind_bench.sh [--runs N]      (default 3)
#   GPROF2DOT=/path/to/gprof2dot.py (default ../peers/gprof2dot/gprof2dot.py)
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
runs=3
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N]" >&2; exit 2 ;;
  esac
done
PF_COLLAPSE=${PF_COLLAPSE:-$repo/build/bin/pf-collapse}
PF_DOT=${PF_DOT:-$repo/build/bin/pf-dot}
gprof2dot=${GPROF2DOT:-$repo/../peers/gprof2dot/gprof2dot.py}
[ -f "$gprof2dot" ] || [ -n "${GPROF2DOT:-}" ] || gprof2dot=$repo/../../peers/gprof2dot/gprof2dot.py
python=${PYTHON:-/usr/bin/python3}
for x in "$PF_COLLAPSE" "$PF_DOT"; do [ -x "$x" ] || { echo "not built: $x" >&2; exit 2; }; done
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
command -v valgrind >/dev/null && command -v ms_print >/dev/null ||
  { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }
[ -f "$gprof2dot" ] || { echo "no gprof2dot at $gprof2dot (GPROF2DOT)" >&2; exit 2; }
[ -x "$python" ] || { echo "no $python (PYTHON)" >&2; exit 2; }
cache=${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

workload='import json, re, collections, decimal, fractions, email, http.client, asyncio, unittest
d = [dict(a=i, b=str(i) * 5) for i in range(20000)]
json.loads(json.dumps(d))'
massif=$cache/massif.python.out callgrind=$cache/callgrind.python.out
if [ ! -s "$massif" ]; then
  echo "generating $massif ..." >&2
  valgrind -q --tool=massif --threshold=0 --detailed-freq=1 --max-snapshots=400 --depth=40 \
    --massif-out-file="$massif" "$python" -c "$workload" || exit 1
fi
if [ ! -s "$callgrind" ]; then
  echo "generating $callgrind ..." >&2
  valgrind -q --tool=callgrind --dump-instr=yes --collect-jumps=yes --cache-sim=yes \
    --callgrind-out-file="$callgrind" "$python" -c "$workload" 2>/dev/null || exit 1
fi

run() {  # run LABEL OUT CMD...: best wall time of $runs, its peak RSS
  local label=$1 out=$2 best="" rss=0 t m
  shift 2
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %M' -o "$work/t" "$@" >"$out" 2>"$work/err" ||
      { echo "$label failed: $(tail -3 "$work/err")" >&2; return 1; }
    read -r t m <"$work/t"
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t rss=$m; fi
  done
  printf '  %-34s %8.2f s %8.0f MiB\n' "$label" "$best" "$((rss / 1024))"
  echo "$best" >"$work/last"
}
ratio() { echo "scale=1; $1 / ($2 + 0.005)" | bc -l; }

echo "massif: $(du -h "$massif" | cut -f1), $(grep -c '^heap_tree=\(detailed\|peak\)' "$massif") trees"
run "pf-collapse (peak)" "$work/pf.folded" "$PF_COLLAPSE" "$massif" || exit 1
pf_peak=$(cat "$work/last")
run "pf-collapse --snapshot=last" "$work/pf.last" "$PF_COLLAPSE" --snapshot=last "$massif" || exit 1
pf_last=$(cat "$work/last")
run "ms_print" "$work/ms.txt" ms_print "$massif" || exit 1
ms=$(cat "$work/last")
echo "  ratio ms_print / pf: $(ratio "$ms" "$pf_peak")x (peak), $(ratio "$ms" "$pf_last")x (last)"
# The peak's total is ms_print's useful heap of the peak snapshot.
peak=$(sed -n 's/^ Detailed snapshots:.* \([0-9]*\) (peak).*/\1/p' "$work/ms.txt")
want=$(awk -v p="$peak" '$1 == p && NF == 6 { gsub(",", ""); print $4; exit }' "$work/ms.txt")
got=$(awk '!/^#/ { t += $NF } END { print t }' "$work/pf.folded")
[ "$want" = "$got" ] && echo "  totals agree: $got bytes" || echo "  TOTALS DIFFER: ms_print $want, pf $got"

echo "callgrind: $(du -h "$callgrind" | cut -f1), $(grep -c '^fn=' "$callgrind") fn= blocks"
run "pf-dot" "$work/pf.dot" "$PF_DOT" "$callgrind" || exit 1
pf=$(cat "$work/last")
run "gprof2dot -f callgrind" "$work/g2d.dot" python3 "$gprof2dot" -f callgrind "$callgrind" || exit 1
g2d=$(cat "$work/last")
echo "  ratio gprof2dot / pf-dot: $(ratio "$g2d" "$pf")x"
