#!/usr/bin/env bash
# End-to-end test of what every tool does with -o and with what users type (issue 26):
# -o never destroys what is at the path (a device node, a FIFO with a reader, a symlink,
# /dev/stdout, a file with mode 0600 and a hard link, the partial file of a killed run);
# pf-record writes a new recording in place so a killed recorder leaves a readable one;
# negative values for unsigned options are usage errors; pf-collapse and pf-dot read
# ./perf.data when given no FILE on a terminal.
#
# Usage: output_test.sh BIN_DIR CALLPATH SOURCE_DIR
# Exit status: 0 pass, 1 fail, 2 usage.

set -u
set -o pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BIN_DIR CALLPATH SOURCE_DIR" >&2
  exit 2
fi
BIN=$1
CALLPATH=$2
SRC=$3

fail() { echo "FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pf-output-e2e.XXXXXX") || fail "mktemp failed"
pids_to_kill=()
cleanup() {
  for p in "${pids_to_kill[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$tmp" || fail "cd $tmp"

printf 'main;a;b 3\nmain;a;c 1\nmain;d 2\n' >in.folded
# Each tool's command line, writing to the path that follows.
commands=(
  "$BIN/pf-collapse in.folded -o"
  "$BIN/pf-flamegraph in.folded -o"
  "$BIN/pf-diff in.folded in.folded -o"
  "$BIN/pf-dot in.folded -o"
  "$BIN/pf-script $SRC/tests/fuzz/corpus/perf_data/file.data -o"
)

# As root, a tool that regressed would replace the machine's /dev/stdout: run that case with
# a private /dev when we may (status 99 when /dev/stdout is no longer a link afterwards).
in_private_dev() {
  if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
    # shellcheck disable=SC2016
    unshare -m bash -c 'mount --make-rprivate / && mount -t tmpfs none /dev &&
      ln -s /proc/self/fd /dev/fd && ln -s /proc/self/fd/1 /dev/stdout || exit 98
      "$@"; rc=$?; [ -L /dev/stdout ] || rc=99; exit $rc' _ "$@"
  else
    "$@"
  fi
}

have_mknod=1
mknod "$tmp/probe-null" c 1 3 2>/dev/null || have_mknod=0
rm -f "$tmp/probe-null"

for cmd in "${commands[@]}"; do
  tool=$(basename "${cmd%% *}")
  # shellcheck disable=SC2086
  $cmd expected.out 2>/dev/null || fail "$tool -o expected.out"
  [ -s expected.out ] || fail "$tool wrote nothing"

  # A device node (like /dev/null, made here) is written through, never replaced.
  if [ $have_mknod -eq 1 ]; then
    rm -f null && mknod null c 1 3 || fail "mknod"
    # shellcheck disable=SC2086
    $cmd null 2>err || fail "$tool -o DEVICE: $(cat err)"
    [ -c null ] || fail "$tool replaced a device node with: $(ls -l null)"
  fi

  # A FIFO with a reader: the reader gets the output, the FIFO stays.
  rm -f fifo && mkfifo fifo || fail "mkfifo"
  cat fifo >from-fifo &
  reader=$!
  # shellcheck disable=SC2086
  $cmd fifo 2>err || fail "$tool -o FIFO: $(cat err)"
  wait "$reader"
  [ -p fifo ] || fail "$tool replaced a FIFO"
  cmp -s from-fifo expected.out || fail "$tool -o FIFO: the reader got something else"

  # A symlink is followed: the link stays, its target gets the output.
  rm -f link target && echo old >target && ln -s target link || fail "ln"
  # shellcheck disable=SC2086
  $cmd link 2>err || fail "$tool -o SYMLINK: $(cat err)"
  [ -L link ] || fail "$tool replaced a symlink"
  cmp -s target expected.out || fail "$tool -o SYMLINK: the target was not written"

  # /dev/stdout (here a file appended to) and /proc/self/fd/1.
  echo before >stdout.txt
  # shellcheck disable=SC2086
  in_private_dev $cmd /dev/stdout >>stdout.txt 2>err || fail "$tool -o /dev/stdout: status $?, $(cat err)"
  [ -L /dev/stdout ] || fail "$tool replaced /dev/stdout"
  { echo before; cat expected.out; } | cmp -s - stdout.txt || fail "$tool -o /dev/stdout >>: wrong content"
  # shellcheck disable=SC2086
  $cmd /proc/self/fd/1 2>err | cmp -s - expected.out || fail "$tool -o /proc/self/fd/1 into a pipe"

  # A file with mode 0600 and a hard link: rewritten in place, both names see it.
  rm -f a.out b.out && echo old >a.out && chmod 600 a.out && ln a.out b.out || fail "ln"
  inode=$(stat -c %i a.out)
  # shellcheck disable=SC2086
  $cmd a.out 2>err || fail "$tool -o HARDLINKED: $(cat err)"
  [ "$(stat -c %i:%h:%a a.out)" = "$inode:2:600" ] || fail "$tool -o HARDLINKED: $(stat -c %i:%h:%a a.out)"
  cmp -s b.out expected.out || fail "$tool -o HARDLINKED: the other link does not see the output"

  # A singly-linked file with mode 0600 is replaced and keeps its mode; the partial file a
  # killed run left (its process gone) is removed, no other is left.
  rm -f one.out && echo old >one.out && chmod 600 one.out
  sh -c 'exit 0' & dead=$!
  wait "$dead"
  echo cut >"one.out.pf-partial.$dead"
  # shellcheck disable=SC2086
  $cmd one.out 2>err || fail "$tool -o FILE: $(cat err)"
  [ "$(stat -c %a one.out)" = 600 ] || fail "$tool -o FILE lost mode 0600: $(stat -c %a one.out)"
  cmp -s one.out expected.out || fail "$tool -o FILE: wrong content"
  ls ./*.pf-partial.* >/dev/null 2>&1 && fail "$tool left partial files: $(ls ./*.pf-partial.*)"
  echo "$tool: device, FIFO, symlink, /dev/stdout, hard link, mode kept"
done

# --- negative values for unsigned options are usage errors ----------------------------------
for neg in "$BIN/pf-collapse -j -1 in.folded" "$BIN/pf-diff --top=-1 in.folded in.folded" \
           "$BIN/pf-dot --nodecount=-1 in.folded" "$BIN/pf-flamegraph --total=-1 in.folded" \
           "$BIN/pf-record -F -5 -- true" "$BIN/pf-record -c -1 -- true"; do
  # shellcheck disable=SC2086
  $neg >/dev/null 2>err
  rc=$?
  [ $rc -eq 2 ] && grep -q "must not be negative" err || fail "$neg: status $rc, $(cat err)"
done
echo "negative values: usage errors"

# --- no FILE on a terminal: ./perf.data, else a usage error ---------------------------------
if command -v script >/dev/null; then
  mkdir term && cd term || fail "cd term"
  for t in pf-collapse pf-dot pf-script; do
    script -qec "$BIN/$t" /dev/null </dev/null >out 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q "no input" out || fail "$t with no FILE on a terminal: status $rc, $(cat out)"
  done
  cp "$SRC/tests/fuzz/corpus/perf_data/file.data" perf.data
  script -qec "$BIN/pf-collapse" /dev/null </dev/null | tr -d '\r' >out
  grep -q '^callpath;.*;work_a;spin [0-9]' out || fail "pf-collapse did not read ./perf.data: $(head -3 out)"
  script -qec "$BIN/pf-dot" /dev/null </dev/null | tr -d '\r' >out
  grep -q 'work_a' out || fail "pf-dot did not read ./perf.data: $(head -3 out)"
  # A pipe is still standard input, perf.data or not.
  echo 'x;y 1' | "$BIN/pf-collapse" | grep -qx 'x;y 1' || fail "pf-collapse read perf.data instead of its pipe"
  cd .. || fail "cd"
  echo "terminal: ./perf.data read by pf-collapse and pf-dot, usage error without it"
fi

# --- pf-record: a killed recorder leaves a readable recording, no partial file ---------------
if "$BIN/pf-record" -q -o probe.pfs -- true 2>/dev/null; then
  "$BIN/pf-record" -q -F 999 -o killed.pfs -- "$CALLPATH" 5 >/dev/null 2>&1 &
  rec=$!
  pids_to_kill+=("$rec")
  sleep 1.5
  for child in $(pgrep -P "$rec"); do pids_to_kill+=("$child"); done  # callpath outlives it
  kill -KILL "$rec"
  wait "$rec" 2>/dev/null
  [ -s killed.pfs ] || fail "a killed pf-record left no recording"
  ls ./*.pf-partial.* >/dev/null 2>&1 && fail "a killed pf-record left $(ls ./*.pf-partial.*)"
  "$BIN/pf-script" killed.pfs 2>/dev/null | grep -q ' spin+0x' ||
    fail "the recording of a killed pf-record is not readable"
  # Into a FIFO with a reader, and onto a device node.
  rm -f fifo && mkfifo fifo
  "$BIN/pf-script" fifo >from-fifo 2>/dev/null &
  reader=$!
  "$BIN/pf-record" -q -F 999 -o fifo -- "$CALLPATH" 0.3 >/dev/null 2>err || fail "pf-record -o FIFO: $(cat err)"
  wait "$reader" || fail "pf-script could not read pf-record's FIFO"
  [ -p fifo ] || fail "pf-record replaced a FIFO"
  grep -q ' spin+0x' from-fifo || fail "pf-record -o FIFO: the reader got no samples"
  if [ $have_mknod -eq 1 ]; then
    rm -f null && mknod null c 1 3
    "$BIN/pf-record" -q -o null -- true 2>err || fail "pf-record -o DEVICE: $(cat err)"
    [ -c null ] || fail "pf-record replaced a device node"
  fi
  echo "pf-record: a killed recording is readable; FIFO and device written through"
else
  echo "note: pf-record cannot record here; its output checks are skipped"
fi

echo "PASS: output_test"
exit 0
