#!/usr/bin/env bash
# Speed of reading a gperftools CPU profile with symbolization: pf-collapse vs
# `google-pprof --collapsed` (Debian's google-perftools) and Go pprof's -traces, on the same
# profile and binary.
#
# Usage: bench/gperftools_bench.sh [--profile FILE --binary BIN] [--seconds N] [--runs N]
#
#   --profile FILE  a CPU profile to read (with --binary, the program that wrote it);
#                   default: profile python3 running a mixed workload for --seconds with
#                   libprofiler preloaded (CPUPROFILE_FREQUENCY=1000)
#   --seconds N     how long the default workload runs (default 5)
#   --runs N        timed runs per tool, the best wall time is kept (default 3)
#
# Environment: PF_COLLAPSE (default <repo>/build/bin/pf-collapse), GOOGLE_PPROF (default
# google-pprof on PATH), GO_PPROF (default pprof on PATH, else /work/peers/bin/pprof).
# Prints each tool's best time and pf's speed-up; checks that the sample totals agree.
# Not a ctest test: its numbers depend on the machine.

set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROFILE="" BINARY="" SECONDS_RUN=5 RUNS=3
die() { echo "gperftools_bench: $*" >&2; exit 1; }
log() { echo "==> $*" >&2; }
while [ $# -gt 0 ]; do
  case $1 in
    --profile) PROFILE=$2; shift 2 ;;
    --profile=*) PROFILE=${1#*=}; shift ;;
    --binary) BINARY=$2; shift 2 ;;
    --binary=*) BINARY=${1#*=}; shift ;;
    --seconds) SECONDS_RUN=$2; shift 2 ;;
    --seconds=*) SECONDS_RUN=${1#*=}; shift ;;
    --runs) RUNS=$2; shift 2 ;;
    --runs=*) RUNS=${1#*=}; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1" ;;
  esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer"
PF_COLLAPSE=${PF_COLLAPSE:-$ROOT/build/bin/pf-collapse}
GOOGLE_PPROF=${GOOGLE_PPROF:-$(command -v google-pprof || true)}
GO_PPROF=${GO_PPROF:-$(command -v pprof || echo /work/peers/bin/pprof)}
[ -x "$PF_COLLAPSE" ] || die "no pf-collapse at $PF_COLLAPSE (build it first)"
[ -n "$GOOGLE_PPROF" ] || die "google-pprof is not installed (apt-get install google-perftools)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pf-bench.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$WORK"' EXIT

if [ -z "$PROFILE" ]; then
  lib=$(ldconfig -p | awk '/libprofiler\.so(\.0)? /{print $NF; exit}')
  [ -n "$lib" ] || die "libprofiler is not installed (libgoogle-perftools-dev)"
  BINARY=$(python3 -c "import os, sys; print(os.path.realpath(sys.executable))")
  PROFILE=$WORK/cpu.prof
  log "profiling $BINARY for ${SECONDS_RUN}s"
  LD_PRELOAD=$lib CPUPROFILE=$PROFILE CPUPROFILE_FREQUENCY=1000 "$BINARY" - <<EOF >/dev/null 2>&1
import json, re, time, zlib, hashlib, decimal, fractions, itertools
end = time.time() + $SECONDS_RUN
data = [{"k%d" % i: [i, str(i) * 5, {"x": i / 7}]} for i in range(2000)]
while time.time() < end:
    s = json.dumps(data); json.loads(s)
    zlib.decompress(zlib.compress(s.encode()))
    hashlib.sha256(s.encode()).hexdigest()
    re.findall(r'"k(\d+)"', s)
    sum(decimal.Decimal(i) / 3 for i in range(300))
    sum(fractions.Fraction(i, 7) for i in range(300))
    sorted(itertools.permutations(range(6)))
EOF
  [ -s "$PROFILE" ] || die "no profile written"
fi
[ -n "$BINARY" ] || die "--profile needs --binary (the program that wrote it)"
log "profile: $PROFILE ($(stat -c %s "$PROFILE") bytes), binary: $BINARY"

# best TOOL-NAME CMD...: the best wall time of RUNS runs (seconds), the output kept.
best() {
  local name=$1 t b=""
  shift
  for _ in $(seq "$RUNS"); do
    local s=$(date +%s.%N)
    "$@" >"$WORK/$name.out" 2>/dev/null || die "$name failed: $*"
    t=$(echo "$(date +%s.%N) - $s" | bc)
    if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
  done
  echo "$b"
}
total() { grep -v '^#' "$1" | awk '{t+=$NF} END {printf "%d\n", t}'; }

# pf's first run fills its symbol cache; the best of the next runs is what is compared.
cold=$(RUNS=1 best pf-cold "$PF_COLLAPSE" "$PROFILE")
pf=$(best pf "$PF_COLLAPSE" "$PROFILE")
gp=$(best google-pprof "$GOOGLE_PPROF" --collapsed "$BINARY" "$PROFILE")
go=""
[ -x "$GO_PPROF" ] && go=$(best go-pprof "$GO_PPROF" -traces "$BINARY" "$PROFILE")

samples=$(total "$WORK/google-pprof.out")
pf_ns=$(total "$WORK/pf.out")
[ "$samples" -gt 0 ] || die "google-pprof read no samples"
echo "samples: $samples (google-pprof), pf's cpu total: $pf_ns ns"
printf '%-28s %8.3f s\n' "pf-collapse (first run)" "$cold"
printf '%-28s %8.3f s\n' "pf-collapse" "$pf"
printf '%-28s %8.3f s   pf is %.0fx faster\n' "google-pprof --collapsed" "$gp" "$(echo "$gp / $pf" | bc -l)"
[ -n "$go" ] && printf '%-28s %8.3f s   pf is %.0fx faster\n' "Go pprof -traces" "$go" "$(echo "$go / $pf" | bc -l)"
exit 0
