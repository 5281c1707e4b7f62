#!/usr/bin/env bash
# Man pages: every page formats without groff warnings, and every long option a tool's
# --help lists appears in its page. Usage: man_test.sh SOURCE_DIR TOOL_BINARY...
set -u
src=$1
shift
failures=0
command -v groff >/dev/null || { echo "FAIL: groff is not installed (make -f Makefile.wrapper deps)"; exit 1; }
for page in "$src"/man/*.[0-9]; do
  out=$(groff -man -ww -z "$page" 2>&1)
  if [ -n "$out" ]; then
    echo "FAIL: $page: $out"
    failures=$((failures + 1))
  fi
  [ -s "$page" ] || { echo "FAIL: $page is empty"; failures=$((failures + 1)); }
done
for bin in "$@"; do
  tool=$(basename "$bin")
  page="$src/man/$tool.1"
  [ -f "$page" ] || { echo "FAIL: no man page for $tool"; failures=$((failures + 1)); continue; }
  text=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$page")
  for opt in $("$bin" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
    grep -qF -- "$opt" <<<"$text" || { echo "FAIL: $tool $opt is not in $page"; failures=$((failures + 1)); }
  done
done
[ "$failures" -eq 0 ] || exit 1
echo "man pages ok"
