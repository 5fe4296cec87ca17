# tmux_tap.sh: the TAP and tmux helpers of the tests that drive the real binary in a terminal
# (race_live.sh, tui_signals.sh); sourced, not run. The sourcing script sets sock (the tmux
# server's socket name; it may change it between runs) and may set wait_default (seconds, 10).
n=0 failed=0
ok() { # ok COND-EXIT-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
tm() { tmux -L "$sock" "$@"; }
screen() { tm capture-pane -p -t t; }
wait_for() { # wait_for TEXT [SECONDS]: 0 once the screen shows TEXT, else 1 (and the screen)
    local i
    for i in $(seq 1 $(( ${2:-${wait_default:-10}} * 10 ))); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    echo "# screen did not show '$1':"; screen | sed 's/^/#   /'
    return 1
}
