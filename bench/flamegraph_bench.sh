#!/usr/bin/env bash
# Benchmark: pf-flamegraph against flamegraph.pl and inferno-flamegraph (when installed) on
# the same folded input; prints wall time, CPU time, peak RSS, frames drawn and ratios.
# Not a ctest test: it takes minutes. See bench/README.md.
#
#   bench/flamegraph_bench.sh [--input FILE.folded] [--stacks N] [--runs N] [-- EXTRA ARGS]
#
# Without --input it uses a synthetic folded file of N unique stacks (default 1,000,000,
# about 600 MB) made by ../shared/bench/synth_folded.py and cached in
# ${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench/.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
input="" stacks=1000000 runs=1 extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --input) input=$2; shift 2 ;;
    --stacks) stacks=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 [--input FILE] [--stacks N] [--runs N] [-- ARGS]" >&2; exit 2 ;;
  esac
done
cache=${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench
mkdir -p "$cache"
if [ -z "$input" ]; then
  input=$cache/synth$stacks.folded
  if [ ! -s "$input" ]; then
    gen=$repo/../shared/bench/synth_folded.py
    [ -f "$gen" ] || { echo "no input and no $gen" >&2; exit 2; }
    echo "generating $input ..." >&2
    python3 "$gen" "$stacks" 1 >"$input.tmp" && mv "$input.tmp" "$input"
  fi
fi
PF=${PF_FLAMEGRAPH:-$repo/build/bin/pf-flamegraph}
FG=${FLAMEGRAPH_PL:-$(command -v flamegraph.pl || true)}
INF=${INFERNO_FLAMEGRAPH:-$(command -v inferno-flamegraph || true)}
[ -x "$PF" ] || { echo "pf-flamegraph not built: $PF" >&2; exit 2; }
TIME=/usr/bin/time
[ -x $TIME ] || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
size=$(stat -c %s "$input")
echo "input: $input ($(awk -v b="$size" 'BEGIN{printf "%.1f", b/1048576}') MiB, $(wc -l <"$input") lines)"
cat "$input" >/dev/null

declare -A WALL CPU RSS
measure() {  # measure KEY CMD...
  local key=$1; shift
  local best=""
  for ((r = 0; r < runs; r++)); do
    if ! $TIME -f '%e %U %S %M' -o "$work/t" "$@" >"$work/$key.svg" 2>"$work/$key.err"; then
      echo "$key failed: $(tail -2 "$work/$key.err")"; return 1
    fi
    read -r w u s m <"$work/t"
    if [ -z "$best" ] || awk -v a="$w" -v b="$best" 'BEGIN{exit !(a<b)}'; then
      best=$w; WALL[$key]=$w; CPU[$key]=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u+s}'); RSS[$key]=$m
    fi
  done
  printf '%-22s wall %7.2f s  cpu %7.2f s  rss %8.1f MiB  frames %6d  svg %6.1f MiB\n' "$key" \
    "${WALL[$key]}" "${CPU[$key]}" "$(awk -v m="${RSS[$key]}" 'BEGIN{print m/1024}')" \
    "$(grep -c '<g><title>\|<title>' "$work/$key.svg")" \
    "$(awk -v b="$(stat -c %s "$work/$key.svg")" 'BEGIN{print b/1048576}')"
}
measure pf-flamegraph "$PF" "${extra[@]}" "$input"
[ -n "$INF" ] && measure inferno-flamegraph "$INF" "${extra[@]}" "$input"
[ -n "$FG" ] && measure flamegraph.pl perl "$FG" "${extra[@]}" "$input"
[ -z "$INF" ] && echo "inferno-flamegraph: not installed (set INFERNO_FLAMEGRAPH), skipped"
[ -z "$FG" ] && echo "flamegraph.pl: not installed (set FLAMEGRAPH_PL), skipped"
for peer in inferno-flamegraph flamegraph.pl; do
  [ -n "${WALL[$peer]+x}" ] || continue
  awk -v p="$peer" -v a="${WALL[pf-flamegraph]}" -v b="${WALL[$peer]}" -v c="${CPU[pf-flamegraph]}" \
      -v d="${CPU[$peer]}" -v e="${RSS[pf-flamegraph]}" -v f="${RSS[$peer]}" 'BEGIN {
    printf "pf-flamegraph vs %s: %.1fx faster (wall), %.1fx less CPU, %.1fx less memory\n", p, b/a, d/c, f/e }'
done
