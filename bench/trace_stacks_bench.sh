#!/usr/bin/env bash
# Benchmark: pf-collapse against FlameGraph's collapsers on large tracing tool outputs: a
# bpftrace map (@[ustack, kstack, comm], against stackcollapse-bpftrace.pl) and a DTrace
# aggregation (against stackcollapse.pl). The inputs are real outputs repeated with varied
# frames (tests/data/trace_stacks' bpftrace recordings; FlameGraph's example-dtrace-stacks.txt):
# copy i renames each stack's leaf function NAME to NAME_vK (K = i mod 2000), so the
# collapsers meet many distinct stacks. Wall time and peak RSS, best of --runs, the ratio,
# and whether the outputs agree (the bpftrace script's after the normalisation
# tests/e2e/trace_stacks_test.sh states). Not a ctest test: it takes minutes.
#
#   bench/trace_stacks_bench.sh [--size-mb N] [--runs N]   (default 200 MB each, 3 runs)
#   FLAMEGRAPH_DIR=/path/to/FlameGraph (default ../peers/FlameGraph)
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
size_mb=200 runs=3
while [ $# -gt 0 ]; do
  case $1 in
    --size-mb) size_mb=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--size-mb N] [--runs N]" >&2; exit 2 ;;
  esac
done
PF_COLLAPSE=${PF_COLLAPSE:-$repo/build/bin/pf-collapse}
fg=${FLAMEGRAPH_DIR:-$repo/../peers/FlameGraph}
[ -x "$PF_COLLAPSE" ] || { echo "pf-collapse not built: $PF_COLLAPSE" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
[ -f "$fg/stackcollapse-bpftrace.pl" ] || { echo "no FlameGraph under $fg (FLAMEGRAPH_DIR)" >&2; exit 2; }
cache=${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# grow OUT BYTES HEADER_LINES FILE...: the files' stacks repeated, leaf names varied, until
# OUT holds BYTES (the first file's HEADER_LINES header lines once, at the top).
grow() {
  local out=$1 bytes=$2 header=$3
  shift 3
  [ -s "$out" ] && return
  echo "generating $out ..." >&2
  perl -e '
    my ($bytes, $header, @files) = @ARGV;
    my ($head, $body) = ("", "");
    for my $f (@files) {
      open my $fh, "<", $f or die "$f: $!";
      my @l = <$fh>;
      if ($head eq "" && $header > 0) { $head = join "", splice(@l, 0, $header) }
      $body .= join "", @l;
    }
    print $head;
    my ($size, $i) = (length $head, 0);
    while ($size < $bytes) {
      my $k = $i++ % 2000;
      my $copy = $body;
      # the first frame line of each stack (its leaf): "NAME+OFF" or "mod`NAME+0xOFF"
      $copy =~ s/(^(?:\@\[\n|\n))([ \t]+)([^\s+]+)/$1$2$3_v$k/mg;
      print $copy;
      $size += length $copy;
    }' "$bytes" "$header" "$@" >"$out.tmp" && mv "$out.tmp" "$out"
}
bytes=$((size_mb * 1024 * 1024))
bpf=$cache/trace-bpftrace-$size_mb.txt dtrace=$cache/trace-dtrace-$size_mb.txt
grow "$bpf" "$bytes" 0 "$repo"/tests/data/trace_stacks/bpftrace-dd-ukc.txt \
  "$repo"/tests/data/trace_stacks/bpftrace-callpath-ukc.txt
grow "$dtrace" "$bytes" 3 "$fg/example-dtrace-stacks.txt"

run() {  # run LABEL OUT CMD...: best wall time of $runs, its peak RSS
  local label=$1 out=$2 best="" rss=0 t m
  shift 2
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %M' -o "$work/t" "$@" >"$out" 2>"$work/err" ||
      { echo "$label failed: $(tail -3 "$work/err")" >&2; return 1; }
    read -r t m <"$work/t"
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t rss=$m; fi
  done
  printf '  %-28s %8.2f s %8.0f MiB\n' "$label" "$best" "$((rss / 1024))"
  echo "$best" >"$work/last"
}
merge() { LC_ALL=C perl -ne 'chomp; /^(.*) (\d+)$/ or next; $h{$1} += $2;
  END { print "$_ $h{$_}\n" for sort keys %h }'; }
unseparate() { perl -ne 'chomp; /^(.*) (\d+)$/ or next;
  my @f = grep { length } map { s/^(, ?)+//; s/(, ?)+$//; $_ } split /;/, $1, -1;
  print join(";", @f), " $2\n"'; }

ratio() { echo "$1 / $2" | bc -l | awk '{ printf "%.1fx", $1 }'; }
echo "bpftrace: $(du -m "$bpf" | cut -f1) MB, $(grep -c ']: ' "$bpf") map entries"
run "pf-collapse" "$work/pf.out" "$PF_COLLAPSE" "$bpf"; pf=$(cat "$work/last")
run "stackcollapse-bpftrace.pl" "$work/pl.out" perl "$fg/stackcollapse-bpftrace.pl" "$bpf"
pl=$(cat "$work/last")
unseparate <"$work/pl.out" | merge | cmp -s - <(grep -v '^# pf-' "$work/pf.out") &&
  same=equal || same=DIFFERENT
echo "  pf-collapse is $(ratio "$pl" "$pf") faster; outputs $same"

echo "DTrace: $(du -m "$dtrace" | cut -f1) MB"
run "pf-collapse" "$work/pf.out" "$PF_COLLAPSE" "$dtrace"; pf=$(cat "$work/last")
run "stackcollapse.pl" "$work/pl.out" perl "$fg/stackcollapse.pl" "$dtrace"; pl=$(cat "$work/last")
cmp -s "$work/pl.out" <(grep -v '^# pf-' "$work/pf.out") && same=equal || same=DIFFERENT
echo "  pf-collapse is $(ratio "$pl" "$pf") faster; outputs $same"
