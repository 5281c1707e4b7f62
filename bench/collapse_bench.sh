#!/usr/bin/env bash
# Throughput benchmark: pf-collapse vs stackcollapse-perf.pl vs
# inferno-collapse-perf on a large `perf script` text.
#
# Usage: bench/collapse_bench.sh [--input FILE] [--size-mb N] [--runs N]
#
#   --input FILE   plain-text `perf script` output to fold (default: generate
#                  one from real recordings on this machine, cached under
#                  ${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench/)
#   --size-mb N    size of the generated input in MiB (default 300)
#   --runs N       timed runs per tool, best wall time is kept (default 3)
#
# Environment:
#   PF_COLLAPSE            pf-collapse binary (default: <repo>/build/bin/pf-collapse)
#   STACKCOLLAPSE_PL       stackcollapse-perf.pl (default: found on PATH)
#   INFERNO_COLLAPSE_PERF  inferno-collapse-perf (default: found on PATH)
#
# Exit status 1 if a tool fails or an output differs from the Perl one.
# Not a ctest test: it takes minutes and its numbers depend on the machine.

set -u
set -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
INPUT=""
SIZE_MB=300
RUNS=3
RECORD_SECONDS=20

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "collapse_bench: $*" >&2; exit 1; }
log() { echo "==> $*" >&2; }

while [ $# -gt 0 ]; do
    case $1 in
        --input) [ $# -ge 2 ] || die "--input needs a FILE"; INPUT=$2; shift 2 ;;
        --input=*) INPUT=${1#*=}; shift ;;
        --size-mb) [ $# -ge 2 ] || die "--size-mb needs N"; SIZE_MB=$2; shift 2 ;;
        --size-mb=*) SIZE_MB=${1#*=}; shift ;;
        --runs) [ $# -ge 2 ] || die "--runs needs N"; RUNS=$2; shift 2 ;;
        --runs=*) RUNS=${1#*=}; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[[ $SIZE_MB =~ ^[1-9][0-9]*$ ]] || die "--size-mb must be a positive integer"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pf-bench.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

filesize() { stat -c %s -- "$1"; }

# ---------------------------------------------------------------------------
# Input generation
# ---------------------------------------------------------------------------

# record_base OUT: record ~RECORD_SECONDS s of a workload mix and write the
# `perf script` text to OUT.
record_base() {
    local out=$1 d="$WORK/gen"
    mkdir -p "$d"
    command -v perf >/dev/null || die "perf not found (needed to generate the input; or pass --input FILE)"
    command -v gcc >/dev/null || die "gcc not found"
    command -v g++ >/dev/null || die "g++ not found"
    command -v python3 >/dev/null || die "python3 not found"
    command -v perl >/dev/null || die "perl not found"

    gcc -O1 -fno-omit-frame-pointer -g -o "$d/callpath" "$ROOT/tests/programs/callpath.c" ||
        die "cannot build tests/programs/callpath.c"

    # A C++ translation unit that takes g++ -O2 a second or two.
    cat >"$d/bench.cpp" <<'EOF'
#include <algorithm>
#include <map>
#include <numeric>
#include <regex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

template <typename K, typename V>
std::vector<std::pair<K, V>> sorted_items(const std::unordered_map<K, V>& m) {
    std::vector<std::pair<K, V>> v(m.begin(), m.end());
    std::sort(v.begin(), v.end());
    return v;
}

std::map<std::string, int> count_words(const std::string& text) {
    std::map<std::string, int> counts;
    std::regex word("[A-Za-z_]+");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), word);
         it != std::sregex_iterator(); ++it)
        ++counts[it->str()];
    return counts;
}

std::string render(const std::map<std::string, int>& counts) {
    std::ostringstream os;
    for (const auto& [k, v] : counts) os << k << '=' << v << '\n';
    return os.str();
}

long checksum(const std::vector<long>& v) {
    std::vector<long> w(v);
    std::partial_sum(w.begin(), w.end(), w.begin());
    std::stable_sort(w.begin(), w.end(), [](long a, long b) { return (a % 7) < (b % 7); });
    return std::accumulate(w.begin(), w.end(), 0L);
}

template std::vector<std::pair<std::string, long>> sorted_items(const std::unordered_map<std::string, long>&);
template std::vector<std::pair<int, double>> sorted_items(const std::unordered_map<int, double>&);
EOF

    cat >"$d/workload.sh" <<'EOF'
#!/usr/bin/env bash
# Workload mix for the benchmark recording; $1 = seconds, $2 = work dir.
secs=$1 dir=$2
(
    end=$((SECONDS + secs))
    while [ "$SECONDS" -lt "$end" ]; do
        g++ -O2 -c "$dir/bench.cpp" -o "$dir/bench.o" || exit 1
    done
) &
"$dir/callpath" "$secs" >/dev/null &
python3 -c '
import json, sys, time
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    d = {str(i): i * i for i in range(2000)}
    s = json.dumps(sorted(d.items()))
    json.loads(s)
' "$secs" &
perl -e '
my $end = time + $ARGV[0];
while (time < $end) {
    my %h;
    $h{$_} = $_ * $_ for 1 .. 2000;
    my $s = join ",", sort keys %h;
    $s =~ s/(\d)(\d)/$2$1/g;
}
' "$secs" &
wait
EOF
    chmod +x "$d/workload.sh"

    log "recording ${RECORD_SECONDS}s of g++ -O2 / callpath / python3 / perl with perf record -F 999 -g"
    if ! perf record -F 999 -g -o "$d/rec.data" -- "$d/workload.sh" "$RECORD_SECONDS" "$d" \
            >"$d/record.log" 2>&1; then
        cat "$d/record.log" >&2
        die "perf record failed (perf_event_open not permitted?); pass --input FILE instead"
    fi
    log "perf script"
    perf script -i "$d/rec.data" >"$out.tmp" 2>"$d/script.log" ||
        { cat "$d/script.log" >&2; die "perf script failed"; }
    [ -s "$out.tmp" ] || die "perf script produced no output"
    mv -f "$out.tmp" "$out"
    rm -f "$d/rec.data"
}

generate_input() {
    local cache="${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench"
    local base="$cache/recording.perf-script.txt"
    local out="$cache/perf-script-${SIZE_MB}mb.txt"
    local target=$((SIZE_MB * 1024 * 1024))
    mkdir -p "$cache" || die "cannot create $cache"

    if [ -s "$out" ] && [ "$(filesize "$out")" -ge "$target" ]; then
        log "using cached input $out"
        INPUT=$out
        return
    fi
    if [ ! -s "$base" ]; then
        record_base "$base"
    else
        log "using cached recording $base"
    fi
    local bsize copies=0
    bsize=$(filesize "$base")
    log "recording is $((bsize / 1024)) KiB; concatenating copies up to ${SIZE_MB} MiB"
    : >"$out.tmp"
    while [ "$(filesize "$out.tmp")" -lt "$target" ]; do
        cat "$base" >>"$out.tmp" || die "write failed (disk full?)"
        copies=$((copies + 1))
    done
    mv -f "$out.tmp" "$out"
    log "wrote $out ($copies copies)"
    INPUT=$out
}

if [ -z "$INPUT" ]; then
    generate_input
fi
[ -r "$INPUT" ] || die "cannot read input $INPUT"
case $INPUT in
    *.gz|*.zst|*.zstd) die "--input must be plain text (the peer tools cannot read compressed input)" ;;
esac

# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------

PF=${PF_COLLAPSE:-$ROOT/build/bin/pf-collapse}
[ -x "$PF" ] || { echo "note: pf-collapse not found at $PF (build it, or set PF_COLLAPSE); benchmarking the peers only" >&2; PF=""; }

SC=${STACKCOLLAPSE_PL:-$(command -v stackcollapse-perf.pl || true)}
if [ -z "$SC" ] || [ ! -r "$SC" ]; then
    echo "note: stackcollapse-perf.pl not found (set STACKCOLLAPSE_PL or put it on PATH); skipping it" >&2
    SC=""
fi
INF=${INFERNO_COLLAPSE_PERF:-$(command -v inferno-collapse-perf || true)}
if [ -z "$INF" ] || [ ! -x "$INF" ]; then
    echo "note: inferno-collapse-perf not found (set INFERNO_COLLAPSE_PERF or put it on PATH); skipping it" >&2
    INF=""
fi

GNU_TIME=""
if [ -x /usr/bin/time ] && /usr/bin/time -f '%e' true 2>/dev/null >/dev/null; then
    GNU_TIME=/usr/bin/time
else
    echo "note: GNU time not found (Debian package 'time'); peak RSS will not be measured" >&2
fi

# Run labels, commands (NUL-free, one array per run) and output files.
LABELS=() KEYS=()
declare -A CMD OUTF
add_run() { # key label cmd...
    local key=$1 label=$2; shift 2
    KEYS+=("$key"); LABELS+=("$label")
    CMD[$key]=$(printf '%q ' "$@")
    OUTF[$key]="$WORK/$key.out"
}
if [ -n "$PF" ]; then
    add_run pf1 "pf-collapse -j 1" "$PF" -j 1 "$INPUT"
    add_run pf2 "pf-collapse -j 2" "$PF" -j 2 "$INPUT"
fi
[ -n "$SC" ] && add_run perl "stackcollapse-perf.pl" perl "$SC" "$INPUT"
[ -n "$INF" ] && add_run inferno "inferno-collapse-perf -n 1" "$INF" -n 1 "$INPUT"
[ ${#KEYS[@]} -gt 0 ] || die "no tool to benchmark"

BYTES=$(filesize "$INPUT")
MB=$(awk -v b="$BYTES" 'BEGIN { printf "%.1f", b / 1048576 }')

# time_once KEY -> prints "wall user sys rss_kb" (rss "-" if unknown), or
# returns non-zero if the command failed.
time_once() {
    local key=$1 tf="$WORK/time.txt" st
    if [ -n "$GNU_TIME" ]; then
        eval "$GNU_TIME -f '%e %U %S %M' -o \"\$tf\" ${CMD[$key]}" >"${OUTF[$key]}" 2>"$WORK/$key.err"
        st=$?
        [ $st -eq 0 ] || return $st
        tail -n1 "$tf"
    else
        local TIMEFORMAT='%R %U %S'
        { time eval "${CMD[$key]}" >"${OUTF[$key]}" 2>"$WORK/$key.err"; } 2>"$tf"
        st=$?
        [ $st -eq 0 ] || return $st
        echo "$(tail -n1 "$tf") -"
    fi
}

declare -A WALL CPU RSS
STATUS=0   # exit status: 1 if a tool failed or an output differs from Perl's
log "input: $INPUT ($MB MiB); best of $RUNS runs per tool"
cat -- "$INPUT" >/dev/null   # warm the page cache
for i in "${!KEYS[@]}"; do
    key=${KEYS[$i]} label=${LABELS[$i]}
    best=""
    for ((r = 1; r <= RUNS; r++)); do
        res=$(time_once "$key")
        st=$?
        if [ $st -ne 0 ]; then
            echo "  $label: FAILED (exit status $st): $(head -n3 "$WORK/$key.err")" >&2
            best=""
            STATUS=1
            break
        fi
        read -r w u s m <<<"$res"
        log "$label run $r: wall ${w}s user ${u}s sys ${s}s rss ${m} KiB"
        if [ -z "$best" ] || awk -v a="$w" -v b="${WALL[$key]}" 'BEGIN { exit !(a < b) }'; then
            best=1
            WALL[$key]=$w
            CPU[$key]=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
            RSS[$key]=$m
        fi
    done
    [ -n "$best" ] || unset "WALL[$key]"
done

# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

echo
echo "Input: $INPUT"
echo "Size:  $MB MiB ($BYTES bytes); best of $RUNS runs"
echo
printf '%-28s %9s %12s %13s %10s %12s\n' "tool" "wall s" "user+sys s" "peak RSS MiB" "MiB/s" "MiB/CPU-s"
for i in "${!KEYS[@]}"; do
    key=${KEYS[$i]} label=${LABELS[$i]}
    if [ -z "${WALL[$key]+x}" ]; then
        printf '%-28s %9s\n' "$label" "FAILED"
        continue
    fi
    awk -v l="$label" -v w="${WALL[$key]}" -v c="${CPU[$key]}" -v m="${RSS[$key]}" -v b="$BYTES" 'BEGIN {
        mb = b / 1048576
        rss = (m == "-") ? "n/a" : sprintf("%.1f", m / 1024)
        tput = (w > 0) ? sprintf("%.1f", mb / w) : "inf"
        cput = (c > 0) ? sprintf("%.1f", mb / c) : "inf"
        printf "%-28s %9.2f %12.2f %13s %10s %12s\n", l, w, c, rss, tput, cput
    }'
done

# Ratios of each pf-collapse configuration against each peer.
echo
for pk in pf1 pf2; do
    [ -n "${WALL[$pk]+x}" ] || continue
    for peer in perl inferno; do
        [ -n "${WALL[$peer]+x}" ] || continue
        for i in "${!KEYS[@]}"; do
            [ "${KEYS[$i]}" = "$pk" ] && pl=${LABELS[$i]}
            [ "${KEYS[$i]}" = "$peer" ] && ql=${LABELS[$i]}
        done
        awk -v a="$pl" -v b="$ql" -v pw="${WALL[$pk]}" -v qw="${WALL[$peer]}" \
            -v pc="${CPU[$pk]}" -v qc="${CPU[$peer]}" 'BEGIN {
            ws = (pw > 0) ? sprintf("%.2fx", qw / pw) : "inf"
            cs = (pc > 0) ? sprintf("%.2fx", qc / pc) : "inf"
            printf "%s vs %s: %s faster (wall), %s less CPU time\n", a, b, ws, cs
        }'
    done
done

# Output equivalence against the Perl reference.
echo
if [ -n "${WALL[perl]+x}" ]; then
    LC_ALL=C sort "${OUTF[perl]}" >"$WORK/ref.sorted"
    for k in pf1 pf2 inferno; do
        [ -n "${WALL[$k]+x}" ] || continue
        for i in "${!KEYS[@]}"; do [ "${KEYS[$i]}" = "$k" ] && l=${LABELS[$i]}; done
        LC_ALL=C sort "${OUTF[$k]}" >"$WORK/$k.sorted"
        if cmp -s "$WORK/ref.sorted" "$WORK/$k.sorted"; then
            echo "$l vs stackcollapse-perf.pl: outputs identical ($(wc -l <"$WORK/ref.sorted") stacks)"
        else
            n=$(diff "$WORK/ref.sorted" "$WORK/$k.sorted" | grep -c '^[<>]')
            echo "$l vs stackcollapse-perf.pl: outputs DIFFER ($n diff lines)"
            STATUS=1
        fi
    done
elif [ -n "${WALL[pf1]+x}" ] && [ -n "${WALL[pf2]+x}" ]; then
    if cmp -s "${OUTF[pf1]}" "${OUTF[pf2]}"; then
        echo "pf-collapse -j 1 vs -j 2: outputs identical (no Perl reference available)"
    else
        echo "pf-collapse -j 1 vs -j 2: outputs DIFFER (no Perl reference available)"
        STATUS=1
    fi
fi
exit $STATUS
