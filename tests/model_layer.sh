#!/usr/bin/env bash
# model_layer.sh: the attention views (and every app file but the train, eval and bench commands)
# reach models only through the model interface, pe/model/lmi.h: no app file outside those (and
# the race's: cmd_race.c, a lesson's race lesson/lesson_race.c) includes a header of pe/model/tiny, and no app file names the tiny model's MODEL_MAX_* limits or
# MODEL_PE_* schemes. (app/meson.build also leaves tiny/ out of the views' include folders, so
# `#include "model.h"` does not compile there; this catches a path such as "model/tiny/model.h".)
# TAP, one line per app file.
set -u
cd "${PELAB_SRC:?}" || exit 1
allowed='^app/(cmd/(cmd_model|bench_model|bench|cmd_race)|lesson/lesson_race)\.c$'
tiny_headers=$(cd pe/model/tiny && ls ./*.h | sed 's|^\./||' | paste -sd'|')
mapfile -t files < <(find app \( -name '*.c' -o -name '*.h' \) | sort)
n=0 bad=0
for f in "${files[@]}"; do
    n=$((n + 1))
    [[ $f =~ $allowed ]] && { echo "ok $n - $f (may use the tiny model itself)"; continue; }
    hit=$(grep -nE "#include \"([^\"]*/)?($tiny_headers)\"|MODEL_MAX_|MODEL_PE_" "$f" | head -1)
    if [ -n "$hit" ]; then
        echo "not ok $n - $f reaches the tiny model past the interface: $hit"
        bad=$((bad + 1))
    else
        echo "ok $n - $f"
    fi
done
echo "1..$n"
[ "$bad" -eq 0 ]
