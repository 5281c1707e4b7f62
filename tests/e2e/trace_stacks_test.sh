#!/usr/bin/env bash
# Tracing tools' stack texts (tests/data/trace_stacks, README.md there) folded by pf-collapse
# equal FlameGraph's collapser for each, on every file:
# - DTrace (stackcollapse.pl), SystemTap (stackcollapse-stap.pl): byte for byte.
# - bpftrace (stackcollapse-bpftrace.pl), on the map entries the script reads (a key whose
#   first line is `@[` alone, or `@[, VALUE]: N`), after three normalisations: the script's
#   lines of a stack are summed and sorted as pf's are (it prints one line per entry), and
#   the separators bpftrace prints between key elements, which it keeps as frames (", ",
#   ", callpath"), are taken off (a frame that is only separators goes); a key with no frame
#   and no value (`@[, ]: 9`, both stacks empty) is a line of an empty stack (" 9") to the
#   script, which pf skips with a warning (as it skips `@[]: 74`, which the script drops):
#   those lines go too. pf also reads the entries the script drops (named maps, keys
#   starting with a value or an empty stack): on the whole files it must equal
#   results/NAME.pf.folded and keep every count of the file but those of empty keys.
# - bcc has no collapser: results/NAME.folded is what its own -f would print (README.md).
# The Perl scripts are taken from PEERS_DIR/FlameGraph when they are there, else the goldens
# in results/ (made with them) stand in.
# With `live`, instead: a live bpftrace recording of tests/programs/callpath is read (its
# callpath stacks checked) and compared with the script the same way when the script is
# there; skipped (77) with the reason where bpftrace or BPF (root, a kernel that allows it)
# is missing.
# Usage: trace_stacks_test.sh SOURCE_DIR PF_COLLAPSE CALLPATH PEERS_DIR [live]
set -u -o pipefail
src=$1 collapse=$2 callpath=$3 peers=${PF_PEERS_DIR:-${4:-}} mode=${5:-files}
data=$src/tests/data/trace_stacks
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 compared=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
fg=$peers/FlameGraph
have_fg=0
[ -n "$peers" ] && [ -f "$fg/stackcollapse-bpftrace.pl" ] && command -v perl >/dev/null && have_fg=1
[ $have_fg = 1 ] || [ "$mode" = live ] ||
  echo "note: no FlameGraph scripts under '$peers': comparing with the goldens"

# Folded lines summed by stack and sorted bytewise (pf-collapse's order).
merge() { LC_ALL=C perl -ne 'chomp; /^(.*) (\d+)$/ or next; $h{$1} += $2;
  END { print "$_ $h{$_}\n" for sort keys %h }'; }
# stackcollapse-bpftrace.pl's frames without bpftrace's key separators.
unseparate() { perl -ne 'chomp; /^(.*) (\d+)$/ or next;
  my @f = grep { length } map { s/^(, ?)+//; s/(, ?)+$//; $_ } split /;/, $1, -1;
  print join(";", @f), " $2\n" if @f'; }
# The entries stackcollapse-bpftrace.pl reads.
perl_entries() { perl -ne 'if (!$in) { if (/^\@\[$/) { $in = 1; $buf = $_ }
  elsif (/^\@\[,\s.*\]: \d+/) { print } } else { $buf .= $_;
  if (/^,?\s?.*\]: \d+/) { print $buf; $in = 0 } }' "$1"; }
# pf-collapse's stack lines (without its # pf- notes).
pf() { "$collapse" "$@" 2>"$tmp/pf.err" | grep -v '^# pf-'; }
# A Perl collapser's output for $2, or its golden.
peer() { # SCRIPT FILE GOLDEN
  if [ $have_fg = 1 ]; then perl "$fg/$1" "$2"; else cat "$3"; fi
}

# Sums of the map entries' counts of a bpftrace file, but those of keys with no frame and no
# value (`@[]: 74`, `@[, ]: 9`).
bpf_total() { perl -ne 'if (!defined $k) { next unless s/^\@\w*\[//; $k = "" }
  if (s/\]: (\d+)$//) { my $n = $1; $k .= $_; $k =~ s/(, |\s)//g; $s += $n if length $k;
    undef $k; next }
  if (/\]: /) { undef $k; next } $k .= $_; END { print $s + 0, "\n" }' "$1"; }
total() { awk '{ s += $NF } END { print s + 0 }'; }

compare_bpftrace() { # FILE NAME (NAME: results/NAME.*.folded, empty for a live recording)
  local f=$1 name=$2
  perl_entries "$f" >"$tmp/entries.txt"
  if [ -n "$name" ]; then
    peer stackcollapse-bpftrace.pl "$tmp/entries.txt" "$data/results/$name.folded"
  else
    perl "$fg/stackcollapse-bpftrace.pl" "$tmp/entries.txt"
  fi | unseparate | merge >"$tmp/want"
  if [ -s "$tmp/entries.txt" ]; then pf -f bpftrace "$tmp/entries.txt" >"$tmp/got"; else : >"$tmp/got"; fi
  cmp -s "$tmp/want" "$tmp/got" || { fail "$f: differs from stackcollapse-bpftrace.pl";
    diff "$tmp/want" "$tmp/got" | head -10; }
  pf "$f" >"$tmp/all" || fail "$f: pf-collapse exit $?"
  [ "$(total <"$tmp/all")" = "$(bpf_total "$f")" ] ||
    fail "$f: total $(total <"$tmp/all"), the file's counts $(bpf_total "$f")"
  if [ -n "$name" ]; then
    cmp -s "$data/results/$name.pf.folded" "$tmp/all" || { fail "$f: differs from $name.pf.folded";
      diff "$data/results/$name.pf.folded" "$tmp/all" | head -10; }
  fi
  compared=$((compared + 1))
}

# A live recording, when bpftrace and the kernel allow it.
live() {
  command -v bpftrace >/dev/null || { echo "SKIP: bpftrace is not installed"; exit 77; }
  ulimit -l 8192 2>/dev/null
  "$callpath" 60 >/dev/null &  # outlives bpftrace, which names the frames as it exits
  local pid=$!
  sleep 0.2
  timeout 30 bpftrace -e "profile:hz:199 /pid == $pid/ { @[ustack, kstack, comm] = count(); }
    interval:s:2 { exit(); }" >"$tmp/live.txt" 2>"$tmp/live.err"
  local rc=$?
  kill $pid 2>/dev/null
  wait $pid 2>/dev/null
  if [ $rc -ne 0 ] || ! grep -q ']: [0-9]' "$tmp/live.txt"; then
    echo "SKIP: bpftrace could not record here (exit $rc; not root, or the kernel refuses BPF):"
    grep -iv 'RLIMIT_MEMLOCK' "$tmp/live.err" | head -3
    exit 77
  fi
  if [ $have_fg = 1 ]; then
    compare_bpftrace "$tmp/live.txt" ""
  else
    echo "note: no stackcollapse-bpftrace.pl under '$peers': the live recording is checked alone"
  fi
  pf "$tmp/live.txt" >"$tmp/live.folded"
  grep -Eq '^callpath;(.*;)?main\+[0-9]+;work_a\+[0-9]+;spin\+[0-9]+ [0-9]+$' "$tmp/live.folded" ||
    fail "live: no callpath;...;main;work_a;spin stack: $(head -5 "$tmp/live.folded")"
}

# Checked-in outputs.
files() {
  for f in "$data"/dtrace-*.txt "$data"/stap-*.txt "$data"/bcc-*.txt "$data"/bpftrace-*.txt; do
    name=$(basename "$f" .txt)
    case $name in
      dtrace-*) peer stackcollapse.pl "$f" "$data/results/$name.folded" >"$tmp/want" ;;
      stap-*) peer stackcollapse-stap.pl "$f" "$data/results/$name.folded" >"$tmp/want" ;;
      bcc-*) cat "$data/results/$name.folded" >"$tmp/want" ;;
      bpftrace-*) compare_bpftrace "$f" "$name"; continue ;;
    esac
    if [ "${name%%-*}" = bcc ]; then
      "$collapse" "$f" >"$tmp/got" 2>"$tmp/pf.err"
    else
      pf "$f" >"$tmp/got"
    fi
    cmp -s "$tmp/want" "$tmp/got" || { fail "$name: differs from its collapser"; diff "$tmp/want" "$tmp/got" | head -10; }
    compared=$((compared + 1))
  done
  # The input's units: bcc's offcputime counts microseconds, pf nanoseconds; profile samples.
  "$collapse" "$data/bcc-offcputime-doc.txt" | head -1 | grep -qx '# pf-unit: nanoseconds' ||
    fail "offcputime: no nanoseconds unit"
  grep -q '^chmod;.*;schedule 13000$' "$data/results/bcc-offcputime-doc.folded" ||
    fail "offcputime golden: 13 us are not 13000 ns"
  # bpftrace -f json is refused, saying so.
  if "$collapse" "$data/bpftrace-prog.json" >"$tmp/out" 2>"$tmp/err"; then
    fail "bpftrace -f json: read (exit 0)"
  fi
  grep -q "bpftrace's JSON output" "$tmp/err" || fail "bpftrace -f json: $(cat "$tmp/err")"
  # --flamechart reads folded stacks only: a bpftrace map is refused, not drawn as "]:" frames.
  if "$(dirname "$collapse")/pf-flamegraph" --flamechart "$data/bpftrace-dd-k.txt" >"$tmp/fc.svg" 2>"$tmp/err"; then
    fail "--flamechart drew a bpftrace map"
  fi
  grep -q "bpftrace stack maps, not folded stacks" "$tmp/err" || fail "--flamechart: $(cat "$tmp/err")"
  # Every tool reads them (the format sniffed): a flame graph of a bpftrace map.
  "$(dirname "$collapse")/pf-flamegraph" "$data/bpftrace-callpath-ukc.txt" >"$tmp/fg.svg" 2>"$tmp/err" &&
    grep -q 'work_a+14' "$tmp/fg.svg" || fail "pf-flamegraph on bpftrace: $(cat "$tmp/err")"
}

if [ "$mode" = live ]; then live; else files; fi

if [ $failures -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "ok: $compared outputs compared"
