#!/usr/bin/env bash
# End-to-end test of how the readers treat a recording they cannot trust (issue 26):
#  - a recording whose MMAP2 names a FIFO on the reading machine: pf-script, pf-collapse,
#    pf-dot and pf-diff finish (the FIFO is not opened for a blocking read);
#  - a pf-record stream cut at a record boundary (the recorder killed by SIGKILL while
#    pf-collapse reads its pipe) is reported as cut, with the samples read; a whole one is
#    not, nor is perf's own pipe output (`perf record -o -`);
#  - pf-collapse --pid / --tid on a recording print the PID and TID, as
#    `pf-script -F +pid REC | pf-collapse --pid` does, and a ';' in the comm becomes ':'.
#
# Usage: recording_trust_test.sh PF_RECORD PF_SCRIPT PF_COLLAPSE PF_DOT PF_DIFF CALLPATH
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (perf_event_open refused here).

set -u
set -o pipefail

if [ $# -ne 6 ]; then
  echo "usage: $0 PF_RECORD PF_SCRIPT PF_COLLAPSE PF_DOT PF_DIFF CALLPATH" >&2
  exit 2
fi
RECORD=$1 SCRIPT=$2 COLLAPSE=$3 DOT=$4 DIFF=$5 CALLPATH=$6

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pf-trust.XXXXXX") || fail "mktemp failed"
pids_to_kill=()
cleanup() {
  for p in "${pids_to_kill[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! "$RECORD" -o "$tmp/probe.pfs" -- true 2>"$tmp/probe.err"; then
  grep -q "cannot open event" "$tmp/probe.err" && skip "perf_event_open is refused here"
  fail "pf-record -- true failed: $(cat "$tmp/probe.err")"
fi

# --- an MMAP2 that names a FIFO -------------------------------------------------------------
# Record a copy of callpath, then put a FIFO (no writer) where the copy was.
cp "$CALLPATH" "$tmp/prog" || fail "cannot copy callpath"
"$RECORD" -F 999 -g -o "$tmp/fifo.pfs" -- "$tmp/prog" 0.3 >/dev/null 2>"$tmp/rec.err" ||
  fail "pf-record failed: $(cat "$tmp/rec.err")"
grep -q "$tmp/prog" "$tmp/fifo.pfs" || fail "the recording does not name $tmp/prog"
rm "$tmp/prog" && mkfifo "$tmp/prog" || fail "mkfifo failed"
for tool in "$SCRIPT" "$COLLAPSE" "$DOT"; do
  timeout 20 "$tool" "$tmp/fifo.pfs" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc -ne 124 ] || fail "$(basename "$tool") hangs on a recording that names a FIFO"
  [ $rc -eq 0 ] || fail "$(basename "$tool") exited with $rc: $(head -3 "$tmp/err")"
  [ -s "$tmp/out" ] || fail "$(basename "$tool") printed nothing"
done
timeout 20 "$DIFF" "$tmp/fifo.pfs" "$tmp/fifo.pfs" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -ne 124 ] || fail "pf-diff hangs on a recording that names a FIFO"
[ $rc -eq 0 ] || fail "pf-diff exited with $rc: $(head -3 "$tmp/err")"
# The samples are still named, from the symbols the stream carries.
"$COLLAPSE" "$tmp/fifo.pfs" | grep -q ";work_a;spin " || fail "the FIFO's frames are not named"
echo "FIFO named by an MMAP2: pf-script, pf-collapse, pf-dot and pf-diff finish"

# --- a pf-record stream cut at a record boundary --------------------------------------------
mkfifo "$tmp/pipe"
"$RECORD" -F 999 -g -- "$CALLPATH" 5 >"$tmp/pipe" 2>/dev/null &
recorder=$!
pids_to_kill+=("$recorder")
"$COLLAPSE" <"$tmp/pipe" >"$tmp/killed.folded" 2>"$tmp/killed.err" &
collapse=$!
sleep 1.5
child=$(pgrep -P "$recorder")  # callpath, which outlives its recorder
[ -n "$child" ] && pids_to_kill+=("$child")
kill -9 "$recorder"
wait "$recorder" 2>/dev/null
wait "$collapse"
rc=$?
[ $rc -eq 0 ] || fail "pf-collapse of a killed recorder's stream exited with $rc"
[ -s "$tmp/killed.folded" ] || fail "pf-collapse folded nothing of a killed recorder's stream"
grep -qE "^pf-collapse: warning: <stdin>: the recording stops at byte [0-9]+ without pf-record's end record .*; folded the [0-9]+ samples read$" \
  "$tmp/killed.err" || fail "a stream cut by SIGKILL is not reported: '$(cat "$tmp/killed.err")'"
echo "killed recorder: $(cat "$tmp/killed.err")"

# A whole stream, through a pipe and from a file: no word.
"$RECORD" -F 999 -g -- "$CALLPATH" 0.3 2>/dev/null | "$COLLAPSE" >/dev/null 2>"$tmp/whole.err" ||
  fail "pf-collapse of a whole stream failed"
[ ! -s "$tmp/whole.err" ] || fail "a whole stream is reported: $(cat "$tmp/whole.err")"
"$SCRIPT" "$tmp/fifo.pfs" >/dev/null 2>"$tmp/whole.err" || fail "pf-script of a whole stream failed"
[ ! -s "$tmp/whole.err" ] || fail "a whole stream is reported: $(cat "$tmp/whole.err")"

# The same stream cut just before its end note: reported by pf-script and pf-collapse; perf
# reads it without complaint, whole or cut.
# (The note's name follows its 8-byte header and 16 bytes of address, length and flags.)
name_at=$(grep -boa 'pf-end' "$tmp/fifo.pfs" | tail -1 | cut -d: -f1)
[ -n "$name_at" ] || fail "the stream has no end note"
cut_at=$((name_at - 24))
head -c "$cut_at" "$tmp/fifo.pfs" >"$tmp/cut.pfs"
"$SCRIPT" "$tmp/cut.pfs" >/dev/null 2>"$tmp/cut.err" || fail "pf-script of a cut stream failed"
grep -q "stops at byte $cut_at without pf-record's end record" "$tmp/cut.err" ||
  fail "pf-script does not report the cut stream: '$(cat "$tmp/cut.err")'"
if command -v perf >/dev/null 2>&1; then
  for f in fifo cut; do
    perf script -i - <"$tmp/$f.pfs" >/dev/null 2>"$tmp/perf.err" || fail "perf script refuses $f.pfs"
    [ ! -s "$tmp/perf.err" ] || fail "perf script complains about $f.pfs: $(head -3 "$tmp/perf.err")"
    perf report -i - --stdio <"$tmp/$f.pfs" >/dev/null 2>"$tmp/perf.err" || fail "perf report refuses $f.pfs"
    [ ! -s "$tmp/perf.err" ] || fail "perf report complains about $f.pfs: $(head -3 "$tmp/perf.err")"
  done
  # perf's own pipe output has no end note and is not reported.
  if perf record -e cpu-clock -F 999 -g -o - -- "$CALLPATH" 0.3 2>/dev/null >"$tmp/perf.pipe"; then
    "$COLLAPSE" "$tmp/perf.pipe" >/dev/null 2>"$tmp/perfpipe.err" || fail "pf-collapse of perf's pipe failed"
    [ ! -s "$tmp/perfpipe.err" ] || fail "perf's pipe output is reported: $(cat "$tmp/perfpipe.err")"
  fi
  echo "perf script and perf report read the marked streams without a word"
fi

# --- --pid/--tid on a recording, and a comm with a ';' ----------------------------------------
# The program's file name is its comm.
cp "$CALLPATH" "$tmp/map;churn" || fail "cannot copy callpath"
"$RECORD" -F 999 -g -o "$tmp/semi.pfs" -- "$tmp/map;churn" 0.3 >/dev/null 2>"$tmp/rec.err" ||
  fail "pf-record failed: $(cat "$tmp/rec.err")"
pid=$("$SCRIPT" -F +pid "$tmp/semi.pfs" | awk '$1 == "map;churn" { split($2, a, "/"); print a[1]; exit }')
[ -n "$pid" ] || fail "no samples of map;churn in the recording"
for opt in "" --pid --tid; do
  "$COLLAPSE" $opt "$tmp/semi.pfs" >"$tmp/direct.folded" || fail "pf-collapse $opt failed"
  "$SCRIPT" -F +pid "$tmp/semi.pfs" | "$COLLAPSE" $opt >"$tmp/text.folded" ||
    fail "pf-script | pf-collapse $opt failed"
  diff -u "$tmp/text.folded" "$tmp/direct.folded" >&2 ||
    fail "pf-collapse $opt REC differs from pf-script -F +pid REC | pf-collapse $opt"
  if command -v perf >/dev/null 2>&1; then
    perf script -F +pid -i "$tmp/semi.pfs" 2>/dev/null | "$COLLAPSE" $opt >"$tmp/perf.folded"
    diff -u "$tmp/perf.folded" "$tmp/direct.folded" >&2 ||
      fail "pf-collapse $opt REC differs from perf script -F +pid | pf-collapse $opt"
  fi
done
"$COLLAPSE" --pid "$tmp/semi.pfs" >"$tmp/direct.folded"
grep -q "^map:churn-$pid;[^ ]*work_a;spin [0-9]*$" "$tmp/direct.folded" ||
  fail "--pid: no 'map:churn-$pid;...;work_a;spin' stack: $(head -3 "$tmp/direct.folded")"
"$COLLAPSE" --tid "$tmp/semi.pfs" | grep -q "^map:churn-$pid/$pid;" ||
  fail "--tid: no 'map:churn-$pid/$pid' first frame"
echo "--pid and --tid on a recording: map:churn-$pid, as from pf-script -F +pid text"

echo "PASS"
