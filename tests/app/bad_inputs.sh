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
# issue 28: inputs that must never hang (a FIFO nobody writes), read-only outputs, folders
# for frames (empty, through a link, a dangling link), CSV tables and lesson files
mkfifo in.fifo
cp keep.png ro.png && chmod 0444 ro.png
cp keep.pelab ro.pelab && chmod 0444 ro.pelab
mkdir -p empty && ln -s empty linkempty && ln -s nowhere linknowhere
cp "$src/assets/models/extrapolation.csv" data.csv
printf 'position,rope\n0,1.5\n1,abc\n' >badnum.csv
printf 'pos,rope\n0,1\n' >badhead.csv
printf 'position\n0\n' >nocols.csv
printf '# only a comment\n' >norows.csv
printf 'position,rope\n0,1\n5,2\n' >gap.csv
: >empty.csv
printf 'lesson: ok\n\nslide: one\nview: rope --dim 8\ncaption: fine {dim}\n' >ok.lesson
printf '\xef\xbb\xbflesson: T\n\nslide: s\nview: rope\ncaption: c\n' >bom.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \xef\xbf\xbe\n' >nonchar.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \xef\xbf\xbf\n' >nonchar2.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \xef\xb7\x90\n' >fdd0.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \xf0\x9f\xbf\xbe\n' >plane1.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \xc0\xaf\n' >overlong.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \xe0\x80\xaf\n' >overlong3.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \xed\xa0\x80\n' >surrogate.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \xf4\x90\x80\x80\n' >past.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \xff\n' >ff.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \x1b[2J\n' >esc.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\x00\n' >nul.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c \xe2\x82\n' >cut.lesson
: >empty.lesson
printf '\n\n   \n' >blank.lesson
head -c 1100000 /dev/zero | tr '\0' a >huge.lesson
printf 'slide: s\nview: rope\ncaption: c\n' >notitle.lesson
printf 'lesson: T\n' >noslides.lesson
printf 'lesson: T\n\nslide: s\ncaption: c\n' >noview.lesson
printf 'lesson: T\n\nslide: s\nview: rope\n' >nocaption.lesson
printf 'lesson: T\n\nslide: s\nview: nosuchview\ncaption: c\n' >badview.lesson
printf 'lesson: T\n\nslide: s\nview: rope --dim 7\ncaption: c\n' >oddim.lesson
printf 'lesson: T\n\nslide: s\nview: rope --nosuch 1\ncaption: c\n' >badopt.lesson
printf 'lesson: T\n\nslide: s\nview: rope --dim "8\ncaption: c\n' >quote.lesson
printf 'lesson: T\n\nslide: s\nview: attention --model /dev/zero\ncaption: c\n' >zeromodel.lesson
printf 'lesson: T\n\nslide: s\nview: attention --model trunc.pelab\ncaption: c\n' >truncmodel.lesson
printf 'lesson: T\n\nslide: s\nview: attention --model keep.png\ncaption: c\n' >pngmodel.lesson
printf 'lesson: T\n\nslide: s\nview: attention --model in.fifo\ncaption: c\n' >fifomodel.lesson
printf 'lesson: T\n\nslide: s\nview: compare --compare corrupt.pelab\ncaption: c\n' >badcompare.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ndo: sweep base 100 200 300 400 500 600 700 800 900 1000 1100 1200 1300\n' >sweep13.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ndo: sweep base 100 200 300 400 500 600 700 800 900 1000 1100 1200\n' >sweep12.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ndo: sweep dim 8 7\n' >sweepodd.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ndo: sweep base 0.5 2\n' >sweepbase.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ndo: sweep nosuch 1 2\n' >sweepopt.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ndo: sweep base\n' >sweepnone.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ndo: sweep base "100 200\n' >sweepquote.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ndo:\n' >donone.lesson
printf 'lesson: T\n\nslide: s\nview: heatmap\ncaption: c\ndo: spin\n' >spin.lesson
printf 'lesson: T\n\nslide: s\nview: extrapolation\ncaption: c\ndo: race 5\n' >raceval.lesson
printf 'lesson: T\n\nslide: s\nview: extrapolation\ncaption: best {race-best}\n' >raceph.lesson
printf 'lesson: T\n\nslide: s\nview: extrapolation --race-steps 0\ncaption: c\ndo: race\n' >racesteps.lesson
printf 'lesson: T\n\nslide: s\nview: heatmap\ncaption: c\ndo: play\n' >play.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ndo: dance\n' >dance.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ndo: spin\ndo: spin\n' >twodo.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ntry: Left Right Left Right Left Right Left Right Left Right Left Right Left = x\n' >trylong.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ntry: Lefty = x\n' >trykey.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ntry: Left\n' >tryeq.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ntry: :dim 7 = odd\n' >trycmd.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\ntry: q = quit\n' >tryreserved.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c {nosuch}\n' >placeholder.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c {loss rope 0-99999}\n' >loss.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: a\ncaption: b\n' >twocaption.lesson
printf 'lesson: T\ntry: x = y\n' >tryfirst.lesson
printf 'lesson: T\n\nslide: s\nview: rope\ncaption: c\nnosuchfield: x\n' >field.lesson
printf 'lesson: T\n\nslide: s\nview: rope --config nosuch.json\ncaption: c\n' >lessonconfig.lesson
printf 'lesson: T\n\nslide: s\nview: rope --config /dev/zero\ncaption: c\n' >lessonzero.lesson
printf 'lesson: T\n\nslide: s\nview: extrapolation --data /dev/zero\ncaption: c\n' >lessondata.lesson
printf 'lesson: T\n\nslide: s\nview: rope --title "\033]2;x\007"\ncaption: c\n' >lessontitle.lesson
cp ok.lesson $'\e]0;pwned\a.lesson'
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
    for f in keep.png keep.svg keep.csv keep.pelab ro.png ro.pelab data.csv ok.lesson; do
        cmp -s "$f" "$fx/$f" || why+=("$f changed")
    done
    # .pelab-* (files and frames folders) and the old frames folders' .NAME.tmp.XXXXXX
    left=$(find "$d" "$FULL" \( -name '.pelab-*' -o -name '.*.tmp.*' \) 2>/dev/null | head -n 3)
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
