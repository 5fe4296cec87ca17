#!/usr/bin/env bash
# eval_longrope.sh PELAB: `pelab eval` of a model whose config.json has its own rope_scaling
# {"type": "longrope"} (issue 22, Phi-3 style: original_max_position_embeddings L0 at the top
# level): each window runs as transformers' model(window) does, with long_factor when the
# window's length passes L0 and short_factor otherwise (_longrope_frequency_update). The model is
# stories260K-hf-derived with its config rewritten three times (the weights linked; L0 64,
# max_position_embeddings 256): the two lists S and L, S for both, L for both. Windows of 128
# tokens give the losses of L for both and not those of S; windows of L0 = 64 those of S and not
# those of L. (Before, the config's long_factor acted from the first token whatever the length.)
# The forward itself is checked against an independent computation in
# tests/pe/realmodel/test_lm.c (test_longrope). The attention view's subtitle names the factor set
# in force. TAP.
. "$(dirname "$0")/tap_realmodels.sh" "$1"
tap_need_realmodels "the real model fixtures"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pelab-evlr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
src=$rm_dir/stories260K-hf-derived
t=$rm_dir/stories260K/tok512.bin
S='[1.0, 1.25, 1.5, 2.0]' L='[1.0, 3.0, 9.0, 27.0]'
write() { # write DIR SHORT LONG
    mkdir "$tmp/$1" && ln -s "$src/model.safetensors" "$tmp/$1/model.safetensors" &&
        sed -e 's/"max_position_embeddings": 512/"max_position_embeddings": 256, "original_max_position_embeddings": 64/' \
            -e "s/\"rope_scaling\": null/\"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": $2, \"long_factor\": $3}/" \
            "$src/config.json" > "$tmp/$1/config.json" && grep -q longrope "$tmp/$1/config.json"
}
write lr "$S" "$L" && write ss "$S" "$S" && write ll "$L" "$L"
ok $? "three folders of stories260K's weights, L0 64: longrope with S and L, S and S, L and L"
for s in 1 2; do
    "$pelab" generate --model "$rm_dir/stories260K/stories260K.bin" --tokenizer "$t" --steps 400 \
        --temperature 0.8 --seed $s
done > "$tmp/text.txt" 2> "$tmp/err"
[ -s "$tmp/text.txt" ]
ok $? "two stories of stories260K as the text"
ev() { "$pelab" eval --tokenizer "$t" --text "$tmp/text.txt" "$@" 2>> "$tmp/err"; }
body() { grep -v '^#' "$1"; }
for c in 128 64; do
    for d in lr ss ll; do ev --model "$tmp/$d" --ctx $c -o "$tmp/$d$c.csv" || exit 1; done
done
ok $? "eval --ctx 128 and --ctx 64 of the three ($(head -c 200 "$tmp/err"))"
[ "$(body "$tmp/lr128.csv" | wc -l)" -ge 100 ] && cmp -s <(body "$tmp/lr128.csv") <(body "$tmp/ll128.csv")
ok $? "windows of 128 tokens (> L0): the losses of long_factor, position by position"
! cmp -s <(body "$tmp/lr128.csv") <(body "$tmp/ss128.csv")
ok $? "and not those of short_factor"
[ "$(body "$tmp/lr64.csv" | wc -l)" -ge 50 ] && cmp -s <(body "$tmp/lr64.csv") <(body "$tmp/ss64.csv")
ok $? "windows of L0 = 64 tokens: the losses of short_factor"
! cmp -s <(body "$tmp/lr64.csv") <(body "$tmp/ll64.csv")
ok $? "and not those of long_factor"
# the attention view says which factor set its rows were computed with (the tokens held against
# L0), in the subtitle of an export; no other model's subtitle mentions longrope
sub() { "$pelab" export attention --model "$tmp/$1" --ids "$2" -o "$tmp/$1.svg" 2>> "$tmp/err" &&
    grep -o 'longrope: [^<]*' "$tmp/$1.svg"; }
[ "$(sub lr "$(seq -s, 1 70)")" = "longrope: long factors (70 tokens, L0 = 64)" ]
ok $? "attention with 70 tokens names the long factors ($(sub lr "$(seq -s, 1 70)"))"
[ "$(sub lr "$(seq -s, 1 64)")" = "longrope: short factors (64 tokens, L0 = 64)" ]
ok $? "and with L0 = 64 tokens the short ones ($(sub lr "$(seq -s, 1 64)"))"
"$pelab" export attention --model "$src" --ids 1,2,3 -o "$tmp/plain.svg" 2>> "$tmp/err" &&
    ! grep -q longrope "$tmp/plain.svg"
ok $? "a model without LongRoPE: not a word of it"
echo "1..$n"
[ "$failed" -eq 0 ]
