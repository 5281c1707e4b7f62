#!/usr/bin/env bash
# pf-dot's text reports against Go pprof's: --format=top, tree, peek and list (with --cum,
# --nodecount and the filters) on the profiles of tests/data/pprof list the same functions,
# with the same flat and cum values, percentages and edges, in the same order, as pprof's
# -top, -tree and -peek. Compared line by line after both are normalised (report_lines below:
# pprof's File/Type/Time header and pf's Unit line out, runs of spaces as one, separators and
# pprof's "(inline)" marks out). The oracle is Go pprof when installed (PPROF, PEERS_DIR/bin/
# pprof, or on PATH), else the goldens made with it (tests/data/pprof/reports, written by
# this script with --make-goldens). --list too (pprof's -list, the sources found in
# tests/programs). Then the report's own behaviour: --csv sums and quoting, the header's
# dropped nodes, -o NAME.txt/.tsv, --list's --trim-path and notes of the file read, newer or
# missing, a --peek that matches nothing, usage errors.
# With PF_RECORD and CALLPATH (tests/programs/callpath.c): --list of a recording, whose lines
# come from DWARF, names callpath.c's lines of spin, and equals --list of perf script
# -F +srcline's text of a perf record of it (where perf is installed).
# Usage: reports_test.sh PF_DOT SOURCE_DIR [PEERS_DIR] [--make-goldens | PF_RECORD CALLPATH]
set -u -o pipefail
dot=$1 src=$2 peers=${3:-} make=${4:-} record=${4:-} callpath=${5:-}
data=$src/tests/data/pprof
goldens=$data/reports
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

pprof=${PPROF:-}
[ -z "$pprof" ] && [ -n "$peers" ] && [ -x "$peers/bin/pprof" ] && pprof=$peers/bin/pprof
[ -z "$pprof" ] && pprof=$(command -v pprof || true)
[ "$make" = --make-goldens ] && [ -z "$pprof" ] && fail "--make-goldens needs Go pprof"
[ "$make" = --make-goldens ] && callpath=

# (A listing's routine names the file pf-dot read, pprof the path as trimmed: their base names.)
report_lines() {
  grep -v -E '^(File|Type|Time|Duration|Unit|Build ID|Comment):' | grep -v -E '^-+\+-+$' |
    sed 's/^ *//; s/[ \t]*$//; s/[ \t][ \t]*/ /g; s/ (inline)//; s/ *| */ | /' |
    sed 's|^\(ROUTINE =* .* in \).*/\([^/]*\)$|\1\2|'
}

# NAME@pf-dot's options@pprof's options
cases=(
  "top@--format=top@-top"
  "top-cum@--top --cum@-top -cum"
  "top-n3@--top --nodecount=3@-top -nodecount=3"
  "tree@--format=tree@-tree"
  "tree-cum-n5@--tree --cum --nodecount=5@-tree -cum -nodecount=5"
  "peek-main@--format=peek --peek=main@-peek=main"
  "peek-alloc@--format=peek --peek=alloc@-peek=alloc"
  "top-hide@--top --hide=runtime@-top -hide=runtime"
  "tree-show-from@--tree --show-from=main@-tree -show_from=main"
  "top-thres@--top --node-thres=5@-top -nodefraction=0.05"
  # --list: the sources are in tests/programs (the profiles recorded them elsewhere: found
  # by pprof's rule, after the source directory's base name)
  "list-go@--list=^main\\. --source-path=$src/tests/programs/go/pprofgen@-list=^main\\. -source_path=$src/tests/programs/go/pprofgen"
  "list-c@--list=^(spin|work_a|main)\$ --source-path=$src/tests/programs@-list=^(spin|work_a|main)\$ -source_path=$src/tests/programs"
)
compared=0
for profile in "$data"/*.pb.gz; do
  name=$(basename "$profile" .pb.gz)
  for c in "${cases[@]}"; do
    IFS='@' read -r id pf_opts pprof_opts <<<"$c"
    golden=$goldens/$name.$id.txt
    # (each profile's listing where its sources are here)
    case $id.$name in list-go.gperf* | list-c.cpu | list-c.heap | list-c.allocs | list-*.gperfheap) continue ;; esac
    # shellcheck disable=SC2086
    if [ -n "$pprof" ]; then
      # (pprof fails for a -peek that matches nothing: no lines)
      "$pprof" $pprof_opts "$profile" 2>/dev/null | report_lines >"$tmp/want"
      [ "$make" = --make-goldens ] && cp "$tmp/want" "$golden"
    else
      [ -f "$golden" ] || fail "no golden $golden (and no Go pprof)"
      cp "$golden" "$tmp/want"
    fi
    "$dot" $pf_opts "$profile" >"$tmp/out" 2>"$tmp/err" || {
      # A peek that matches nothing: pprof's error, and pf-dot's.
      grep -q 'no function matches' "$tmp/err" && ! grep -q . "$tmp/want" && continue
      fail "pf-dot $pf_opts $name: $(cat "$tmp/err")"
    }
    report_lines <"$tmp/out" >"$tmp/got"
    diff "$tmp/want" "$tmp/got" >"$tmp/diff" ||
      fail "pf-dot $pf_opts $name differs from pprof $pprof_opts:
$(head -20 "$tmp/diff")"
    compared=$((compared + 1))
  done
done
[ "$compared" -ge 40 ] || fail "only $compared reports compared"
echo "reports: $compared equal to pprof's (oracle: ${pprof:-goldens})"

# --- the report's own behaviour ---------------------------------------------------------------
cpu=$data/cpu.pb.gz
"$dot" --top --csv "$cpu" >"$tmp/top.csv" || fail "--csv failed"
head -1 "$tmp/top.csv" | grep -qx 'flat,flat%,sum%,cum,cum%,unit,name' || fail "--csv header: $(head -1 "$tmp/top.csv")"
total=$(awk -F, 'NR > 1 { s += $1 } END { print s }' "$tmp/top.csv")
[ "$total" = 1770000000 ] || fail "--csv: the flat column sums to $total, not 1770000000 ns"
grep -q '^0,0.00,100.00,1770000000,100.00,nanoseconds,main.main$' "$tmp/top.csv" ||
  fail "--csv: main.main's row: $(grep main.main, "$tmp/top.csv")"
printf 'a;b,c "q" 3\na 1\n' | "$dot" --tsv | grep -qx $'3\t75.00\t75.00\t3\t75.00\tsamples\tb,c "q"' ||
  fail "--tsv: $(printf 'a;b,c "q" 3\na 1\n' | "$dot" --tsv)"
printf 'a;b,c "q" 3\na 1\n' | "$dot" --top -o "$tmp/t.csv" &&
  grep -qx '3,75.00,75.00,3,75.00,samples,"b,c ""q"""' "$tmp/t.csv" || fail "-o NAME.csv: $(cat "$tmp/t.csv")"
printf 'a;b 3\na 1\n' | "$dot" -o "$tmp/t.tsv" && grep -qx $'3\t75.00\t75.00\t3\t75.00\tsamples\tb' \
  "$tmp/t.tsv" || fail "-o NAME.tsv: $(cat "$tmp/t.tsv")"
printf 'a;b 3\na 1\n' | "$dot" -o "$tmp/t.txt" && grep -qx '   3 75.00% 75.00%    3 75.00%  b' \
  "$tmp/t.txt" || fail "-o NAME.txt is not the top table: $(cat "$tmp/t.txt")"
printf 'main;a 990\nmain;b 6\nmain;c 4\n' | "$dot" --top >"$tmp/drop.txt"
grep -qx 'Dropped 1 node (cum <= 5)' "$tmp/drop.txt" || fail "the dropped node: $(cat "$tmp/drop.txt")"
grep -q ' c$' "$tmp/drop.txt" && fail "c (0.4%) is shown"
"$dot" --format=peek --peek='^nothing$' "$cpu" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "no function matches" "$tmp/err" || fail "a --peek matching nothing: $(cat "$tmp/err")"
# --list: the file read is named; a source newer than the profile is said; a missing one too.
cp "$data/gperf.pb.gz" "$tmp/old.pb.gz" && touch -d 2001-01-01 "$tmp/old.pb.gz"
mkdir "$tmp/programs" && cp "$src/tests/programs/callpath.c" "$tmp/programs/"
"$dot" --list='^spin$' --source-path="$tmp/programs" "$tmp/old.pb.gz" >"$tmp/list.txt" ||
  fail "--list failed"
grep -qx "ROUTINE ======================== spin in $tmp/programs/callpath.c" "$tmp/list.txt" ||
  fail "--list does not name the file it read: $(head -3 "$tmp/list.txt")"
grep -q "^ Note: $tmp/programs/callpath.c is newer than the profile" "$tmp/list.txt" ||
  fail "--list: no note of a newer source: $(head -4 "$tmp/list.txt")"
# (the recorded /work/wt/pprofin/tests/programs/callpath.c, less the prefix, under SOURCE_DIR)
"$dot" --list='^spin$' --source-path="$src" --trim-path=/work/wt/pprofin "$data/gperf.pb.gz" \
  >"$tmp/list.txt" || fail "--list --trim-path failed"
grep -qx "ROUTINE ======================== spin in $src/tests/programs/callpath.c" \
  "$tmp/list.txt" || fail "--trim-path: $(head -3 "$tmp/list.txt")"
"$dot" --list='^spin$' --source-path=/nonexistent "$data/gperf.pb.gz" >"$tmp/list.txt" || fail "--list failed"
grep -q '^ Error: .*callpath.c: no such file here or under --source-path$' "$tmp/list.txt" ||
  fail "--list: a missing source: $(cat "$tmp/list.txt")"
"$dot" --list='^nothing$' "$data/gperf.pb.gz" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "no function matches" "$tmp/err" || fail "a --list matching nothing: $(cat "$tmp/err")"
# --list of recordings: lines from DWARF, as perf script -F +srcline gives them.
if [ -n "$callpath" ]; then
  if "$record" -g -o "$tmp/cp.pfs" -- "$callpath" 0.3 >/dev/null 2>"$tmp/rec.err"; then
    "$dot" --list='^(spin|work_a)$' --source-path="$src/tests/programs" "$tmp/cp.pfs" \
      >"$tmp/rec.list" || fail "--list of a recording failed"
    grep -qx "ROUTINE ======================== spin in $src/tests/programs/callpath.c" \
      "$tmp/rec.list" || fail "--list of a recording: $(head -3 "$tmp/rec.list")"
    grep -qE '^ +[0-9.]+m?s +[0-9.]+m?s +34: +acc = acc \* 1664525u' "$tmp/rec.list" ||
      fail "--list of a recording: no weight on spin's line 34: $(cat "$tmp/rec.list")"
    grep -qE '^ +\. +[0-9.]+m?s +43: +sink \+= spin' "$tmp/rec.list" ||
      fail "--list of a recording: work_a's call of spin has no cum: $(cat "$tmp/rec.list")"
    echo "--list of a recording: spin's and work_a's lines"
  else
    echo "--list of a recording: not checked, pf-record is refused here: $(head -1 "$tmp/rec.err")"
  fi
  if command -v perf >/dev/null &&
    perf record -q -g -o "$tmp/cp.data" -- "$callpath" 0.3 >/dev/null 2>&1; then
    "$dot" --list='^spin$' --source-path="$src/tests/programs" "$tmp/cp.data" >"$tmp/a.list"
    perf script -i "$tmp/cp.data" -F +srcline 2>/dev/null |
      "$dot" --list='^spin$' --source-path="$src/tests/programs" >"$tmp/b.list"
    cmp -s "$tmp/a.list" "$tmp/b.list" ||
      fail "--list of perf.data and of perf script -F +srcline differ: $(diff "$tmp/a.list" "$tmp/b.list" | head)"
    echo "--list of perf.data equals that of its perf script -F +srcline text"
  fi
fi
for bad in "--format=list" "--source-path=/x --top" "--list=x --cum" "--format=peek" "--tree --csv" "--top --format=tree" "--cum" "--csv --tsv"; do
  # shellcheck disable=SC2086
  "$dot" $bad "$cpu" >/dev/null 2>"$tmp/err"
  [ $? -eq 2 ] || fail "pf-dot $bad is not a usage error: $(cat "$tmp/err")"
done
echo "PASS"
