#!/usr/bin/env bash
# pf-flamegraph as a user meets it: every SVG parses as XML (hostile names included) and
# carries no injected markup; output is deterministic; empty input fails cleanly; PNG and
# PDF are real images; usage errors exit 2. Usage: flamegraph_cli_test.sh PF_FLAMEGRAPH
set -u -o pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
have() { command -v "$1" >/dev/null 2>&1; }
xml_ok() {  # xml_ok FILE WHAT
  if have xmllint; then
    xmllint --noout "$1" 2>"$tmp/xmlerr" || fail "$2: not well-formed XML: $(head -3 "$tmp/xmlerr")"
  fi
}
have xmllint || echo "note: xmllint missing (apt-get install libxml2-utils); XML checks skipped"

# Hostile names: markup, quotes, CDATA end, control bytes, invalid UTF-8, a JS string end.
{
  printf 'main;</title><script>alert(1)</script> 5\n'
  printf 'main;a&b<c>"d'"'"'e 3\n'
  printf 'main;x]]>y 2\n'
  printf 'main;ctl\x01\x1b\x7f 2\n'
  printf 'main;bad\xff\xfeutf8\xc3 2\n'
  printf 'main;caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac 4\n'
  printf 'main;\x27);alert(1);// 1\n'
  printf 'main;%s 1\n' "$(head -c 3000 /dev/zero | tr '\0' 'L')"
} >"$tmp/hostile.folded"
"$bin" --title='T <&> "q" '"'"'s'"'"' ]]>' --subtitle='S </text>' --notes='n --> <!--' \
  --countname='c<&>' --nametype='N"<\' --fonttype='F"}<' --search-color='red"' \
  "$tmp/hostile.folded" >"$tmp/hostile.svg" || fail "hostile input: exit $?"
xml_ok "$tmp/hostile.svg" "hostile names"
grep -q '<script>alert' "$tmp/hostile.svg" && fail "a name injected a script element"
[ "$(grep -c '<script' "$tmp/hostile.svg")" -eq 1 ] || fail "more than one script element"
[ "$(grep -c ']]>' "$tmp/hostile.svg")" -eq 2 ] || fail "']]>' appears outside the two CDATA ends"
grep -q '&lt;/title&gt;&lt;script&gt;' "$tmp/hostile.svg" || fail "the markup name is not escaped in its title"
if LC_ALL=C grep -q $'[\x01\x1b]' "$tmp/hostile.svg"; then fail "control bytes reached the SVG"; fi
if have iconv && ! iconv -f UTF-8 -t UTF-8 "$tmp/hostile.svg" >/dev/null 2>&1; then
  fail "the SVG is not valid UTF-8"
fi

# Deterministic: same input, same bytes; several inputs are merged.
printf 'main;work_a;spin 75\nmain;work_b;spin 25\n' >"$tmp/a.folded"
"$bin" "$tmp/a.folded" >"$tmp/1.svg" && "$bin" "$tmp/a.folded" >"$tmp/2.svg"
cmp -s "$tmp/1.svg" "$tmp/2.svg" || fail "two runs differ"
xml_ok "$tmp/1.svg" "plain graph"
grep -q '<title>all (100 samples, 100%)</title>' "$tmp/1.svg" || fail "root title"
grep -q '<title>work_a (75 samples, 75.00%)</title>' "$tmp/1.svg" || fail "frame title"
"$bin" "$tmp/a.folded" - <"$tmp/a.folded" >"$tmp/twice.svg" || fail "file and stdin"
grep -q '<title>all (200 samples, 100%)</title>' "$tmp/twice.svg" || fail "inputs not merged"
# Thousands separators as flamegraph.pl writes them.
printf 'main;hot 1234567\n' | "$bin" >"$tmp/big.svg"
grep -q '<title>hot (1,234,567 samples, 100.00%)</title>' "$tmp/big.svg" || fail "thousands separators"

# Differential input (two columns): red for growth, blue for reduction.
printf 'main;grew 10 30\nmain;shrank 30 10\n' | "$bin" >"$tmp/diff.svg" || fail "differential"
grep -q 'grew (30 samples, 75.00%; +50.00%)' "$tmp/diff.svg" || fail "differential tooltip"
grep -q 'grew (30.*fill="rgb(255,0,0)"' "$tmp/diff.svg" || fail "growth is not red"
grep -q 'shrank (10.*fill="rgb(0,0,255)"' "$tmp/diff.svg" || fail "reduction is not blue"
printf 'main;grew 10 30\n' | "$bin" --negate | grep -q 'grew (30.*fill="rgb(0,0,255)"' ||
  fail "--negate does not turn growth blue"

# Empty input: exit 1, a message, no output file.
: >"$tmp/empty.folded"
"$bin" "$tmp/empty.folded" -o "$tmp/empty.svg" 2>"$tmp/err"
[ $? -eq 1 ] || fail "empty input: want exit 1"
grep -qx "pf-flamegraph: error: the input is empty" "$tmp/err" || fail "empty input message: $(cat "$tmp/err")"
[ -e "$tmp/empty.svg" ] && fail "empty input left an output file"
# Other empty results say what happened: not stacks, counts of 0, a filter that left nothing.
printf 'not a stack\n' | "$bin" >/dev/null 2>"$tmp/err"
grep -q "nothing in the input parsed .*; pf reads perf script text, folded stacks" "$tmp/err" ||
  fail "no stacks: $(cat "$tmp/err")"
printf 'main;f 0\n' | "$bin" >/dev/null 2>"$tmp/err"
grep -qx "pf-flamegraph: error: the one stack read has a count of 0" "$tmp/err" ||
  fail "counts of 0: $(cat "$tmp/err")"
printf 'main;gone 5 0\n' >"$tmp/gone.folded"
for input in "$tmp/gone.folded" -; do  # streamed from a file, and via a tree
  "$bin" "$input" <"$tmp/gone.folded" >/dev/null 2>"$tmp/err"
  grep -q "every AFTER count of the differential profile is 0" "$tmp/err" || fail "AFTER all 0 ($input): $(cat "$tmp/err")"
done
"$bin" --base=nosuch "$tmp/a.folded" >/dev/null 2>"$tmp/err"
grep -qx "pf-flamegraph: error: --base=nosuch left none of the 2 distinct stacks read" "$tmp/err" ||
  fail "--base: $(cat "$tmp/err")"

# Usage errors.
for args in "--colors=nope" "--minwidth=abc" "--format=gif" "--width=0" "--bgcolors=nope" "--bogus" \
  "--flamechart --base=main" "--encoding=8bit" "--encoding=a\"b"; do
  "$bin" $args "$tmp/a.folded" >/dev/null 2>"$tmp/err"
  rc=$?
  [ $rc -eq 2 ] || fail "$args: exit $rc, want 2 ($(cat "$tmp/err"))"
done

# PNG and PDF through Cairo.
"$bin" "$tmp/a.folded" -o "$tmp/a.png" || fail "png"
[ "$(head -c 8 "$tmp/a.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "not a PNG"
"$bin" --format=pdf "$tmp/a.folded" >"$tmp/a.pdf" || fail "pdf"
head -c 5 "$tmp/a.pdf" | grep -q '%PDF-' || fail "not a PDF"
if have pdftoppm; then
  pdftoppm -png -r 50 -singlefile "$tmp/a.pdf" "$tmp/page" || fail "pdftoppm could not read the PDF"
  [ -s "$tmp/page.png" ] || fail "the PDF rendered to nothing"
fi

# Options that change the layout keep valid XML.
for args in "--inverted" "--reverse" "--flamechart" "--base=work_a" "--hash --colors=java" \
  "--minwidth=1%" "--width=600 --height=20 --fontsize=9" "--total=1000 --factor=2"; do
  "$bin" $args "$tmp/a.folded" >"$tmp/o.svg" 2>/dev/null || fail "$args: exit $?"
  xml_ok "$tmp/o.svg" "$args"
done
"$bin" --inverted "$tmp/a.folded" | grep -q '>Icicle Graph<' || fail "--inverted title"
# inferno's short options, so its command lines run unchanged.
"$bin" -i "$tmp/a.folded" | grep -q '>Icicle Graph<' || fail "-i is not --inverted"
cmp -s <("$bin" -c java "$tmp/a.folded") <("$bin" --colors=java "$tmp/a.folded") || fail "-c is not --colors"
cmp -s <("$bin" -c java "$tmp/a.folded") <("$bin" "$tmp/a.folded") && fail "-c java changed nothing"
# flamegraph.pl's --nameattr and --encoding.
printf 'work_a\thref=https://example.org/a\tclass=hot\n' >"$tmp/attrs.txt"
"$bin" --nameattr="$tmp/attrs.txt" --encoding=ISO-8859-1 "$tmp/a.folded" >"$tmp/na.svg" || fail "--nameattr: exit $?"
head -1 "$tmp/na.svg" | grep -q 'encoding="ISO-8859-1"' || fail "--encoding: not in the XML declaration"
grep -q '^<a xlink:href="https://example.org/a" target="_top" class="hot"><title>work_a (' "$tmp/na.svg" ||
  fail "--nameattr: work_a is not a link"
xml_ok "$tmp/na.svg" "--nameattr"
printf 'no tab\n' >"$tmp/badattrs.txt"
"$bin" --nameattr="$tmp/badattrs.txt" "$tmp/a.folded" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "--nameattr with a bad line: want exit 1"
grep -q "badattrs.txt:1:" "$tmp/err" || fail "--nameattr bad line message: $(cat "$tmp/err")"

# --base re-roots at the innermost occurrence (as inferno), keeping stacks that end in it.
printf 'main;job;wait;job;work 10\nmain;job;work2 5\nmain;job 3\nmain;other 7\n' >"$tmp/base.folded"
"$bin" --base=job "$tmp/base.folded" >"$tmp/base.svg" || fail "--base: exit $?"
grep -q '<title>all (18 samples, 100%)</title>' "$tmp/base.svg" || fail "--base: total is not the stacks through job"
grep -q '<title>job (18 samples, 100.00%)</title>' "$tmp/base.svg" || fail "--base: job is not the one root"
grep -q '<title>wait' "$tmp/base.svg" && fail "--base: re-rooted at the outermost job (wait is drawn)"
grep -q '<title>work (10 samples' "$tmp/base.svg" || fail "--base: work missing"

# --cp keeps colours in ./palette.map.
(cd "$tmp" && "$bin" --cp a.folded >/dev/null) || fail "--cp"
grep -q '^work_a->rgb(' "$tmp/palette.map" || fail "--cp wrote no palette.map"

# Sizes beyond any screen are usage errors, not SVGs with 300-digit coordinates.
printf 'a;b 1\n' | "$bin" --width=1e300 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--width=1e300: want exit 2"
printf 'a;b 1\n' | "$bin" --height=1e7 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--height=1e7: want exit 2"
# --format=html (-o NAME.html): one self-contained page; same input, same bytes; the
# options only an SVG has are usage errors; a failed run leaves the old page whole.
"$bin" "$tmp/a.folded" -o "$tmp/a.html" || fail "-o a.html: exit $?"
head -c 16 "$tmp/a.html" | grep -q '^<!DOCTYPE html>' || fail "-o a.html is not an HTML page"
"$bin" --format=html "$tmp/a.folded" >"$tmp/a2.html" || fail "--format=html: exit $?"
cmp -s "$tmp/a.html" "$tmp/a2.html" || fail "two HTML pages of one input differ"
grep -q '"names":\["main","work_a","spin","work_b"\]' "$tmp/a.html" || fail "html: the name table"
grep -Eq 'src=|href=|https?:' "$tmp/a.html" && fail "html: the page loads something from elsewhere"
for args in --flamechart --nameattr="$tmp/attrs.txt" --encoding=latin1; do
  "$bin" --format=html "$args" "$tmp/a.folded" >/dev/null 2>"$tmp/err"
  [ $? -eq 2 ] || fail "--format=html $args: want exit 2"
  grep -q "^pf-flamegraph: error: --[a-z]* does not apply to --format=html" "$tmp/err" ||
    fail "--format=html $args: message: $(cat "$tmp/err")"
done
cp "$tmp/a.html" "$tmp/keep.html"
"$bin" "$tmp/empty.folded" -o "$tmp/keep.html" 2>"$tmp/err"
[ $? -eq 1 ] || fail "html of empty input: want exit 1"
grep -qx "pf-flamegraph: error: the input is empty" "$tmp/err" || fail "html empty input message: $(cat "$tmp/err")"
cmp -s "$tmp/a.html" "$tmp/keep.html" || fail "a failed run changed the existing page"
printf '# pf-unit: nanoseconds\nmain;f 1500\n' | "$bin" --format=html >"$tmp/ns.html" || fail "html of ns"
grep -q '"countname":"ns","unit":"nanoseconds","scaled":true' "$tmp/ns.html" || fail "html: the unit"
printf 'main;x 1 2\n' | "$bin" --format=html >"$tmp/d.html" || fail "html of a diff"
grep -q '"before":\[' "$tmp/d.html" || fail "html: a differential page has no before column"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all pf-flamegraph CLI checks passed"
