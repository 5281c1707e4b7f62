#!/usr/bin/env bash
# pf-collapse against Go pprof on the same pprof profile.proto: `pprof -traces` (every
# sample's stack as text: the closest of pprof's outputs to folded stacks) and
# `pprof -top`, each timed with GNU time (best wall time of RUNS), with pf-collapse's
# folded stacks checked against pprof -traces folded (tests/e2e/pprof_traces_fold.awk):
# same stacks, same total. The profile is generated (bench/pprof_gen.py: SAMPLES samples of
# distinct stacks) unless one is given.
# Usage: bench/pprof_bench.sh [PROFILE.pb.gz] (env: SAMPLES=300000 RUNS=3 PPROF=... PF_COLLAPSE=...)
set -u -o pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
PF_COLLAPSE=${PF_COLLAPSE:-$repo/build/bin/pf-collapse}
PPROF=${PPROF:-$(command -v pprof || ls "$repo"/../peers/bin/pprof "$repo"/../../peers/bin/pprof 2>/dev/null | head -1)}
RUNS=${RUNS:-3}
[ -n "$PPROF" ] && [ -x "$PPROF" ] || { echo "Go pprof not found (set PPROF)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
in=${1:-}
if [ -z "$in" ]; then
  in=$work/big.pb.gz
  python3 "$repo/bench/pprof_gen.py" "$in" "${SAMPLES:-300000}" || exit 2
fi
echo "profile: $in ($(du -h "$in" | cut -f1) gzipped, $(gzip -dc "$in" | wc -c) bytes of proto)"
# The best of RUNS runs of a command writing to OUT (by wall time): "wall cpu rss_mib",
# cpu being user + sys seconds (Go's collector runs on other threads: the machine's load
# shows in wall time, not in CPU time).
best() {
  local out=$1 b="" line
  shift
  for _ in $(seq "$RUNS"); do
    line=$(/usr/bin/time -f '%e %U %S %M' "$@" 2>&1 >"$out" | tail -1)
    if [ -z "$b" ] || awk -v a="${line%% *}" -v b="${b%% *}" 'BEGIN { exit !(a < b) }'; then b=$line; fi
  done
  echo "$b" | awk '{ printf "%s %.2f %d\n", $1, $2 + $3, $4 / 1024 }'
}
ratio() { echo "$1 / $2" | bc -l | cut -c1-5; }
read -r pf_t pf_c pf_m < <(best "$work/pf.folded" "$PF_COLLAPSE" "$in")
read -r tr_t tr_c tr_m < <(best "$work/traces.txt" "$PPROF" -traces -unit=ns "$in")
read -r top_t top_c top_m < <(best "$work/top.txt" "$PPROF" -top -nodecount=20 "$in")
printf '%-16s %8s s wall %8s s cpu %7s MiB\n' "pf-collapse" "$pf_t" "$pf_c" "$pf_m" \
  "pprof -traces" "$tr_t" "$tr_c" "$tr_m" "pprof -top" "$top_t" "$top_c" "$top_m"
echo "pf-collapse vs pprof -traces: $(ratio "$tr_t" "$pf_t")x (wall), $(ratio "$tr_c" "$pf_c")x (cpu);" \
  "vs pprof -top: $(ratio "$top_t" "$pf_t")x (wall), $(ratio "$top_c" "$pf_c")x (cpu)"
awk -f "$repo/tests/e2e/pprof_traces_fold.awk" "$work/traces.txt" | LC_ALL=C sort >"$work/exp"
grep -v '^#' "$work/pf.folded" | LC_ALL=C sort >"$work/got"
if cmp -s "$work/exp" "$work/got"; then
  echo "stacks: the same ($(wc -l <"$work/got") distinct), total $(awk '{ s += $NF } END { printf "%.0f", s }' "$work/got")"
else
  echo "stacks DIFFER from pprof -traces:"; diff "$work/exp" "$work/got" | head -5; exit 1
fi
