#!/usr/bin/env bash
# The HTML page (pf-flamegraph --format=html) in a real browser. pf-flamegraph writes pages
# of folded stacks whose answers are known; headless Chromium opens each inside
# browser_page_harness.html, which plays a scenario with real DOM events (a click at a
# frame's canvas coordinates, clicks on table headers and rows, typing in the search and
# filter boxes) and writes what the page then shows; this script compares it line by line:
# the search's "Matched" figure, click-to-zoom, the table's sort orders and filter, a
# selected function's callers and callees with their weights (recursion counted once),
# differential columns and colours, units, escaping, the view restored from the URL, and
# no error or console.error anywhere. Last, a profile of 100,000 distinct stacks: the time
# until its page is interactive is printed and must stay under PF_PAGE_READY_MS (10000).
# Usage: browser_page_test.sh PF_FLAMEGRAPH        Exit 77 (SKIP) when no Chromium is installed.
set -u -o pipefail

# shellcheck source=tests/e2e/chromium.sh
. "$(dirname "$0")/chromium.sh"
find_chromium
bin=${1:-}
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "FAIL: usage: browser_page_test.sh PF_FLAMEGRAPH (got '${bin}')"
  exit 1
fi
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/browser_page_harness.html

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# page NAME [OPTIONS...]: $tmp/NAME.folded -> $tmp/NAME.html
page() {
  local name=$1
  shift
  "$bin" "$@" "$tmp/$name.folded" -o "$tmp/$name.html" 2>"$tmp/$name.err" ||
    fail "pf-flamegraph $* $name.folded: exit $? ($(head -c 300 "$tmp/$name.err"))"
}

# play NAME SCENARIO PAGE [HASH]: the harness's results in $tmp/NAME.out, one "key: value" a
# line; every error the page or the browser reported fails the test.
play() {
  local name=$1 scenario=$2 pagefile=$3 hash=${4:-} url
  url=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' \
    "file://$pagefile$hash")
  dump_dom 180 60000 "file://$harness?scenario=$scenario&page=$url" "$tmp/$name.dom" \
    "$tmp/$name.log" --allow-file-access-from-files --window-size=1280,1000
  local rc=$?
  [ "$rc" -eq 0 ] || fail "$name: chromium exit $rc ($(grep -v dbus "$tmp/$name.log" | tail -n 3))"
  tr '\n' '\r' <"$tmp/$name.dom" | sed -n 's/.*<pre id="results">\(.*\)<\/pre>.*/\1/p' | tr '\r' '\n' |
    sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g' >"$tmp/$name.out"
  grep -q '^end: 1$' "$tmp/$name.out" || fail "$name: the harness did not finish"
  grep '^error: ' "$tmp/$name.out" | while IFS= read -r e; do echo "FAIL: $name: $e"; done
  grep -q '^error: ' "$tmp/$name.out" && failures=$((failures + 1))
  if grep -q 'Uncaught' "$tmp/$name.log"; then
    fail "$name: JavaScript exception: $(grep 'Uncaught' "$tmp/$name.log" | head -n 3)"
  fi
}

# expect NAME: the lines on stdin must all be in $tmp/NAME.out, in this order.
expect() {
  local name=$1 want
  want=$(cat)
  local got
  got=$(grep -xF -f <(printf '%s\n' "$want") "$tmp/$name.out")
  if [ "$got" != "$want" ]; then
    fail "$name: the page shows other values:"
    diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$got") | sed -n '3,$p' | head -n 40
  fi
}
value() { sed -n "s/^$2: //p" "$tmp/$1.out" | head -n 1; }

# ---- the main graph: 100 samples, work_a = 75 of them (25 in a nested work_a_inner) ----
cat >"$tmp/g.folded" <<'EOF'
main;work_a;spin 50
main;work_a;work_a_inner 25
main;work_b;spin 15
main;WORK_C 10
EOF
page g
play main main "$tmp/g.html"
expect main <<'EOF'
table.count: 6
table[0]: main | 0 samples | 0.00% | 100 samples | 100.00%
table[1]: work_a | 0 samples | 0.00% | 75 samples | 75.00%
table[2]: spin | 65 samples | 65.00% | 65 samples | 65.00%
table[3]: work_a_inner | 25 samples | 25.00% | 25 samples | 25.00%
table[4]: work_b | 0 samples | 0.00% | 15 samples | 15.00%
table[5]: WORK_C | 10 samples | 10.00% | 10 samples | 10.00%
search.zoom: all
search.matched: Matched: 75.00%
search.hash: #s=work_a
zoom.zoom: work_a
zoom.matched: Matched: 100.00% of view (75.00% of all)
zoom.selected: work_a
zoom.highlighted: 1
zoom.hash: #x=10&y=2&s=work_a&f=work_a
zoom.frames: 5
butterfly[0]: ↑ | main | 75 samples | 100.00%
butterfly[1]:  | work_a (total) | 75 samples | 100.00%
butterfly[2]: ↓ | spin | 50 samples | 66.67%
butterfly[3]: ↓ | work_a_inner | 25 samples | 33.33%
zoomout.zoom: main
bySelf[0]: spin | 65 samples | 65.00% | 65 samples | 65.00%
bySelf[1]: work_a_inner | 25 samples | 25.00% | 25 samples | 25.00%
bySelf[2]: WORK_C | 10 samples | 10.00% | 10 samples | 10.00%
bySelfAsc[0]: main | 0 samples | 0.00% | 100 samples | 100.00%
bySelfAsc[5]: spin | 65 samples | 65.00% | 65 samples | 65.00%
byName[0]: WORK_C | 10 samples | 10.00% | 10 samples | 10.00%
byName[1]: main | 0 samples | 0.00% | 100 samples | 100.00%
byName[5]: work_b | 0 samples | 0.00% | 15 samples | 15.00%
filtered.count: 4
filtered[0]: WORK_C | 10 samples | 10.00% | 10 samples | 10.00%
filtered[3]: work_b | 0 samples | 0.00% | 15 samples | 15.00%
row.selected: spin
row.highlighted: 2
row.hash: #x=0&y=1&s=work_a&f=spin&t=name
spin[0]: ↑ | work_a | 50 samples | 76.92%
spin[1]: ↑ | work_b | 15 samples | 23.08%
spin[2]:  | spin (total) | 65 samples | 100.00%
spin[3]: ↓ | (self) | 65 samples | 100.00%
badre.matched: Invalid regular expression: ([
ic.matched: Matched: 10.00% of view (10.00% of all)
ic.hash: #x=0&y=1&s=work_c&i=1&f=spin&t=name
reset.zoom: all
EOF
[ "$(grep -c '^butterfly\[' "$tmp/main.out")" -eq 4 ] || fail "main: work_a has other callers or callees"
[ "$(grep -c '^spin\[' "$tmp/main.out")" -eq 4 ] || fail "main: spin has other callers or callees"

# The view in a link: zoom, search, selection, sort and filter restored on load.
play restore restore "$tmp/g.html" '#x=10&y=2&s=spin&f=work_b&t=name&q=work'
expect restore <<'EOF'
restored.zoom: work_a
restored.matched: Matched: 66.67% of view (50.00% of all)
restored.selected: work_b
restored.hash: #x=10&y=2&s=spin&f=work_b&t=name&q=work
table.count: 4
table[0]: WORK_C | 10 samples | 10.00% | 10 samples | 10.00%
table[3]: work_b | 0 samples | 0.00% | 15 samples | 15.00%
EOF
# A link to a frame that does not exist, a bad escape: the default view, no error.
play badlink restore "$tmp/g.html" '#x=3&y=9&s=%E0%A4%A&f=nothing&t=bogus'
expect badlink <<'EOF'
restored.zoom: all
restored.selected: null
table.count: 6
EOF

# ---- recursion: a function's total counts each stack once; so do its callers and callees ----
cat >"$tmp/rec.folded" <<'EOF'
main;a;b;a;c 10
main;a;b 5
main;c;a 3
main;a;a;a 2
EOF
page rec
play rec recursion "$tmp/rec.html"
expect rec <<'EOF'
table.count: 4
table[0]: a | 5 samples | 25.00% | 20 samples | 100.00%
table[1]: main | 0 samples | 0.00% | 20 samples | 100.00%
table[2]: b | 5 samples | 25.00% | 15 samples | 75.00%
table[3]: c | 10 samples | 50.00% | 13 samples | 65.00%
a[0]: ↑ | main | 17 samples | 85.00%
a[1]: ↑ | b | 10 samples | 50.00%
a[2]: ↑ | c | 3 samples | 15.00%
a[3]: ↑ | a | 2 samples | 10.00%
a[4]:  | a (total) | 20 samples | 100.00%
a[5]: ↓ | (self) | 5 samples | 25.00%
a[6]: ↓ | b | 15 samples | 75.00%
a[7]: ↓ | c | 10 samples | 50.00%
a[8]: ↓ | a | 2 samples | 10.00%
b[0]: ↑ | a | 15 samples | 100.00%
b[1]:  | b (total) | 15 samples | 100.00%
b[2]: ↓ | (self) | 5 samples | 33.33%
b[3]: ↓ | a | 10 samples | 66.67%
EOF
[ "$(grep -c '^a\[' "$tmp/rec.out")" -eq 9 ] || fail "rec: a has other callers or callees"

# ---- a differential profile: before, after and delta; red grew, blue shrank ----
cat >"$tmp/diff.folded" <<'EOF'
main;x 10 20
main;y 30 10
main;z 0 5
EOF
page diff
play diff diff "$tmp/diff.html"
expect diff <<'EOF'
headers: Function | Self before | Self after | Self delta | Total before | Total after | Total delta
table.count: 4
table[0]: main | 0 samples | 0 samples | 0 samples | 40 samples | 35 samples | -5 samples
table[1]: x | 10 samples | 20 samples | +10 samples | 10 samples | 20 samples | +10 samples
table[2]: y | 30 samples | 10 samples | -20 samples | 30 samples | 10 samples | -20 samples
table[3]: z | 0 samples | 5 samples | +5 samples | 0 samples | 5 samples | +5 samples
pixel.grew: 255,105,105
pixel.shrank: 0,0,255
x[0]: ↑ | main | 10 samples | 20 samples | +10 samples | 100.00%
x[1]:  | x (total) | 10 samples | 20 samples | +10 samples | 100.00%
EOF
page diff --negate
play negate diff "$tmp/diff.html"
expect negate <<'EOF'
pixel.grew: 105,105,255
pixel.shrank: 255,0,0
EOF

# ---- the profile's unit: nanoseconds are times, never "samples" ----
printf '# pf-unit: nanoseconds\nmain;f 1500000\nmain;g 2500\n' >"$tmp/ns.folded"
page ns
play ns units "$tmp/ns.html"
expect ns <<'EOF'
table[0]: main | 0 ns | 0.00% | 1.50 ms | 100.00%
table[1]: f | 1.50 ms | 99.83% | 1.50 ms | 99.83%
table[2]: g | 2.50 us | 0.17% | 2.50 us | 0.17%
details: Function: f (1.50 ms, 99.83%)
EOF
grep -q 'samples' "$tmp/ns.out" && fail "ns: nanoseconds shown as samples"

# ---- names that are markup, a script's end, invalid UTF-8: text, never code ----
{
  printf 'main;</script><script>alert(1)</script> 5\n'
  printf 'main;a&b<c>"d 3\n'
  printf 'main;bad\xff\xfeutf8\xc3 2\n'
  printf 'main;<!--x 1\n'
} >"$tmp/hostile.folded"
page hostile --title='</title><script>alert(2)</script>'
[ "$(grep -ci '<script' "$tmp/hostile.html")" -eq 2 ] || fail "hostile: a name added a script element"
play hostile hostile "$tmp/hostile.html"
# (the invalid bytes read as U+FFFD)
sed 's/\\ufffd/\xef\xbf\xbd/g' <<'EOF' | expect hostile
table[1]: </script><script>alert(1)</script> | 5 samples | 45.45% | 5 samples | 45.45%
table[2]: a&b<c>"d | 3 samples | 27.27% | 3 samples | 27.27%
table[3]: bad��utf8� | 2 samples | 18.18% | 2 samples | 18.18%
table[4]: <!--x | 1 samples | 9.09% | 1 samples | 9.09%
title: </title><script>alert(2)</script>
scripts: 2
EOF

# ---- icicle: the same answers, the root at the top ----
page g -i
play icicle main "$tmp/g.html"
expect icicle <<'EOF'
zoom.zoom: work_a
zoom.matched: Matched: 100.00% of view (75.00% of all)
zoom.selected: work_a
EOF

# ---- 100,000 distinct stacks: interactive within PF_PAGE_READY_MS ----
limit=${PF_PAGE_READY_MS:-10000}
python3 "$here/synth_stacks.py" 100000 1 >"$tmp/big.folded" || fail "synth_stacks.py failed"
page big
play big big "$tmp/big.html"
expect big <<'EOF'
big.zoomed: yes
EOF
ready=$(value big time.ready)
echo "100,000 stacks: $(value big nodes) frames, $(value big functions) functions," \
  "$(wc -c <"$tmp/big.html") bytes; interactive after ${ready} ms (init $(value big time.init) ms);" \
  "click-zoom $(value big time.click) ms, search $(value big time.search) ms, sort $(value big time.sort) ms"
if [ -z "$ready" ] || [ "$ready" -gt "$limit" ]; then
  fail "big: interactive after ${ready:-?} ms, more than $limit ms"
fi

if [ "$failures" -gt 0 ]; then
  echo "browser_page_test: $failures failure(s)"
  exit 1
fi
echo "browser_page_test: all checks passed"
