#!/usr/bin/env bash
# race_live.sh: `pelab race` live (issue 24). In tmux: the race's figure shows, its step count
# and curves update while it trains, space pauses (PAUSED, the steps hold), tab focuses a panel,
# a key hides a scheme, S records the race so far as a GIF, s stops and saves, and the terminal
# comes back; Ctrl-C stops and saves too. In the window under
# SDL_VIDEODRIVER=dummy (pelab gui --race): a few frames, then the race runs to its end and saves.
# Short races on a small corpus; nothing is timed. TAP; skips (77) without tmux.
set -u
pelab=$1
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux is not installed"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/pelab-race-live.XXXXXX")
sock="pelab-race-$$"
wait_default=20
# ok, tm, screen, wait_for
source "$(dirname "$0")/tmux_tap.sh"
steps_shown() { screen | sed -n 's/.*schemes, \([0-9]*\) of .*/\1/p' | head -1; }
trap 'tm kill-server 2>/dev/null; rm -rf "$work"' EXIT

tm -f /dev/null new-session -d -s t -x 110 -y 34 \
    "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $pelab race --pe rope,alibi,learned --steps 400 --eval-every 20 --eval-tokens 1000 --tokens 20000 --threads 2 -o $work/r; echo \"[exit \$?]\"; stty -a | tr ' ' '\n' | grep -xE 'icanon|echo' | tr '\n' ' '; echo '[stty]'; sleep 60"
wait_for "The position race: 3 schemes"; ok $? "the race's figure shows"
wait_for "Training loss"; ok $? "the training panel shows"
wait_for "First-token sink share"; ok $? "the sink panel shows"
# the curves update: the step count grows and a legend value appears (a loss under the scheme)
a=$(steps_shown)
for i in $(seq 1 300); do b=$(steps_shown); [ -n "$b" ] && [ "${b:-0}" -gt "${a:-0}" ] && [ "$b" -ge 6 ] && break; sleep 0.1; done
[ "${b:-0}" -gt "${a:-0}" ]; ok $? "the step count updates ($a -> $b)"
wait_for "rope 5." 30; ok $? "the training legend shows rope's loss"
tm send-keys -t t " "
wait_for "PAUSED"; ok $? "space pauses"
# a step (and a measurement) in flight ends after the pause; a slow build (ASan) may take seconds
p1=$(steps_shown)
for i in $(seq 1 20); do sleep 1; q=$(steps_shown); [ "$q" = "$p1" ] && break; p1=$q; done
sleep 1.5; p2=$(steps_shown)
[ -n "$p1" ] && [ "$p1" = "$p2" ]; ok $? "paused: the steps hold ($p1, $p2)"
tm send-keys -t t " "
for i in $(seq 1 300); do p3=$(steps_shown); [ "${p3:-0}" -gt "${p2:-0}" ] && break; sleep 0.1; done
[ "${p3:-0}" -gt "${p2:-0}" ] && ! screen | grep -qF PAUSED; ok $? "space resumes ($p2 -> $p3)"
tm send-keys -t t "3"
for i in $(seq 1 50); do screen | grep -qF "learned 5." || break; sleep 0.1; done
! screen | grep -qE "── learned [0-9]"; ok $? "3 hides the third scheme's curves"
tm send-keys -t t Tab
for i in $(seq 1 50); do screen | grep -qF "Held-out:" || break; sleep 0.1; done
! screen | grep -qF "Held-out:"; ok $? "tab focuses the training panel alone"
tm send-keys -t t "S"
wait_for "recorded " 120; ok $? "S records the race so far and says where"
[ "$(head -c 6 "$work/r/race-1.gif" 2>/dev/null)" = GIF89a ]; ok $? "race-1.gif is a GIF"
tm send-keys -t t "s"
wait_for "[exit 130]" 60; ok $? "s stops the race: exit 130"
wait_for "[stty]" 10; screen | grep -q "icanon echo"; ok $? "the terminal is restored"
screen | grep -qF "stopped, saved 3 schemes"; ok $? "it says what it saved"
[ -s "$work/r/rope.pelab" ] && [ -s "$work/r/learned.pelab" ] && grep -q '^rope,' "$work/r/race.csv"
ok $? "the checkpoints and race.csv are in DIR"
tm kill-server 2>/dev/null

# Ctrl-C with the live display: the race stops, saves what is trained (as pelab train does)
# and the terminal comes back
sock="pelab-race-$$-int"
tm -f /dev/null new-session -d -s t -x 100 -y 30 \
    "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $pelab race --pe nope,alibi --steps 100000 --eval-every 1000 --eval-tokens 1000 --tokens 20000 --threads 2 -o $work/c; echo \"[exit \$?]\"; stty -a | tr ' ' '\n' | grep -xE 'icanon|echo' | tr '\n' ' '; echo '[stty]'; sleep 60"
wait_for "The position race: 2 schemes"; ok $? "Ctrl-C run: the race shows"
for i in $(seq 1 300); do b=$(steps_shown); [ "${b:-0}" -ge 4 ] && break; sleep 0.1; done
tm send-keys -t t C-c
wait_for "[exit 130]" 60; ok $? "Ctrl-C stops the race: exit 130"
wait_for "[stty]" 10; screen | grep -q "icanon echo"; ok $? "Ctrl-C: the terminal is restored"
screen | grep -qF "stopped, saved 2 schemes"; ok $? "Ctrl-C: it says what it saved"
steps=$(grep -c '^alibi,[0-9]*,[0-9]*,[0-9]' "$work/c/race.csv" 2>/dev/null)
[ -s "$work/c/alibi.pelab" ] && [ -s "$work/c/nope.pelab" ] && [ "${steps:-0}" -ge 1 ] &&
    ! ls -A "$work/c" | grep -q '^\.'
ok $? "Ctrl-C: the checkpoints and the log of its ${steps:-0} steps are saved, no temporary left"
tm kill-server 2>/dev/null

# the window: pelab gui --race under the dummy video driver
if SDL_VIDEODRIVER=dummy "$pelab" gui --race --pe nope,t5 --steps 6 --eval-every 3 \
    --eval-tokens 1000 --tokens 20000 --threads 2 --frames 3 -o "$work/w" >"$work/w.out" 2>&1; then
    rc=0
else
    rc=$?
fi
[ "$rc" -eq 0 ] && grep -qF "raced 2 schemes" "$work/w.out"; ok $? "pelab gui --race: 3 frames, then the race ends and saves (exit $rc)"
[ "$(grep -c '^t5,[0-9]*,[0-9]*,[0-9]' "$work/w/race.csv")" -eq 6 ]; ok $? "the window's race logged t5's 6 steps"
echo "1..$n"
[ "$failed" -eq 0 ]
