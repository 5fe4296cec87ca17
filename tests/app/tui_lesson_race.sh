#!/usr/bin/env bash
# tui_lesson_race.sh: a lesson slide's race (`do: race`, issue 24) in the real binary. In tmux: the
# slide shows the race's figure and its step count rises while the caption's numbers read "…";
# a short race ends with them filled in; q on a running race quits at once (its threads joined)
# with the terminal restored. In the window under SDL_VIDEODRIVER=dummy: a few frames of a race
# slide, then a clean exit. --check starts no race. Nothing is timed but the quit. TAP; skips
# (77) without tmux.
set -u
pelab=$1
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux is not installed"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/pelab-lesson-race.XXXXXX")
sock="pelab-lrace-$$"
wait_default=60
# ok, tm, screen, wait_for
source "$(dirname "$0")/tmux_tap.sh"
steps_shown() { screen | sed -n 's/.*schemes, \([0-9]*\) of .*/\1/p' | head -1; }
trap 'tm kill-server 2>/dev/null; rm -rf "$work"' EXIT
cat >"$work/race.lesson" <<'LESSON'
lesson: A race
slide: Before
view: rope
caption: the slide before the race
slide: A short race
view: extrapolation --race-steps 4
do: race
caption: short race best {race-best} worst {race-worst}
slide: A long race
view: extrapolation --race-steps 2000
do: race
caption: long race best {race-best} at {race-speed} tokens/s
LESSON
out=$("$pelab" lesson --check "$work/race.lesson" 2>&1)
ok $? "--check passes a lesson with 'do: race' ($out)"

tm -f /dev/null new-session -d -s t -x 110 -y 40 \
    "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $pelab lesson $work/race.lesson --slide 2; echo \"[exit \$?]\"; stty -a | tr ' ' '\n' | grep -xE 'icanon|echo' | tr '\n' ' '; echo '[stty]'; sleep 60"
wait_for "The position race: 3 schemes"; ok $? "the race slide shows the race's figure"
wait_for "of 12 steps"; ok $? "a race of 4 steps per scheme (12 in all)"
wait_for "of 12 steps" 600 && wait_for "finished" 600
ok $? "the short race finishes"
screen | tr -s ' \n' ' ' | grep -qE "short race best (learned|rope|alibi) \([0-9.]+\) worst (learned|rope|alibi) \([0-9.]+\)"
ok $? "its caption quotes the best and the worst scheme at 4x the context"
tm send-keys -t t Space
wait_for "long race best …"; ok $? "the long race's caption reads '…' while it runs"
a=$(steps_shown)
for i in $(seq 1 1200); do b=$(steps_shown); [ -n "$b" ] && [ "${b:-0}" -gt "${a:-0}" ] && [ "$b" -ge 3 ] && break; sleep 0.1; done
[ "${b:-0}" -gt "${a:-0}" ]; ok $? "the step count updates ($a -> $b)"
screen | grep -qF "long race best …"; ok $? "still '…' while it trains"
t0=$(date +%s)
tm send-keys -t t q
wait_for "[exit 0]" 30; ok $? "q on a running race quits: exit 0 in $(( $(date +%s) - t0 )) s"
wait_for "[stty]" 10; screen | grep -q "icanon echo"; ok $? "the terminal is restored"
tm kill-server 2>/dev/null

# the window: a race slide under the dummy video driver draws its frames and exits cleanly
SDL_VIDEODRIVER=dummy timeout 120 "$pelab" gui --lesson "$work/race.lesson" --slide 3 --frames 5 \
    >/dev/null 2>"$work/err"
ok $? "pelab gui --lesson on a race slide: 5 frames under SDL's dummy driver, exit 0 $(head -c 200 "$work/err")"
echo "1..$n"
[ "$failed" -eq 0 ]
