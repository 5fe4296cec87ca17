/* tok_bin.c: llama2.c's tokenizer.bin, encoded exactly as run.c's encode() does.
 *
 * File: int32 max_token_length, then one entry per token until the end of the file: float32
 * score, int32 length, the piece's bytes (SentencePiece's "▁" already written as a space; BOS is
 * "\n<s>\n", EOS "\n</s>\n", byte tokens "<0x0A>"). The vocabulary size is not stored (run.c
 * takes it from the model); here it is the number of entries.
 *
 * run.c's encoder: BOS (id 1) when asked; a dummy-prefix " " token when the text is not empty;
 * each UTF-8 character (run.c's grouping: a lead byte and up to three continuation bytes) looked
 * up as a piece, else its bytes as byte tokens (id = byte + 3, i.e. "<0xXX>"); then, while some
 * adjacent pair concatenates to a piece, merge the pair whose piece has the highest score, the
 * leftmost among equal scores. tok_merge does the same with a heap.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "tok_internal.h"

typedef struct bin_priv {
    float *score;      /* (n_vocab) */
    int dummy;         /* the " " piece run.c prepends, or -1 */
    int fallback[256]; /* the token of each byte: "<0xXX>", else the raw byte, else unk */
} bin_priv;

static int32_t rd32(const unsigned char *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return (int32_t)v;
}

static float rdf(const unsigned char *p)
{
    uint32_t v = (uint32_t)rd32(p);
    float f;
    memcpy(&f, &v, sizeof f);
    return f;
}

/* Two upper-case hex digits ("0A"), as SentencePiece writes byte pieces; -1 otherwise. */
static int hex2(const char *p)
{
    int v = 0;
    for (int i = 0; i < 2; i++) {
        char c = p[i];
        if (c >= '0' && c <= '9')
            v = v * 16 + (c - '0');
        else if (c >= 'A' && c <= 'F')
            v = v * 16 + (c - 'A' + 10);
        else
            return -1;
    }
    return v;
}

#define BIN_MAX_PIECE 65536

/* Walks the entries of data; returns the count, or -1 at the first impossible one (err set).
 * partial: data is only the head of a file, a cut last entry is fine. */
static int bin_walk(const unsigned char *data, size_t size, int partial, int *max_len,
                    size_t *bad_at)
{
    if (size < 4) return -1;
    int32_t ml = rd32(data);
    if (ml < 1 || ml > BIN_MAX_PIECE) {
        *bad_at = 0;
        return -1;
    }
    *max_len = ml;
    size_t p = 4;
    int n = 0;
    while (p < size) {
        if (size - p < 8) {
            if (partial) return n;
            *bad_at = p;
            return -1;
        }
        float sc = rdf(data + p);
        int32_t len = rd32(data + p + 4);
        if (!isfinite(sc) || len < 0 || len > ml) {
            *bad_at = p;
            return -1;
        }
        if (size - p - 8 < (size_t)len) {
            if (partial) return n;
            *bad_at = p;
            return -1;
        }
        p += 8 + (size_t)len;
        if (++n > (1 << 24)) {
            *bad_at = p;
            return -1;
        }
    }
    return n;
}

static int bin_probe(const unsigned char *data, size_t size)
{
    int ml;
    size_t bad;
    /* at least a few entries must be plausible: a bare int32 is no evidence */
    int n = bin_walk(data, size, 1, &ml, &bad);
    return n >= 3 || (n >= 1 && size < 64);
}

static double bin_prio(const pe_tok *t, int id)
{
    const bin_priv *b = t->priv;
    return -(double)b->score[id]; /* the highest score merges first */
}

static int bin_load(pe_tok *t, const unsigned char *data, size_t size, const char *dir, char *err,
                    size_t errlen)
{
    int ml = 0;
    size_t bad = 0;
    int n = bin_walk(data, size, 0, &ml, &bad);
    if (n < 0) {
        if (bad == 0)
            return tok_fail(err, errlen, PE_TOK_EFORMAT,
                            "%s: not a llama2.c tokenizer.bin (its max_token_length %d is not "
                            "1..%d)",
                            t->path, size >= 4 ? rd32(data) : -1, BIN_MAX_PIECE);
        return tok_fail(err, errlen, PE_TOK_EFORMAT,
                        "%s: a broken llama2.c tokenizer.bin: the entry at byte %zu has a "
                        "non-finite score, a length outside 0..%d, or runs past the end",
                        t->path, bad, ml);
    }
    if (n < 4)
        return tok_fail(err, errlen, PE_TOK_EFORMAT,
                        "%s: a llama2.c tokenizer.bin with %d entries (at least 4: <unk>, "
                        "<s>, </s> and a piece)",
                        t->path, n);
    bin_priv *b = calloc(1, sizeof *b);
    if (!b) return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    t->priv = b;
    b->score = malloc((size_t)n * sizeof *b->score);
    if (!b->score) return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    t->n_vocab = n;
    size_t p = 4;
    for (int i = 0; i < n; i++) {
        b->score[i] = rdf(data + p);
        int len = rd32(data + p + 4);
        const char *s = (const char *)data + p + 8;
        p += 8 + (size_t)len;
        if (tok_strs_add(&t->key, s, len) < 0)
            return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        /* what the piece decodes to */
        char out[1];
        int v = len == 6 && !memcmp(s, "<0x", 3) && s[5] == '>' ? hex2(s + 3) : -1;
        if (v >= 0) {
            out[0] = (char)v;
            if (tok_strs_add(&t->out, out, 1) < 0)
                return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        } else if (len == 5 && !memcmp(s, "\n<s>\n", 5)) {
            if (tok_strs_add(&t->out, "<s>", 3) < 0)
                return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        } else if (len == 6 && !memcmp(s, "\n</s>\n", 6)) {
            if (tok_strs_add(&t->out, "</s>", 4) < 0)
                return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        } else if (tok_strs_add(&t->out, s, len) < 0) {
            return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        }
    }
    if (tok_map_build(&t->map, &t->key) < 0)
        return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    t->special = calloc((size_t)n, 1);
    if (!t->special) return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    /* run.c: BOS is 1 and EOS 2, whatever their pieces */
    t->bos = 1;
    t->eos = 2;
    t->unk = tok_map_get(&t->map, &t->key, "<unk>", 5);
    t->special[1] = t->special[2] = 1;
    if (t->unk >= 0) t->special[t->unk] = 1;
    t->adds_bos = 1;
    t->runc = 1;
    b->dummy = tok_map_get(&t->map, &t->key, " ", 1);
    t->strip_space = b->dummy >= 0;
    for (int c = 0; c < 256; c++) {
        char hex[8];
        snprintf(hex, sizeof hex, "<0x%02X>", c);
        int id = tok_map_get(&t->map, &t->key, hex, 6);
        if (id < 0) {
            char one = (char)c;
            id = tok_map_get(&t->map, &t->key, &one, 1);
        }
        b->fallback[c] = id >= 0 ? id : t->unk;
    }
    if (tok_pairs_from_vocab(&t->pairs, &t->key, &t->map, bin_prio, t) < 0)
        return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    snprintf(t->name, sizeof t->name, "llama2.c tokenizer.bin");
    return 0;
}

static int bin_encode(const pe_tok *t, const char *text, size_t len, int base, pe_tok_ids *out,
                      char *err, size_t errlen)
{
    const bin_priv *b = t->priv;
    tok_sym *s = malloc((len + 1) * sizeof *s);
    if (!s) return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    int n = 0;
    if (len && b->dummy >= 0) s[n++] = (tok_sym){b->dummy, base, base};
    const unsigned char *c = (const unsigned char *)text;
    size_t start = 0, glen = 0;
    for (size_t i = 0; i < len; i++) {
        /* run.c: a non-continuation byte starts a new group; a group ends before a byte that is
         * not a continuation, or after four bytes */
        if ((c[i] & 0xC0) != 0x80) glen = 0;
        if (glen == 0) start = i;
        glen++;
        if (i + 1 < len && (c[i + 1] & 0xC0) == 0x80 && glen < 4) continue;
        int id = tok_map_get(&t->map, &t->key, text + start, glen);
        if (id >= 0) {
            s[n++] = (tok_sym){id, base + (int)start, base + (int)(start + glen)};
        } else {
            for (size_t k = start; k < start + glen; k++) {
                int f = b->fallback[c[k]];
                if (f < 0) {
                    free(s);
                    return tok_fail(err, errlen, PE_EINVAL,
                                    "%s: byte 0x%02X at %zu has no token (no <0x%02X>, no "
                                    "<unk>)",
                                    t->path, c[k], (size_t)base + k, c[k]);
                }
                s[n++] = (tok_sym){f, base + (int)k, base + (int)k + 1};
            }
        }
        glen = 0;
    }
    int m = tok_merge(&t->pairs, s, n);
    int st = m < 0 ? m : 0;
    for (int i = 0; i < m && !st; i++) st = tok_push(out, s[i].id, s[i].start, s[i].end);
    free(s);
    return st;
}

static void bin_free(pe_tok *t)
{
    bin_priv *b = t->priv;
    if (b) free(b->score);
    free(b);
    t->priv = NULL;
}

const tok_format tok_format_bin = {
    .name = "llama2.c tokenizer.bin",
    .probe = bin_probe,
    .load = bin_load,
    .encode = bin_encode,
    .free_priv = bin_free,
};
