#!/usr/bin/env bash
# The flame graph's embedded JavaScript (share/flamegraph.js) in a real browser: pf-flamegraph
# writes SVGs from known folded stacks, headless Chromium opens them with a view in the URL
# (?s=REGEX&i=1&x=FG_X&y=DEPTH), runs init() and restores that view, and the DOM it dumps is
# checked: search colour and the exact "Matched:" figure, zoom classes and widths, case-
# insensitive search, a bad regex that must not break the page, tiny and odd graphs.
# Usage: browser_test.sh PF_FLAMEGRAPH        Exit 77 (SKIP) when no Chromium is installed.
set -u -o pipefail

# shellcheck source=tests/e2e/chromium.sh
. "$(dirname "$0")/chromium.sh"
find_chromium

bin=${1:-}
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "FAIL: usage: browser_test.sh PF_FLAMEGRAPH (got '${bin}')"
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# render NAME: $tmp/NAME.folded -> $tmp/NAME.svg; also fills $tmp/NAME.lines, one frame a line.
render() {
  if ! "$bin" "$tmp/$1.folded" >"$tmp/$1.svg" 2>"$tmp/$1.err"; then
    fail "pf-flamegraph $1.folded: exit $? ($(head -c 300 "$tmp/$1.err"))"
    return 1
  fi
  split_frames "$tmp/$1.svg" >"$tmp/$1.lines"
}

# One <g> a line, whatever the generator's or the browser's line breaks.
split_frames() { tr '\n' ' ' <"$1" | sed 's/<g[ >]/\n&/g'; }

# frame FILE NAME [FG_X]: the line of the frame called NAME (at fg:x FG_X).
frame() {
  if [ $# -ge 3 ]; then
    grep -F "<title>$2 (" "$1" | grep -F "fg:x=\"$3\"" | head -n 1
  else
    grep -F "<title>$2 (" "$1" | head -n 1
  fi
}
attr() { sed -n "s/.*<rect\\([^>]* \\)$1=\"\\([^\"]*\\)\".*/\\2/p" | head -n 1; }  # rect attribute
gclass() { sed -n 's/^<g class="\([^"]*\)".*/\1/p'; }                          # the <g>'s class
label() { sed -n 's/.*<text[^>]*>\([^<]*\)<\/text>.*/\1/p'; }                   # the label text
text_of() { tr '\n' ' ' <"$1" | sed -n "s/.*<text id=\"$2\"[^>]*>\\([^<]*\\)<\\/text>.*/\\1/p"; }
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && d < 0.06 && d > -0.06) }'; }

# view NAME SVG QUERY: headless Chromium loads file://SVG?QUERY; the DOM after onload goes to
# $tmp/NAME.dom (one frame a line in $tmp/NAME.lines), the console to $tmp/NAME.log.
view() {
  local name=$1 svg=$2 query=$3
  dump_dom 120 2000 "file://$svg$query" "$tmp/$name.dom" "$tmp/$name.log"
  local rc=$?
  [ "$rc" -eq 0 ] || fail "$name: chromium exit $rc ($(grep -v dbus "$tmp/$name.log" | tail -n 3))"
  split_frames "$tmp/$name.dom" >"$tmp/$name.lines"
  # The page must be initialised, with no exception, whatever the query.
  grep -q 'data-fg-ready="1"' "$tmp/$name.dom" || fail "$name ($query): init() did not finish"
  if grep -q 'data-fg-error=' "$tmp/$name.dom"; then
    fail "$name ($query): init() caught $(grep -o 'data-fg-error="[^"]*"' "$tmp/$name.dom")"
  fi
  if grep -q 'Uncaught' "$tmp/$name.log"; then
    fail "$name ($query): JavaScript exception: $(grep 'Uncaught' "$tmp/$name.log" | head -n 3)"
  fi
}

expect_text() {  # expect_text VIEW ID WANT
  local got
  got=$(text_of "$tmp/$1.dom" "$2")
  [ "$got" = "$3" ] || fail "$1: #$2 reads '$got', want '$3'"
}

# ---- the main graph: 100 samples, work_a = 75 of them (25 in a nested work_a_inner) ----
cat >"$tmp/g.folded" <<'EOF'
main;work_a;spin 50
main;work_a;work_a_inner 25
main;work_b;spin 15
main;WORK_C 10
EOF
render g || exit 1
svg=$tmp/g.svg
grep -q 'fg:x=' "$svg" || fail "the SVG has no fg:x attributes"
grep -q 'var fg_config' "$svg" || fail "the SVG has no fg_config"
grep -q 'function init' "$svg" || fail "the SVG has no embedded init()"
nframes=$(grep -c '<title>' "$tmp/g.lines")
[ "$nframes" -eq 8 ] || fail "want 8 frames in the SVG, got $nframes"
color=$(sed -n 's/.*"searchcolor":"\([^"]*\)".*/\1/p' "$svg" | head -n 1)
[ -n "$color" ] || color="rgb(230,0,230)"
gw=$(sed -n 's/.*var fg_config.*"width":\([0-9.]*\).*/\1/p' "$svg" | head -n 1)
gx=$(sed -n 's/.*var fg_config.*"xpad":\([0-9.]*\).*/\1/p' "$svg" | head -n 1)
full=$(awk -v w="${gw:-1200}" -v p="${gx:-10}" 'BEGIN { printf "%.2f", w - 2 * p }')
fgx() { frame "$tmp/g.lines" "$@" | attr 'fg:x'; }
xa=$(fgx work_a)
xb=$(fgx work_b)
xi=$(fgx work_a_inner)
xs_a=$(grep -F '<title>spin (50 ' "$tmp/g.lines" | attr 'fg:x')
xs_b=$(grep -F '<title>spin (15 ' "$tmp/g.lines" | attr 'fg:x')
if [ -z "$xa" ] || [ -z "$xb" ] || [ -z "$xi" ] || [ -z "$xs_a" ] || [ -z "$xs_b" ]; then
  fail "cannot find the frames' fg:x in the SVG"
  echo "browser_test: $failures failure(s)"
  exit 1
fi

searched() { [ "$(frame "$tmp/$1.lines" "${@:2}" | attr fill)" = "$color" ]; }

# No query: nothing zoomed, nothing searched, every frame visible.
view plain "$svg" ""
grep -q '<g class=' "$tmp/plain.lines" && fail "plain: a frame has a class without any action"
expect_text plain matched " "
grep -q "fill=\"$color\"" "$tmp/plain.lines" && fail "plain: a frame has the search colour"
[ "$(grep -c '<title>' "$tmp/plain.lines")" -eq 8 ] || fail "plain: frames missing from the DOM"

# (a) Search: work_a matches 75 samples; the nested work_a_inner must not count twice.
view search "$svg" "?s=work_a"
expect_text search matched "Matched: 75.00%"
expect_text search search "Reset Search"
searched search work_a || fail "search: work_a lacks the search colour"
searched search work_a_inner || fail "search: work_a_inner lacks the search colour"
for f in all main work_b WORK_C spin; do
  searched search "$f" && fail "search: $f has the search colour"
done
orig=$(frame "$tmp/g.lines" work_b | attr fill)
[ "$(frame "$tmp/search.lines" work_b | attr fill)" = "$orig" ] || fail "search: work_b's fill changed"
# Two disjoint matches add up.
view search2 "$svg" "?s=%5Espin%24"
expect_text search2 matched "Matched: 65.00%"

# (b) Zoom to work_a (depth 2): ancestors faded, unrelated frames hidden, work_a full width.
view zoom "$svg" "?x=$xa&y=2"
for f in all main; do
  [ "$(frame "$tmp/zoom.lines" "$f" | gclass)" = "parent" ] || fail "zoom: $f is not class parent"
  near "$(frame "$tmp/zoom.lines" "$f" | attr width)" "$full" || fail "zoom: $f is not full width"
done
for f in "work_b $xb" "WORK_C" "spin $xs_b"; do
  # shellcheck disable=SC2086
  [ "$(frame "$tmp/zoom.lines" $f | gclass)" = "hide" ] || fail "zoom: $f is not class hide"
done
for f in "work_a" "work_a_inner" "spin $xs_a"; do
  # shellcheck disable=SC2086
  [ -z "$(frame "$tmp/zoom.lines" $f | gclass)" ] || fail "zoom: $f has a class"
done
w=$(frame "$tmp/zoom.lines" work_a | attr width)
near "$w" "$full" || fail "zoom: work_a is $w wide, want $full"
near "$(frame "$tmp/zoom.lines" work_a | attr x)" "${gx:-10}" || fail "zoom: work_a does not start at xpad"
[ "$(frame "$tmp/zoom.lines" work_a | label)" = "work_a" ] || fail "zoom: work_a's label"
want=$(awk -v f="$full" 'BEGIN { printf "%.2f", f * 25 / 75 }')
near "$(frame "$tmp/zoom.lines" work_a_inner | attr width)" "$want" ||
  fail "zoom: work_a_inner is $(frame "$tmp/zoom.lines" work_a_inner | attr width) wide, want $want"
want=$(awk -v f="$full" -v p="${gx:-10}" -v a="$xa" -v i="$xi" 'BEGIN { printf "%.2f", p + f * (i - a) / 75 }')
near "$(frame "$tmp/zoom.lines" work_a_inner | attr x)" "$want" || fail "zoom: work_a_inner not at x=$want"
grep -q '<text id="unzoom"[^>]*class="hide"' <(tr '\n' ' ' <"$tmp/zoom.dom") && fail "zoom: Reset Zoom still hidden"
grep -q '<text id="unzoom"[^>]*class="hide"' <(tr '\n' ' ' <"$tmp/plain.dom") || fail "plain: Reset Zoom shown"
# Reset Zoom is drawn as flamegraph.pl draws it: hidden until a zoom, then fully opaque (not
# faint like Search until hovered). A copy of the SVG reports the computed style after init().
probe='<script type="text/ecmascript"><![CDATA[
window.addEventListener("load", function () { setTimeout(function () {
  var u = document.getElementById("unzoom"), s = getComputedStyle(u);
  document.documentElement.setAttribute("data-probe-unzoom", s.display + " " + s.opacity);
}, 0); });
]]></script>'
awk -v p="$probe" '/^<\/svg>/ { print p } { print }' "$svg" >"$tmp/probe.svg"
view probe_zoom "$tmp/probe.svg" "?x=$xa&y=2"
got=$(grep -o 'data-probe-unzoom="[^"]*"' "$tmp/probe_zoom.dom")
case "$got" in
  'data-probe-unzoom="none '* | '') fail "zoom: Reset Zoom is not shown (${got:-no probe})" ;;
  *' 1"') ;;
  *) fail "zoom: Reset Zoom is shown faint, not as flamegraph.pl shows it ($got)" ;;
esac
view probe_plain "$tmp/probe.svg" ""
got=$(grep -o 'data-probe-unzoom="[^"]*"' "$tmp/probe_plain.dom")
case "$got" in 'data-probe-unzoom="none '*) ;; *) fail "plain: Reset Zoom is not hidden (${got:-no probe})" ;; esac
# Zoomed search: relative to the view, and to everything.
view zoomsearch "$svg" "?x=$xa&y=2&s=spin"
expect_text zoomsearch matched "Matched: 66.67% of view (50.00% of all)"
# Zooming to the root is no zoom at all; an unknown frame is ignored.
view zoomroot "$svg" "?x=0&y=0"
grep -q '<g class=' "$tmp/zoomroot.lines" && fail "zoomroot: frames have classes"
view zoomnone "$svg" "?x=99999&y=7"
grep -q '<g class=' "$tmp/zoomnone.lines" && fail "zoomnone: frames have classes"

# (c) Case: WORK_C only matches work_c when ignoring case.
view case0 "$svg" "?s=work_c"
expect_text case0 matched "Matched: 0.00%"
searched case0 WORK_C && fail "case0: WORK_C matched without ignore-case"
view case1 "$svg" "?s=work_c&i=1"
expect_text case1 matched "Matched: 10.00%"
searched case1 WORK_C || fail "case1: WORK_C lacks the search colour"
grep -q '<text id="ignorecase"[^>]*class="[^"]*ic-on' <(tr '\n' ' ' <"$tmp/case1.dom") ||
  fail "case1: the ic button is not highlighted"
view case2 "$svg" "?s=WORK&i=1"
expect_text case2 matched "Matched: 100.00%"

# (d) An invalid regular expression: a message, the frames intact, no exception.
view badre "$svg" "?s=%28%5B&x=$xa&y=2"
[ "$(grep -c '<title>' "$tmp/badre.lines")" -eq 8 ] || fail "badre: frames missing from the DOM"
grep -q "fill=\"$color\"" "$tmp/badre.lines" && fail "badre: a frame has the search colour"
text_of "$tmp/badre.dom" matched | grep -qi 'invalid' || fail "badre: no message in #matched"
[ "$(frame "$tmp/badre.lines" main | gclass)" = "parent" ] || fail "badre: the zoom was not restored"

# ---- small and odd graphs ----
printf 'main 1\n' >"$tmp/one.folded"
if render one; then
  view one "$tmp/one.svg" "?s=main&x=0&y=1"
  expect_text one matched "Matched: 100.00% of view (100.00% of all)"
  view one_all "$tmp/one.svg" "?s=all&x=0&y=0&i=1"
  expect_text one_all matched "Matched: 100.00%"
fi
# Names with markup characters, spaces, parentheses and non-ASCII text.
cat >"$tmp/odd.folded" <<'EOF'
main;ns::op<int>(a&b, "c") const 2
main;héllo wörld (x) 1
main;日本語_😀 1
EOF
if render odd; then
  view odd "$tmp/odd.svg" "?s=%C3%B6rld%20%5C(x"
  expect_text odd matched "Matched: 25.00%"
  view odd2 "$tmp/odd.svg" "?s=%3Cint%3E%5C(a%26b"
  expect_text odd2 matched "Matched: 50.00%"
  view odd3 "$tmp/odd.svg" "?s=%F0%9F%98%80%24"
  expect_text odd3 matched "Matched: 25.00%"
fi
# --nameattr links: a frame that is an <a> is read, zoomed and searched like a <g>.
printf 'work_a\thref=https://example.org/a\tclass=linked\n' >"$tmp/attrs.txt"
if "$bin" --nameattr="$tmp/attrs.txt" "$tmp/g.folded" >"$tmp/linked.svg" 2>"$tmp/linked.err"; then
  view linked "$tmp/linked.svg" "?x=$xa&y=2&s=work_a"
  expect_text linked matched "Matched: 100.00% of view (75.00% of all)"
  [ "$(frame "$tmp/linked.lines" main | gclass)" = "parent" ] || fail "linked: zoom to the <a> frame"
  grep -q '<a [^>]*xlink:href="https://example.org/a"' "$tmp/linked.dom" || fail "linked: no link in the DOM"
else
  fail "pf-flamegraph --nameattr: exit $? ($(head -c 300 "$tmp/linked.err"))"
fi
# Empty input: if pf-flamegraph writes an SVG for it, the page must still load cleanly.
: >"$tmp/empty.folded"
if "$bin" "$tmp/empty.folded" >"$tmp/empty.svg" 2>/dev/null && grep -q 'function init' "$tmp/empty.svg"; then
  view empty "$tmp/empty.svg" "?s=x&x=0&y=1"
fi

if [ "$failures" -gt 0 ]; then
  echo "browser_test: $failures failure(s)"
  exit 1
fi
echo "browser_test: all checks passed"
