#!/usr/bin/env bash
# eval_dynamic.sh PELAB: `pelab eval` of a model whose config.json has its own rope_scaling
# {"type": "dynamic"} (issue 22): each window runs as transformers' model(window) does, every
# position at the base of seq_len = the window's length once that passes L0
# (max_position_embeddings). The model is stories260K-hf-derived with its config rewritten
# (L0 64, factor 4; the weights linked): over windows of 128 tokens its losses equal those of
# the same weights without rope_scaling under `--scaling dynamic --factor 4` (the established
# path, seq_len = the window), differ from the unscaled ones past L0, and within L0 (--ctx 64)
# equal them. (Before, the config's base stayed at factor x L0 = 256 from the first token.) The
# forward itself
# is checked against an independent computation in tests/pe/realmodel/test_lm_dynamic.c. TAP.
. "$(dirname "$0")/tap_realmodels.sh" "$1"
tap_need_realmodels "the real model fixtures"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pelab-evdyn.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
src=$rm_dir/stories260K-hf-derived
t=$rm_dir/stories260K/tok512.bin
mkdir "$tmp/dyn" "$tmp/plain"
for d in dyn plain; do ln -s "$src/model.safetensors" "$tmp/$d/model.safetensors"; done
sed -e 's/"max_position_embeddings": 512/"max_position_embeddings": 64/' \
    -e 's/"rope_scaling": null/"rope_scaling": {"type": "dynamic", "factor": 4.0}/' \
    "$src/config.json" > "$tmp/dyn/config.json"
sed -e 's/"max_position_embeddings": 512/"max_position_embeddings": 64/' \
    "$src/config.json" > "$tmp/plain/config.json"
grep -q '"dynamic"' "$tmp/dyn/config.json" && grep -q '"max_position_embeddings": 64' "$tmp/plain/config.json"
ok $? "two folders of stories260K's weights, L0 64: rope_scaling dynamic factor 4, and none"
for s in 1 2; do
    "$pelab" generate --model "$rm_dir/stories260K/stories260K.bin" --tokenizer "$t" --steps 400 \
        --temperature 0.8 --seed $s
done > "$tmp/text.txt" 2> "$tmp/err"
[ -s "$tmp/text.txt" ]
ok $? "two stories of stories260K as the text"
ev() { "$pelab" eval --tokenizer "$t" --text "$tmp/text.txt" "$@" 2>> "$tmp/err"; }
ev --model "$tmp/dyn" --ctx 128 -o "$tmp/dyn.csv" &&
    ev --model "$tmp/plain" --ctx 128 --scaling dynamic --factor 4 -o "$tmp/flag.csv" &&
    ev --model "$tmp/plain" --ctx 128 -o "$tmp/none.csv"
ok $? "eval --ctx 128: the dynamic config, the plain one with --scaling dynamic, and as trained ($(head -c 200 "$tmp/err"))"
body() { grep -v '^#' "$1"; }
[ "$(body "$tmp/dyn.csv" | wc -l)" -ge 100 ] && cmp -s <(body "$tmp/dyn.csv") <(body "$tmp/flag.csv")
ok $? "the config's dynamic NTK gives the losses of --scaling dynamic --factor 4, position by position"
# past L0 the base is that of 128 positions, not the trained one: the losses differ there
paste -d, <(body "$tmp/dyn.csv") <(body "$tmp/none.csv") |
    awk -F, 'NR > 1 && $1 >= 64 && ($2 - $5 > 1e-4 || $5 - $2 > 1e-4) { d++ } END { exit !(d > 50) }'
ok $? "and differ from the unscaled model's"
ev --model "$tmp/dyn" --ctx 64 -o "$tmp/dyn64.csv" && ev --model "$tmp/plain" --ctx 64 -o "$tmp/none64.csv"
cmp -s <(body "$tmp/dyn64.csv") <(body "$tmp/none64.csv")
ok $? "windows of L0 = 64 tokens run at the trained base (dynamic NTK only acts past L0)"
echo "1..$n"
[ "$failed" -eq 0 ]
