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
# run.c's own outputs, byte for byte (run.c ends with a newline the fixture's copy dropped)
s=$rm_dir/stories260K
"$pelab" generate --model "$s/stories260K.bin" --tokenizer "$s/tok512.bin" --steps 200 \
    >"$work/t200" 2>"$work/err"
printf '%s\n' "$(cat "$s/expected_runc_t0_n200.txt")" | cmp -s - "$work/t200"
ok $? "--steps 200 from BOS prints run.c's text byte for byte ($(head -c 200 "$work/err"))"
"$pelab" generate --model "$s/stories260K.bin" --tokenizer "$s/tok512.bin" --steps 60 \
    --prompt Zoo >"$work/zoo" 2>"$work/err"
printf '%s\n' "$(cat "$s/expected_runc_t0_n60_prompt_Zoo.txt")" | cmp -s - "$work/zoo"
ok $? "--steps 60 --prompt Zoo prints run.c's text byte for byte"
"$pelab" generate --model "$rm_dir/stories260K-hf-derived" --tokenizer "$s/tok512.bin" \
    --steps 200 >"$work/hf200" 2>"$work/err"
cmp -s "$work/t200" "$work/hf200"
ok $? "the Hugging Face folder with the same tokenizer prints the same text"
"$pelab" generate --model "$s/stories260K.bin" --steps 5 >"$work/out" 2>"$work/err"
[ $? -eq 1 ] && grep -q "no tokenizer beside .*looked for tokenizer.json" "$work/err" &&
    [ ! -s "$work/out" ]
ok $? "no tokenizer beside the model: one line naming what was looked for"
a=$("$pelab" generate --model "$rm_dir/stories260K/stories260K.bin" --steps 30 --print-ids \
    --temperature 0.8 --seed 9 2>&1)
b=$("$pelab" generate --model "$rm_dir/stories260K/stories260K.bin" --steps 30 --print-ids \
    --temperature 0.8 --seed 9 --threads 2 2>&1)
c=$("$pelab" generate --model "$rm_dir/stories260K/stories260K.bin" --steps 30 --print-ids \
    --temperature 0.8 --seed 10 2>&1)
[ "$a" = "$b" ] && [ "$a" != "$c" ] && [ "$a" != "$(echo "$want" | cut -d, -f1-31)" ]
ok $? "sampling: the same seed gives the same ids on 1 and 2 threads, another seed others"

# pelab eval --model M --text FILE: the model's own greedy text (run.c's) and a sampled one
cat "$s/expected_runc_t0_n200.txt" "$work/zoo" "$work/t200" >"$work/text"
ev() { "$pelab" eval --model "$s/stories260K.bin" --tokenizer "$s/tok512.bin" --text "$work/text" "$@"; }
ev --ctx 64 -o "$work/e.csv" 2>"$work/err"
ok $? "eval --ctx 64 -o e.csv runs ($(head -c 200 "$work/err"))"
head -1 "$work/e.csv" | grep -q "^# pelab eval --model .*stories260K.bin .*--ctx 64 -o " &&
    sed -n 3p "$work/e.csv" | grep -qx "position,loss,windows" &&
    [ "$(tail -n +4 "$work/e.csv" | wc -l)" -eq 63 ]
ok $? "the CSV: the command, a header, 63 positions"
awk -F, 'NR > 3 && $1 >= 16 { s += $2; k++ } END { exit !(k > 0 && s / k < 1.0) }' "$work/e.csv"
ok $? "the model's own text costs it < 1 nat per token past position 16"
ev --ctx 64 --scaling linear --factor 1 >"$work/lin1.csv" 2>&1
diff <(tail -n +3 "$work/e.csv") <(tail -n +3 "$work/lin1.csv") >/dev/null
ok $? "--scaling linear --factor 1 gives the unscaled losses"
ev --ctx 64 --scaling linear --factor 4 >"$work/lin4.csv" 2>&1 &&
    ! diff <(tail -n +3 "$work/e.csv") <(tail -n +3 "$work/lin4.csv") >/dev/null
ok $? "--scaling linear --factor 4 changes them"
for i in 1 2 3 4 5 6; do cat "$work/text"; done >"$work/text6"
"$pelab" eval --model "$s/stories260K.bin" --tokenizer "$s/tok512.bin" --text "$work/text6" \
    --extrapolate --windows 1 >"$work/x.csv" 2>&1 && [ "$(tail -n +4 "$work/x.csv" | wc -l)" -eq 2047 ]
ok $? "--extrapolate: one window of 4 x 512 tokens"
ev --scaling bogus >/dev/null 2>"$work/err"
[ $? -eq 2 ] && grep -q "scaling bogus: allowed none, linear" "$work/err"
ok $? "--scaling bogus is refused naming what is allowed"
ev --scaling yarn >/dev/null 2>"$work/err"
[ $? -eq 2 ] && grep -q "needs --factor" "$work/err"
ok $? "--scaling yarn without --factor is refused"
echo "1..$n"
[ "$failed" -eq 0 ]
