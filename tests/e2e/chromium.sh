# Sourced by the browser tests (browser_test.sh, browser_page_test.sh): the Chromium to run,
# and one headless run of it that dumps a page's DOM.

# Sets `browser` to the first Chromium on PATH, or ends the test with SKIP (77).
find_chromium() {
  browser=""
  for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
  done
  if [ -z "$browser" ]; then
    echo "SKIP: no Chromium found on PATH (chromium, chromium-browser, google-chrome)"
    exit 77
  fi
}

# dump_dom SECONDS BUDGET_MS URL DOM LOG [FLAG...]: the DOM after the page's scripts ran for
# BUDGET_MS of virtual time, in DOM; Chromium's log in LOG; returns Chromium's exit status.
# A profile of its own each run, removed after.
dump_dom() {
  local secs=$1 budget=$2 url=$3 dom=$4 log=$5 profile rc
  shift 5
  profile=$(mktemp -d "${TMPDIR:-/tmp}/pf-chromium.XXXXXX")
  timeout "$secs" "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget="$budget" \
    "$@" --dump-dom "$url" >"$dom" 2>"$log"
  rc=$?
  rm -rf "$profile"
  return "$rc"
}
