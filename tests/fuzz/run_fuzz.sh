#!/usr/bin/env bash
# run_fuzz.sh HARNESS CORPUS: replay every seed of CORPUS through HARNESS, then fuzz for
# PELAB_FUZZ_SECONDS (30) starting from a copy of the seeds (the repository's corpus is not
# changed). A crash, a leak, a sanitizer report or a timeout fails, and the input that did it is
# printed in hex so it can be added to the corpus and replayed. TAP output.
set -u
harness=$1
corpus=$2
secs=${PELAB_FUZZ_SECONDS:-30}
work=$(mktemp -d "${TMPDIR:-/tmp}/pelab-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=0 failed=0
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
show_crash() {
    sed 's/^/# /' "$work/log" | tail -n 40
    for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
        [ -e "$f" ] || continue
        echo "# input $(basename "$f"):"
        od -An -tx1 -v "$f" | head -n 20 | sed 's/^/#  /'
    done
}
seeds=("$corpus"/*)
# a seed that crashes stops the replay: libFuzzer runs the files one after the other
"$harness" -artifact_prefix="$work/" -timeout=20 "${seeds[@]}" >"$work/log" 2>&1
rc=$?
ok $rc "replay ${#seeds[@]} seeds of $(basename "$corpus")"
[ $rc -ne 0 ] && show_crash
mkdir -p "$work/corpus"
cp "$corpus"/* "$work/corpus/"
"$harness" -artifact_prefix="$work/" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2560 \
    -print_final_stats=1 "$work/corpus" >"$work/log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
ok $rc "fuzz $(basename "$corpus") for ${secs} s: ${runs:-?} inputs, no crash, leak or sanitizer report"
[ $rc -ne 0 ] && show_crash
echo "1..$n"
[ "$failed" -eq 0 ]
