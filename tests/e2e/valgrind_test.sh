#!/usr/bin/env bash
# valgrind's massif and callgrind files against valgrind's own readers, on real profiles:
# the files in tests/data/valgrind, and, when valgrind is installed, fresh runs of massif and
# callgrind (plain, --cache-sim, --separate-callers=30) over tests/programs' callpath and
# massif_prog. The oracles run when installed (ms_print, callgrind_annotate, both in the
# valgrind package; gprof2dot from $PF_GPROF2DOT, PEERS_DIR or the peers beside the checkout);
# otherwise the checked-in files are compared with the oracles' outputs saved beside them
# (tests/data/valgrind/*.ms_print, *.annotate, *.annotate-inclusive).
#   massif: pf's total is the snapshot's useful heap (ms_print's table) and the bytes per
#     allocation function (the leaf frames) are ms_print's first-level entries, after the
#     name normalization of pf-collapse(1): no "0xADDR: ", no " (file:line)" or " (in obj)",
#     "???" as "[obj]", massif's below-threshold entries as "[below threshold: N places]".
#   callgrind: pf-dot's total is the file's totals: line and callgrind_annotate's program
#     total; every function's self cost (by name and object) is callgrind_annotate's, its
#     inclusive cost callgrind_annotate --inclusive=yes's; gprof2dot's labels of the
#     program's own functions and of the calls between them are pf-dot's.
#   --separate-callers: pf-collapse's stacks sum to the totals, and per leaf function to
#     callgrind_annotate's self costs of its contexts.
# Usage: valgrind_test.sh SOURCE_DIR PF_COLLAPSE PF_FLAMEGRAPH PF_DOT PF_DIFF CALLPATH MASSIF_PROG
#        [PEERS_DIR]
set -u -o pipefail
src=$1 collapse=$2 flamegraph=$3 dot=$4 diff=$5 callpath=$6 massif_prog=$7 peers=${8:-}
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
collapse=$(abs "$collapse") flamegraph=$(abs "$flamegraph") dot=$(abs "$dot") diff=$(abs "$diff")
callpath=$(abs "$callpath") massif_prog=$(abs "$massif_prog") src=$(abs "$src")
data=$src/tests/data/valgrind
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { checks=$((checks + 1)); }
have() { command -v "$1" >/dev/null 2>&1; }

gprof2dot=${PF_GPROF2DOT:-}
for g in "$peers/gprof2dot/gprof2dot.py" "$src/../peers/gprof2dot/gprof2dot.py" \
  "$src/../../peers/gprof2dot/gprof2dot.py"; do
  [ -z "$gprof2dot" ] && [ -f "$g" ] && have python3 && gprof2dot=$g
done

# The oracle's output: run it when installed, else the saved output of the checked-in file.
oracle() {  # TOOL SAVED-SUFFIX ARGS... FILE
  local tool=$1 saved=$2
  shift 2
  local file=${*: -1}
  if have "$tool"; then
    "$tool" "$@"
  elif [ -f "$file.$saved" ]; then
    cat "$file.$saved"
  else
    return 1
  fi
}

# The massif name normalization (pf-collapse(1), INPUT FORMATS) on ms_print's entry text.
normalize_massif='
function norm(t,   n) {
  if (t ~ /^in [0-9]+ places?, (all )?below massif.s threshold/) {
    split(t, w, " "); n = w[2]
    return "[below threshold: " n (n == 1 ? " place]" : " places]")
  }
  sub(/^0x[0-9A-Fa-f]+: /, "", t)
  if (t ~ /^\?\?\? \(in .*\)$/) { sub(/^\?\?\? \(in /, "", t); sub(/\)$/, "", t); sub(/.*\//, "", t); return "[" t "]" }
  sub(/ \(in [^()]*\)$/, "", t)
  sub(/ \([^()]*:[0-9]+\)$/, "", t)
  return t
}'

# ms_print's snapshot N ("peak": the peak's) as "total BYTES" and "function BYTES" lines.
ms_print_snapshot() {  # MS_PRINT_OUTPUT N|peak
  awk -v want="$2" "$normalize_massif"'
    /^ *[0-9]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ *$/ { gsub(",", ""); n = $1; useful[n] = $4 }
    /^ Detailed snapshots:/ { match($0, /[0-9]+ \(peak\)/); peak = substr($0, RSTART, RLENGTH); sub(/ .*/, "", peak) }
    /\(heap allocation functions\)/ { tree = n }
    /^->/ {
      b = $0; sub(/^->[0-9.]+% \(/, "", b); t = b; sub(/B\).*/, "", b); gsub(",", "", b)
      sub(/^[0-9,]+B\) /, "", t); by[tree, norm(t)] += b; names[norm(t)] = 1
    }
    END {
      s = want == "peak" ? peak : want
      print "total " useful[s]; for (k in names) if ((s, k) in by) print k " " by[s, k]
    }' "$1" | LC_ALL=C sort
}

# pf-collapse's folded output as "total N" and "leaf-function N" lines.
folded_by_leaf() {
  awk '/^#/ { next } { w = $NF; $NF = ""; sub(/ $/, ""); n = split($0, fr, ";"); by[fr[n]] += w; t += w }
       END { print "total " t; for (k in by) print k " " by[k] }' "$1" | LC_ALL=C sort
}

check_massif() {  # FILE
  local f=$1 name n
  name=$(basename "$f")
  oracle ms_print ms_print --threshold=0 "$f" >"$tmp/ms" || { echo "skip $name: no ms_print"; return; }
  # The peak (the default), then every snapshot with a tree (--snapshot=N).
  for n in peak $(sed -n 's/^ Detailed snapshots: \[\(.*\)\]/\1/p' "$tmp/ms" | tr -d ',' |
                  sed 's/ (peak)//'); do
    ms_print_snapshot "$tmp/ms" "$n" >"$tmp/ms.want"
    local args=()
    [ "$n" = peak ] || args=(--snapshot="$n")
    "$collapse" "${args[@]}" "$f" >"$tmp/pf.folded" 2>"$tmp/err" ||
      { fail "$name ${args[*]}: pf-collapse: $(cat "$tmp/err")"; continue; }
    folded_by_leaf "$tmp/pf.folded" >"$tmp/ms.got"
    if diff -u "$tmp/ms.want" "$tmp/ms.got" >"$tmp/d"; then ok; else
      fail "$name snapshot $n: pf vs ms_print"
      cat "$tmp/d"
    fi
  done
  "$collapse" "$f" | head -1 | grep -qx '# pf-unit: bytes' && ok || fail "$name: unit not bytes"
  "$flamegraph" "$f" 2>/dev/null | grep -q '<title>all ([0-9.,]* [kMG]*B, 100%)' && ok ||
    fail "$name: pf-flamegraph (no total in bytes)"
  # A snapshot without a tree: an error naming those with one.
  n=$(awk '/^ *[0-9]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ +[0-9,]+ *$/ { print $1; exit }' "$tmp/ms")
  "$collapse" --snapshot="$n" "$f" >/dev/null 2>"$tmp/err"
  [ $? -eq 1 ] && grep -q "snapshot $n has no heap tree.*the snapshots with a heap tree: " "$tmp/err" &&
    ok || fail "$name --snapshot=$n (no tree): $(cat "$tmp/err")"
}

# callgrind_annotate's lines "12,345 (1.2%)  file:function [object]" as "function [obj] N".
# Code inlined from another file is its own line, "file:function" without the object: it
# is added to the function of that name (of the one object that has it).
annotate_by_function='
/^ *[0-9][0-9,]* +\( *[0-9.]+%\) +[^ ]/ && $0 !~ /PROGRAM TOTALS|events annotated|=>/ {
  v = $1; gsub(",", "", v)
  t = $0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", t)
  for (i = 0; i < 12 && t ~ /^([0-9,]+|\.) +/; i++) { sub(/^([0-9,]+|\.) +(\( *[0-9.]+%\) +)?/, "", t) }
  obj = "?"
  if (t ~ / \[[^]]*\]$/) { obj = t; sub(/.*\[/, "", obj); sub(/\]$/, "", obj); sub(/.*\//, "", obj) }
  sub(/ \[[^]]*\]$/, "", t); fn = t; sub(/^[^:]*:/, "", fn)
  if (ctx) { sub(/'"'"'.*/, "", fn); obj = "" }
  if (obj == "?") { loose[fn] += v; next }
  key = (ctx || !incl) ? fn : fn " [" obj "]"
  if (!((fn, key) in seen)) { seen[fn, key] = 1; nobj[fn]++; one[fn] = key }
  by[key] += v
}
/PROGRAM TOTALS/ { v = $1; gsub(",", "", v); total = v }
END {
  for (fn in loose) {
    if (ctx || !incl) by[fn] += loose[fn]
    else if (incl) delete by[one[fn]]  # the inclusive cost of a function in parts is not theirs summed
    else if (nobj[fn] == 1) by[one[fn]] += loose[fn]
    else by[fn " [?]"] += loose[fn]
  }
  if (incl) for (fn in nobj) if (nobj[fn] > 1) for (k in by) if (index(k, fn " [") == 1) delete by[k]
  print "total " total; for (k in by) if (by[k] > 0) print k " " by[k]
}'

# pf-dot's nodes (--node-label=self-time --node-label=total-time) as "function [obj] N".
dot_by_function='
/ \[color=.*label=.*tooltip=/ {
  l = $0; sub(/.*label="/, "", l); sub(/", tooltip=.*/, "", l)
  n = split(l, f, /\\n/)
  for (i = 1; i <= n; i++) if (f[i] ~ /^\([0-9]+\)$/) break
  name = $0; sub(/.*tooltip="/, "", name); sub(/"\];$/, "", name)
  obj = (i == 3) ? f[1] : "???"
  v = (which == "self") ? f[i] : f[i + 1]; gsub(/[()]/, "", v)
  if (v > 0) { if (which == "self") by[name] += v; else print name " [" obj "] " v }
}
/legend/ { t = $0; sub(/.*total weight /, "", t); sub(/ .*/, "", t); gsub(",", "", t); print "total " t }
END { for (k in by) print k " " by[k] }'

check_callgrind() {  # FILE
  local f=$1 name totals
  name=$(basename "$f")
  totals=$(awk '/^totals:/ { print $2 }' "$f")
  "$dot" -n 0 -e 0 --nodecount=0 --node-label=self-time --node-label=total-time "$f" \
    >"$tmp/pf.dot" 2>"$tmp/err" || { fail "$name: pf-dot: $(cat "$tmp/err")"; return; }
  [ -s "$tmp/err" ] && fail "$name: pf-dot warned: $(cat "$tmp/err")"
  sed -n 's/.*total weight \([0-9,]*\) Ir.*/\1/p' "$tmp/pf.dot" | tr -d , |
    grep -qx "$totals" && ok || fail "$name: pf-dot's total is not the totals: line ($totals)"
  for which in self inclusive; do
    local args=(--threshold=100 --auto=no)
    [ $which = inclusive ] && args+=(--inclusive=yes)
    local saved=annotate
    [ $which = inclusive ] && saved=annotate-inclusive
    oracle callgrind_annotate "$saved" "${args[@]}" "$f" >"$tmp/ann" ||
      { echo "skip $name: no callgrind_annotate"; return; }
    awk -v ctx=0 -v incl=$([ $which = inclusive ] && echo 1 || echo 0) "$annotate_by_function" \
      "$tmp/ann" | LC_ALL=C sort >"$tmp/want"
    awk -v which=$which "$dot_by_function" "$tmp/pf.dot" | LC_ALL=C sort >"$tmp/got"
    if [ $which = inclusive ]; then
      # Only the functions callgrind_annotate has whole (one object, no inlined parts) and
      # pf in one object (callgrind_annotate merges a file's functions of two objects).
      awk '{ x = $0; sub(/ \[.*/, "", x); n[x]++; line[NR] = $0; name[NR] = x }
           END { for (i = 1; i <= NR; i++) if (n[name[i]] == 1) print line[i] }' "$tmp/got" |
        LC_ALL=C sort >"$tmp/got2"
      sed 's/ [0-9]*$//' "$tmp/got2" >"$tmp/keys"
      awk 'NR == FNR { k[$0] = 1; next } { x = $0; sub(/ [0-9]*$/, "", x) } k[x]' \
        "$tmp/keys" "$tmp/want" >"$tmp/want2" && mv "$tmp/want2" "$tmp/want"
      sed 's/ [0-9]*$//' "$tmp/want" >"$tmp/keys"
      awk 'NR == FNR { k[$0] = 1; next } { x = $0; sub(/ [0-9]*$/, "", x) } k[x]' \
        "$tmp/keys" "$tmp/got2" >"$tmp/got"
    fi
    if [ $which = self ]; then
      # The program total is callgrind's summary: line, the totals: line when they agree.
      grep -q "^summary: $totals\$" "$f" || sed -i '/^total /d' "$tmp/want" "$tmp/got"
    else
      sed -i '/^total /d' "$tmp/want" "$tmp/got"
    fi
    if diff -u "$tmp/want" "$tmp/got" >"$tmp/d"; then ok; else
      fail "$name: pf-dot's $which costs vs callgrind_annotate"
      head -20 "$tmp/d"
    fi
  done
}

# gprof2dot's labels of the program's own functions (module $2) and of the calls between them.
check_gprof2dot() {  # FILE PROGRAM
  local f=$1 prog=$2 name
  name=$(basename "$f")
  [ -n "$gprof2dot" ] || { echo "skip gprof2dot on $name: not found"; return; }
  python3 "$gprof2dot" -f callgrind -n 0 -e 0 "$f" >"$tmp/g2d.dot" 2>/dev/null ||
    { fail "gprof2dot failed on $name"; return; }
  "$dot" -n 0 -e 0 --nodecount=0 "$f" >"$tmp/pf.dot" 2>/dev/null
  # Nodes: "name<TAB>label"; edges: "from -> to<TAB>label" (ids mapped to names).
  awk -v prog="$prog" '
    function unq(s) { gsub(/^"|"$/, "", s); return s }
    / -> / { split($0, a, / -> | \[/); from = unq(a[1]); sub(/^\t/, "", from); from = unq(from); to = unq(a[2])
             l = $0; sub(/.*label="/, "", l); sub(/".*/, "", l); e[from " -> " to] = l; next }
    /label=/ && !/legend/ { id = $0; sub(/^\t/, "", id); sub(/ \[.*/, "", id); id = unq(id)
             l = $0; sub(/.*label="/, "", l); sub(/".*/, "", l)
             if (index(l, prog "\\n") == 1 && id !~ /below main/) { keep[id] = 1; print id "\t" l } }
    END { for (k in e) { split(k, p, " -> "); if (keep[p[1]] && keep[p[2]]) print k "\t" e[k] } }' \
    "$tmp/g2d.dot" | LC_ALL=C sort >"$tmp/want"
  awk -v prog="$prog" '
    / -> / { split($0, a, / -> | \[/); from = a[1]; sub(/^\t/, "", from)
             l = $0; sub(/.*label="/, "", l); sub(/".*/, "", l); e[from "\t" a[2]] = l; next }
    /tooltip=/ { id = $0; sub(/^\t/, "", id); sub(/ \[.*/, "", id)
             n = $0; sub(/.*tooltip="/, "", n); sub(/"\];$/, "", n); name[id] = n
             l = $0; sub(/.*label="/, "", l); sub(/".*/, "", l)
             if (index(l, prog "\\n") == 1 && n !~ /below main/) { keep[id] = 1; print n "\t" l } }
    END { for (k in e) { split(k, p, "\t"); if (keep[p[1]] && keep[p[2]]) print name[p[1]] " -> " name[p[2]] "\t" e[k] } }' \
    "$tmp/pf.dot" | LC_ALL=C sort >"$tmp/got"
  [ -s "$tmp/want" ] || { fail "gprof2dot on $name: no node of $prog"; return; }
  if diff -u "$tmp/want" "$tmp/got" >"$tmp/d"; then ok; else
    fail "$name: pf-dot vs gprof2dot -f callgrind"
    head -20 "$tmp/d"
  fi
}

check_separate() {  # FILE
  local f=$1 name totals
  name=$(basename "$f")
  totals=$(awk '/^totals:/ { print $2 }' "$f")
  "$collapse" "$f" >"$tmp/sep.folded" 2>"$tmp/err" || { fail "$name: pf-collapse: $(cat "$tmp/err")"; return; }
  head -1 "$tmp/sep.folded" | grep -qx '# pf-unit: instructions' && ok || fail "$name: unit"
  folded_by_leaf "$tmp/sep.folded" >"$tmp/got"
  grep -qx "total $totals" "$tmp/got" && ok || fail "$name: stacks do not sum to totals: $totals"
  oracle callgrind_annotate annotate --threshold=100 --auto=no "$f" >"$tmp/ann" || return
  awk -v ctx=1 "$annotate_by_function" "$tmp/ann" | LC_ALL=C sort >"$tmp/want"
  grep -q "^summary: $totals\$" "$f" || sed -i '/^total /d' "$tmp/want" "$tmp/got"
  if diff -u "$tmp/want" "$tmp/got" >"$tmp/d"; then ok; else
    fail "$name: stacks' leaf costs vs callgrind_annotate"
    head -20 "$tmp/d"
  fi
  "$flamegraph" "$f" 2>/dev/null | grep -q '<title>all ([0-9,]* Ir, 100%)' && ok ||
    fail "$name: pf-flamegraph (no total in Ir)"
}

# The stack tools refuse plain callgrind files and point to pf-dot.
check_refusals() {  # FILE
  local f=$1 tool
  for tool in "$collapse" "$flamegraph"; do
    "$tool" "$f" >"$tmp/out" 2>"$tmp/err"
    [ $? -eq 1 ] && grep -q 'call edges, not call stacks: draw its call graph with pf-dot' "$tmp/err" &&
      ok || fail "$(basename "$tool") $(basename "$f"): want exit 1 pointing to pf-dot"
  done
  "$diff" "$f" "$f" >"$tmp/out" 2>"$tmp/err"
  [ $? -eq 1 ] && grep -q 'pf-dot' "$tmp/err" && ok || fail "pf-diff $(basename "$f"): want exit 1"
}

# The checked-in files.
check_massif "$data/massif.out.massif_prog"
check_callgrind "$data/callgrind.out.massif_prog"
check_callgrind "$data/callgrind.out.cache"
check_gprof2dot "$data/callgrind.out.massif_prog" massif_prog
check_separate "$data/callgrind.out.separate"
check_refusals "$data/callgrind.out.massif_prog"
# A recursive program (tests/programs/valgrind_recursion.c): callgrind names the recursive
# calls "r'2", a recursion level, not a caller. Its plain file is refused as call edges (not
# as a too small --separate-callers); with --separate-callers a level is one frame with the
# function, never a frame "2".
check_refusals "$data/callgrind.out.recursion"
check_separate "$data/callgrind.out.recursion-separate"
"$collapse" "$data/callgrind.out.recursion-separate" >"$tmp/rec.folded" 2>&1
grep -Eq ';[0-9]+(;| [0-9]+$)' "$tmp/rec.folded" && fail "recursion levels as frames" || ok
grep -Eq ';main;r 59$' "$tmp/rec.folded" && grep -Eq ';main;even;odd;even;odd;even 8$' "$tmp/rec.folded" &&
  ok || fail "recursion-separate: the stacks of r'2 and even'2: $(grep ';main;' "$tmp/rec.folded")"
# Threads (tests/programs/valgrind_threads.c): clone is called in the parent (a few Ir) and
# calls start_thread in the child: its total is that call's, as gprof2dot's (saved labels).
"$dot" -n 0 -e 0 --nodecount=0 "$data/callgrind.out.threads" >"$tmp/th.dot"
for fn in clone start_thread worker spin; do
  want=$(grep -E "^.\"?$fn\"? \[" "$data/callgrind.out.threads.gprof2dot" | sed 's/.*label="[^\\]*\\n[^\\]*\\n\([^\\]*\)\\n.*/\1/')
  got=$(grep -F "\\n$fn\\n" "$tmp/th.dot" | sed 's/.*label="[^\\]*\\n[^\\]*\\n\([^\\]*\)\\n.*/\1/')
  [ -n "$want" ] && [ "$want" = "$got" ] && ok || fail "callgrind.out.threads: $fn's total $got, gprof2dot's $want"
done
"$dot" "$data/callgrind.out.4242" >/dev/null 2>"$tmp/err"
grep -q "sum to 110010, the file's totals: line says 248073" "$tmp/err" && ok ||
  fail "callgrind.out.4242: the totals that disagree are not warned"
# --value: another event of a --cache-sim file (pf-dot), the default one of stacks (Ir).
for col in 2 4; do
  ev=$(awk -v c=$col '/^events:/ { print $c; exit }' "$data/callgrind.out.cache")
  want=$(awk -v c=$col '/^totals:/ { print $c }' "$data/callgrind.out.cache")
  "$dot" --value="$ev" "$data/callgrind.out.cache" | sed -n 's/.*total weight \([0-9,]*\) .*/\1/p' |
    tr -d , | grep -qx "$want" && ok || fail "pf-dot --value=$ev: total is not $want"
done
"$dot" --value=Bc "$data/callgrind.out.cache" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "no event 'Bc'" "$tmp/err" && ok || fail "pf-dot --value=Bc: want exit 2"
"$collapse" --value=Ir "$data/callgrind.out.separate" | cmp -s - <("$collapse" "$data/callgrind.out.separate") &&
  ok || fail "--separate-callers: the default value is not Ir"
# gzip, and stdin.
gzip -c "$data/callgrind.out.massif_prog" >"$tmp/cg.gz"
"$dot" "$tmp/cg.gz" | grep -q 'total weight 122,100 Ir' && ok || fail "pf-dot on gzip"
"$dot" <"$data/callgrind.out.massif_prog" | grep -q 'total weight 122,100' && ok || fail "pf-dot stdin"
"$collapse" <"$data/massif.out.massif_prog" | grep -qx 'main;build_table;alloc_row 64000' && ok ||
  fail "pf-collapse massif on stdin"

# Fresh profiles.
if ! have valgrind; then
  echo "valgrind_test: $checks checks on the checked-in files, $failures failed; valgrind is not installed, no fresh profiles"
  [ $failures -eq 0 ] || exit 1
  exit 77
fi
cd "$tmp" || exit 1
run() { valgrind -q "$@" >/dev/null 2>"$tmp/vg.err" || { fail "valgrind $*: $(tail -3 "$tmp/vg.err")"; return 1; }; }
run --tool=massif --massif-out-file=massif.out.prog "$massif_prog" && check_massif massif.out.prog
run --tool=massif --threshold=10 --massif-out-file=massif.out.t10 "$massif_prog" && check_massif massif.out.t10
run --tool=massif --massif-out-file=massif.out.callpath "$callpath" 0.02 && check_massif massif.out.callpath
run --tool=callgrind --callgrind-out-file=callgrind.out.callpath "$callpath" 0.02 && {
  check_callgrind callgrind.out.callpath
  check_gprof2dot callgrind.out.callpath callpath
  check_refusals callgrind.out.callpath
}
run --tool=callgrind --callgrind-out-file=callgrind.out.prog "$massif_prog" && {
  check_callgrind callgrind.out.prog
  check_gprof2dot callgrind.out.prog massif_prog
}
run --tool=callgrind --cache-sim=yes --callgrind-out-file=callgrind.out.cache "$massif_prog" &&
  check_callgrind callgrind.out.cache
run --tool=callgrind --separate-callers=30 --callgrind-out-file=callgrind.out.sep "$callpath" 0.02 &&
  check_separate callgrind.out.sep
# Too shallow a --separate-callers: no stacks, and the error says so.
run --tool=callgrind --separate-callers=2 --callgrind-out-file=callgrind.out.sep2 "$callpath" 0.02 && {
  "$collapse" callgrind.out.sep2 >/dev/null 2>"$tmp/err"
  [ $? -eq 1 ] && grep -q 'separate-callers smaller than its deepest stack' "$tmp/err" && ok ||
    fail "--separate-callers=2: $(cat "$tmp/err")"
}

echo "valgrind_test: $checks checks, $failures failed"
[ $failures -eq 0 ]
