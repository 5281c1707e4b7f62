#!/usr/bin/env bash
# End-to-end test: record tests/programs/callpath with `perf record -g`,
# fold the `perf script` output with pf-collapse and check the known
# call-tree shares (main;work_a;spin ~75%, main;work_b;spin ~25%).
#
# Usage: record_perf_test.sh PF_COLLAPSE_BIN CALLPATH_BIN
#
# Exit status: 0 pass, 1 fail, 2 usage error, 77 skip (no perf, or
# perf_event_open refused / perf record unusable in this environment).
#
# callpath must be built with -O1 -fno-omit-frame-pointer -g so that the
# frame-pointer unwinder sees main -> work_a/work_b -> spin.

set -u
set -o pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 PF_COLLAPSE_BIN CALLPATH_BIN" >&2
    exit 2
fi
PF=$1
CALLPATH=$2

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

[ -x "$PF" ] || fail "pf-collapse binary not found or not executable: $PF"
[ -x "$CALLPATH" ] || fail "callpath binary not found or not executable: $CALLPATH"

command -v perf >/dev/null 2>&1 || skip "perf not found on PATH"

# Expected share of main;work_a;spin among main;work_{a,b} stacks, and the
# allowed absolute deviation. Minimum number of samples needed for the share
# to be meaningful (1.5 s at 999 Hz gives ~1500).
EXPECTED=0.75
TOLERANCE=0.10
MIN_SAMPLES=200
DURATION=1.5

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pf-record-test.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# The comm perf reports is the executable's basename, truncated to 15 chars.
COMM=$(basename -- "$CALLPATH")
COMM=${COMM:0:15}

# --- record -----------------------------------------------------------------
# -N: don't touch ~/.debug (HOME may be read-only under ctest).
perf record -e cpu-clock -F 999 -g -N -o "$tmp/x.data" -- "$CALLPATH" "$DURATION" \
    >"$tmp/record.out" 2>"$tmp/record.err"
rc=$?
if [ $rc -ne 0 ]; then
    # First meaningful stderr line ("Error:" alone is just perf's preamble).
    reason=$(grep -m1 -ivE '^[[:space:]]*(error:?)?[[:space:]]*$' "$tmp/record.err")
    skip "perf record exited with status $rc (${reason:-no message}); perf_event_open is probably not permitted here"
fi
[ -s "$tmp/x.data" ] || skip "perf record wrote no data file"

if ! perf script -i "$tmp/x.data" >"$tmp/script.txt" 2>"$tmp/script.err"; then
    skip "perf script failed: $(grep -m1 -v '^[[:space:]]*$' "$tmp/script.err")"
fi

# Sample headers in the raw perf script text: lines starting with a
# non-blank, non-'#' character (stack frames are indented).
read -r raw_samples raw_period raw_comm_samples raw_comm_period < <(
    LC_ALL=C awk -v comm="$COMM" '
        /^[^[:space:]#]/ {
            n++
            p = 1
            # period is the number just before the event name ("1001001 cpu-clock:")
            for (i = NF; i > 1; i--)
                if ($i ~ /:$/) { if ($(i-1) ~ /^[0-9]+$/) p = $(i-1); break }
            tp += p
            if ($1 == comm) { cn++; cp += p }
        }
        END { printf "%d %.0f %d %.0f\n", n, tp, cn, cp }' "$tmp/script.txt")

echo "perf record: $raw_samples samples ($raw_comm_samples with comm '$COMM'), total period $raw_period"
[ "$raw_comm_samples" -gt 0 ] || skip "perf recorded no samples of '$COMM' (cpu-clock sampling not working here?)"
grep -qE '[[:space:]]work_a\+0x' "$tmp/script.txt" ||
    fail "raw perf script has no work_a frames: is $CALLPATH built with -O1 -fno-omit-frame-pointer -g (and not stripped)?"

# --- fold and check -----------------------------------------------------------
# check_output FILE MODE: validates folded output and prints the measurement.
check_output() {
    local out=$1 mode=$2
    [ -s "$out" ] || fail "[$mode] pf-collapse produced no output"
    # The unit's line first (pf-folded(5)): cpu-clock periods are nanoseconds; samples go
    # unsaid. The stack lines follow, checked below.
    local first
    first=$(head -1 "$out")
    if [ "$mode" = samples ]; then
        [[ $first != "# pf-unit:"* ]] || fail "[$mode] a unit line for samples: $first"
    else
        [ "$first" = "# pf-unit: nanoseconds" ] || fail "[$mode] no unit line first: $first"
    fi
    grep -v '^# pf-unit: ' "$out" >"$out.stacks"
    out=$out.stacks

    local bad
    bad=$(LC_ALL=C grep -c -vE '^[^ ].* [0-9]+$' "$out")
    [ "$bad" -eq 0 ] || fail "[$mode] $bad malformed folded lines, e.g.: $(LC_ALL=C grep -m1 -vE '^[^ ].* [0-9]+$' "$out")"
    LC_ALL=C sort -c "$out" 2>/dev/null || fail "[$mode] output is not sorted bytewise"

    local res
    res=$(LC_ALL=C awk -v comm="$COMM" '
        {
            w = $NF
            stack = substr($0, 1, length($0) - length($NF) - 1)
            total += w
            c = stack; sub(/;.*/, "", c)
            if (c != comm) next
            ctotal += w
            if (stack ~ /(^|;)main;work_a;spin(;|$)/) a_spin += w
            if (stack ~ /(^|;)main;work_b;spin(;|$)/) { b_spin += w; b_lines++ }
            if (stack ~ /(^|;)main;work_[ab](;|$)/) denom += w
        }
        END {
            share = denom > 0 ? a_spin / denom : -1
            printf "%.0f %.0f %.0f %.0f %.0f %d %.4f\n", total, ctotal, a_spin, b_spin, denom, b_lines, share
        }' "$out")
    local total ctotal a_spin b_spin denom b_lines share
    read -r total ctotal a_spin b_spin denom b_lines share <<<"$res"

    echo "[$mode] total weight $total; $COMM: $ctotal, main;work_a;spin $a_spin, main;work_b;spin $b_spin, main;work_{a,b} $denom -> work_a;spin share $share (expected $EXPECTED +- $TOLERANCE)"

    [ "$b_lines" -gt 0 ] || fail "[$mode] no '$COMM;...;main;work_b;spin' stacks in output"
    [ "$(echo "$denom" | awk '{print ($1 > 0)}')" = 1 ] || fail "[$mode] no '$COMM;...;main;work_a|work_b' stacks in output"
    awk -v s="$share" -v e="$EXPECTED" -v t="$TOLERANCE" 'BEGIN { d = s - e; if (d < 0) d = -d; exit !(d <= t) }' ||
        fail "[$mode] main;work_a;spin share $share is outside $EXPECTED +- $TOLERANCE"

    # Every sample must be accounted for, exactly like stackcollapse-perf.pl.
    if [ "$mode" = samples ]; then
        [ "$total" = "$raw_samples" ] || fail "[$mode] total weight $total != $raw_samples samples in perf script"
        [ "$ctotal" = "$raw_comm_samples" ] || fail "[$mode] $COMM weight $ctotal != $raw_comm_samples $COMM samples in perf script"
        [ "$denom" -ge "$MIN_SAMPLES" ] || fail "[$mode] only $denom samples in main;work_a|work_b stacks (need >= $MIN_SAMPLES)"
    else
        [ "$total" = "$raw_period" ] || fail "[$mode] total weight $total != total period $raw_period in perf script"
        [ "$ctotal" = "$raw_comm_period" ] || fail "[$mode] $COMM weight $ctotal != $COMM period $raw_comm_period in perf script"
    fi
}

# Default weighting (period), reading perf script from a pipe on stdin.
perf script -i "$tmp/x.data" 2>/dev/null | "$PF" >"$tmp/folded.period" 2>"$tmp/pf.err"
st=("${PIPESTATUS[@]}")
[ "${st[1]}" -eq 0 ] || fail "pf-collapse (stdin, default weight) exited with status ${st[1]}: $(head -n3 "$tmp/pf.err")"
# 141 = SIGPIPE: pf-collapse stopped reading early; the output checks below catch that.
[ "${st[0]}" -eq 0 ] || [ "${st[0]}" -eq 141 ] || skip "second perf script run failed with status ${st[0]}"
check_output "$tmp/folded.period" period

# Sample counting, reading the same text from a file argument.
"$PF" --weight=samples "$tmp/script.txt" >"$tmp/folded.samples" 2>"$tmp/pf.err" ||
    fail "pf-collapse --weight=samples exited with status $?: $(head -n3 "$tmp/pf.err")"
check_output "$tmp/folded.samples" samples

echo "PASS: record_perf_test ($COMM work_a;spin share within $EXPECTED +- $TOLERANCE in both weightings)"
exit 0
