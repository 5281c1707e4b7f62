#!/usr/bin/env bash
# Shell completions (share/completions/generate.sh): every option that a tool's --help lists
# completes in bash, through the generated script as bash runs it (complete -p, then the
# function with COMP_WORDS set as readline sets them), and is in the zsh function, which
# zsh loads. Usage: completion_test.sh COMPLETIONS_DIR TOOL_BINARY...
set -u
dir=$(cd "$1" && pwd) || exit 1
shift
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/input.folded"

# Runs the completion of TOOL for the words given (the last is the one being completed),
# in a fresh bash that sourced only the generated script, in $tmp; prints one reply a line.
complete_words() {
  local tool=$1
  shift
  (cd "$tmp" && bash --norc --noprofile -c '
    source "$1" || exit 1
    spec=$(complete -p "$2") || exit 1
    fn=${spec#*-F }; fn=${fn%% *}
    shift 2
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    "$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$dir/bash/$tool" "$tool" "$tool" "$@")
}

# The options of --help: "  -o [ --output ] FILE", "  --pid", "  -g".
help_options() {
  "$1" --help | grep -E '^  -' | sed -E 's/^  (-[^ ]+( \[ --[^ ]+ \])?).*/\1/; s/[][]//g' |
    tr ' ' '\n' | grep -E '^-' | sort -u
}

for bin in "$@"; do
  tool=$(basename "$bin")
  bash_file="$dir/bash/$tool"
  zsh_file="$dir/zsh/_$tool"
  [ -s "$bash_file" ] || { fail "no bash completion $bash_file"; continue; }
  [ -s "$zsh_file" ] || { fail "no zsh completion $zsh_file"; continue; }
  options=$(help_options "$bin")
  [ "$(wc -l <<<"$options")" -ge 4 ] || fail "$tool: too few options read from --help: $options"
  all=$(complete_words "$tool" -)
  for opt in $options; do
    # Each option, from its first two characters and from its whole name.
    grep -qxF -- "$opt" <<<"$all" || fail "$tool: '$tool -<TAB>' does not offer $opt"
    complete_words "$tool" "$opt" | grep -qxF -- "$opt" ||
      fail "$tool: '$tool $opt<TAB>' does not complete"
    grep -qE -- "[{,'*]$opt[]=+[,}]" "$zsh_file" || fail "$tool: $opt is not in $zsh_file"
  done
  # Nothing that --help does not list (the hidden table option above all).
  extra=$(comm -13 <(echo "$options") <(sort -u <<<"$all"))
  [ -z "$extra" ] || fail "$tool: completes options --help does not list: $extra"
  # Files complete as inputs and as the value of -o, in both spellings.
  complete_words "$tool" inp | grep -qx input.folded || fail "$tool: '$tool inp<TAB>' offers no file"
  complete_words "$tool" -o inp | grep -qx input.folded || fail "$tool: '-o inp<TAB>' offers no file"
  complete_words "$tool" --output = inp | grep -qx input.folded ||
    fail "$tool: '--output=inp<TAB>' offers no file"
done

# A value that is not a file offers nothing, a folder only folders; pf-record completes the
# command after --.
mkdir "$tmp/inputs"
for bin in "$@"; do
  case $(basename "$bin") in
    pf-script)
      [ "$(complete_words pf-script --symfs inp)" = inputs ] ||
        fail "pf-script: '--symfs inp<TAB>' does not offer the folder inputs alone"
      ;;
    pf-record)
      [ -z "$(complete_words pf-record -F inp)" ] || fail "pf-record: '-F inp<TAB>' offers files"
      complete_words pf-record -g -- bas | grep -qx bash || fail "pf-record: '-- bas<TAB>' offers no bash"
      complete_words pf-record -- ls inp | grep -qx input.folded ||
        fail "pf-record: '-- ls inp<TAB>' offers no file"
      ;;
  esac
done

# zsh parses each function and finds it by the tool's name.
if command -v zsh >/dev/null; then
  for bin in "$@"; do
    tool=$(basename "$bin")
    zsh -n "$dir/zsh/_$tool" || fail "$tool: zsh cannot parse _$tool"
    found=$(zsh -f -c "fpath=($dir/zsh \$fpath); autoload -U compinit; compinit -u -D -d $tmp/zcompdump
                       print -r -- \$_comps[$tool]" 2>&1)
    [ "$found" = "_$tool" ] || fail "$tool: zsh's compinit does not find _$tool: $found"
  done
else
  echo "zsh is not installed: its functions were only searched (make -f Makefile.wrapper test-deps)"
fi
[ "$failures" -eq 0 ] || exit 1
echo "completions ok"
