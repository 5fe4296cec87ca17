#!/usr/bin/env bash
# completion.sh: the shell completions and the man page that the build generates from the
# tables. bash: the script parses, and completing words gives what the tables say (compgen);
# zsh and fish: the scripts parse; the man page renders without a warning (groff -ww) and names
# every option that `pelab export --help` lists. TAP.
set -u
pelab=$1
dir=$(dirname "$pelab")
n=0 failed=0
ok() { # ok COND-EXIT-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }

bash -n "$dir/pelab.bash"; ok $? "bash -n accepts the bash script"
# shellcheck disable=SC1091
source "$dir/pelab.bash"
complete -p pelab | grep -q -- "-F _pelab"; ok $? "it registers _pelab for pelab (complete -p)"
reply() { # reply WORD...: what completing the last word offers
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _pelab
    echo "${COMPREPLY[*]}"
}
[ "$(reply pelab export --scaling y)" = yarn ]; ok $? "pelab export --scaling y -> yarn"
[ "$(reply pelab --view al)" = alibi ]; ok $? "pelab --view al -> alibi"
[ "$(reply pelab --view = al)" = alibi ]; ok $? "pelab --view=al (split at '=') -> alibi"
[ "$(reply pelab gui --cmap vir)" = viridis ]; ok $? "pelab gui --cmap vir -> viridis"
[ "$(reply pelab export --pairing h)" = half ]; ok $? "pelab export --pairing h -> half"
[ "$(reply pelab --model al)" = alibi ]; ok $? "pelab --model al -> alibi (a shipped model)"
[ "$(reply pelab train --pe le)" = learned ]; ok $? "pelab train --pe le -> learned"
[ "$(reply pelab completion f)" = fish ]; ok $? "pelab completion f -> fish"
reply pelab ex | grep -qw export; ok $? "pelab ex offers the export command"
reply pelab export --rota | grep -qx -- --rotary-frac; ok $? "options complete (--rota)"
reply pelab export -- | grep -qw -- --output; ok $? "export's own options are offered (--output)"
[ -z "$(reply pelab export --base 1)" ]; ok $? "a number offers nothing"
cfg=$(mktemp -d)
touch "$cfg/llama.json" "$cfg/notes.txt"
reply pelab export --config "$cfg/" | grep -q "llama.json"; ok $? "--config offers .json files"
reply pelab export --config "$cfg/" | grep -q "notes.txt"
[ $? -ne 0 ]; ok $? "--config leaves other files out"
rm -rf "$cfg"

if command -v zsh >/dev/null; then
    zsh -n "$dir/_pelab"; ok $? "zsh -n accepts the zsh script"
else
    skip "zsh is not installed"
fi
if command -v fish >/dev/null; then
    fish -n "$dir/pelab.fish"; ok $? "fish -n accepts the fish script"
else
    skip "fish is not installed"
fi
for s in bash zsh fish; do
    "$pelab" completion $s | cmp -s - "$dir/$(case $s in bash) echo pelab.bash ;; zsh) echo _pelab ;; fish) echo pelab.fish ;; esac)"
    ok $? "pelab completion $s prints what the build installs"
done
"$pelab" completion tcsh >/dev/null 2>&1
[ $? -eq 2 ]; ok $? "an unknown shell is a usage error (2)"

if command -v groff >/dev/null; then
    warn=$(groff -man -ww -z "$dir/pelab.1" 2>&1)
    [ -z "$warn" ]; ok $? "groff -man -ww -z: no warnings${warn:+ ($warn)}"
else
    skip "groff is not installed"
fi
missing=""
for o in $("$pelab" export --help | grep -o -- '--[a-z0-9-]*' | sort -u); do
    o=${o#--}
    grep -qF -- "\\-\\-${o//-/\\-}" "$dir/pelab.1" || missing="$missing --$o"
done
[ -z "$missing" ]; ok $? "the man page names every option of pelab export --help${missing:+ (missing:$missing)}"
missing=""
for v in $("$pelab" list | sed -n '/^views/,/^$/p' | awk 'NR > 1 && NF {print $1}'); do
    grep -qxF -- ".SS ${v//-/\\-}" "$dir/pelab.1" || missing="$missing $v" # groff spells - as \-
done
[ -z "$missing" ]; ok $? "the man page has the keys of every view${missing:+ (missing:$missing)}"
# the explorer takes everything view-specific from the tables: its sources name no view (as a
# string or its app_view_ symbol: the view `table` is also a word the comments use)
named=""
for v in $("$pelab" list | sed -n '/^views/,/^$/p' | awk 'NR > 1 && NF {print $1}'); do
    grep -qE -- "\"$v\"|app_view_$v\\b" "$PELAB_SRC"/app/explorer/*.c && named="$named $v"
done
[ -z "$named" ]; ok $? "app/explorer/*.c names no view${named:+ (named:$named)}"
echo "1..$n"
[ "$failed" -eq 0 ]
