#!/usr/bin/env bash
# gperftools' profiles read by pf-collapse, against pprof on the same files. The test program
# (tests/programs/gperf_prog.cpp, linked with libprofiler and tcmalloc) is run with CPUPROFILE
# and HEAPPROFILE; pf-collapse folds both profiles, and:
#   - the known call paths are there (main;hot_a;spin, main;hot_c;mix with mix inlined, the
#     allocation sites), and the values are the ones the program makes (8 MiB kept by
#     alloc_big, 64000 bytes by alloc_small, nothing in use from alloc_temp);
#   - Go pprof (-traces; PF_PPROF or /work/peers/bin/pprof) gives the same total of every
#     value and the same stacks from `main` down to the program's last own function.
#     Normalisation: Go pprof's " (inline)" mark is dropped; frames of other binaries are
#     not compared (above main, the C runtime's start: Go pprof names glibc's functions by
#     their symbols, __libc_start_main, pf by DWARF as perf and addr2line do,
#     __libc_start_main_impl; below, a sample in libc's memset or libprofiler);
#   - google-pprof --collapsed (Debian's google-perftools) gives the same totals and the same
#     inclusive total for each of the program's own functions. Its stacks are not compared
#     whole: it names addresses in stripped libraries after the nearest dynamic symbol before
#     them (pf and Go pprof say [libprofiler.so.0.5.5]), marks inline frames "[inline]" and
#     names an address of hot_c where mix is inlined hot_c[inline] (addr2line and Go pprof
#     say mix);
#   - a profile whose binary is gone ends with a warning that names the file and --symfs,
#     and --symfs with a copy of the binary names its frames again.
# Where Go pprof is not installed, the profiles checked in under tests/data/gperftools (made
# once with gperf_prog, see its README) are compared with Go pprof's -traces of them, saved
# there; that part runs everywhere. The rest skips (77) when gperf_prog was not built
# (libgoogle-perftools-dev missing) or no CPU profile was written; google-pprof is compared
# when installed.
# Usage: gperftools_test.sh PF_BIN_DIR PROGRAMS_DIR DATA_DIR
set -u -o pipefail
bin=$1 programs=$2 data=$3
collapse=$bin/pf-collapse
prog=$programs/gperf_prog
pprof=${PF_PPROF:-/work/peers/bin/pprof}
gpprof=$(command -v google-pprof || true)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cd "$tmp" || exit 1
# pf's folded text: without the unit line, lines summed by stack.
fold() { grep -v '^#' | awk '{n=$NF; $NF=""; sub(/ $/, ""); a[$0]+=n} END {for (s in a) if (a[s]) print s " " a[s]}' | LC_ALL=C sort; }
total() { awk '{t+=$NF} END {printf "%d\n", t}'; }
has_value=0
"$collapse" --help | grep -q -- '--value' && has_value=1
pf() { # FILE [VALUE]
  if [ -n "${2:-}" ] && [ $has_value = 1 ]; then "$collapse" --value="$2" "$1"; else "$collapse" "$1"; fi
}

# Go pprof's -traces, folded root-first: " (inline)" dropped, the value's unit suffix dropped.
pprof_fold() {
  awk '/^-+\+-+$/ {if (s != "") print s " " v; s=""; v=""; started=1; next}
       !started || /^ +[A-Za-z_]+: / {next}
       v == "" && NF >= 2 {v=$1; sub(/[A-Za-z]+$/, "", v); f=$0; sub(/^ *[^ ]+ +/, "", f)
                           sub(/ \(inline\)$/, "", f); s=f; next}
       v != "" {f=$0; sub(/^ +/, "", f); sub(/ \(inline\)$/, "", f); s=f ";" s}
       END {if (s != "") print s " " v}' | fold
}
# The stacks through main, from main down to the last of the program's own functions: the
# frames below them (libc's memset, libprofiler's) are named by each tool from other
# binaries, which may differ or be missing.
from_main() {
  sed -n 's/^.*;\(main;.*\)$/\1/p; s/^\(main;.*\)$/\1/p' |
    awk '{n=$NF; $NF=""; sub(/ $/, ""); k=split($0, f, ";"); s=f[1]
          for (i=2; i<=k && f[i] ~ /^(hot_[abc]|spin|mix|alloc_(big|small|temp))$/; i++) s=s ";" f[i]
          print s " " n}' | fold
}

# 0. The checked-in profiles against Go pprof's saved -traces of them (the binary given
# with --symfs at the path the profiles' maps name).
mkdir -p golden-root/tmp/pf-gperf
cp "$data/gperf_prog" golden-root/tmp/pf-gperf/
for v in cpu samples inuse_space inuse_objects alloc_space alloc_objects; do
  case $v in cpu|samples) file=$data/cpu.prof ;; *) file=$data/heap.0001.heap ;; esac
  [ $has_value = 0 ] && [ $v != cpu ] && [ $v != inuse_space ] && continue
  if [ $has_value = 1 ]; then
    "$collapse" --symfs=golden-root --value=$v "$file" 2>/dev/null | fold >pfg-$v.txt
  else
    "$collapse" --symfs=golden-root "$file" 2>/dev/null | fold >pfg-$v.txt
  fi
  pprof_fold <"$data/go-pprof-$v.traces" >gold-$v.txt
  [ "$(total <gold-$v.txt)" = "$(total <pfg-$v.txt)" ] ||
    fail "checked-in $v total: Go pprof $(total <gold-$v.txt), pf $(total <pfg-$v.txt)"
  from_main <gold-$v.txt >gold-main.txt
  from_main <pfg-$v.txt >pfg-main.txt
  [ -s gold-main.txt ] || fail "no $v stacks through main in $data/go-pprof-$v.traces"
  diff -u gold-main.txt pfg-main.txt >/dev/null ||
    fail "checked-in $v stacks from main differ: $(diff -u gold-main.txt pfg-main.txt)"
done

if [ ! -x "$prog" ]; then
  [ $failures -gt 0 ] && exit 1
  echo "SKIP: $prog was not built (libprofiler or libtcmalloc not found: libgoogle-perftools-dev)"
  exit 77
fi
CPUPROFILE=$tmp/cpu.prof HEAPPROFILE=$tmp/heap "$prog" 1 >/dev/null 2>&1
if [ ! -s cpu.prof ]; then
  [ $failures -gt 0 ] && exit 1
  echo "SKIP: gperf_prog wrote no CPU profile (SIGPROF refused?)"
  exit 77
fi
[ -s heap.0001.heap ] || fail "gperf_prog wrote no heap profile"

# 1. Known paths and values.
"$collapse" cpu.prof >pf-cpu.txt 2>pf-cpu.err || fail "pf-collapse cpu.prof: exit $?: $(cat pf-cpu.err)"
[ "$(head -1 pf-cpu.txt)" = "# pf-unit: nanoseconds" ] || fail "CPU profile unit: $(head -1 pf-cpu.txt)"
for path in ';main;hot_a;spin ' ';main;hot_b;spin ' ';main;hot_c;mix '; do
  grep -q -- "$path" pf-cpu.txt || fail "no stack $path in: $(cat pf-cpu.txt)"
done
"$collapse" heap.0001.heap >pf-heap.txt 2>pf-heap.err || fail "pf-collapse heap: exit $?"
[ "$(head -1 pf-heap.txt)" = "# pf-unit: bytes" ] || fail "heap profile unit: $(head -1 pf-heap.txt)"
grep -q ';main;alloc_big 8388608$' pf-heap.txt || fail "alloc_big: $(cat pf-heap.txt)"
grep -q ';main;alloc_small 64000$' pf-heap.txt || fail "alloc_small: $(cat pf-heap.txt)"
grep -q 'alloc_temp' pf-heap.txt && fail "alloc_temp in use: $(grep alloc_temp pf-heap.txt)"
if [ $has_value = 1 ]; then
  pf heap.0001.heap alloc_space | grep -q ';main;alloc_temp 8192000$' || fail "alloc_space of alloc_temp"
  pf heap.0001.heap inuse_objects | grep -q ';main;alloc_small 1000$' || fail "inuse_objects of alloc_small"
else
  echo "note: pf-collapse has no --value yet: the default values alone are checked"
fi

# 2. Go pprof: totals and stacks from main down.
if [ -x "$pprof" ]; then
  for v in samples cpu; do
    unit=; [ $v = cpu ] && unit=-unit=ns
    "$pprof" -traces -sample_index=$v $unit "$prog" cpu.prof 2>/dev/null | pprof_fold >go-$v.txt
    if [ $v = cpu ] || [ $has_value = 1 ]; then
      pf cpu.prof $v | fold >pf-$v.txt
      [ "$(total <go-$v.txt)" = "$(total <pf-$v.txt)" ] ||
        fail "$v total: Go pprof $(total <go-$v.txt), pf $(total <pf-$v.txt)"
      from_main <go-$v.txt >go-main.txt
      from_main <pf-$v.txt >pf-main.txt
      [ -s go-main.txt ] || fail "Go pprof -traces gave no $v stacks through main"
      diff -u go-main.txt pf-main.txt >/dev/null || fail "$v stacks from main differ: $(diff -u go-main.txt pf-main.txt)"
    fi
  done
  for v in inuse_space inuse_objects alloc_space alloc_objects; do
    [ $has_value = 0 ] && [ $v != inuse_space ] && continue
    "$pprof" -traces -sample_index=$v -unit=B "$prog" heap.0001.heap 2>/dev/null | pprof_fold >go-$v.txt
    pf heap.0001.heap $v | fold >pf-$v.txt
    [ "$(total <go-$v.txt)" = "$(total <pf-$v.txt)" ] ||
      fail "$v total: Go pprof $(total <go-$v.txt), pf $(total <pf-$v.txt)"
    from_main <go-$v.txt >go-main.txt
    from_main <pf-$v.txt >pf-main.txt
    [ -s go-main.txt ] || fail "Go pprof -traces gave no $v stacks through main"
    diff -u go-main.txt pf-main.txt >/dev/null || fail "$v stacks from main differ: $(diff -u go-main.txt pf-main.txt)"
  done
else
  echo "note: no Go pprof at $pprof: not compared with it"
fi

# 3. google-pprof --collapsed: totals and each own function's inclusive total.
gfold() { sed -E 's/<[0-9a-f]+>//g' | fold; }
inclusive() { # FUNC: the weight of the stacks FUNC is in (once per stack)
  awk -v fn="$1" '{n=$NF; $NF=""; sub(/ $/, ""); k=split($0, f, ";"); for (i=1; i<=k; i++) {g=f[i]; sub(/\[inline\]$/, "", g); if (g == fn) {t+=n; break}}} END {printf "%d\n", t}'
}
if [ -n "$gpprof" ]; then
  "$gpprof" --collapsed "$prog" cpu.prof 2>/dev/null | gfold >g-samples.txt
  period_ns=$(( $(total <pf-cpu.txt) / $(total <g-samples.txt) ))
  [ $period_ns = 10000000 ] || fail "cpu total $(total <pf-cpu.txt) is not google-pprof's samples $(total <g-samples.txt) x 10 ms"
  for fn in main hot_a hot_b hot_c spin; do
    g=$(inclusive $fn <g-samples.txt) p=$(fold <pf-cpu.txt | inclusive $fn)
    [ $((g * period_ns)) = "$p" ] || fail "$fn: google-pprof $g samples, pf $p ns"
  done
  for v in inuse_space alloc_space; do
    [ $has_value = 0 ] && [ $v != inuse_space ] && continue
    "$gpprof" --collapsed --$v "$prog" heap.0001.heap 2>/dev/null | gfold >g-$v.txt
    pf heap.0001.heap $v | fold >pf-$v.txt
    [ "$(total <g-$v.txt)" = "$(total <pf-$v.txt)" ] ||
      fail "$v total: google-pprof $(total <g-$v.txt), pf $(total <pf-$v.txt)"
    for fn in main alloc_big alloc_small alloc_temp; do
      g=$(inclusive $fn <g-$v.txt) p=$(inclusive $fn <pf-$v.txt)
      [ "$g" = "$p" ] || fail "$v of $fn: google-pprof $g, pf $p"
    done
  done
else
  echo "note: no google-pprof: not compared with it"
fi

# 4. A sampled heap profile (heap_v2/RATE, as tcmalloc's sampler writes it: the same stacks
# under another header): unsampled as both pprofs unsample it.
sed '1s|@ heapprofile|@ heap_v2/524288|' heap.0001.heap >v2.heap
"$collapse" v2.heap 2>v2.err | fold >pf-v2.txt || fail "pf-collapse v2.heap: exit $?"
grep -q 'sampled heap profile' v2.err || fail "no notice that the values are estimates: $(cat v2.err)"
grep -q ';main;alloc_big 9701573$' pf-v2.txt || fail "alloc_big unsampled: $(cat pf-v2.txt)"
if [ -x "$pprof" ]; then
  "$pprof" -traces -unit=B "$prog" v2.heap 2>/dev/null | pprof_fold >go-v2.txt
  [ "$(total <go-v2.txt)" = "$(total <pf-v2.txt)" ] ||
    fail "heap_v2 total: Go pprof $(total <go-v2.txt), pf $(total <pf-v2.txt)"
fi
if [ -n "$gpprof" ]; then
  "$gpprof" --collapsed "$prog" v2.heap 2>/dev/null | gfold >g-v2.txt
  [ "$(total <g-v2.txt)" = "$(total <pf-v2.txt)" ] ||
    fail "heap_v2 total: google-pprof $(total <g-v2.txt), pf $(total <pf-v2.txt)"
fi

# 5. A binary that is gone: the warning names it and --symfs; --symfs names its frames.
mkdir -p app/bin sysroot/"$tmp"/app/bin
cp "$prog" app/bin/server
CPUPROFILE=$tmp/moved.prof app/bin/server 0.3 >/dev/null 2>&1
mv app/bin/server sysroot/"$tmp"/app/bin/server
"$collapse" moved.prof >moved.txt 2>moved.err || fail "pf-collapse moved.prof: exit $?"
grep -q "$tmp/app/bin/server" moved.err && grep -q -- '--symfs' moved.err ||
  fail "the missing binary's warning: $(cat moved.err)"
grep -Eq '[0-9]+ of [0-9]+ samples have frames in' moved.err || fail "no count of unnamed samples: $(cat moved.err)"
grep -q '\[server\]' moved.txt || fail "frames of the missing binary: $(cat moved.txt)"
"$collapse" --symfs="$tmp/sysroot" moved.prof >symfs.txt 2>symfs.err ||
  fail "pf-collapse --symfs: exit $?"
grep -q ';main;hot_a;spin ' symfs.txt || fail "--symfs did not name the frames: $(cat symfs.txt)"

# 6. A truncated profile is read up to its cut, with a warning.
head -c 300 cpu.prof >cut.prof  # inside the records
"$collapse" cut.prof >cut.txt 2>cut.err || fail "pf-collapse cut.prof: exit $?"
grep -q 'cut short' cut.err || fail "no warning for a cut profile: $(cat cut.err)"

if [ $failures -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "gperftools: all checks passed"
