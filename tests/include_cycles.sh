#!/usr/bin/env bash
# include_cycles.sh: no part of app/, render/ or pe/ includes, directly or through others, a part
# that includes it back. A part is a module: x.c and x.h together, since x.c including y.h while
# y.c includes x.h is the same knot as two headers including each other. An `#include "..."` is
# resolved as the compiler does: the including file's folder first, then the include folders
# (every folder of app/, render/ and pe/ is one, see the meson.build files). TAP, one line per
# part; a failing line names the circle.
#
# Circles being taken apart by work in progress are listed in `known` and reported as TAP TODO
# (they do not fail the suite); each entry names who is on it. Remove the entry with the fix.
set -u
known=(
)
cd "${PELAB_SRC:?}" || exit 1
mapfile -t files < <(find app render pe \( -name '*.c' -o -name '*.h' \) | sort)
declare -A where # header basename -> path (the include folders)
for f in "${files[@]}"; do
    [[ $f == *.h ]] && where[${f##*/}]=$f
done
declare -A deps # module -> space-separated modules it includes
for f in "${files[@]}"; do
    mod=${f%.*}
    while IFS= read -r inc; do
        dir=${f%/*}
        if [ -f "$dir/$inc" ]; then
            path=$dir/$inc
        elif [ -n "${where[${inc##*/}]:-}" ]; then
            path=${where[${inc##*/}]}
        else
            continue # a generated header (pelab_build.h) or a library's
        fi
        path=$(realpath -m --relative-to=. "$path")
        to=${path%.*}
        [ "$to" = "$mod" ] && continue
        deps[$mod]+=" $to"
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done
mapfile -t mods < <(for f in "${files[@]}"; do echo "${f%.*}"; done | sort -u)
# A depth-first walk from each module; a path that comes back to its start is a circle.
n=0 bad=0
for m in "${mods[@]}"; do
    n=$((n + 1))
    declare -A seen=()
    stack=("$m|$m")
    circle=''
    while [ ${#stack[@]} -gt 0 ]; do
        top=${stack[-1]}
        unset 'stack[-1]'
        node=${top%%|*} trail=${top#*|}
        for d in ${deps[$node]:-}; do
            if [ "$d" = "$m" ]; then
                circle="$trail -> $m"
                break 2
            fi
            [ -n "${seen[$d]:-}" ] && continue
            seen[$d]=1
            stack+=("$d|$trail -> $d")
        done
    done
    unset seen
    todo=''
    for k in "${known[@]}"; do [ "$k" = "$m" ] && todo=' # TODO a known circle, being taken apart'; done
    if [ -n "$circle" ]; then
        echo "not ok $n - $m includes itself back: $circle$todo"
        [ -z "$todo" ] && bad=$((bad + 1))
    else
        echo "ok $n - $m"
    fi
done
echo "1..$n"
[ "$bad" -eq 0 ]
