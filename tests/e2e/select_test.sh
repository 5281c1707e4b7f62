#!/usr/bin/env bash
# perf script's selection and output options on real recordings: pf-script prints what
# `perf script` prints with the same option (--comms, --pid, --tid, --cpu, --time in seconds
# and in percent slices, -S, --max-stack, --ns, --reltime, --no-demangle, -G, and -F with a
# field pf does not print), and `pf-collapse SEL rec` equals `pf-script SEL rec | pf-collapse`,
# on one thread and on two. Usage:
#   select_test.sh PF_SCRIPT PF_COLLAPSE PF_RECORD CALLPATH UNWIND_PROG INTERNAL_CXX
# Skips (77) when perf is missing or perf_event_open is refused.
set -u -o pipefail
script=$1 collapse=$2 record=$3 callpath=$4 unwind_prog=$5 cxx=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
command -v perf >/dev/null || { echo "SKIP: perf is not installed"; exit 77; }
# Two processes on both CPUs, the CPU recorded; a DWARF recording (stack copies); a C++
# program (names to demangle); a pf-record stream.
if ! perf record -e cpu-clock -F 999 -g --sample-cpu -N -o "$tmp/two.data" -- \
    sh -c "\"$callpath\" 0.4 & \"$unwind_prog\"; wait" >/dev/null 2>"$tmp/err"; then
  echo "SKIP: perf record failed here ($(grep -m1 -v '^ *$' "$tmp/err"))"
  exit 77
fi
perf record -e cpu-clock -F 999 --call-graph dwarf -N -o "$tmp/dwarf.data" -- "$unwind_prog" \
  >/dev/null 2>&1 || fail "perf record --call-graph dwarf failed"
perf record -e cpu-clock -F 999 -g -N -o "$tmp/cxx.data" -- "$cxx" >/dev/null 2>&1 ||
  fail "perf record (C++) failed"
"$record" -F 999 -g -o "$tmp/pf.pfs" -- "$callpath" 0.3 >/dev/null 2>&1 || fail "pf-record failed"

# The same text and exit status as perf script (0, or an error for both).
same() {  # FILE ARGS...
  local f=$1
  shift
  perf script -i "$f" "$@" >"$tmp/p" 2>/dev/null
  local prc=$?
  "$script" "$@" "$f" >"$tmp/q" 2>"$tmp/q.err"
  local qrc=$?
  if [ $((prc == 0)) -ne $((qrc == 0)) ]; then
    fail "$(basename "$f") $*: perf script exit $prc, pf-script $qrc ($(head -1 "$tmp/q.err"))"
  elif ! cmp -s "$tmp/p" "$tmp/q"; then
    fail "$(basename "$f") $*: differs from perf script ($(diff "$tmp/p" "$tmp/q" | grep -c '^[<>]') lines)"
    diff "$tmp/p" "$tmp/q" | head -4
  fi
}
# A comm, a pid and a tid of the recording, a time inside it.
two=$tmp/two.data
read -r comm pid tid < <(perf script -i "$two" -F comm,pid,tid 2>/dev/null |
  awk '$1 == "unwind_prog" { split($2, a, "/"); print $1, a[1], a[2]; exit }')
[ -n "${pid:-}" ] || fail "no unwind_prog sample in the recording"
first=$(perf script -i "$two" -F time 2>/dev/null | head -1 | tr -d ' :')
mid=$(awk -v t="$first" 'BEGIN { printf "%.6f", t + 0.2 }')
end=$(awk -v t="$first" 'BEGIN { printf "%.6f", t + 0.3 }')
for f in "$two" "$tmp/cxx.data" "$tmp/dwarf.data"; do
  same "$f" --comms "$comm"
  same "$f" --comms "$comm,sh,callpath"
  same "$f" --pid "$pid"
  same "$f" --tid "$tid,1"
  same "$f" --time "$mid,"
  same "$f" --time ",$mid"
  same "$f" --time "$first,$mid $end,"
  same "$f" --time 10%/2
  same "$f" --time 0%-10%,30%-40%
  same "$f" --time 25%
  same "$f" --time 10%/1,10%/3
  same "$f" --time "$end,$mid"      # refused by both
  same "$f" --time 5%/21           # refused by both
  same "$f" -S leaf_alpha,main,spin
  same "$f" --max-stack 0
  same "$f" --max-stack 2
  same "$f" --max-stack -1        # refused by both
  same "$f" --ns
  same "$f" --reltime --show-task-events
  same "$f" --reltime --time "0.1,0.2"
  same "$f" -G
  same "$f" --no-demangle
  same "$f" --comms "$comm" --time 50%-100% --max-stack 3 --ns
done
same "$two" --cpu 1
same "$two" --cpu 0 --comms "$comm"
same "$two" --cpu 0 --show-task-events
same "$tmp/cxx.data" --cpu 0   # refused by both: no CPU in the samples
same "$tmp/pf.pfs" --comms callpath --ns -G
# perf refuses percentages on a stream (it holds no first/last sample time); pf-script finds
# them in a stream kept in a file, and slices it as it slices the same samples in perf.data.
"$script" --time 10%/2 "$tmp/pf.pfs" >"$tmp/q" 2>"$tmp/q.err" ||
  fail "pf-script --time 10%/2 on a stream in a file: $(cat "$tmp/q.err")"
[ -s "$tmp/q" ] || fail "pf-script --time 10%/2 on a stream printed nothing"
cat "$tmp/pf.pfs" | "$script" --time 10%/2 >/dev/null 2>"$tmp/q.err"
[ $? -eq 2 ] && grep -q "give the times in seconds" "$tmp/q.err" ||
  fail "--time 10%/2 on a pipe: $(cat "$tmp/q.err")"
same "$tmp/cxx.data" -S 'ns::helper'
mangled=$(nm "$cxx" | awk '/helper/ { print $3; exit }')
same "$tmp/cxx.data" --no-demangle -S "$mangled"

# -F with the fields stackcollapse-perf.pl's usage recommends: perf warns and ignores trace.
fields=comm,pid,tid,cpu,time,event,ip,sym,dso,trace
same "$two" -F "$fields"
"$script" -F "$fields" "$two" 2>"$tmp/err" >/dev/null
grep -q "'trace' not valid for software events. Ignoring." "$tmp/err" ||
  fail "-F ...,trace: no warning ($(cat "$tmp/err"))"
"$script" -F comm,tid,insn,brstack "$two" >"$tmp/q" 2>"$tmp/err" || fail "-F insn: exit $?"
grep -q "'insn' is not printed by pf-script" "$tmp/err" || fail "-F insn: no warning"
"$script" -F comm,tid "$two" | cmp -s - "$tmp/q" || fail "-F insn changed the output"
"$script" -F comm,tid,machine_pid,vcpu "$two" 2>"$tmp/err" | cmp -s - "$tmp/q" ||
  fail "-F machine_pid,vcpu (perf knows them): $(cat "$tmp/err")"
"$script" -F comm,nonsense "$two" >/dev/null 2>&1
[ $? -eq 2 ] || fail "-F with a field perf does not know: not a usage error"

# pf-collapse SEL rec = pf-script SEL rec | pf-collapse, on one thread and (a recording of
# 8 MiB or more) on two.
perf record -e cpu-clock -F 4000 --call-graph dwarf -N -o "$tmp/big.data" -- \
  sh -c "\"$unwind_prog\"; \"$unwind_prog\"" >/dev/null 2>&1 || fail "perf record (big) failed"
[ "$(stat -c %s "$tmp/big.data")" -ge $((8 << 20)) ] || echo "note: big.data is under 8 MiB"
bigpid=$(perf script -i "$tmp/big.data" -F pid,comm 2>/dev/null | awk '$1 == "unwind_prog" { print $2; exit }')
for f in "$two" "$tmp/dwarf.data" "$tmp/big.data" "$tmp/pf.pfs"; do
  for sel in "--comms=$comm" "--pids=$pid,$bigpid|--pid=$pid,$bigpid" "--tids=$tid|--tid=$tid" \
      "--time=$mid," "--time=10%/2" "--time=0%-10%,30%-40%" "--comms=sh --time=50%-100%" \
      "--cpu=1"; do
    csel=${sel%%|*}
    ssel=${sel#*|}
    [ "$csel" = "$sel" ] && ssel=$sel
    for j in 1 2; do
      # shellcheck disable=SC2086
      "$collapse" -j $j $csel "$f" >"$tmp/a" 2>"$tmp/a.err"
      arc=$?
      # shellcheck disable=SC2086
      "$script" $ssel "$f" 2>/dev/null | "$collapse" >"$tmp/b"
      brc=$?
      if [ $((arc == 0)) -ne $((brc == 0)) ]; then
        fail "$(basename "$f") pf-collapse $csel (-j $j) exit $arc, pf-script | pf-collapse $brc"
      elif ! cmp -s "$tmp/a" "$tmp/b"; then
        fail "$(basename "$f") pf-collapse $csel (-j $j) differs from pf-script $ssel | pf-collapse"
        diff "$tmp/a" "$tmp/b" | head -4
      fi
    done
  done
done
# A selection that leaves nothing says so (not "the target was idle").
"$collapse" --comms=nomatch "$two" 2>"$tmp/err" >/dev/null
grep -qx "pf-collapse: warning: --comms left none of the recording's samples" "$tmp/err" ||
  fail "--comms matching nothing: $(cat "$tmp/err")"
# On text the selection is a usage error.
"$script" "$two" | "$collapse" --comms=sh >/dev/null 2>&1
[ $? -eq 2 ] || fail "pf-collapse --comms on perf script text: not a usage error"
"$collapse" --pids=x "$two" >/dev/null 2>&1
[ $? -eq 2 ] || fail "pf-collapse --pids=x: not a usage error"

[ "$failures" -eq 0 ] || exit 1
echo "selection ok"
