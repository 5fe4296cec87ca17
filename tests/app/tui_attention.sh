#!/usr/bin/env bash
# tui_attention.sh: the attention view of the real binary in a real terminal (tmux, 100x30):
# step back and forward, generate, type a prompt on the ':' line, switch the model, the split
# and the colour scale, the compare view, quit. Uses the shipped rope model when there is one,
# else trains a tiny one with `pelab train` into a temporary directory. TAP; skips (77) without
# tmux or without any model.
set -u
pelab=$1
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux is not installed"; exit 77; }
sock="pelab-attn-$$"
tmp=$(mktemp -d)
n=0 failed=0
ok() { # ok COND-EXIT-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
tm() { tmux -L "$sock" "$@"; }
screen() { tm capture-pane -p -t t; }
wait_for() { # wait_for TEXT [SECONDS]: poll the screen until TEXT shows
    local i
    for i in $(seq 1 $(( ${2:-5} * 10 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    echo "# screen did not show '$1':"; screen | sed 's/^/#   /'
    return 1
}
cleanup() { tm kill-server 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

assets=${PELAB_ASSETS:-${PELAB_SRC:-.}/assets}
if [ -f "$assets/models/rope.pelab" ] && [ -f "$assets/models/t5.pelab" ]; then
    next=t5 # m goes rope -> t5
else
    # no shipped models: two tiny ones in an assets directory of our own
    mkdir -p "$tmp/assets/models"
    for d in story prompts colormaps; do ln -s "$(cd "$assets" && pwd)/$d" "$tmp/assets/$d"; done
    for pe in rope alibi; do
        "$pelab" train --pe $pe --steps 2 --layers 1 --dim 16 --heads 2 --hidden 32 \
            --tokens 20000 --quiet -o "$tmp/assets/models/$pe.pelab" >/dev/null 2>&1 ||
            { echo "1..0 # SKIP no shipped models and pelab train failed"; exit 77; }
    done
    export PELAB_ASSETS=$tmp/assets
    next=alibi # m goes rope -> (t5 nope learned sinusoidal missing) -> alibi
fi

tm -f /dev/null new-session -d -s t -x 100 -y 30 \
    "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 PELAB_ASSETS=${PELAB_ASSETS:-} $pelab --view attention --model rope --compare alibi --preset toy; echo \"[exit \$?]\"; sleep 30"
wait_for "attends to"; ok $? "starts in the attention view"
wait_for "(token 56)"; ok $? "at the prompt's last token"
wait_for "next token after"; ok $? "shows the next-token panel at 100x30"
tm send-keys -t t Left
wait_for "step 55 of 56"; ok $? "Left steps back"
tm send-keys -t t Right Right
wait_for "the last token: g generates"; ok $? "Right stops at the last token and says how to go on"
tm send-keys -t t g
wait_for "generated \""; ok $? "g generates one token"
wait_for "+ 1 generated" 3 || screen | grep -qF "gen=1"; ok $? "the status counts it"
tm send-keys -t t -l ":prompt the zebra went to the river"
tm send-keys -t t Enter
wait_for "[zebra] went to the river"; ok $? ":prompt with spaces shows the words, unknown in brackets"
tm send-keys -t t m
wait_for "model = $next"; ok $? "m switches the model (to $next)"
screen | grep -qF "[zebra] went to the river"; ok $? "and keeps the prompt"
tm send-keys -t t x
wait_for "split = on"; ok $? "x turns the split on"
tm send-keys -t t n
wait_for "attn-scale = log"; ok $? "n: log colours"
tm send-keys -t t -l ":view compare"
tm send-keys -t t Enter
wait_for " vs "; ok $? "the compare view"
tm send-keys -t t q
wait_for "[exit 0]"; ok $? "q quits with status 0"

echo "1..$n"
[ "$failed" -eq 0 ]
