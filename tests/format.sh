#!/usr/bin/env bash
# format.sh: every C source and header is formatted as .clang-format says (TAP, one line per
# file that is not; skips with 77 when clang-format is not installed).
set -u
cd "${PELAB_SRC:?}" || exit 1
command -v clang-format >/dev/null || { echo "1..0 # SKIP clang-format is not installed"; exit 77; }
mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null || find app pe render tests -name '*.[ch]')
# One clang-format process for all files (one per file took over 30 s on a loaded machine); the
# files it names are the ones to report.
bad_files=$(clang-format --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\.[ch]\):[0-9]*:[0-9]*: .*/\1/p' | sort -u)
n=0 bad=0
for f in "${files[@]}"; do
    n=$((n + 1))
    if grep -qxF -- "$f" <<<"$bad_files"; then
        echo "not ok $n - $f is not clang-formatted (clang-format -i $f)"
        bad=$((bad + 1))
    else
        echo "ok $n - $f"
    fi
done
echo "1..$n"
[ "$bad" -eq 0 ]
