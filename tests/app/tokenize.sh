#!/usr/bin/env bash
# tokenize.sh PELAB: `pelab tokenize` on the real tokenizers in ../shared/realmodels (missing is a
# failure): the ids of llama.cpp's vectors for "Hello world" with GPT-2, Llama 2 and Llama 3, the
# token lines (id, bytes, text) and their byte spans, standard input, --decode back to the text,
# a model file that is not a tokenizer. TAP output.
. "$(dirname "$0")/tap_realmodels.sh" "$1"
tap_need_realmodels "the real tokenizer fixtures"
got=$("$pelab" tokenize --tokenizer "$rm_dir/gpt2-tokenizer" --ids "Hello world" 2>&1)
[ "$got" = "15496,995" ]
ok $? "GPT-2 (a folder: its tokenizer.json): Hello world is 15496,995 ($got)"
got=$("$pelab" tokenize --tokenizer "$rm_dir/llama2-tokenizer/tokenizer.bin" --ids --bos \
    " Hello world" 2>&1)
[ "$got" = "1,29871,15043,3186" ]
ok $? "Llama 2 tokenizer.bin with --bos: 1 then llama.cpp's 29871,15043,3186 ($got)"
got=$("$pelab" tokenize --tokenizer "$rm_dir/llama3-tokenizer/tokenizer.model" --ids --bos \
    "Hello world" 2>&1)
[ "$got" = "128000,9906,1917" ]
ok $? "Llama 3 tiktoken with --bos: 128000,9906,1917 ($got)"
out=$("$pelab" tokenize --tokenizer "$rm_dir/gpt2-tokenizer/tokenizer.json" "Hello world" 2>&1)
echo "$out" | grep -Eq '^ +1 +995  5\.\.11 +" world"$'
ok $? "a token line: index, id, bytes 5..11, the text with its space"
echo "$out" | tail -n1 | grep -q '^# 2 tokens for 11 bytes$'
ok $? "the summary line"
got=$(printf 'Zoo\n' | "$pelab" tokenize --tokenizer "$rm_dir/stories260K/tok512.bin" --ids - 2>&1)
want=$("$pelab" tokenize --tokenizer "$rm_dir/stories260K/tok512.bin" --ids "Zoo
" 2>&1)
[ -n "$got" ] && [ "$got" = "$want" ]
ok $? "- reads standard input ($got)"
got=$("$pelab" tokenize --tokenizer "$rm_dir/stories260K/tok512.bin" --decode "$want" 2>&1)
[ "$got" = "Zoo" ]
ok $? "--decode gives the text back ($got)"
out=$("$pelab" tokenize --tokenizer "$rm_dir/llama2-tokenizer/tokenizer.bin" $'\xF0\x9F\xA6\x99' 2>&1)
echo "$out" | grep -q '"🦙"' && [ "$(echo "$out" | grep -c 'a byte of the character above')" -eq 3 ]
ok $? "byte tokens: the character on the first, the others marked"
out=$("$pelab" tokenize --tokenizer "$rm_dir/gpt2-tokenizer/tokenizer.json" $'a\tb\x01' 2>&1)
echo "$out" | grep -q '"\\t"' && echo "$out" | grep -q '\\x01'
ok $? "control characters are escaped"
"$pelab" tokenize --tokenizer "$rm_dir/stories260K/stories260K.bin" hi >/dev/null 2>"${TMPDIR:-/tmp}/tok.$$"
rc=$?
err=$(cat "${TMPDIR:-/tmp}/tok.$$")
rm -f "${TMPDIR:-/tmp}/tok.$$"
[ $rc -eq 1 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] && echo "$err" | grep -q "looked for tokenizer.json"
ok $? "a model without a tokenizer beside it: exit 1, one line naming what was looked for"
echo "1..$n"
[ $failed -eq 0 ]
