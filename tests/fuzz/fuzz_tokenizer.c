/* fuzz_tokenizer: every tokenizer format (tokenizer.json, tiktoken ranks, llama2.c tokenizer.bin;
 * the content picks the reader) on arbitrary bytes. A file is either refused with a message or
 * opens into a tokenizer that then encodes a few fixed texts and the file's own first bytes:
 * spans in order and covering the text, ids in range, decoding and display texts working. A
 * crash, a leak, undefined behaviour or a broken invariant is a failure. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/tok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(const pe_tok *t, const char *text, size_t len, int flags)
{
    pe_tok_ids ids = {0};
    char err[512] = "";
    int n = pe_tok_encode(t, text, len, flags, &ids, err, sizeof err);
    if (n < 0) {
        if (!err[0]) __builtin_trap(); /* a refusal says why */
        pe_tok_ids_free(&ids);
        return;
    }
    int at = 0, vs = pe_tok_vocab_size(t);
    for (int i = 0; i < n; i++) {
        if (ids.ids[i] < 0 || ids.ids[i] >= vs) __builtin_trap();
        if (ids.spans[i].start != at || ids.spans[i].end < at) __builtin_trap();
        at = ids.spans[i].end;
    }
    if (n > 0 && (size_t)at != len) __builtin_trap();
    char *dec = NULL;
    size_t dn = 0;
    if (pe_tok_decode(t, ids.ids, n, &dec, &dn, err, sizeof err) != 0) __builtin_trap();
    free(dec);
    const char **texts = malloc(sizeof *texts * ((size_t)n + 1));
    char *pool = NULL;
    if (texts && pe_tok_display(t, ids.ids, n, texts, &pool, err, sizeof err) != 0)
        __builtin_trap();
    free(pool);
    free(texts);
    char buf[64];
    for (int i = 0; i < n; i++) {
        if (pe_tok_token_text(t, ids.ids[i], buf, sizeof buf) < 0) __builtin_trap();
        pe_tok_decode_next(t, i ? ids.ids[i - 1] : -1, ids.ids[i], buf, sizeof buf);
    }
    pe_tok_ids_free(&ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512] = "";
    pe_tok *t = pe_tok_open_mem("tokenizer", data, size, err, sizeof err);
    if (!t) {
        if (!err[0]) __builtin_trap();
        return 0;
    }
    static const char *const texts[] = {
        "Hello world",
        " the  the\n\n\tab 1234",
        "ied 4 \xC2\xBD months \xF0\x9F\xA6\x99",
        "<s>a</s><|endoftext|><|begin_of_text|> <|eot_id|> x",
        "\xFF\xFE bad \xC3 utf8 \xE2\x96",
        "",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        exercise(t, texts[i], strlen(texts[i]), PE_TOK_BOS);
        exercise(t, texts[i], strlen(texts[i]), PE_TOK_NO_SPECIAL);
    }
    exercise(t, (const char *)data, size < 96 ? size : 96, 0);
    pe_tok_free(t);
    return 0;
}
