#!/usr/bin/env bash
# make_goldens.sh PPROF AWK FILE...: for each profile NAME.pb.gz and each of its sample types
# TYPE, NAME.TYPE.folded: `PPROF -traces -sample_index=TYPE` folded by AWK
# (tests/e2e/pprof_traces_fold.awk), in the sample type's own unit, sorted.
set -eu
pprof=$1 awk_prog=$2; shift 2
for f in "$@"; do
  base=${f%.pb.gz}
  types=$("$pprof" -raw "$f" 2>/dev/null | sed -n '/^Samples:/{n;p;q}')
  for t in $types; do
    t=${t%"[dflt]"}; name=${t%/*} unit=${t#*/} u=
    case $unit in nanoseconds) u=-unit=ns ;; bytes) u=-unit=B ;; esac
    "$pprof" -traces $u -sample_index="$name" "$f" 2>/dev/null | awk -f "$awk_prog" | LC_ALL=C sort >"$base.$name.folded"
  done
done
