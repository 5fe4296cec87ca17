# tap_realmodels.sh: sourced by the shell tests that read ../shared/realmodels (eval_dynamic.sh,
# extrapolate_real.sh, tokenize.sh): sets pelab (the binary, $1 of the test), rm_dir (the
# fixtures), the TAP counter ok() and, when the fixtures are missing, fails (never skips) with
# one line naming what was looked for ($1 of this file: what the fixtures are).
set -u
pelab=$1
rm_dir=${PELAB_REALMODELS:-${PELAB_SRC:?}/../shared/realmodels}
n=0 failed=0
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
tap_need_realmodels() {
    if [ ! -d "$rm_dir" ]; then
        ok 1 "$rm_dir exists ($1)"
        echo "1..$n"
        exit 1
    fi
}
