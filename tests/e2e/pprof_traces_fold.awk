# Folds `pprof -traces` output into folded stacks (root first, values summed, sorted by
# the caller), the oracle of tests/e2e/pprof_in_test.sh. A trace is a block after a
# "-----------+----" line: label lines ("    key:  value"), then "VALUE   leaf" and one
# caller per line. Values must be printed in the sample type's own unit (pprof -unit=ns or
# -unit=B); the unit's letters after the number are dropped, and so are pprof's " (inline)"
# marks. Traces whose value is 0 are left out, as pf's folded output has no zero stacks.
function flush(   i, s) {
  if (n > 0 && value != 0) {
    s = frames[n]
    for (i = n - 1; i >= 1; i--) s = s ";" frames[i]
    sum[s] += value
  }
  n = 0
}
/^-----------\+/ { flush(); intrace = 1; next }
!intrace { next }
{
  line = $0
  sub(/ \(inline\)$/, "", line)
  if (n == 0 && match(line, /^ *-?[0-9.]+[a-zA-Z]*   /)) {
    v = substr(line, 1, RLENGTH)
    gsub(/[ a-zA-Z]/, "", v)
    value = v + 0
    frames[++n] = substr(line, RLENGTH + 1)
  } else if (n > 0 && match(line, /^             /)) {
    frames[++n] = substr(line, RLENGTH + 1)
  }
}
END {
  flush()
  for (s in sum) printf "%s %.0f\n", s, sum[s]
}
