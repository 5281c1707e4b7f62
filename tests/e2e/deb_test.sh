#!/usr/bin/env bash
# The Debian package (cmake/package.cmake): CPack packs this build's binaries; the package
# holds every tool, every man page and both completions of each tool, under /usr; its
# dependencies are exactly the packages of the shared libraries the binaries load (as
# dpkg-shlibdeps found them); extracted into a temporary folder, its pf-collapse runs.
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR CPACK TOOL...
set -u
build=$1
src=$2
cpack=$3
shift 3
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
command -v dpkg-deb >/dev/null || { echo "not a Debian system (no dpkg-deb): skipped"; exit 77; }
command -v dpkg-shlibdeps >/dev/null ||
  { echo "FAIL: dpkg-shlibdeps is not installed (make -f Makefile.wrapper deps: dpkg-dev)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Pack (the binaries are built: CPack's preinstall step finds nothing to do).
"$cpack" --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; echo "FAIL: cpack"; exit 1; }
debs=("$tmp"/out/*.deb)
[ "${#debs[@]}" -eq 1 ] && [ -s "${debs[0]}" ] || { ls "$tmp/out"; echo "FAIL: not one .deb"; exit 1; }
deb=${debs[0]}

# Metadata.
field() { dpkg-deb -f "$deb" "$1"; }
version=$("$build/bin/pf-collapse" --version | awk '{ print $NF }')
[ "$(field Package)" = pf ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version '$(field Version)' is not the tools' $version"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture '$(field Architecture)'"
[ "$(basename "$deb")" = "pf_${version}_$(dpkg --print-architecture).deb" ] || fail "file name $(basename "$deb")"
grep -q '<.*@.*>' <<<"$(field Maintainer)" || fail "Maintainer '$(field Maintainer)' has no address"
[ -n "$(field Description)" ] || fail "no Description"
dpkg-deb -I "$deb" >/dev/null || fail "dpkg-deb -I"

# Contents: the tools, the man pages, the completions; nothing outside /usr.
listing=$(dpkg-deb -c "$deb" | awk '{ print $NF }')
expect=()
for tool in "$@"; do
  expect+=("./usr/bin/$tool" "./usr/share/bash-completion/completions/$tool"
           "./usr/share/zsh/vendor-completions/_$tool")
done
for page in "$src"/man/*.[1-9]; do
  name=$(basename "$page")
  expect+=("./usr/share/man/man${name##*.}/$name")
done
for f in "${expect[@]}"; do
  grep -qxF -- "$f" <<<"$listing" || fail "the package lacks $f"
done
outside=$(grep -v '^\./usr/' <<<"$listing" | grep -vx '\./')
[ -z "$outside" ] || fail "files outside /usr: $outside"
dpkg-deb -c "$deb" | awk '$2 != "root/root" { print }' | grep -q . && fail "files not owned by root"

# Extract, run.
dpkg-deb -x "$deb" "$tmp/root" || fail "dpkg-deb -x"
got=$("$tmp/root/usr/bin/pf-collapse" --version) || fail "the extracted pf-collapse --version failed"
[ "$got" = "pf-collapse (pf) $version" ] || fail "the extracted pf-collapse --version: '$got'"
folded=$(printf 'main;work 2\nmain;work 3\n' | "$tmp/root/usr/bin/pf-collapse")
[ "$folded" = "main;work 5" ] || fail "the extracted pf-collapse folds to '$folded'"
readelf -S "$tmp/root/usr/bin/pf-collapse" | grep -qF .symtab && fail "binaries are not stripped"

# Depends: the package of every shared library the binaries load, and nothing else.
owner() {  # the package that installed a library (Debian 12 registers some under /lib)
  local path p
  path=$(readlink -f "$1")
  for p in "$path" "${path#/usr}" "/usr$path"; do
    p=$(dpkg -S "$p" 2>/dev/null | head -n 1 | cut -d: -f1)
    [ -n "$p" ] && { echo "$p"; return; }
  done
  echo "FAIL: no package owns $1" >&2
}
depends=$(field Depends | tr ',' '\n' | sed -E 's/^ *//; s/ *\(.*//' | sort -u)
needed=$(for tool in "$@"; do  # each library a binary names (not theirs), where ldd finds it
  bin=$tmp/root/usr/bin/$tool
  readelf -d "$bin" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | while read -r soname; do
    ldd "$bin" | awk -v n="$soname" '$1 == n && $2 == "=>" { print $3 } $1 ~ "/" n "$" { print $1 }'
  done
done | sort -u | while read -r lib; do
  [ -n "$lib" ] && owner "$lib"
done | sort -u)
[ -n "$needed" ] || fail "no shared library found with ldd"
for p in $needed; do
  grep -qx -- "$p" <<<"$depends" || fail "Depends lacks $p (a library the binaries load)"
done
for p in $depends; do
  grep -qx -- "$p" <<<"$needed" || fail "Depends has $p, which no binary loads"
done

[ "$failures" -eq 0 ] || exit 1
echo "package ok: $(basename "$deb"), Depends: $(field Depends)"
