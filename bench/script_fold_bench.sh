#!/usr/bin/env bash
# Folding `perf script` text on one core: pf-collapse -j 1 vs inferno-collapse-perf -n 1, CPU
# time (user+sys) of each, medians of paired runs, on two inputs:
#   capture    a fresh system-wide capture of ordinary programs (g++ -O2, python3, perl, gzip,
#              sort): most samples repeat a stack seen before, with other addresses and offsets;
#   no-repeat  synthetic text in which no stack repeats (bench/perf_script_gen.py).
# Both are made once and cached in ${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench/ (delete
# script-fold-*.txt to make them again). Not a ctest test.
#
# Usage: bench/script_fold_bench.sh [--runs N] [--seconds S] [--capture FILE] [--no-repeat FILE]
#   --runs N          paired runs per input (default 7)
#   --seconds S       length of the capture when one is recorded (default 30)
#   --capture FILE    fold FILE instead of the cached capture
#   --no-repeat FILE  fold FILE instead of the cached synthetic text
# Environment: PF_COLLAPSE (default build/bin/pf-collapse), INFERNO_COLLAPSE_PERF (default
# inferno-collapse-perf on PATH, else /work/peers/bin/inferno-collapse-perf).
# MB are 10^6 bytes. CPU time is perf stat's task-clock when perf can count it, else GNU
# time's user+sys (10 ms resolution: use big inputs).

set -u
set -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=7 SECONDS_REC=30 CAPTURE="" NOREPEAT=""
die() { echo "script_fold_bench: $*" >&2; exit 1; }
log() { echo "==> $*" >&2; }
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=${2:?}; shift 2 ;;
    --seconds) SECONDS_REC=${2:?}; shift 2 ;;
    --capture) CAPTURE=${2:?}; shift 2 ;;
    --no-repeat) NOREPEAT=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1" ;;
  esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer"

PF=${PF_COLLAPSE:-$ROOT/build/bin/pf-collapse}
[ -x "$PF" ] || die "no pf-collapse at $PF (build it, or set PF_COLLAPSE)"
INF=${INFERNO_COLLAPSE_PERF:-$(command -v inferno-collapse-perf || echo /work/peers/bin/inferno-collapse-perf)}
[ -x "$INF" ] || die "no inferno-collapse-perf (set INFERNO_COLLAPSE_PERF)"

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/pf-bench
mkdir -p "$CACHE" || die "cannot create $CACHE"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pf-script-fold.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$WORK"' EXIT

# The workload of the capture: compiles, interpreters, compression and sorting, one after the
# other, for about $1 seconds in all.
cat >"$WORK/workload.sh" <<'EOF'
#!/usr/bin/env bash
secs=$1 root=$2 work=$3
big=$(ls -S /usr/lib/x86_64-linux-gnu/*.so* 2>/dev/null | head -n 1)
end=$((SECONDS + secs))
while [ "$SECONDS" -lt "$end" ]; do
  for f in formats/frame_names.cpp formats/perf_script.cpp; do
    g++ -std=c++20 -O2 -I"$root/common" -fsyntax-only "$root/common/$f" 2>/dev/null
  done
  python3 -c 'import json; d=[{str(i): i * i for i in range(3000)} for _ in range(300)]; [json.loads(json.dumps(x)) for x in d]'
  perl -e 'my %h; for my $r (1..30) { $h{$_} = $_ * $r for 1..20000; my $s = join ",", sort keys %h; $s =~ s/(\d)(\d)/$2$1/g; }'
  [ -n "$big" ] && gzip -6 <"$big" >"$work/big.gz" && zcat "$work/big.gz" | od -An -tx1 | head -c 30000000 | sort >/dev/null
done
EOF
chmod +x "$WORK/workload.sh"

if [ -z "$CAPTURE" ]; then
  CAPTURE=$CACHE/script-fold-capture.txt
  if [ ! -s "$CAPTURE" ]; then
    log "recording ${SECONDS_REC}s system-wide (perf record -a -g -F 999) of g++, python3, perl, gzip, sort"
    perf record -a -g -F 999 -o "$WORK/cap.data" -- "$WORK/workload.sh" "$SECONDS_REC" "$ROOT" "$WORK" \
      >"$WORK/record.log" 2>&1 || { cat "$WORK/record.log" >&2; die "perf record failed"; }
    perf script -i "$WORK/cap.data" >"$CAPTURE.tmp" 2>"$WORK/script.log" || die "perf script failed"
    mv -f "$CAPTURE.tmp" "$CAPTURE"
  fi
fi
if [ -z "$NOREPEAT" ]; then
  NOREPEAT=$CACHE/script-fold-norepeat.txt
  if [ ! -s "$NOREPEAT" ]; then
    log "writing synthetic perf script text where no stack repeats"
    python3 "$ROOT/bench/perf_script_gen.py" "$NOREPEAT.tmp" 30000 || die "perf_script_gen.py failed"
    mv -f "$NOREPEAT.tmp" "$NOREPEAT"
  fi
fi

# cpu_ms CMD...: CPU milliseconds of one run (output to $WORK/out).
if perf stat -x, -e task-clock -o "$WORK/stat" true 2>/dev/null && grep -q task-clock "$WORK/stat"; then
  cpu_ms() {
    perf stat -x, -e task-clock -o "$WORK/stat" "$@" >"$WORK/out" 2>"$WORK/err" || return 1
    grep task-clock "$WORK/stat" | cut -d, -f1
  }
else
  cpu_ms() {
    /usr/bin/time -f '%U %S' -o "$WORK/stat" "$@" >"$WORK/out" 2>"$WORK/err" || return 1
    awk '{ printf "%.1f\n", ($1 + $2) * 1000 }' "$WORK/stat"
  }
fi
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

printf '%-10s %9s %8s %10s %10s %12s %12s %7s\n' input MB samples "pf ms" "inferno ms" "pf MB/s" \
  "inferno MB/s" ratio
for pair in "capture:$CAPTURE" "no-repeat:$NOREPEAT"; do
  name=${pair%%:*} file=${pair#*:}
  [ -r "$file" ] || die "cannot read $file"
  cat -- "$file" >/dev/null
  bytes=$(stat -c %s -- "$file")
  samples=$(grep -c '^[^[:space:]#]' "$file")
  : >"$WORK/pf.ms"; : >"$WORK/inf.ms"
  for ((r = 0; r < RUNS; r++)); do
    cpu_ms "$PF" -j 1 "$file" >>"$WORK/pf.ms" || die "pf-collapse failed: $(head -n 3 "$WORK/err")"
    mv "$WORK/out" "$WORK/pf.out"
    cpu_ms "$INF" -n 1 "$file" >>"$WORK/inf.ms" || die "inferno failed: $(head -n 3 "$WORK/err")"
    mv "$WORK/out" "$WORK/inf.out"
  done
  pf=$(median <"$WORK/pf.ms") inf=$(median <"$WORK/inf.ms")
  awk -v n="$name" -v b="$bytes" -v s="$samples" -v p="$pf" -v q="$inf" 'BEGIN {
    printf "%-10s %9.1f %8d %10.1f %10.1f %12.0f %12.0f %6.2fx\n", n, b / 1e6, s, p, q,
      b / 1e3 / p, b / 1e3 / q, q / p }'
  d=$(diff <(LC_ALL=C sort "$WORK/pf.out") <(LC_ALL=C sort "$WORK/inf.out") | grep -c '^[<>]')
  # pf follows stackcollapse-perf.pl (and its documented additions), inferno has rules of its
  # own (Rust and C++ names, [unknown] frames): a difference is reported, not an error.
  [ "$d" -eq 0 ] || echo "  ($name: pf and inferno outputs differ in $d diff lines)"
done
