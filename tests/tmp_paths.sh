#!/usr/bin/env bash
# tmp_paths.sh: no C source, header or script of pelab names a temporary path under a hard-coded
# "/tmp/..." (issue 28): temporaries go under $TMPDIR, with /tmp only as the fallback when it is
# unset (`getenv("TMPDIR")`, `${TMPDIR:-/tmp}`). The X server's own sockets and lock files
# (/tmp/.X11-unix, /tmp/.Xn-lock) are fixed places, not temporaries. TAP, one line per file.
set -u
cd "${PELAB_SRC:?}" || exit 1
mapfile -t files < <(find app pe render tests \( -name '*.c' -o -name '*.h' -o -name '*.sh' \
    -o -name '*.py' \) -not -path 'tests/tmp_paths.sh' | sort)
n=0 bad=0
for f in "${files[@]}"; do
    n=$((n + 1))
    hit=$(grep -nE "[\"'=]/tmp/" "$f" | grep -vE '/tmp/\.X(11-unix|%d-lock)' | head -1)
    if [ -n "$hit" ]; then
        echo "not ok $n - $f names a fixed temporary path (use \$TMPDIR, /tmp only when unset): $hit"
        bad=$((bad + 1))
    else
        echo "ok $n - $f"
    fi
done
echo "1..$n"
[ "$bad" -eq 0 ]
