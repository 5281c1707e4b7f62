#!/usr/bin/env bash
# The layers: docs/DESIGN.md's table ("## Layers"), common/CMakeLists.txt's pf_module() calls
# and the code's includes must agree. The build already refuses an include of a module above
# (each module compiles against a view of common/ holding only what it may use); this also
# catches a header no module compiles alone, a folder that is no module, and a table or a
# CMake file that changed without the other.
# Usage: layers_test.sh SOURCE_DIR
set -u -o pipefail
src=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# "name: dep dep" per module, bottom first, from the CMake calls (which may span lines).
from_cmake=$(tr '\n' ' ' <"$src/common/CMakeLists.txt" | grep -oE 'pf_module\([a-z]+[^)]*' |
  awk '{
    sub(/^pf_module\(/, ""); name = $1; deps = ""; on = 0
    for (i = 2; i <= NF; i++) {
      if ($i == "DEPS") { on = 1; continue }
      if ($i == "SOURCES" || $i == "LIBS") on = 0
      if (on) deps = deps " " $i
    }
    print name ":" deps }')
# The same from the table: "| module | uses | what |" rows after "## Layers".
from_doc=$(awk '/^## Layers/ { on = 1; next } /^## / { on = 0 }
  on && /^\| [a-z]+ \|/ {
    split($0, c, "|"); name = c[2]; uses = c[3]
    gsub(/ /, "", name); gsub(/,/, " ", uses); gsub(/—/, "", uses)
    if (name == "module") next
    n = split(uses, u, " "); deps = ""
    for (i = 1; i <= n; i++) deps = deps " " u[i]
    print name ":" deps }' "$src/docs/DESIGN.md")
[ -n "$from_cmake" ] || fail "no pf_module() call found in common/CMakeLists.txt"
[ "$from_cmake" = "$from_doc" ] ||
  fail "docs/DESIGN.md's layer table and common/CMakeLists.txt differ:
$(diff <(echo "$from_doc") <(echo "$from_cmake"))"

# Each module's closure: itself and, transitively, what it uses (modules come bottom first).
declare -A closure
while IFS=: read -r name deps; do
  c=" $name "
  for d in $deps; do
    [ -n "${closure[$d]+x}" ] || fail "$name uses $d, which is not declared below it"
    c+="${closure[$d]:-} "
  done
  closure[$name]=$c
done <<<"$from_cmake"

for dir in "$src"/common/*/; do
  m=$(basename "$dir")
  [ -n "${closure[$m]+x}" ] || { fail "common/$m/ is not a module in common/CMakeLists.txt"; continue; }
  while IFS= read -r line; do
    file=${line%%:*}
    inc=$(sed -E 's/.*#include "([a-z_0-9]+)\/.*/\1/' <<<"$line")
    [[ ${closure[$m]} == *" $inc "* ]] ||
      fail "${file#"$src"/}: includes $inc/, which module $m does not use"
  done < <(grep -HE '^#include "[a-z_0-9]+/' "$dir"* 2>/dev/null)
done
[ "$failures" -eq 0 ] || exit 1
echo "layers agree: $(wc -l <<<"$from_cmake") modules"
