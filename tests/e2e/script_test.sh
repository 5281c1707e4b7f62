#!/usr/bin/env bash
# pf-script and pf-collapse on real recordings made by `perf record` here: pf-script's text
# equals `perf script`'s, for file and pipe format, and `pf-collapse perf.data` equals
# `perf script | pf-collapse`. Also truncated recordings: every cut gives the complete prefix
# or a clear error, never a crash. Usage: script_test.sh PF_SCRIPT PF_COLLAPSE CALLPATH
# Skips (77) when perf is missing or perf_event_open is refused.
set -u -o pipefail
script=$1 collapse=$2 callpath=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
command -v perf >/dev/null || { echo "SKIP: perf is not installed"; exit 77; }
if ! perf record -e cpu-clock -F 999 -g -N -o "$tmp/file.data" -- "$callpath" 0.5 \
    >/dev/null 2>"$tmp/err"; then
  echo "SKIP: perf record failed here ($(grep -m1 -v '^ *$' "$tmp/err"))"
  exit 77
fi
perf record -e cpu-clock -F 999 -g -N -o - -- "$callpath" 0.5 2>/dev/null >"$tmp/pipe.data" ||
  fail "perf record -o - failed"
# Two processes running the same program: the same stack text under different pids (the
# recording folder must not lose samples it recognises by text), on both CPUs.
perf record -e cpu-clock -F 999 -g -N -o "$tmp/two.data" -- \
  sh -c "\"$callpath\" 0.5 & \"$callpath\" 0.5; wait" >/dev/null 2>&1 || fail "perf record (two) failed"
# Comms the Perl script's event-line pattern reads ambiguously (one letter before a five-digit
# thread id takes the time into the comm; spaces and digits), and two events (the second is
# another event's, left out unless --event-filter names it).
cp "$callpath" "$tmp/w" && cp "$callpath" "$tmp/Web 2" || fail "cannot copy callpath"
perf record -e cpu-clock -F 999 -g -N -o "$tmp/names.data" -- \
  sh -c "\"$tmp/w\" 0.3 & \"$tmp/Web 2\" 0.3; wait" >/dev/null 2>&1 || fail "perf record (names) failed"
perf record -e cpu-clock -e page-faults -F 999 -g -N -o "$tmp/events.data" -- "$callpath" 0.3 \
  >/dev/null 2>&1 || fail "perf record (events) failed"

for f in file pipe two names events; do
  perf script -i "$tmp/$f.data" >"$tmp/$f.perf.txt" 2>/dev/null
  "$script" "$tmp/$f.data" >"$tmp/$f.pf.txt" 2>"$tmp/$f.err" || fail "$f: pf-script exit $?: $(cat "$tmp/$f.err")"
  [ -s "$tmp/$f.perf.txt" ] || fail "$f: perf script printed nothing"
  if ! cmp -s "$tmp/$f.perf.txt" "$tmp/$f.pf.txt"; then
    fail "$f: pf-script differs from perf script ($(diff "$tmp/$f.perf.txt" "$tmp/$f.pf.txt" | grep -c '^[<>]') lines):"
    diff "$tmp/$f.perf.txt" "$tmp/$f.pf.txt" | head -10
  fi
  perf script -i "$tmp/$f.data" --show-mmap-events --show-task-events >"$tmp/$f.ev.perf" 2>/dev/null
  "$script" --show-mmap-events --show-task-events "$tmp/$f.data" >"$tmp/$f.ev.pf" 2>/dev/null
  cmp -s "$tmp/$f.ev.perf" "$tmp/$f.ev.pf" || {
    fail "$f: --show-mmap-events --show-task-events differ from perf script"
    diff "$tmp/$f.ev.perf" "$tmp/$f.ev.pf" | head -4
  }
  "$script" < "$tmp/$f.data" >"$tmp/$f.stdin.txt" 2>/dev/null
  cmp -s "$tmp/$f.pf.txt" "$tmp/$f.stdin.txt" || fail "$f: stdin differs from the file"
  # Folding the recording directly equals folding the text.
  "$collapse" "$tmp/$f.data" >"$tmp/$f.direct.folded" || fail "$f: pf-collapse on the recording"
  "$collapse" "$tmp/$f.perf.txt" >"$tmp/$f.text.folded"
  cmp -s "$tmp/$f.direct.folded" "$tmp/$f.text.folded" || {
    fail "$f: pf-collapse of the recording differs from pf-collapse of perf script"
    diff "$tmp/$f.direct.folded" "$tmp/$f.text.folded" | head -6
  }
  # (events: the default filter is the first event seen, which may be page-faults.)
  [ $f = events ] || grep -q "main;work_a;spin" "$tmp/$f.direct.folded" || fail "$f: no main;work_a;spin stack"
  for opt in --all "--weight=samples" --event-filter=page-faults --event-filter=cpu-clock; do
    "$collapse" $opt "$tmp/$f.data" >"$tmp/a" && "$collapse" $opt "$tmp/$f.perf.txt" >"$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" || fail "$f: pf-collapse $opt differs between the recording and its text"
  done
  # --pid/--tid: the recording holds the PID, which perf script prints with -F +pid only.
  perf script -F +pid -i "$tmp/$f.data" >"$tmp/$f.pid.txt" 2>/dev/null
  for opt in --pid --tid; do
    "$collapse" $opt "$tmp/$f.data" >"$tmp/a" && "$collapse" $opt "$tmp/$f.pid.txt" >"$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" ||
      fail "$f: pf-collapse $opt differs between the recording and perf script -F +pid"
    # (names: the comm `w` takes the ids and the time, the period is read as the PID.)
    [ $f = names ] || ! grep -q -- "-?" "$tmp/a" || fail "$f: pf-collapse $opt prints an unknown PID"
  done
done

# -F field selection as perf's.
for fields in "comm,pid,tid,time,ip,sym" "+pid" "-period" "comm,tid,ip,sym,dso"; do
  perf script -i "$tmp/file.data" -F "$fields" >"$tmp/p" 2>/dev/null
  "$script" -F "$fields" "$tmp/file.data" >"$tmp/q" 2>/dev/null
  cmp -s "$tmp/p" "$tmp/q" || { fail "-F $fields differs"; diff "$tmp/p" "$tmp/q" | head -4; }
done

# Truncated recordings: the complete prefix or a clear error, never a crash.
size=$(stat -c %s "$tmp/pipe.data")
for cut in 0 8 16 100 1000 $((size / 3)) $((size / 2)) $((size - 7)); do
  head -c "$cut" "$tmp/pipe.data" >"$tmp/cut.data"
  "$script" "$tmp/cut.data" >/dev/null 2>"$tmp/err"
  rc=$?
  [ $rc -le 1 ] || fail "cut at $cut: exit $rc (crash?) $(cat "$tmp/err")"
  "$collapse" "$tmp/cut.data" >/dev/null 2>"$tmp/err"
  rc=$?
  [ $rc -le 1 ] || fail "pf-collapse, cut at $cut: exit $rc $(cat "$tmp/err")"
done

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "pf-script equals perf script on file and pipe recordings"
