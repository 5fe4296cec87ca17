#!/usr/bin/env bash
# generate.sh PELAB: `pelab generate` on the real fixtures in ../shared/realmodels (missing is a
# failure): stories260K.bin greedy from BOS gives the ids of the Hugging Face copy's reference
# (an independent forward), the Hugging Face folder gives the same ids, tiny-random-llama-2 gives
# transformers' greedy continuation, --logits-out writes an .npy of (positions, vocabulary)
# float32, and a sampled run is repeatable from its seed. TAP output.
set -u
pelab=$1
rm_dir=${PELAB_SRC:?}/../shared/realmodels
n=0 failed=0
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
work=$(mktemp -d "${TMPDIR:-/tmp}/pelab-gen.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ ! -d "$rm_dir" ]; then
    ok 1 "$rm_dir exists (the real-model fixtures)"
    echo "1..$n"
    exit 1
fi
# 1 and the first 200 reference ids, comma-separated
want=$(printf '1,'; tr -d '\n ' <"$rm_dir/stories260K-hf-derived/reference_greedy_bos.json" |
    sed 's/.*"greedy_ids":\[\([0-9,]*\)\].*/\1/' | cut -d, -f1-200)
got=$("$pelab" generate --model "$rm_dir/stories260K/stories260K.bin" --steps 200 --print-ids \
    --logits-out "$work/l.npy" 2>"$work/err")
ok $? "generate stories260K.bin --steps 200 runs ($(head -c 200 "$work/err"))"
[ "$got" = "$want" ]
ok $? "its 201 ids (BOS + 200) equal reference_greedy_bos.json's"
size=$(stat -c %s "$work/l.npy" 2>/dev/null || echo 0)
[ "$size" -eq $((128 + 200 * 512 * 4)) ] && head -c 128 "$work/l.npy" | grep -qa "'shape': (200, 512)"
ok $? "--logits-out: 200 x 512 float32 with an .npy header ($size bytes)"
got=$("$pelab" generate --model "$rm_dir/stories260K-hf-derived" --steps 200 --print-ids 2>&1)
[ "$got" = "$want" ]
ok $? "the Hugging Face folder gives the same ids"
got=$("$pelab" generate --model "$rm_dir/tiny-random-llama-2/config.json" --ids 1,42,99 --steps 7 \
    --print-ids 2>&1)
[ "$got" = "1,42,99,2185,688,2844,1377,2518" ]
ok $? "tiny-random-llama-2 from [1,42,99]: transformers' greedy 2185,688,2844,1377 ($got)"
a=$("$pelab" generate --model "$rm_dir/stories260K/stories260K.bin" --steps 30 --print-ids \
    --temperature 0.8 --seed 9 2>&1)
b=$("$pelab" generate --model "$rm_dir/stories260K/stories260K.bin" --steps 30 --print-ids \
    --temperature 0.8 --seed 9 --threads 2 2>&1)
c=$("$pelab" generate --model "$rm_dir/stories260K/stories260K.bin" --steps 30 --print-ids \
    --temperature 0.8 --seed 10 2>&1)
[ "$a" = "$b" ] && [ "$a" != "$c" ] && [ "$a" != "$(echo "$want" | cut -d, -f1-31)" ]
ok $? "sampling: the same seed gives the same ids on 1 and 2 threads, another seed others"
echo "1..$n"
[ "$failed" -eq 0 ]
