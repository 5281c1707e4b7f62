#!/usr/bin/env bash
# Thread dumps and .cpuprofile JSON in pf-collapse, against FlameGraph's collapsers:
#  1. every checked-in dump (tests/data/thread_dumps, README there) folded by pf-collapse
#     equals stackcollapse-elfutils.pl / -gdb.pl / -jstack.pl on it, byte for byte after
#     `LC_ALL=C sort` (both sort bytewise already; the sort only makes the comparison
#     independent of that); without Perl or FlameGraph, the golden files in results/ that
#     they wrote;
#     and random dumps of each format's line shapes (thread_dumps_gen.py) against them;
#  2. eu-stack and gdb run here on tests/programs' callpath and unwind_prog (one dump each
#     and a poor man's profiler loop), against the scripts (skipped, not failed, when
#     eu-stack, gdb or ptrace are not there);
#  3. the .cpuprofile (real, node 20) against an independent reading in Python of the
#     convention pf-collapse(1) documents; a fresh `node --cpu-prof` one when node is here;
#  4. the formats are sniffed, other JSON is still refused, -f forces a reader and a reader
#     given text of no such format fails.
# Usage: thread_dumps_test.sh SOURCE_DIR PF_COLLAPSE PROGRAMS_DIR [PEERS_DIR]
# (PEERS_DIR holds FlameGraph/stackcollapse-*.pl; $PF_PEERS_DIR wins.)
# Exit 77 (skip) when the checked-in part passed but no live dump could be made.
set -u -o pipefail
src=$1 collapse=$2 programs=$3 fg=${PF_PEERS_DIR:-${4:-$1/../peers}}/FlameGraph
data=$src/tests/data/thread_dumps
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export LC_ALL=C

have_perl=0
[ -f "$fg/stackcollapse-gdb.pl" ] && command -v perl >/dev/null && have_perl=1
script_for() {
  case $(basename "$1") in
    eu-*) echo stackcollapse-elfutils.pl ;;
    gdb-*) echo stackcollapse-gdb.pl ;;
    *) echo stackcollapse-jstack.pl ;;
  esac
}
# Folds FILE with pf-collapse (its unit line dropped) and with the script (or reads its
# golden file), and compares the two sorted.
compare() {
  local file=$1 name=$2 script
  script=$(script_for "$name")
  "$collapse" "$file" 2>"$tmp/err" | grep -v '^# pf-' | sort >"$tmp/pf" ||
    { fail "$name: pf-collapse failed: $(cat "$tmp/err")"; return; }
  if [ $have_perl -eq 1 ]; then
    perl "$fg/$script" "$file" 2>/dev/null | sort >"$tmp/ref"
  elif [ -f "$data/results/$name.folded" ]; then
    sort "$data/results/$name.folded" >"$tmp/ref"
  else
    return
  fi
  [ -s "$tmp/ref" ] || { fail "$name: the reference folded nothing"; return; }
  cmp -s "$tmp/pf" "$tmp/ref" ||
    { fail "$name: pf-collapse differs from $script"; diff -u "$tmp/ref" "$tmp/pf" | head -20; }
}

# 1. The checked-in dumps.
n=0
for f in "$data"/eu-*.txt "$data"/gdb-*.txt "$data"/jstack-*.txt "$data"/jcmd-*.txt; do
  compare "$f" "$(basename "$f" .txt)"
  n=$((n + 1))
done
[ $n -ge 10 ] || fail "only $n checked-in dumps"
# Concatenated dumps sum (the poor man's profiler).
cat "$data"/gdb-callpath.txt "$data"/gdb-callpath.txt >"$tmp/gdb-twice.txt"
compare "$tmp/gdb-twice.txt" gdb-twice
"$collapse" "$data/gdb-callpath.txt" "$data/gdb-callpath.txt" | sort >"$tmp/two-inputs"
sort "$tmp/pf" | cmp -s - "$tmp/two-inputs" || fail "two gdb inputs do not sum as one"

# 1b. Random dumps (thread_dumps_gen.py: each format's line shapes with their odd cases),
# against the scripts: pf-collapse -f FORMAT prints what the script prints (an input with
# no line of the format is an error for pf-collapse, and the script prints nothing).
if [ $have_perl -eq 1 ] && command -v python3 >/dev/null; then
  mkdir -p "$tmp/random"
  python3 "$src/tests/e2e/thread_dumps_gen.py" "$tmp/random" 60
  for f in "$tmp"/random/*.txt; do
    case $(basename "$f") in
      eu-*) fmt=eu-stack script=stackcollapse-elfutils.pl ;;
      gdb-*) fmt=gdb script=stackcollapse-gdb.pl ;;
      *) fmt=jstack script=stackcollapse-jstack.pl ;;
    esac
    perl "$fg/$script" "$f" 2>/dev/null | sort >"$tmp/ref"
    "$collapse" -f $fmt "$f" 2>/dev/null | grep -v '^# pf-' | sort >"$tmp/pf"
    cmp -s "$tmp/pf" "$tmp/ref" ||
      { fail "random $(basename "$f"): pf-collapse -f $fmt differs from $script";
        diff -u "$tmp/ref" "$tmp/pf" | head -8; }
  done
fi

# 2. Dumps made here.
live=0
record_live() {
  local prog=$1 seconds=$2 pid
  "$prog" "$seconds" >/dev/null 2>&1 &
  pid=$!
  pids+=("$pid")
  sleep 0.3
  if command -v eu-stack >/dev/null; then
    # (eu-stack exits 1 when some frames had non-fatal errors: its frames decide.)
    eu-stack -p "$pid" >"$tmp/probe" 2>&1
    if grep -q '^#0 ' "$tmp/probe"; then
      for i in 1 2 3; do
        eu-stack -p "$pid" >>"$tmp/eu-live-$(basename "$prog").txt" 2>/dev/null
        eu-stack -i -s -m -p "$pid" >>"$tmp/eu-live-ism-$(basename "$prog").txt" 2>/dev/null
        eu-stack -v -p "$pid" >>"$tmp/eu-live-v-$(basename "$prog").txt" 2>/dev/null
      done
    else
      echo "note: eu-stack cannot attach here: $(head -1 "$tmp/probe")"
    fi
  fi
  if command -v gdb >/dev/null; then
    for i in 1 2 3; do
      gdb -batch -ex "set pagination 0" -ex "thread apply all bt" -p "$pid" \
        >>"$tmp/gdb-live-$(basename "$prog").txt" 2>/dev/null
    done
    grep -q '^#0 ' "$tmp/gdb-live-$(basename "$prog").txt" ||
      { echo "note: gdb cannot attach here"; rm -f "$tmp/gdb-live-$(basename "$prog").txt"; }
  fi
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
for prog in "$programs/callpath" "$programs/unwind_prog"; do
  [ -x "$prog" ] && record_live "$prog" 5
done
# Each live dump is read (and its stacks checked below); with FlameGraph's scripts, compared.
compared=0
for f in "$tmp"/eu-live-*.txt "$tmp"/gdb-live-*.txt; do
  [ -s "$f" ] || continue
  live=$((live + 1))
  "$collapse" "$f" >/dev/null || fail "$(basename "$f"): pf-collapse exit $?"
  [ $have_perl -eq 1 ] || continue
  compare "$f" "$(basename "$f" .txt)"
  compared=$((compared + 1))
done
if [ -s "$tmp/gdb-live-callpath.txt" ]; then
  "$collapse" "$tmp/gdb-live-callpath.txt" | grep -q 'main;work_[ab];spin [0-9]' ||
    fail "gdb of callpath: no main;work_a;spin stack"
fi
if [ -s "$tmp/eu-live-callpath.txt" ]; then
  "$collapse" "$tmp/eu-live-callpath.txt" | grep -q 'main;work_[ab];spin [0-9]' ||
    fail "eu-stack of callpath: no main;work_a;spin stack"
fi

# 3. .cpuprofile: the wall column (the default) and the totals, from Python's own reading.
cpuprofile_oracle() {
  python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
nodes = {n["id"]: n for n in p["nodes"]}
parent = {c: n["id"] for n in p["nodes"] for c in n.get("children", [])}
def name(n):
    cf = n["callFrame"]
    f = cf["functionName"] or "(anonymous)"
    if cf["url"]:
        f += " " + cf["url"]
        if cf["lineNumber"] >= 0:
            f += ":%d" % (cf["lineNumber"] + 1)
            if cf["columnNumber"] >= 0:
                f += ":%d" % (cf["columnNumber"] + 1)
    return f
def stack(i):
    s = []
    while i is not None:
        n = nodes[i]
        if not (i not in parent and n["callFrame"]["functionName"] == "(root)" and not n["callFrame"]["url"]):
            s.append(name(n))
        i = parent.get(i)
    return ";".join(reversed(s)) or "(root)"
w = {}
samples, deltas = p["samples"], p["timeDeltas"]
for i, s in enumerate(samples):
    t = sum(deltas[: i + 1])
    us = deltas[i + 1] if i + 1 < len(samples) else p["endTime"] - (p["startTime"] + t)
    w[stack(s)] = w.get(stack(s), 0) + max(0, round(us * 1000))
for k in sorted(w, key=lambda s: s.encode()):
    if w[k]:
        print("%s %d" % (k, w[k]))
PY
}
if command -v python3 >/dev/null; then
  cpu_files=("$data/busy.cpuprofile")
  if command -v node >/dev/null && [ -f "$data/busy.js" ]; then
    (cd "$tmp" && node --cpu-prof --cpu-prof-dir="$tmp/node" --cpu-prof-interval 500 \
      "$data/busy.js" >/dev/null 2>&1) && cpu_files+=("$tmp"/node/*.cpuprofile)
  fi
  for f in "${cpu_files[@]}"; do
    [ -s "$f" ] || continue
    "$collapse" "$f" >"$tmp/cpu" 2>"$tmp/err" || { fail "$f: exit $?: $(cat "$tmp/err")"; continue; }
    head -1 "$tmp/cpu" | grep -qx '# pf-unit: nanoseconds' || fail "$f: no nanoseconds unit line"
    grep -v '^# pf-' "$tmp/cpu" >"$tmp/cpu.folded"
    cpuprofile_oracle "$f" >"$tmp/cpu.ref"
    cmp -s "$tmp/cpu.folded" "$tmp/cpu.ref" ||
      { fail "$f: pf-collapse differs from the Python reading"; diff -u "$tmp/cpu.ref" "$tmp/cpu.folded" | head; }
    grep -q 'spin .*busy.js:1:' "$tmp/cpu.folded" || fail "$f: no spin frame with its place"
    # --value=samples: the hitCounts, their total that of the nodes.
    hits=$(python3 -c 'import json,sys; print(sum(n["hitCount"] for n in json.load(open(sys.argv[1]))["nodes"]))' "$f")
    got=$("$collapse" --value=samples "$f" | awk '!/^#/ { s += $NF } END { print s + 0 }')
    [ "$got" = "$hits" ] || fail "$f: --value=samples totals $got, the hitCounts $hits"
  done
fi

# 4. Sniffing and forcing.
"$collapse" "$src/tests/data/foreign/profile.json" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q 'looks like JSON' "$tmp/err" || fail "speedscope JSON not refused"
"$collapse" -f gdb "$data/gdb-callpath.txt" | grep -q 'main;work_a;spin' || fail "-f gdb"
printf 'hello\nworld\n' >"$tmp/junk.txt"
for fmt in eu-stack gdb jstack cpuprofile; do
  "$collapse" -f $fmt "$tmp/junk.txt" >/dev/null 2>"$tmp/err"
  [ $? -eq 1 ] && grep -q 'error:' "$tmp/err" || fail "-f $fmt on junk: want exit 1"
done
printf '{"nodes":[{"id":1,"callFrame":{"functionName":"f","url":""},"hitCount":1,"children":[1]}]}' \
  >"$tmp/cycle.cpuprofile"
"$collapse" "$tmp/cycle.cpuprofile" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q 'not a tree' "$tmp/err" || fail "a node its own child: want exit 1"
gzip -c "$data/jstack-busy.txt" >"$tmp/jstack.gz"
"$collapse" "$tmp/jstack.gz" 2>/dev/null | grep -q '^pool-1-thread;' || fail "gzipped jstack"
"$collapse" "$data/jstack-busy.txt" 2>&1 >/dev/null | grep -q 'notice: kept the stacks of the' ||
  fail "jstack: no notice of the threads left out"

if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
if [ $live -eq 0 ]; then
  echo "SKIP: the checked-in dumps passed, but no live dump could be made (eu-stack and gdb" \
    "missing, or ptrace refused)"
  exit 77
fi
echo "thread dump checks passed ($live live dumps read, $compared compared with FlameGraph's" \
  "scripts${fg:+ in $fg})"
