#!/usr/bin/env bash
# gui_xvfb.sh: the real binary's window under Xvfb (draw frames of every view and exit), and the
# one-line messages without a display and without a terminal. TAP; skips (77) without Xvfb.
set -u
pelab=$1
n=0 failed=0
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
err=$(mktemp)
trap 'rm -f "$err"; [ -n "${xpid:-}" ] && kill "$xpid" 2>/dev/null' EXIT

# no display: one line naming the problem and the terminal explorer, status 1, no crash
env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER "$pelab" gui 2>"$err" </dev/null
rc=$?
[ "$rc" -eq 1 ] && grep -q "display" "$err" && grep -q "pelab" "$err" && [ "$(wc -l <"$err")" -eq 1 ]
ok $? "no display: exit 1 and one line ($(head -c 120 "$err"))"

# no terminal: the explorer says so and points to pelab export
"$pelab" </dev/null >/dev/null 2>"$err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "pelab export" "$err"
ok $? "no terminal: exit 2 and a pointer to pelab export ($(head -c 120 "$err"))"

if ! command -v Xvfb >/dev/null; then
    echo "1..$n # (Xvfb not installed: the window run was skipped)"
    [ "$failed" -eq 0 ]
    exit
fi
d=$((300 + $$ % 200))
Xvfb ":$d" -screen 0 1280x800x24 -nolisten tcp -noreset >/dev/null 2>&1 &
xpid=$!
for _ in $(seq 1 50); do [ -e "/tmp/.X11-unix/X$d" ] && break; sleep 0.1; done
# Leak checking is off for these runs only: under X11, Mesa, libdbus and SDL keep allocations
# for the life of the process that LeakSanitizer reports as leaks; pelab's own window code is
# leak-checked in-process by test_gui and tests/render/window with the dummy driver.
for v in heatmap similarity decay alibi rope wavelength; do
    DISPLAY=":$d" SDL_VIDEODRIVER=x11 ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        timeout 60 "$pelab" gui "$v" --frames 3 >/dev/null 2>"$err"
    ok $? "pelab gui $v draws 3 frames under Xvfb and exits 0 $(head -c 100 "$err")"
done
# a lesson in the window (issue 12): a slide with its caption panel draws and the window exits 0
DISPLAY=":$d" SDL_VIDEODRIVER=x11 ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    timeout 60 "$pelab" gui --lesson rope --slide 3 --frames 3 >/dev/null 2>"$err"
ok $? "pelab gui --lesson rope --slide 3 draws 3 frames under Xvfb $(head -c 100 "$err")"
# issue 28: the window ends like the terminal explorer on a terminating signal, 128 + N (it gave
# 0 on INT and TERM and ignored XFSZ); job control on, so a background job keeps SIGINT
set -m
for sig in INT TERM HUP XFSZ USR1 RTMIN; do
    DISPLAY=":$d" SDL_VIDEODRIVER=x11 ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        timeout 60 "$pelab" gui rope >/dev/null 2>"$err" &
    gpid=$!
    sleep 3 # the window is up and drawing
    # timeout's child is pelab; send it the signal itself
    kid=$(pgrep -P "$gpid" | head -n 1)
    kill -s "$sig" "${kid:-$gpid}"
    wait "$gpid"
    rc=$?
    want=$((128 + $(kill -l "$sig")))
    [ "$rc" -eq "$want" ]
    ok $? "pelab gui ends on SIG$sig with status $want (got $rc) $(head -c 100 "$err")"
done
set +m
echo "1..$n"
[ "$failed" -eq 0 ]
