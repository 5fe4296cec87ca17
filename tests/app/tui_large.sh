#!/usr/bin/env bash
# tui_large.sh (issue 14): the explorer at sizes where a view would compute for minutes. Through
# Tab, a view the state is too large for is refused (not computed) and
# q quits at once with the terminal restored; a parameter change during long work stops it and
# starts over with the new value, and q quits during the work; cursor keys pressed all through
# long work do not stop it; under a small budget views visited in turn each show (the caches
# of the view before give way); the memory budget refuses an
# export past it with its message and status 1 and leaves no file, an export's PNG canvas and
# heatmap image are counted in it; the export progress bar erases itself; `pelab gui --frames N` under
# the dummy driver returns. Not timed: the waits are generous, a hang is what they catch.
# TAP output; skips (77) when tmux is not installed.
set -u
pelab=$1
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux is not installed"; exit 77; }
runs=0
sock="pelab-large-$$-0"
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
cleanup() { tm kill-server 2>/dev/null || true; }
trap cleanup EXIT
tmp=$(mktemp -d)
trap 'cleanup; rm -rf "$tmp"' EXIT

start() { # start ARGS...: the explorer in a fresh 120x30 terminal
    cleanup
    runs=$((runs + 1))
    sock="pelab-large-$$-$runs"
    tm -f /dev/null new-session -d -s t -x 120 -y 30 -c "$tmp" \
        "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $pelab $*; echo \"[exit \$?]\"; stty -a | tr ' ' '\n' | grep -xE 'icanon|echo' | tr '\n' ' '; echo '[stty]'; sleep 60"
}

quits() { # quits WHAT: q ends it within a couple of seconds and the terminal comes back
    tm send-keys -t t q
    wait_for "[exit 0]" 3; ok $? "$1: q quits with status 0 within a couple of seconds"
    wait_for "[stty]"
    screen | grep -q "icanon echo"; ok $? "$1: the terminal is restored"
}

# the hang of the issue: xpos at L 1048576, then Tab to xl (4 L^2 cells: hours of work if it
# built them; issue 25: it draws the rows it shows, each from its own place in the stream)
start --view xpos --len 1048576 --dim 64
wait_for "xpos]" 20; ok $? "xpos at L 1048576 draws"
tm send-keys -t t Tab
wait_for "xl]" 20 && screen | grep -qF "L=1048576"
ok $? "Tab draws xl at L 1048576 at the figure's resolution"
quits "after Tab"

# a number key: 2 is the (L, L) similarity, drawn at its resolution at L 1048576 (issue 25: long
# contexts load in every view); with --pe nope it has nothing to draw and is refused, the view
# staying, and the refusal wraps whole
start --view xpos --len 1048576 --dim 64
wait_for "xpos]" 20; ok $? "xpos at L 1048576 draws again"
tm send-keys -t t 2
wait_for "similarity]" 20 && screen | grep -qF "L=1048576"
ok $? "key 2 draws the similarity at L 1048576 at the figure's resolution"
quits "after key 2"
start --view xpos --len 1048576 --dim 64 --pe nope
wait_for "xpos]" 20
tm send-keys -t t 2
wait_for "adds nothing to the input" 10 && screen | grep -qF "xpos]"
ok $? "key 2 (similarity) with --pe nope is refused, the view stays"
screen | grep -qF "similarity not shown: --pe nope: adds nothing to the input" &&
    screen | grep -qxF "binary)"
ok $? "the refusal names the view and wraps whole to its end at 120 columns (not cut at the edge)"
quits "after a number key"

# issue 25: a 10M-position context loads in the explorer: the wavelength view with Scout's config
# at --len 10000000, then 2 (similarity) and 1 (heatmap) draw it at their resolution
start --view wavelength --config "$PELAB_SRC/tests/config/real/llama-4-scout-17b-16e.json" --len 10000000
wait_for "wavelength]" 20 && screen | grep -qF "L=10000000"
ok $? "wavelength with Scout's config at --len 10000000 draws"
tm send-keys -t t 1
wait_for "heatmap]" 20 && screen | grep -qF "L=10000000"
ok $? "then 1 draws the heatmap at L 10000000"
quits "after the 10M context"

# a long message wraps in the terminal instead of being cut at the edge: the budget's refusal
# centred in the view (xl at d 4096: its W_R alone is 128 MiB), and s's message with the saved
# file's name
start --view xl --len 1024 --dim 4096 --max-memory 64
wait_for "--max-memory MIB" 20 && screen | grep -qF "the view's table needs 134 MiB, more than the memory budget of 64 MiB" &&
    screen | grep -qF "needs less)"
ok $? "the budget's message is wrapped whole in the view at 120x30 ($(screen | grep -F 'MiB' | head -n 2 | tr -s ' '))"
quits "after the budget's message"
start --view decay
wait_for "decay]" 20
tm send-keys -t t s
wait_for "saved" 20 && sleep 0.5
name=$(screen | grep -oE 'pelab-decay-[0-9]+\.png' | head -n 1)
[ -n "$name" ] && [ "$(screen | grep -oF -- "$name" | wc -l)" -eq 2 ] && [ -s "$tmp/$name" ]
ok $? "s says the saved file's name whole, in both places, at 120 columns ($name)"
quits "after s"
rm -f "$tmp/$name"

# long work: xl at L 1024, d 4096 projects every query through W_R (minutes); a base change
# during it stops it and starts over with the new base, and q quits during the work
start --view xl --len 1024 --dim 4096
wait_for "computing xl" 20; ok $? "long work shows its progress in the status line"
tm send-keys -t t b
wait_for "base=20000" 10 && screen | grep -qF "computing xl"
ok $? "a base change during the work is taken at once and the work starts over"
quits "during long work"

# keys that leave the computation's inputs alone (cursor moves) do not stop it: pressed all
# through xl's first frame at L 1024, d 2048 (seconds of work), the view is still drawn
start --view xl --len 1024 --dim 2048
wait_for "computing xl" 20; ok $? "xl at d 2048 shows its progress"
drawn=1
for _ in $(seq 1 3000); do
    screen | grep -qF "(a) content" && { drawn=0; break; }
    tm send-keys -t t Right
    sleep 0.1
done
ok $drawn "cursor keys pressed all through the work do not stop it: the view is drawn"
quits "after work under the keys"

# the budget in the explorer: heatmap and similarity each keep a binary table of 48 MiB; under
# --max-memory 64 each still shows when visited in turn (the other view's table gives way)
start --view heatmap --pe binary --len 8192 --dim 1536 --max-memory 64
wait_for "heatmap]" 30; ok $? "heatmap with a 48 MiB table under a 64 MiB budget draws"
for v in similarity heatmap similarity; do
    tm send-keys -t t ":view $v" Enter
    wait_for "$v]" 30 && sleep 1 && ! screen | grep -q "memory budget"
    ok $? "then $v shows too, without the budget's message"
done
quits "after the views under the budget"

# the memory budget: one alibi head at L 4096 is 128 MiB of doubles
"$pelab" export alibi --len 4096 --heads 2 --head 0 --max-memory 64 -o "$tmp/a.npy" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "memory budget of 64 MiB" "$tmp/err" && grep -q "needs" "$tmp/err"
ok $? "--max-memory 64 refuses a 128 MiB export with status 1 and the sizes ($(head -c 200 "$tmp/err"))"
[ ! -e "$tmp/a.npy" ] && [ -z "$(ls -A "$tmp" | grep -v '^err$')" ]
ok $? "the refused export leaves no file"
"$pelab" export alibi --len 64 --heads 2 --max-memory 64 -o "$tmp/b.npy"
ok $? "an export inside the budget works"
"$pelab" export alibi --max-memory 10 -o "$tmp/c.npy" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "max-memory" "$tmp/err"; ok $? "--max-memory 10 is refused as usage (status 2)"

# the image counts too: a 16384 x 16384 PNG's canvas alone is 1 GiB, refused before any work
rm -f "$tmp"/*
"$pelab" export heatmap --width 16384 --height 16384 --max-memory 64 -o "$tmp/big.png" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "16384 x 16384 PNG canvas needs 1024 MiB, more than the memory budget of 64 MiB" "$tmp/err" &&
    grep -q -- "--width" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ]
ok $? "--max-memory 64 refuses a 16384 x 16384 PNG with status 1, one line naming the sizes ($(head -c 200 "$tmp/err"))"
[ -z "$(ls -A "$tmp" | grep -v '^err$')" ]; ok $? "the refused PNG leaves no file"
# and the heatmap's copy in the figure and the image it is drawn through, on top of the canvas:
# 64 MiB canvas + 16 MiB of similarity + 16 MiB copied + a 3500-pixel-square image pass 128 MiB
"$pelab" export similarity --len 2048 --dim 512 --width 4096 --height 4096 --max-memory 128 \
    -o "$tmp/sim.png" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "heatmap values and image needs .* MiB more, but only .* of the memory budget of 128 MiB are free" "$tmp/err"
ok $? "the heatmap's image past the budget is refused with status 1 and the sizes ($(head -c 200 "$tmp/err"))"
[ -z "$(ls -A "$tmp" | grep -v '^err$')" ]; ok $? "the refused heatmap export leaves no file"
"$pelab" export similarity --len 2048 --dim 512 --width 4096 --height 4096 --max-memory 192 \
    -o "$tmp/sim.png" 2>"$tmp/err" && [ -s "$tmp/sim.png" ]
ok $? "the same export inside a 192 MiB budget is written"

# the export's progress bar (a terminal on stderr: script's pseudo-terminal) erases itself with
# a real ESC [ K, not one written out as text by the stderr that cleans messages (the seeded
# learned table of a million rows is the slow part: the trained one has 256)
if command -v script >/dev/null; then
    rm -f "$tmp"/*
    script -qec "$pelab export decay --len 1048576 --dim 64 --weights init -o $tmp/d.png" \
        "$tmp/typescript" \
        >/dev/null 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && grep -q "pelab export decay \[#" "$tmp/typescript" &&
        grep -q $'\r\033\[K' "$tmp/typescript" && ! grep -qF 'x1b' "$tmp/typescript"
    ok $? "the progress bar is drawn and erased with ESC [ K, no literal \\x1b ($(grep -o 'decay \[[#.]*\] *[0-9]*%' "$tmp/typescript" | tail -n 1))"
else
    ok 0 "# SKIP script (util-linux) is not installed"
fi

# pelab gui --frames N draws N frames without waiting for events (dummy driver, no display)
if SDL_VIDEODRIVER=dummy timeout 120 "$pelab" gui --frames 20 >/dev/null 2>&1; then r=0; else r=1; fi
ok $r "pelab gui --frames 20 returns under the dummy driver"

echo "1..$n"
[ "$failed" -eq 0 ]
