#!/usr/bin/env bash
# Benchmark: pf-collapse against FlameGraph's stackcollapse-elfutils.pl, -gdb.pl and
# -jstack.pl on large concatenated thread dumps (the poor man's profiler's output after a
# long run): the checked-in real dumps (tests/data/thread_dumps) repeated to about SIZE MB
# each (default 200), wall time and peak RSS, the outputs compared after sorting.
# Not a ctest test. See bench/README.md.
#
#   bench/thread_dumps_bench.sh [--mb SIZE]     PF_PEERS_DIR=/path (holds FlameGraph/)
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
mb=200
[ "${1:-}" = --mb ] && mb=$2
PF_COLLAPSE=${PF_COLLAPSE:-$repo/build/bin/pf-collapse}
fg=${PF_PEERS_DIR:-$repo/../peers}/FlameGraph
data=$repo/tests/data/thread_dumps
[ -x "$PF_COLLAPSE" ] || { echo "pf-collapse not built: $PF_COLLAPSE" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # run LABEL CMD...
  /usr/bin/time -f '%e %M' -o "$work/t" "${@:2}" >"$work/out" 2>"$work/err"
  local rc=$? t m
  read -r t m <"$work/t"
  printf '%-36s %8.2f s %8.0f MiB  exit %d\n' "$1" "$t" "$((m / 1024))" "$rc"
  echo "$t" >"$work/last"
}
# One input per format: its real dumps, repeated (each repetition a new dump, as a loop
# of the debugger would append).
make_input() {  # make_input OUT FILE...
  local out=$1 once=$work/once
  shift
  cat "$@" >"$once"
  local n=$(( (mb * 1000000) / $(stat -c %s "$once") + 1 ))
  for ((i = 0; i < n; i++)); do cat "$once"; done >"$out"
}
make_input "$work/eu.txt" "$data"/eu-*.txt
make_input "$work/gdb.txt" "$data"/gdb-*.txt
make_input "$work/jstack.txt" "$data"/jstack-*.txt "$data"/jcmd-*.txt
for pair in eu.txt:stackcollapse-elfutils.pl gdb.txt:stackcollapse-gdb.pl \
  jstack.txt:stackcollapse-jstack.pl; do
  in=$work/${pair%%:*} script=${pair#*:}
  echo "== ${pair%%:*}: $(( $(stat -c %s "$in") / 1000000 )) MB, $(wc -l <"$in") lines"
  run "pf-collapse" "$PF_COLLAPSE" "$in"
  pf=$(cat "$work/last")
  grep -v '^# pf-' "$work/out" | LC_ALL=C sort >"$work/pf.txt"
  if [ -f "$fg/$script" ]; then
    run "$script" perl "$fg/$script" "$in"
    pl=$(cat "$work/last")
    LC_ALL=C sort "$work/out" | cmp -s - "$work/pf.txt" && same=identical || same=DIFFERENT
    echo "$script / pf-collapse: $(echo "$pl / $pf" | bc -l | cut -c1-6)x; sorted output $same"
  else
    echo "$script not found in $fg (set PF_PEERS_DIR) — peer skipped"
  fi
done
