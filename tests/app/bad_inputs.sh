#!/usr/bin/env bash
# bad_inputs.sh PELAB TABLE: run every row of the bad-input table (bad_inputs.tsv says what a row
# holds) against the binary, each in a fresh copy of the fixtures, and check the exit status,
# the message, the files that must and must not exist, and the invariants every row shares:
# existing outputs (keep.*) unchanged, no temporary left, no raw control character on stderr, no
# sanitizer report, one line for a usage error. TAP output.
#
# Fixtures: outputs made by the binary (keep.png/.svg/.csv, a tiny trained keep.pelab), a folder,
# symbolic links (to a file, dangling, into a loop, to /dev/full, to a folder), broken
# checkpoints and config files. $RO is a read-only tmpfs and $FULL a full one (rows that use them
# are skipped when a tmpfs cannot be mounted).
set -u
pelab_bin=$(realpath "$1")
table=$(realpath "$2")
src=${PELAB_SRC:-$(dirname "$table")/../..}
work=$(mktemp -d "${TMPDIR:-/tmp}/pelab-bad.XXXXXX")
RO=$work/ro
FULL=$work/full
export RO FULL
mounted=()
cleanup() {
    for m in "${mounted[@]}"; do umount "$m" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

# `pelab` in a row (and in its post condition) is the binary under test
mkdir -p "$work/bin"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$pelab_bin" >"$work/bin/pelab"
chmod +x "$work/bin/pelab"
export PATH="$work/bin:$PATH"

# ---- fixtures -----------------------------------------------------------------------------
fx=$work/fixtures
mkdir -p "$fx/dir"
(
    cd "$fx" || exit 1
    pelab export heatmap --width 64 --height 64 -o keep.png &&
        pelab export heatmap --width 64 --height 64 -o keep.svg &&
        pelab export heatmap --len 8 --dim 8 -o keep.csv &&
        pelab train --pe rope --steps 2 --tokens 2000 --dim 16 --layers 1 --heads 2 --ctx 16 \
            --batch 2 --save-every 0 --quiet --threads 1 -o keep.pelab >/dev/null
) 2>"$work/setup.err" || {
    echo "1..0 # SKIP the fixtures could not be made: $(head -n 3 "$work/setup.err" | tr '\n' ' ')"
    exit 77
}
cd "$fx" || exit 1
cp keep.png keep.png.orig
cp keep.png real.png
ln -s real.png link.png
ln -s later.png dangling.png
ln -s ../real.png dir/linkup.png
ln -s loop2.png loop.png
ln -s loop.png loop2.png
ln -s /dev/full full.png
ln -s dir link-to-dir.png
cp keep.pelab realm.pelab
ln -s realm.pelab linkm.pelab
head -c 100 keep.pelab >trunc.pelab
cp keep.pelab corrupt.pelab
printf '\x5a\xa5' | dd of=corrupt.pelab bs=1 seek=3000 conv=notrunc status=none
: >empty.pelab
cp "$src/assets/configs/llama-3.1-8b.json" ok.json 2>/dev/null ||
    printf '{"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000}' >ok.json
printf '{"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000, "rope_theta": 500000}' >dup.json
printf '{"hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": {"type": "linear", "factor": 2, "factor": 8}}' >dupnested.json
printf '{"hidden_size": }' >bad.json
: >empty.json
printf '[1, 2]' >arr.json
printf '{"hidden_size": 4096}\0{}' >nul.json
printf '{"hidden_size": 4096,' >trunc.json
printf '{"hidden_size": "\033[2J", "num_attention_heads": 32}' >esc.json
printf '{"model_type": "chatglm", "hidden_size": 4096, "num_attention_heads": 32, "kv_channels": 128}' >glm.json
printf 'GGUF\001\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' >bad.gguf
printf 'GGUF\003\000\000\000\001\000\000\000\000\000\000\000' >cut.gguf
cd "$work" || exit 1

# ---- a read-only and a full file system -----------------------------------------------------
mkdir -p "$RO" "$FULL"
have_tmpfs=1
if mount -t tmpfs -o size=256k tmpfs "$FULL" 2>/dev/null; then
    mounted+=("$FULL")
    dd if=/dev/zero of="$FULL/fill" bs=4096 status=none 2>/dev/null
    mount -t tmpfs -o ro,size=64k tmpfs "$RO" 2>/dev/null && mounted+=("$RO") || have_tmpfs=0
else
    have_tmpfs=0
fi

# ---- the rows -----------------------------------------------------------------------------
n=0 failed=0 line=0
ctl=$'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]'
while IFS=$'\t' read -r status pattern exist absent cmd post || [ -n "$status" ]; do
    line=$((line + 1))
    case $status in '#'* | '') continue ;; esac
    n=$((n + 1))
    name="line $line: $cmd"
    if [ "$have_tmpfs" = 0 ] && [[ "$cmd$post" == *'$RO'* || "$cmd$post" == *'$FULL'* ]]; then
        echo "ok $n - $name # SKIP no tmpfs could be mounted"
        continue
    fi
    d=$work/row
    rm -rf "$d"
    cp -a "$fx" "$d"
    cd "$d" || exit 1
    timeout 120 bash -c "$cmd" 2>err </dev/null
    got=$?
    why=()
    [ "$got" = "$status" ] || why+=("exit status $got, expected $status")
    if [ "$pattern" = '^$' ]; then
        [ -s err ] && why+=("expected no message")
    else
        head -n 1 err | grep -qE -- "$pattern" || why+=("the message does not match /$pattern/")
    fi
    if [ "$status" = 2 ] && [ "$(wc -l <err)" -ne 1 ]; then
        why+=("a usage error in $(wc -l <err) lines, not one")
    fi
    grep -qE 'Sanitizer|runtime error:' err && why+=("a sanitizer report")
    LC_ALL=C grep -q "$ctl" err && why+=("a raw control character on stderr")
    if [ "$exist" != - ]; then
        for f in $exist; do [ -e "$f" ] || why+=("$f does not exist"); done
    fi
    if [ "$absent" != - ]; then
        for g in $absent; do compgen -G "$g" >/dev/null && why+=("$g exists"); done
    fi
    for f in keep.png keep.svg keep.csv keep.pelab; do
        cmp -s "$f" "$fx/$f" || why+=("$f changed")
    done
    left=$(find "$d" "$FULL" -name '.pelab-*' 2>/dev/null | head -n 3)
    [ -n "$left" ] && why+=("temporaries left: $left")
    if [ -n "${post:-}" ] && ! bash -c "$post" >/dev/null 2>&1; then
        why+=("afterwards, not: $post")
    fi
    # what a row wrote on the full file system goes, the filler stays
    find "$FULL" -mindepth 1 ! -name fill -exec rm -rf {} + 2>/dev/null
    cd "$work" || exit 1
    if [ ${#why[@]} -eq 0 ]; then
        echo "ok $n - $name"
    else
        echo "not ok $n - $name"
        for w in "${why[@]}"; do echo "# $w"; done
        head -n 5 "$d/err" | LC_ALL=C sed 's/[^[:print:]\t]/?/g; s/^/#   stderr: /'
        failed=$((failed + 1))
    fi
done <"$table"
echo "1..$n"
[ "$failed" -eq 0 ]
