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
# No page calls a tool or an option planned, or to come, when the tools have it: a sentence
# that names one of the tools given, or a long option of one of their --help texts, must not
# say "planned", "not yet", "will", "for now", "once ... is available", "in a later version",
# "not implemented" or "not supported yet".
# (Pages speak in the present tense; say what a tool does.)
known=$(for bin in "$@"; do basename "$bin"; "$bin" --help | grep -oE -- '--[a-z][a-z0-9-]*'; done | sort -u)
future='\b(planned|not yet|will|for now|once .* (is|are) (available|ready|written|done)|in a later version|future version|coming soon|to come|not implemented|not supported yet)\b'
for page in "$src"/man/*.[0-9]; do
  # The formatted text, one sentence (or clause after a ;) a line.
  sentences=$(groff -man -Tutf8 -P-cbou -rLL=1000n -rHY=0 "$page" 2>/dev/null | sed 's/^ *//' |
    tr '\n' ' ' | sed -E 's/ +/ /g; s/([.;]) /\1\n/g')
  while IFS= read -r sentence; do
    names=$(grep -oE -- '(pf-[a-z]+|--[a-z][a-z0-9-]*)' <<<"$sentence" | sort -u |
      grep -xF -f <(echo "$known") | tr '\n' ' ')
    if [ -n "$names" ]; then
      echo "FAIL: $(basename "$page") speaks of what exists ($names) as still to come: $sentence"
      failures=$((failures + 1))
    fi
  done < <(grep -iE -- "$future" <<<"$sentences")
done
[ "$failures" -eq 0 ] || exit 1
echo "man pages ok"
