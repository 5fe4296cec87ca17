#!/usr/bin/env bash
# format.sh: every C source and header is formatted as .clang-format says (TAP, one line per
# file that is not; skips with 77 when clang-format is not installed).
set -u
cd "${PELAB_SRC:?}" || exit 1
command -v clang-format >/dev/null || { echo "1..0 # SKIP clang-format is not installed"; exit 77; }
n=0 bad=0
while IFS= read -r f; do
    n=$((n + 1))
    if clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "ok $n - $f"
    else
        echo "not ok $n - $f is not clang-formatted (clang-format -i $f)"
        bad=$((bad + 1))
    fi
done < <(git ls-files '*.c' '*.h' 2>/dev/null || find app pe render tests -name '*.[ch]')
echo "1..$n"
[ "$bad" -eq 0 ]
