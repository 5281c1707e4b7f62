#!/usr/bin/env bash
# pf-collapse reads pprof profile.proto as Go pprof does: on the profiles checked in under
# tests/data/pprof (Go's runtime/pprof CPU, heap and allocs profiles; a gperftools CPU
# profile converted by `pprof -proto`), its folded stacks equal `pprof -traces` folded
# (pprof_traces_fold.awk) exactly, for the default sample type and, where pf-collapse has
# --value, for each one (and for pprof's legacy inuse_space and inuse_objects of a heap
# profile of gperftools, whose sample types are space and objects). The oracle is Go pprof when it is installed (PPROF, the PEERS_DIR
# argument's bin/pprof, or pprof on PATH), else the goldens beside the profiles, made with it
# (tests/data/pprof/README.md). Then: gzipped and raw protos read alike, from files and
# pipes; labels as root frames (--tag, against pprof -tagroot, whose frames are the bare
# values); truncated and lying inputs end with an error, never a crash. With the tools
# installed, profiles made here: a gperftools CPU profile of CALLPATH turned into an
# address-only proto (pprof -proto -symbolize=none), which pf symbolizes itself, and a Go
# program's profiles (tests/programs/go/pprofgen).
# Usage: pprof_in_test.sh PF_COLLAPSE SOURCE_DIR [PEERS_DIR] [CALLPATH]
set -u -o pipefail
collapse=$1 src=$2 peers=${3:-} callpath=${4:-} inline_loop=${5:-}
data=$src/tests/data/pprof
fold_awk=$src/tests/e2e/pprof_traces_fold.awk
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

pprof=${PPROF:-}
[ -z "$pprof" ] && [ -n "$peers" ] && [ -x "$peers/bin/pprof" ] && pprof=$peers/bin/pprof
[ -z "$pprof" ] && pprof=$(command -v pprof || true)
[ -n "$pprof" ] && echo "oracle: $pprof" || echo "oracle: the goldens in $data (no Go pprof here)"
has_option() { "$collapse" --help 2>&1 | grep -q -- "$1"; }

# Folded stacks of pf-collapse, without its comment lines, sorted.
pf_fold() { "$collapse" "$@" | grep -v '^#' | LC_ALL=C sort; }
# pprof -traces of FILE for sample type TYPE (UNIT its unit), folded.
pprof_fold() {
  local file=$1 type=$2 unit=$3 u=
  case $unit in nanoseconds) u=-unit=ns ;; bytes) u=-unit=B ;; esac
  # shellcheck disable=SC2086
  "$pprof" -traces $u -sample_index="$type" "${@:4}" "$file" 2>/dev/null |
    awk -f "$fold_awk" | LC_ALL=C sort
}
total() { awk '{ s += $NF } END { printf "%.0f\n", s }' "$1"; }
same() {  # EXPECTED GOT WHAT
  if ! cmp -s "$1" "$2"; then
    fail "$3: stacks differ from pprof's"
    diff "$1" "$2" | head -10
  elif [ "$(total "$1")" != "$(total "$2")" ]; then
    fail "$3: totals differ"
  fi
}

# 1. The checked-in profiles: default sample type (pprof's: default_sample_type, else the
# last) and every sample type by name.
declare -A default=([cpu]=cpu [heap]=inuse_space [allocs]=alloc_space [gperf]=cpu
                   [gperfheap]=space)
declare -A units=([cpu]=nanoseconds [heap]=bytes [allocs]=bytes [gperf]=nanoseconds
                 [gperfheap]=bytes)
for name in cpu heap allocs gperf gperfheap; do
  f=$data/$name.pb.gz
  expected() {  # TYPE UNIT -> file
    if [ -n "$pprof" ]; then pprof_fold "$f" "$1" "$2" >"$tmp/exp"; else cp "$data/$name.$1.folded" "$tmp/exp"; fi
  }
  expected "${default[$name]}" "${units[$name]}"
  pf_fold "$f" >"$tmp/got" || fail "$name: pf-collapse exit $?"
  same "$tmp/exp" "$tmp/got" "$name (default ${default[$name]})"
  [ "$("$collapse" "$f" | head -1)" = "# pf-unit: ${units[$name]}" ] ||
    fail "$name: no '# pf-unit: ${units[$name]}' line"
  # The raw proto, from a file and from a pipe, reads as the gzipped one.
  gzip -dc "$f" >"$tmp/$name.pb"
  pf_fold "$tmp/$name.pb" | cmp -s - "$tmp/got" || fail "$name: raw proto file reads differently"
  pf_fold - <"$tmp/$name.pb" | cmp -s - "$tmp/got" || fail "$name: raw proto pipe reads differently"
  if has_option --value; then
    for t in $(ls "$data" | grep -v tagroot | sed -n "s/^$name\.\(.*\)\.folded\$/\1/p"); do
      unit=bytes
      case $t in *objects | samples) unit=count ;; cpu) unit=nanoseconds ;; esac
      expected "$t" "$unit"
      pf_fold --value="$t" "$f" >"$tmp/got" || fail "$name --value=$t: exit $?"
      same "$tmp/exp" "$tmp/got" "$name --value=$t"
    done
  fi
done

# pprof's legacy names of a heap profile that holds only what is in use ("space",
# "objects"): inuse_space and inuse_objects.
if has_option --value; then
  for t in inuse_space inuse_objects; do
    unit=bytes
    [ $t = inuse_objects ] && unit=count
    if [ -n "$pprof" ]; then
      pprof_fold "$data/gperfheap.pb.gz" "$t" "$unit" >"$tmp/exp"
    else
      cp "$data/gperfheap.${t#inuse_}.folded" "$tmp/exp"
    fi
    pf_fold --value="$t" "$data/gperfheap.pb.gz" >"$tmp/got" || fail "gperfheap --value=$t: exit $?"
    same "$tmp/exp" "$tmp/got" "gperfheap --value=$t"
  done
fi

# 2. Labels as root frames: pprof -tagroot=worker names the frame by the value alone.
if has_option --tag; then
  if [ -n "$pprof" ]; then
    pprof_fold "$data/cpu.pb.gz" cpu nanoseconds -tagroot=worker >"$tmp/exp"
  else
    cp "$data/cpu.tagroot-worker.folded" "$tmp/exp"
  fi
  pf_fold --tag=worker "$data/cpu.pb.gz" | sed 's/^worker://' >"$tmp/got"
  same "$tmp/exp" "$tmp/got" "cpu --tag=worker"
fi

# 3. Bad input: truncated at every few bytes, a length that lies, ids that name nothing:
# an error naming the file (exit 1), never a crash or a silent result.
raw=$tmp/heap.pb
size=$(stat -c %s "$raw")
for n in 3 17 64 200 777 1500 $((size / 2)) $((size - 1)); do
  head -c "$n" "$raw" >"$tmp/cut.pb"
  "$collapse" -f pprof "$tmp/cut.pb" >/dev/null 2>"$tmp/err"
  rc=$?
  [ $rc = 1 ] || fail "truncated at $n: exit $rc (want 1)"
  grep -q "cut.pb" "$tmp/err" || fail "truncated at $n: the error does not name the file: $(cat "$tmp/err")"
done
# The first sample type's length byte (after its 0x0a) made huge.
printf '\x0a\x7f' | dd of="$raw" bs=1 conv=notrunc status=none
"$collapse" -f pprof "$raw" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || fail "lying length: exit $rc (want 1): $(cat "$tmp/err")"

# 4. The round trip pprof -> pf -> pprof: `pf-collapse -o NAME.pb.gz` of each profile keeps
# every sample type (by name and in pprof's order) and, for each, the stacks and the total:
# pprof -traces of the written profile equals pprof -traces of the profile read (without Go
# pprof: pf-collapse reading what it wrote equals its folded output of the profile read).
# Then C++ names (template arguments, operator(), anonymous namespaces) written from folded
# text come back from pprof as they were (pprof shortens a function's name when it equals its
# system name).
for name in cpu heap allocs gperf gperfheap; do
  f=$data/$name.pb.gz
  "$collapse" -o "$tmp/rt.pb.gz" "$f" 2>"$tmp/err" || fail "round trip $name: exit $?: $(cat "$tmp/err")"
  types=$(ls "$data" | grep -v tagroot | sed -n "s/^$name\.\(.*\)\.folded\$/\1/p")
  if [ -n "$pprof" ]; then
    # The sample types (sorted: pf moves the default one last) and the default one (pprof's
    # [dflt], else the last).
    st() { "$pprof" -raw "$1" 2>/dev/null | sed -n '/^Samples:/{n;p;q}' | tr ' ' '\n' |
      awk '/\[dflt\]/ { d = $0 } { l = $0; sub(/\[dflt\]/, ""); print } END { print "default:" (d ? d : l "[dflt]") }' |
      LC_ALL=C sort | tr '\n' ' '; }
    [ "$(st "$f")" = "$(st "$tmp/rt.pb.gz")" ] ||
      fail "round trip $name: sample types $(st "$tmp/rt.pb.gz"), not $(st "$f")"
    for t in $types; do
      unit=bytes
      case $t in *objects | samples) unit=count ;; cpu) unit=nanoseconds ;; esac
      pprof_fold "$f" "$t" "$unit" >"$tmp/exp"
      pprof_fold "$tmp/rt.pb.gz" "$t" "$unit" >"$tmp/got"
      same "$tmp/exp" "$tmp/got" "round trip $name, pprof -sample_index=$t"
    done
  fi
  if has_option --value; then
    for t in $types; do
      pf_fold --value="$t" "$f" >"$tmp/exp"
      pf_fold --value="$t" "$tmp/rt.pb.gz" >"$tmp/got"
      same "$tmp/exp" "$tmp/got" "round trip $name through pf, --value=$t"
    done
  else
    pf_fold "$f" >"$tmp/exp"
    pf_fold "$tmp/rt.pb.gz" >"$tmp/got"
    same "$tmp/exp" "$tmp/got" "round trip $name through pf"
  fi
done
printf '%s\n' 'main;std::vector<int>::push_back;X::operator() 3' \
  'main;(anonymous namespace)::bar;std::hash<int>::operator();[unknown] 2' \
  'main;_ZN3foo3barEv 1' >"$tmp/cxx.folded"
"$collapse" -o "$tmp/cxx.pb.gz" "$tmp/cxx.folded" || fail "C++ names: pf-collapse -o failed"
LC_ALL=C sort "$tmp/cxx.folded" >"$tmp/cxx.exp"
if [ -n "$pprof" ]; then
  "$pprof" -traces "$tmp/cxx.pb.gz" 2>/dev/null | awk -f "$fold_awk" | LC_ALL=C sort >"$tmp/got"
  same "$tmp/cxx.exp" "$tmp/got" "C++ names written for pprof"
fi
pf_fold "$tmp/cxx.pb.gz" >"$tmp/got"
same "$tmp/cxx.exp" "$tmp/got" "C++ names written and read by pf"

# 5. Profiles made here. gperftools: an address-only proto, named by pf's symbolizer from
# CALLPATH and libc, against pprof's own symbolization of the legacy profile.
libprofiler=$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -1)
if [ -n "$pprof" ] && [ -n "$libprofiler" ] && [ -x "$callpath" ]; then
  LD_PRELOAD=$libprofiler CPUPROFILE=$tmp/gperf.prof CPUPROFILE_FREQUENCY=500 \
    "$callpath" 0.5 >/dev/null 2>&1
  if [ -s "$tmp/gperf.prof" ]; then
    PPROF_BINARY_PATH=/nonexistent "$pprof" -proto -symbolize=none "$tmp/gperf.prof" \
      >"$tmp/nosym.pb.gz" 2>/dev/null
    if grep -q '^Locations' <("$pprof" -raw "$tmp/nosym.pb.gz" 2>/dev/null); then
      "$pprof" -traces -unit=ns "$callpath" "$tmp/gperf.prof" 2>/dev/null |
        awk -f "$fold_awk" | LC_ALL=C sort >"$tmp/exp"
      pf_fold "$tmp/nosym.pb.gz" >"$tmp/got"
      same "$tmp/exp" "$tmp/got" "gperftools profile without symbols"
      grep -q ';work_a;spin ' "$tmp/got" || fail "gperftools: no main;work_a;spin stack"
    fi
  else
    echo "note: no gperftools profile written; skipped its part"
  fi
fi
# Functions inlined at an address pf names itself are frames of their own, as pprof's own
# symbolization (addr2line -i) gives them: a loop inlined twice, against Go pprof where it
# is here (Debian's older `go tool pprof` does not name the legacy profile's addresses).
if [ -n "$libprofiler" ] && [ -x "$inline_loop" ]; then
  LD_PRELOAD=$libprofiler CPUPROFILE=$tmp/inl.prof CPUPROFILE_FREQUENCY=500 \
    "$inline_loop" 3 >/dev/null 2>&1
  # The address-only proto: pprof's -symbolize=none, else pf's own pprof of the profile's
  # addresses is not at hand, so the legacy profile is read as gperftools (its frames are
  # named by the same FrameNamer) only to check the shape.
  if [ -s "$tmp/inl.prof" ] && [ -n "$pprof" ]; then
    PPROF_BINARY_PATH=/nonexistent "$pprof" -proto -symbolize=none "$tmp/inl.prof" \
      >"$tmp/inl.pb.gz" 2>/dev/null
    "$pprof" -traces -unit=ns "$inline_loop" "$tmp/inl.prof" 2>/dev/null |
      awk -f "$fold_awk" | LC_ALL=C sort >"$tmp/exp"
    pf_fold "$tmp/inl.pb.gz" >"$tmp/got"
    same "$tmp/exp" "$tmp/got" "inlined functions at addresses pf names"
    grep -q ';outer;middle;inner ' "$tmp/got" || fail "inline: no outer;middle;inner stack"
    pf_fold --no-inline "$tmp/inl.pb.gz" | grep -q ';middle' && fail "--no-inline: inlined frames"
  elif [ -s "$tmp/inl.prof" ]; then
    pf_fold "$tmp/inl.prof" | grep -q ';outer;middle;inner ' ||
      fail "inline (gperftools): no outer;middle;inner stack"
  else
    echo "note: no gperftools profile of inline_loop; skipped its part"
  fi
fi
# Go: the program's profiles, made now (the Go toolchain builds offline with the standard
# library only).
if [ -n "$pprof" ] && command -v go >/dev/null; then
  if (cd "$src/tests/programs/go/pprofgen" &&
      GOCACHE=${PF_GO_CACHE:-$tmp/gocache} GOFLAGS=-mod=mod GOTOOLCHAIN=local \
        go build -o "$tmp/pprofgen" .) >"$tmp/go.log" 2>&1; then
    mkdir "$tmp/go"
    "$tmp/pprofgen" "$tmp/go" 0.5 >/dev/null
    for name in cpu heap allocs; do
      pprof_fold "$tmp/go/$name.pb.gz" "${default[$name]}" "${units[$name]}" >"$tmp/exp"
      pf_fold "$tmp/go/$name.pb.gz" >"$tmp/got"
      same "$tmp/exp" "$tmp/got" "Go $name profile made now"
    done
  else
    echo "note: go build failed; skipped the Go part"; cat "$tmp/go.log"
  fi
fi

[ $failures = 0 ] && echo "pprof input: all ok"
exit $((failures > 0))
