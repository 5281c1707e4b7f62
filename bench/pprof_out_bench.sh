#!/usr/bin/env bash
# Benchmark: pf-collapse writing pprof's profile.proto (and callgrind) from a large folded
# profile, against Go pprof reading the written profile (-raw: decode only; -top: decode and
# report; -proto: decode and write it again, the nearest thing pprof has to pf's writer), on
# N unique stacks (default 300,000, about 180 MB of folded text, from the shared synthetic
# generator): wall time, peak RSS and output size. Also checks that pprof reads the
# profile back with the folded total.
# Not a ctest test: it takes a minute or more. See bench/README.md.
#
#   bench/pprof_out_bench.sh [--stacks N]     PPROF=/path/to/pprof (default: Go pprof in
#                                             ../peers/bin or on PATH)
# The ratios are of CPU seconds (user + sys): wall times swing on a shared machine.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
stacks=300000
[ "${1:-}" = --stacks ] && stacks=$2
cache=${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench
mkdir -p "$cache"
gen=$repo/../shared/bench/synth_folded.py
PF_COLLAPSE=${PF_COLLAPSE:-$repo/build/bin/pf-collapse}
PPROF=${PPROF:-}
[ -z "$PPROF" ] && [ -x "$repo/../peers/bin/pprof" ] && PPROF=$repo/../peers/bin/pprof
[ -z "$PPROF" ] && PPROF=$(command -v pprof || true)
[ -x "$PF_COLLAPSE" ] || { echo "pf-collapse not built: $PF_COLLAPSE" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
in=$cache/pprof_out$stacks.folded
if [ ! -s "$in" ]; then
  [ -f "$gen" ] || { echo "no $gen to generate the input" >&2; exit 2; }
  echo "generating the input ..." >&2
  python3 "$gen" "$stacks" 1 >"$in"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # run LABEL OUT CMD...: wall and CPU time (user + sys), peak RSS, output size
  /usr/bin/time -f '%e %U %S %M' -o "$work/t" "${@:3}" >"$2" 2>"$work/err"
  local rc=$? t u s m cpu out=$2
  read -r t u s m <"$work/t"
  cpu=$(echo "$u + $s" | bc -l)
  [ "${3}" = "$PF_COLLAPSE" ] && [ "${4:-}" = -o ] && out=$5
  printf '%-36s %7.2f s wall %7.2f s cpu %6d MiB %9d KB  exit %d\n' "$1" "$t" "$cpu" \
    "$((m / 1024))" "$(($(stat -c %s "$out") / 1000))" "$rc"
  [ $rc -eq 0 ] || head -3 "$work/err" >&2
  echo "$cpu" >"$work/last"
}
echo "input: $in, $stacks stacks, $(($(stat -c %s "$in") / 1000000)) MB"
run "pf-collapse (folded, baseline)" "$work/out.folded" "$PF_COLLAPSE" "$in"
run "pf-collapse --format=pprof" "$work/out.pb.gz" "$PF_COLLAPSE" --format=pprof "$in"
pf=$(cat "$work/last")
run "pf-collapse -o NAME.pb (no gzip)" "$work/stdout" "$PF_COLLAPSE" -o "$work/out.pb" "$in"
run "pf-collapse --format=callgrind" "$work/out.callgrind" "$PF_COLLAPSE" --format=callgrind "$in"
if [ -n "$PPROF" ]; then
  run "pprof -raw (decode)" "$work/raw.txt" "$PPROF" -raw "$work/out.pb.gz"
  raw=$(cat "$work/last")
  run "pprof -top (decode, report)" "$work/top.txt" "$PPROF" -top "$work/out.pb.gz"
  top=$(cat "$work/last")
  run "pprof -proto (decode, encode)" "$work/again.pb.gz" "$PPROF" -proto "$work/out.pb.gz"
  proto=$(cat "$work/last")
  total=$(awk '{ s += $NF } END { printf "%d", s }' "$in")
  grep -q "of $total total" "$work/top.txt" && same="equal to the folded total $total" ||
    same="NOT the folded total $total: $(grep -m1 total "$work/top.txt")"
  echo "pprof -top's total is $same"
  ratio() { echo "$1 / $pf" | bc -l | cut -c1-5; }
  echo "CPU time, Go pprof / pf-collapse --format=pprof: -raw $(ratio "$raw")x," \
       "-top $(ratio "$top")x, -proto $(ratio "$proto")x"
else
  echo "Go pprof not found (set PPROF) — peer skipped"
fi
