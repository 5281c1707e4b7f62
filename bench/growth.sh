#!/usr/bin/env bash
# How pf-flamegraph grows with the number of distinct stacks: CPU time and peak RSS at each
# size, on synthetic folded stacks (../shared/bench/synth_folded.py) sorted and shuffled,
# with the time per input line and the memory per distinct stack, and inferno-flamegraph
# beside it up to --peer-max stacks. Prints one markdown table. Not a ctest test: the 10M
# input is 6 GB and takes minutes to make (once; kept in the cache below). Peak RSS counts
# the input's pages the kernel keeps mapped: a file cached in 2 MB folios can stay mapped in
# part after pf gives its pages back (the 3M sorted input here: 19 MB of pf's own memory,
# 930 MB of the file's).
#
# Usage: bench/growth.sh [--sizes 1000000,3000000,10000000] [--peer-max N]
#   --sizes     distinct stacks of each input (default 1M, 3M and 10M)
#   --peer-max  run inferno-flamegraph on inputs up to N stacks (default 1000000; it needs
#               about 1 KB per stack)
# Inputs are cached in ${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench/growth/. Peers: inferno
# (INFERNO_DIR, default the directory of inferno-flamegraph on PATH, else ../peers/bin).
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZES=1000000,3000000,10000000 PEER_MAX=1000000
die() { echo "growth.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) SIZES=$2; shift 2 ;;
    --peer-max) PEER_MAX=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1" ;;
  esac
done
B=${PF_BIN:-$ROOT/build/bin}
INF=${INFERNO_DIR:-$(dirname "$(command -v inferno-flamegraph || echo "$ROOT/../peers/bin/x")")}
SYNTH=$ROOT/../shared/bench/synth_folded.py
[ -x "$B/pf-flamegraph" ] || die "no $B/pf-flamegraph (build it first)"
[ -x /usr/bin/time ] || die "GNU time is missing (apt-get install time)"
[ -f "$SYNTH" ] || die "missing $SYNTH"
C=${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench/growth
mkdir -p "$C" || die "cannot create $C"

# measure CMD...: "CPU-SECONDS PEAK-KB" of the better of two runs (user + system time, GNU
# time; the first may read the input from disk).
measure() {
  for _ in 1 2; do /usr/bin/time -f '%U %S %M' "$@" 2>&1 >/dev/null | tail -n 1; done |
    awk '{ t = $1 + $2; if (NR == 1 || t < best) { best = t; kb = $3 } } END { print best, kb }'
}

echo "| distinct stacks | input | order | pf CPU | pf µs per line | pf peak RSS | pf bytes per stack | inferno CPU | inferno peak RSS | inferno bytes per stack |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in ${SIZES//,/ }; do
  sorted=$C/s$n.folded random=$C/r$n.folded
  if [ ! -s "$random" ]; then
    python3 "$SYNTH" "$n" 1 >"$sorted.tmp" && mv "$sorted.tmp" "$sorted" || die "synth failed"
    shuf --random-source=<(yes 1) "$sorted" >"$random.tmp" && mv "$random.tmp" "$random" ||
      die "shuf failed"
  fi
  mb=$(( $(stat -c %s "$random") / 1000000 ))
  for order in random sorted; do
    f=$C/${order:0:1}$n.folded
    read -r pc pk < <(measure "$B/pf-flamegraph" "$f")
    ic="—" ik="—" ib="—"
    if [ "$n" -le "$PEER_MAX" ] && [ -x "$INF/inferno-flamegraph" ]; then
      read -r ic ik < <(measure "$INF/inferno-flamegraph" "$f")
      ib=$(( ik * 1024 / n ))
      ic="$ic s" ik="$(( ik / 1024 )) MB"
    fi
    awk -v n="$n" -v mb="$mb" -v o="$order" -v pc="$pc" -v pk="$pk" -v ic="$ic" -v ik="$ik" \
      -v ib="$ib" 'BEGIN { printf "| %d | %d MB | %s | %.2f s | %.2f | %d MB | %d | %s | %s | %s |\n",
        n, mb, o, pc, pc * 1e6 / n, pk / 1024, pk * 1024 / n, ic, ik, ib }'
  done
done
