#!/usr/bin/env bash
# Checks that two builds of pf write byte-identical outputs: the check every
# behaviour-preserving change (a refactoring, a speed-up) must pass before it is committed.
#
# Every tool of OLD_BIN_DIR and NEW_BIN_DIR is run with the same arguments and input over
#   - the peer corpus (FlameGraph's and inferno's test data: perf script text and folded
#     stacks), found as --corpus DIR, else $PF_CORPUS_DIR, else ../shared/corpus/peer (or
#     ../../shared/corpus/peer) beside the checkout;
#   - the repository's own test data (tests/data);
#   - the recordings named on the command line (perf.data files or pf-record streams: make a
#     few once, with pf-record and with perf record, fp and --call-graph=dwarf, and keep
#     them outside the repository);
# through pf-script, pf-collapse (its main option sets), pf-flamegraph, pf-dot and pf-diff.
# Standard output, standard error and the exit status must all match; each case that differs
# is printed with the first lines of its `diff -u`. Exit status: 0 identical, 1 some case
# differs, 2 usage error.
#
# Not a ctest test (it needs two builds). Usage:
#   tests/compare_builds.sh [--corpus DIR] [--keep] OLD_BIN_DIR NEW_BIN_DIR [RECORDING...]
# e.g. tests/compare_builds.sh /tmp/baseline/bin build/bin /tmp/fp.data /tmp/dwarf.pfs
set -u

usage() {
  echo "usage: $0 [--corpus DIR] [--keep] OLD_BIN_DIR NEW_BIN_DIR [RECORDING...]" >&2
  exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
corpus=${PF_CORPUS_DIR:-}
keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --corpus) [ $# -ge 2 ] || usage; corpus=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) usage ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || usage
old=$(cd "$1" && pwd) || usage
new=$(cd "$2" && pwd) || usage
shift 2
recordings=("$@")
for tool in pf-script pf-collapse pf-flamegraph pf-dot pf-diff; do
  for dir in "$old" "$new"; do
    [ -x "$dir/$tool" ] || { echo "$0: no $dir/$tool" >&2; exit 2; }
  done
done
for rec in "${recordings[@]}"; do
  [ -r "$rec" ] || { echo "$0: cannot read recording $rec" >&2; exit 2; }
done
if [ -z "$corpus" ]; then
  for c in "$root/../shared/corpus/peer" "$root/../../shared/corpus/peer"; do
    if [ -d "$c" ]; then corpus=$(cd "$c" && pwd); break; fi
  done
fi
if [ -n "$corpus" ] && [ ! -d "$corpus" ]; then
  echo "$0: no corpus directory $corpus" >&2
  exit 2
fi
[ -n "$corpus" ] || echo "$0: note: no peer corpus found (give --corpus DIR)" >&2

work=$(mktemp -d "${TMPDIR:-/tmp}/pf-compare.XXXXXX")
if [ "$keep" = 0 ]; then trap 'rm -rf "$work"' EXIT; else echo "outputs kept in $work" >&2; fi
# Each build gets a cache of its own (a build must not read what the other stored), the same
# locale and time zone, and a working directory of its own.
mkdir -p "$work/old/cache" "$work/new/cache" "$work/old/cwd" "$work/new/cwd"
export LC_ALL=C TZ=UTC
unset SOURCE_DATE_EPOCH

cases=0
differ=0

# run NAME TOOL ARGS... [< stdin from $stdin]: runs TOOL of both builds, compares.
stdin=/dev/null
run() {
  local name=$1 tool=$2
  shift 2
  cases=$((cases + 1))
  local side dir
  for side in old new; do
    if [ $side = old ]; then dir=$old; else dir=$new; fi
    (cd "$work/$side/cwd" && PF_CACHE_DIR="$work/$side/cache" \
      timeout 120 "$dir/$tool" "$@" <"$stdin" >"$work/$side/out" 2>"$work/$side/err"
     echo $? >"$work/$side/rc")
  done
  local bad=""
  cmp -s "$work/old/out" "$work/new/out" || bad="$bad stdout"
  cmp -s "$work/old/err" "$work/new/err" || bad="$bad stderr"
  cmp -s "$work/old/rc" "$work/new/rc" || bad="$bad exit($(cat "$work/old/rc") vs $(cat "$work/new/rc"))"
  if [ -n "$bad" ]; then
    differ=$((differ + 1))
    echo "DIFFERS:$bad: $name: $tool $*"
    for stream in out err; do
      cmp -s "$work/old/$stream" "$work/new/$stream" ||
        diff -u --label "old $stream" --label "new $stream" \
          "$work/old/$stream" "$work/new/$stream" | head -20
    done
  fi
}

# The text inputs: every file of the corpus and of tests/data that is not a picture, a map,
# a licence or a README.
inputs=()
for dir in ${corpus:+"$corpus"} "$root/tests/data"; do
  while IFS= read -r f; do inputs+=("$f"); done < <(
    find "$dir" -type f ! -name '*.svg' ! -name '*.map' ! -name '*.md' ! -name 'LICENSE*' \
      ! -name '*.html' | LC_ALL=C sort)
done
# The folded ones (what pf-diff pairs): the expected outputs of the collapse tests, and the
# diff tests' inputs.
folded=()
for f in "${inputs[@]}"; do
  case $f in
    */results/*|*/diff-folded/*|*/flamegraph/*/*.txt) folded+=("$f") ;;
  esac
done

# Option sets. pf-collapse: stackcollapse-perf.pl's main flags, the filters, the weights.
collapse_sets=(
  ""
  "--all"
  "--pid --tid"
  "--kernel --jit --inline --addrs"
  "--srcline"
  "--weight=samples"
  "--hide=^_ --include=main --exclude=nothing_such"
  "-j 1"
)
flame_sets=(
  ""
  "--inverted --title=T --countname=bytes"
  "--reverse --hash --minwidth=0"
  "--flamechart --colors=java"
  "--width=600 --fontsize=9 --factor=0.5"
  "--colors=mem --bgcolors=blue --total=1000000"
)
dot_sets=(
  ""
  "-n 0 -e 0 --nodecount=0"
  "--strip --wrap --show-samples --colormap=gray"
  "--color-nodes-by-selftime --node-label=self-time --node-label=total-time"
  "--hide=^_ --ignore=nothing_such"
)

for f in "${inputs[@]}"; do
  rel=${f#"$corpus"/}
  rel=${rel#"$root"/}
  for opts in "${collapse_sets[@]}"; do
    # shellcheck disable=SC2086  # the option sets are split on purpose
    run "$rel" pf-collapse $opts "$f"
  done
  for opts in "${flame_sets[@]}"; do
    # shellcheck disable=SC2086
    run "$rel" pf-flamegraph $opts "$f"
  done
  for opts in "${dot_sets[@]}"; do
    # shellcheck disable=SC2086
    run "$rel" pf-dot $opts "$f"
  done
done
# Input on stdin (the pipe readers), for a few.
for f in "${inputs[@]:0:6}"; do
  stdin=$f
  run "stdin" pf-collapse
  run "stdin" pf-flamegraph
  run "stdin" pf-dot
  stdin=/dev/null
done

# pf-diff: each folded file against the next, and a file against itself.
n=${#folded[@]}
for ((i = 0; i < n; ++i)); do
  a=${folded[i]}
  b=${folded[(i + 1) % n]}
  for opts in "" "-n" "-s" "-n -s" "--report" "--report --threshold=1 --top=5"; do
    # shellcheck disable=SC2086
    run "diff" pf-diff $opts "$a" "$b"
  done
  run "diff" pf-diff "$a" "$a"
done

# Recordings: through every tool that reads them.
for rec in "${recordings[@]}"; do
  for opts in "" "-F comm,pid,tid,cpu,time,period,event,ip,sym,dso" "--show-task-events \
--show-mmap-events" "--header" "--no-inline" "-G" "--ns --reltime" "--max-stack=4"; do
    # shellcheck disable=SC2086
    run "$rec" pf-script $opts "$rec"
  done
  for opts in "${collapse_sets[@]}" "--no-inline" "--time=10%/2" "-j 2"; do
    # shellcheck disable=SC2086
    run "$rec" pf-collapse $opts "$rec"
  done
  for opts in "${flame_sets[@]:0:3}"; do
    # shellcheck disable=SC2086
    run "$rec" pf-flamegraph $opts "$rec"
  done
  for opts in "${dot_sets[@]}" "--processes" "--merge-unknown" "--weight=samples"; do
    # shellcheck disable=SC2086
    run "$rec" pf-dot $opts "$rec"
  done
  stdin=$rec
  run "$rec (stdin)" pf-script
  run "$rec (stdin)" pf-collapse
  stdin=/dev/null
done

echo "$cases cases, $differ differ"
[ "$differ" = 0 ]
