#!/usr/bin/env bash
# End-to-end test of pf-record: record tests/programs/callpath (built with frame pointers)
# and check the stream with perf itself (`perf script -i FILE`, `perf script -i -`): the
# callpath frames are named, and work_a;spin takes 75% +- 10% of main's work. Then -p on a
# running process, -d, SIGINT, the command's exit status, a reader that closes the pipe
# early, the refusal of DWARF call graphs, and (as root) the permission advice given to an
# unprivileged user when kernel.perf_event_paranoid is 3 (restored afterwards).
#
# Usage: record_test.sh PF_RECORD CALLPATH
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (perf_event_open refused here).

set -u
set -o pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 PF_RECORD CALLPATH" >&2
  exit 2
fi
PF=$1
CALLPATH=$2

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
less_than() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

[ -x "$PF" ] || fail "pf-record not found or not executable: $PF"
[ -x "$CALLPATH" ] || fail "callpath not found or not executable: $CALLPATH"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pf-record-e2e.XXXXXX") || fail "mktemp failed"
pids_to_kill=()
saved_paranoid=
cleanup() {
  for p in "${pids_to_kill[@]}"; do kill "$p" 2>/dev/null; done
  if [ -n "$saved_paranoid" ]; then
    echo "$saved_paranoid" >/proc/sys/kernel/perf_event_paranoid
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

COMM=$(basename -- "$CALLPATH")
COMM=${COMM:0:15}
have_perf=0
command -v perf >/dev/null 2>&1 && have_perf=1

# --- can we record at all? ---------------------------------------------------------------
if ! "$PF" -o "$tmp/probe.pfs" -- true 2>"$tmp/probe.err"; then
  if grep -q "cannot open event" "$tmp/probe.err"; then
    skip "perf_event_open is refused here: $(head -c 300 "$tmp/probe.err")"
  fi
  fail "pf-record -- true failed: $(cat "$tmp/probe.err")"
fi
[ "$(head -c 8 "$tmp/probe.pfs")" = PERFILE2 ] || fail "the stream does not start with PERFILE2"

# --- a command, frame-pointer call graphs, at 999 Hz ----------------------------------------
"$PF" -F 999 -g -o "$tmp/cp.pfs" -- "$CALLPATH" 1.5 >"$tmp/cp.out" 2>"$tmp/cp.err"
rc=$?
[ $rc -eq 0 ] || fail "pf-record -g -- callpath exited with $rc: $(cat "$tmp/cp.err")"
grep -q "^callpath: .* rounds" "$tmp/cp.out" || fail "callpath's own output is missing: $(cat "$tmp/cp.out")"
summary=$(grep '^pf-record: ' "$tmp/cp.err")
echo "$summary" | grep -qE '^pf-record: [0-9]+ samples, [0-9]+ lost \([0-9]+\.[0-9]%\)$' ||
  fail "no summary line: $(cat "$tmp/cp.err")"
samples=$(echo "$summary" | awk '{print $2}')
[ "$samples" -ge 200 ] || fail "only $samples samples in 1.5 s at 999 Hz"
echo "record: $summary, $(wc -c <"$tmp/cp.pfs") bytes"

# share_of_work_a SCRIPT_TEXT: "A B" = samples of COMM through work_a, through work_b.
shares() {
  LC_ALL=C awk -v comm="$COMM" '
    /^[^[:space:]]/ { in_sample = ($1 == comm); a = b = 0; next }
    /^$/ { if (in_sample) { if (a) na++; else if (b) nb++ } in_sample = 0; next }
    in_sample && / work_a\+0x/ { a = 1 }
    in_sample && / work_b\+0x/ { b = 1 }
    END { if (in_sample) { if (a) na++; else if (b) nb++ } printf "%d %d\n", na, nb }' "$1"
}

if [ $have_perf -eq 1 ]; then
  perf script -i "$tmp/cp.pfs" >"$tmp/cp.txt" 2>"$tmp/cp.script.err" ||
    fail "perf script cannot read the stream: $(head -5 "$tmp/cp.script.err")"
  grep -qE '[[:space:]]spin\+0x[0-9a-f]+ \(' "$tmp/cp.txt" || fail "perf script shows no spin frames"
  grep -qE '[[:space:]]work_a\+0x[0-9a-f]+ \(' "$tmp/cp.txt" || fail "perf script shows no work_a frames"
  grep -qE '[[:space:]]main\+0x[0-9a-f]+ \(' "$tmp/cp.txt" || fail "perf script shows no main frames"
  grep -qE "^$COMM +[0-9]+ .*cpu-clock" "$tmp/cp.txt" || fail "no '$COMM ... cpu-clock' sample lines"
  read -r na nb < <(shares "$tmp/cp.txt")
  share=$(awk -v a="$na" -v b="$nb" 'BEGIN { if (a + b) printf "%.3f", a / (a + b); else print -1 }')
  echo "perf script: work_a $na, work_b $nb samples -> work_a share $share (expected 0.75 +- 0.10)"
  [ $((na + nb)) -ge 200 ] || fail "only $((na + nb)) samples through work_a/work_b"
  awk -v s="$share" 'BEGIN { d = s - 0.75; if (d < 0) d = -d; exit !(d <= 0.10) }' ||
    fail "work_a share $share is outside 0.75 +- 0.10"
  # perf report reads it as well.
  perf report -i "$tmp/cp.pfs" --stdio >"$tmp/report.txt" 2>&1 || fail "perf report failed: $(head -3 "$tmp/report.txt")"
  grep -q "spin" "$tmp/report.txt" || fail "perf report does not show spin"
else
  echo "note: perf is not installed: the stream is not checked by perf script"
fi

# --- -p PID on a running process: ends when it exits ----------------------------------------
"$CALLPATH" 3 >/dev/null &
target=$!
pids_to_kill+=("$target")
sleep 0.3
start=$(now)
"$PF" -g -p "$target" -o "$tmp/p.pfs" 2>"$tmp/p.err" || fail "pf-record -p exited with $?: $(cat "$tmp/p.err")"
took=$(elapsed "$start")
kill -0 "$target" 2>/dev/null && fail "pf-record -p returned while its target still runs"
less_than "$took" 6 || fail "pf-record -p took $took s for a target that ran 2.7 s"
echo "-p: $(grep '^pf-record:' "$tmp/p.err"), ended with its target after $took s"
if [ $have_perf -eq 1 ]; then
  perf script -i "$tmp/p.pfs" >"$tmp/p.txt" 2>/dev/null || fail "perf script cannot read the -p stream"
  grep -qE "^ *$COMM +$target " "$tmp/p.txt" || fail "no samples of pid $target in the -p stream"
  grep -qE '[[:space:]]work_a\+0x' "$tmp/p.txt" || fail "-p: perf script did not name work_a (synthesized maps?)"
fi

# --- -d 1 on a process that keeps running, through a pipe into perf script -i - ----------
"$CALLPATH" 3 >/dev/null &
target=$!
pids_to_kill+=("$target")
sleep 0.2
start=$(now)
if [ $have_perf -eq 1 ]; then
  "$PF" -g -p "$target" -d 1 2>"$tmp/d.err" | perf script -i - >"$tmp/d.txt" 2>"$tmp/d.script.err"
  st=("${PIPESTATUS[@]}")
  [ "${st[0]}" -eq 0 ] || fail "pf-record -d 1 exited with ${st[0]}: $(cat "$tmp/d.err")"
  [ "${st[1]}" -eq 0 ] || fail "perf script -i - failed on the pipe: $(head -3 "$tmp/d.script.err")"
  grep -qE '[[:space:]]spin\+0x' "$tmp/d.txt" || fail "perf script -i - shows no spin frames"
else
  "$PF" -g -p "$target" -d 1 -o "$tmp/d.pfs" 2>"$tmp/d.err" || fail "pf-record -d 1 failed"
fi
took=$(elapsed "$start")
less_than "$took" 3 || fail "-d 1 took $took s"
kill -0 "$target" 2>/dev/null || fail "-d 1 ended, but its -p target should still be running"
echo "-d 1: $(grep '^pf-record:' "$tmp/d.err"), $took s"

# --- SIGINT ends the recording with a complete stream -------------------------------------
"$PF" -p "$target" -o "$tmp/int.pfs" 2>"$tmp/int.err" &
rec=$!
sleep 0.5
kill -INT "$rec"
wait "$rec"
rc=$?
[ $rc -eq 0 ] || fail "pf-record stopped by SIGINT exited with $rc: $(cat "$tmp/int.err")"
[ -s "$tmp/int.pfs" ] || fail "no stream after SIGINT"
if [ $have_perf -eq 1 ]; then
  perf script -i "$tmp/int.pfs" >/dev/null 2>"$tmp/int.script.err" || fail "the stream after SIGINT is unreadable"
fi
kill -0 "$target" 2>/dev/null || fail "SIGINT to pf-record -p must not stop the target"
kill "$target" 2>/dev/null

# --- the command's exit status is pf-record's ----------------------------------------------
"$PF" -q -o "$tmp/x.pfs" -- sh -c 'exit 3'
rc=$?
[ $rc -eq 3 ] || fail "pf-record -- sh -c 'exit 3' exited with $rc"
"$PF" -q -o "$tmp/x.pfs" -- sh -c 'kill -TERM $$'
rc=$?
[ $rc -eq 143 ] || fail "a command killed by SIGTERM must give 143, got $rc"
"$PF" -q -o "$tmp/x.pfs" -- /nonexistent/command 2>"$tmp/nx.err"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot run" "$tmp/nx.err" || fail "a missing command: status $rc, $(cat "$tmp/nx.err")"

# --- a reader that closes the pipe early ends pf-record quietly ---------------------------
start=$(now)
"$PF" -g -- "$CALLPATH" 5 2>"$tmp/head.err" | head -c 100 >"$tmp/head.out"
st=("${PIPESTATUS[@]}")
took=$(elapsed "$start")
[ "${st[0]}" -eq 0 ] || fail "pf-record | head -c 100: pf-record exited with ${st[0]}: $(cat "$tmp/head.err")"
[ ! -s "$tmp/head.err" ] || fail "pf-record | head -c 100 was not quiet: $(cat "$tmp/head.err")"
[ "$(wc -c <"$tmp/head.out")" -eq 100 ] || fail "head did not get 100 bytes"
less_than "$took" 4 || fail "pf-record | head -c 100 took $took s: the command should be stopped"
echo "closed pipe: quiet, $took s"

# --- a recording names its frames where the binaries are missing -------------------------
# pf-script sits next to pf-record; an empty HOME hides the build-id cache and --symfs hides
# the binaries, as on another machine.
PF_SCRIPT=$(dirname "$PF")/pf-script
if [ -x "$PF_SCRIPT" ]; then
  mkdir -p "$tmp/home"
  HOME="$tmp/home" "$PF_SCRIPT" --symfs="$tmp/none" "$tmp/cp.pfs" >"$tmp/portable.txt" 2>&1 ||
    fail "pf-script of the recording failed: $(head -3 "$tmp/portable.txt")"
  grep -q "work_a+0x" "$tmp/portable.txt" || fail "without the binaries, frames are not named from the stream"
  "$PF" -q --no-symbols -F 999 -g -o "$tmp/nosym.pfs" -- "$CALLPATH" 0.3 >/dev/null 2>&1
  HOME="$tmp/home" "$PF_SCRIPT" --symfs="$tmp/none" "$tmp/nosym.pfs" >"$tmp/nosym.txt" 2>&1
  grep -q "work_a+0x" "$tmp/nosym.txt" && fail "--no-symbols still carries symbols"
  grep -q "\[unknown\] (.*callpath)" "$tmp/nosym.txt" || fail "--no-symbols: expected [unknown] frames"
  if command -v perf >/dev/null; then
    perf script -i "$tmp/cp.pfs" >"$tmp/cp.perf.txt" 2>"$tmp/cp.perf.err" ||
      fail "perf script does not tolerate the symbol records: $(head -3 "$tmp/cp.perf.err")"
    "$PF_SCRIPT" "$tmp/cp.pfs" | cmp -s - "$tmp/cp.perf.txt" || fail "pf-script differs from perf script on a pf-record stream"
  fi
  echo "portable symbols: frames named without the binaries; perf script tolerates them"
fi

# --- what perf users type (issue 26) ----------------------------------------------------------
PF_SCRIPT=$(dirname "$PF")/pf-script
# Call graphs by default; --call-graph=none and --no-call-graph record the leaf only.
"$PF" -q -F 999 -o "$tmp/default.pfs" -- "$CALLPATH" 0.5 >/dev/null 2>&1 || fail "pf-record (no -g)"
# (the frame under spin is its caller when call chains were recorded)
callers() { "$PF_SCRIPT" "$1" >"$tmp/callers.txt" && grep -A1 ' spin+0x' "$tmp/callers.txt" >"$tmp/callers.A1"; }
callers "$tmp/default.pfs" || fail "no samples of spin without -g"
grep -qE '^[[:space:]]+[0-9a-f]+ work_[ab]\+0x' "$tmp/callers.A1" || fail "pf-record without -g did not record call graphs"
for none in --call-graph=none --no-call-graph "-g --no-call-graph"; do
  # shellcheck disable=SC2086
  "$PF" -q -F 999 $none -o "$tmp/none.pfs" -- "$CALLPATH" 0.3 >/dev/null 2>&1 || fail "pf-record $none"
  callers "$tmp/none.pfs" || fail "$none: no samples of spin"
  grep -qE '^[[:space:]]+[0-9a-f]+ work_[ab]\+0x' "$tmp/callers.A1" && fail "$none still recorded call graphs"
done
# -g with --call-graph in either order, as perf record takes them: --raw-stacks goes with dwarf
# only, so it is accepted exactly when the mode is dwarf.
for ok in "-F 99 -g --call-graph dwarf" "--call-graph=dwarf -g" "--no-call-graph --call-graph=dwarf"; do
  # shellcheck disable=SC2086
  "$PF" -q $ok --raw-stacks -o "$tmp/g.pfs" -- true 2>"$tmp/g.err" || fail "$ok: $(cat "$tmp/g.err")"
done
for notdwarf in "--call-graph=dwarf --no-call-graph" "--call-graph=dwarf --no-call-graph -g" \
                "--call-graph=dwarf --call-graph=fp -g"; do
  # shellcheck disable=SC2086
  "$PF" -q $notdwarf --raw-stacks -o "$tmp/g.pfs" -- true 2>/dev/null
  [ $? -eq 2 ] || fail "$notdwarf was taken as dwarf"
done
# -p PID -- COMMAND: PID is recorded while the command runs, the command is not.
"$CALLPATH" 4 >/dev/null &
target=$!
pids_to_kill+=("$target")
sleep 0.2
start=$(now)
"$PF" -g -p "$target" -o "$tmp/pcmd.pfs" -- sleep 1 2>"$tmp/pcmd.err" ||
  fail "pf-record -p PID -- sleep 1 exited with $?: $(cat "$tmp/pcmd.err")"
took=$(elapsed "$start")
kill -0 "$target" 2>/dev/null || fail "-p PID -- sleep 1: the target did not outlive the recording"
less_than "$took" 2.5 || fail "-p PID -- sleep 1 took $took s"
"$PF_SCRIPT" "$tmp/pcmd.pfs" >"$tmp/pcmd.txt" || fail "pf-script cannot read the -p -- sleep stream"
grep -qE "^ *$COMM +$target " "$tmp/pcmd.txt" || fail "-p PID -- sleep: no samples of $target"
grep -qE "^ *sleep " "$tmp/pcmd.txt" && fail "-p PID -- sleep: the command itself was recorded"
echo "-p PID -- sleep 1: $(grep '^pf-record:' "$tmp/pcmd.err") in $took s"
kill "$target" 2>/dev/null
# A negative frequency is refused (it wrapped to 2^64 - 5); a tracepoint that does not exist
# is named as one (tests/e2e/tracepoint_test.sh records them).
"$PF" -F -5 -o "$tmp/x.pfs" -- true 2>"$tmp/neg.err"
[ $? -eq 2 ] && grep -q "must not be negative" "$tmp/neg.err" || fail "-F -5: $(cat "$tmp/neg.err")"
"$PF" -e nosuch:tracepoint -o "$tmp/x.pfs" -- true 2>"$tmp/tp.err"
rc=$?
if [ $rc -eq 2 ]; then
  grep -q "no tracepoint nosuch:tracepoint" "$tmp/tp.err" || fail "-e nosuch:tracepoint: $(cat "$tmp/tp.err")"
else  # tracefs unreadable here: a runtime error that says so
  [ $rc -eq 1 ] && grep -qE "tracefs|cannot read" "$tmp/tp.err" ||
    fail "-e nosuch:tracepoint: $(cat "$tmp/tp.err")"
fi
# Standard output a terminal and no -o: ./perf.data, the previous one kept as perf.data.old.
if command -v script >/dev/null; then
  mkdir "$tmp/term" && cd "$tmp/term" || fail "cd"
  script -qec "$PF -F 999 -- $CALLPATH 0.3" /dev/null </dev/null >"$tmp/term1.out" 2>&1 ||
    fail "pf-record on a terminal: $(cat "$tmp/term1.out")"
  grep -q "notice: writing perf.data" "$tmp/term1.out" || fail "no notice of perf.data: $(cat "$tmp/term1.out")"
  [ "$(head -c 8 perf.data)" = PERFILE2 ] || fail "perf.data is not a recording"
  cp perf.data first.data
  script -qec "$PF -- true" /dev/null </dev/null >"$tmp/term2.out" 2>&1 || fail "second pf-record on a terminal"
  grep -q "the previous one is now perf.data.old" "$tmp/term2.out" || fail "no perf.data.old notice: $(cat "$tmp/term2.out")"
  cmp -s perf.data.old first.data || fail "perf.data.old is not the previous recording"
  # pf-script, pf-collapse and pf-dot read ./perf.data when given no FILE on a terminal.
  mv perf.data.old perf.data
  script -qec "$PF_SCRIPT" /dev/null </dev/null >"$tmp/term3.out" 2>&1
  grep -q ' spin+0x' "$tmp/term3.out" || fail "pf-script did not read ./perf.data: $(head -3 "$tmp/term3.out")"
  cd "$tmp" || fail "cd"
  echo "terminal: perf.data written, perf.data.old kept, read back by pf-script"
fi

# --- bad DWARF options are usage errors (the recordings are tested in dwarf_test.sh) -------
for bad in "--call-graph=dwarf,100" "--call-graph=dwarf,70000" "--call-graph=dwarf,x" \
           "--call-graph=lbr" "--raw-stacks -g" "--raw-stacks --call-graph=none"; do
  # shellcheck disable=SC2086
  "$PF" $bad -o "$tmp/x.pfs" -- true 2>"$tmp/dwarf.err"
  rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l < "$tmp/dwarf.err")" -le 2 ] ||
    fail "$bad: status $rc, $(cat "$tmp/dwarf.err")"
done

# --- permission advice for an unprivileged user (root only) ---------------------------------
if [ "$(id -u)" -eq 0 ] && [ -w /proc/sys/kernel/perf_event_paranoid ] && command -v setpriv >/dev/null; then
  saved_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
  echo 3 >/proc/sys/kernel/perf_event_paranoid || fail "cannot set perf_event_paranoid"
  # nobody needs to reach the binary: copy it where everyone may.
  mkdir -p "$tmp/bin" && cp "$PF" "$tmp/bin/pf-record" && chmod 755 "$tmp" "$tmp/bin" "$tmp/bin/pf-record"
  setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/bin/pf-record" -a -d 0.2 \
    2>"$tmp/perm.err" | cat >/dev/null
  rc=${PIPESTATUS[0]}
  echo "$saved_paranoid" >/proc/sys/kernel/perf_event_paranoid
  saved_paranoid=
  [ "$rc" -eq 1 ] || fail "unprivileged pf-record -a at perf_event_paranoid=3 exited with $rc (want 1): $(cat "$tmp/perm.err")"
  grep -q "perf_event_paranoid" "$tmp/perm.err" || fail "no perf_event_paranoid advice: $(cat "$tmp/perm.err")"
  grep -q "sysctl -w kernel.perf_event_paranoid=" "$tmp/perm.err" || fail "the advice gives no sysctl command"
  echo "permissions: $(head -c 160 "$tmp/perm.err")..."
else
  echo "note: not root (or no setpriv): the permission advice check is skipped"
fi

echo "PASS: record_test"
exit 0
