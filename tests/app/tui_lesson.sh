#!/usr/bin/env bash
# tui_lesson.sh: the real binary presents a lesson in a real terminal (tmux): Space walks forward
# through every slide and PgUp back, each slide showing its number, title and the start of its
# caption; a digit and :slide N jump, l lists the slides, and q quits with the terminal restored;
# for the rope lesson also: the view's own keys work on a slide and r resets it. The slides'
# actions (a sweep, the RoPE spin, autoplay) run as the walk passes them. TAP; skips (77)
# without tmux.
set -u
pelab=$1
lesson=${2:-rope}
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux is not installed"; exit 77; }
sock="pelab-lesson-$$"
n=0 failed=0
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
tm() { tmux -L "$sock" "$@"; }
screen() { tm capture-pane -p -t t | tr -s ' '; }
wait_for() { # wait_for TEXT [SECONDS]
    local i
    for i in $(seq 1 $(( ${2:-10} * 10 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    echo "# screen did not show '$1':"; tm capture-pane -p -t t | sed 's/^/#   /'
    return 1
}
trap 'tm kill-server 2>/dev/null || true' EXIT
file=$(cd "$(dirname "$0")/../../assets/lessons" && pwd)/$lesson.lesson
# per slide: the title, and the caption's first three words (before any live value)
mapfile -t titles < <(sed -n 's/^slide: //p' "$file")
mapfile -t starts < <(awk '/^caption:/ { sub(/^caption: /, ""); sub(/\{.*/, ""); split($0, w, " "); print w[1] " " w[2] " " w[3] }' "$file")
count=${#titles[@]}

tm -f /dev/null new-session -d -s t -x 100 -y 30 \
    "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $pelab lesson $lesson; echo \"[exit \$?]\"; stty -a | tr ' ' '\n' | grep -xE 'icanon|echo' | tr '\n' ' '; echo '[stty]'; sleep 30"
check() { # check I WHAT: slide I (1-based) is on screen
    local i=$1
    # wait for the caption too: under load the title can be drawn a frame before the caption
    wait_for "[$i/$count] ${titles[$((i - 1))]}" && wait_for "${starts[$((i - 1))]}"
    ok $? "$2: slide $i '${titles[$((i - 1))]}' with its caption"
}
check 1 "starts"
for i in $(seq 2 "$count"); do
    tm send-keys -t t Space
    check "$i" "Space"
done
tm send-keys -t t Space
wait_for "the last slide"; ok $? "Space on the last slide stays and says so"
for i in $(seq $((count - 1)) -1 1); do
    tm send-keys -t t PPage
    check "$i" "PgUp"
done
tm send-keys -t t 3
check 3 "the digit 3 jumps"
tm send-keys -t t BSpace
check 2 "Backspace goes back"
tm send-keys -t t -l ":slide $count"
tm send-keys -t t Enter
check "$count" ":slide $count jumps"
tm send-keys -t t -l ":slide 999"
tm send-keys -t t Enter
wait_for ":slide '999': allowed 1..$count"; ok $? ":slide 999 is refused with the range"
tm send-keys -t t l
wait_for "(1..9 or :slide N jumps, any key closes)" && wait_for "${titles[0]}"
ok $? "l lists the slides"
# the box has a row for its bottom border: the last slide's row is not drawn on it
last=$(screen | grep -F -- "${titles[$((count - 1))]}" | head -1)
echo "$last" | grep -q '⢸' && ! echo "$last" | grep -q '⣀'
ok $? "the list's last slide sits inside the box, above its bottom border ($last)"
tm send-keys -t t Escape
tm send-keys -t t 1
check 1 "back to slide 1"
if [ "$lesson" = rope ]; then
# the view stays live: the rope view's Right moves m, r resets the slide
tm send-keys -t t Right
wait_for "m = 2, n = 0"; ok $? "the view's own key (Right moves m) works on a slide"
tm send-keys -t t r
wait_for "slide 1 of $count" && wait_for "m=1, k at n=0"; ok $? "r resets the slide (m back to 1)"
tm send-keys -t t -l ":base 500000"
tm send-keys -t t Enter
wait_for "base 500000"; ok $? "a ':' option still works on a slide"
fi
tm resize-window -t t -x 80 -y 24 2>/dev/null || tm resize-pane -t t -x 80 -y 24
wait_for "[1/$count] ${titles[0]}"; ok $? "at 80x24 the caption panel still shows the title"
wait_for "${starts[0]}"; ok $? "and the caption"
if [ "$lesson" = rope ]; then
    # slide 1 promises d = 8's four pairs: all four circles fit beside the caption panel
    wait_for "k=0" && screen | grep -q "k=1" && screen | grep -q "k=2" && screen | grep -q "k=3"
    ok $? "at 80x24 the rope slide draws all four pairs (k=0..3)"
fi
tm send-keys -t t q
wait_for "[exit 0]"; ok $? "q quits with status 0"
wait_for "[stty]"
screen | grep -q "icanon echo"; ok $? "the terminal is restored (icanon, echo)"
echo "1..$n"
[ "$failed" -eq 0 ]
