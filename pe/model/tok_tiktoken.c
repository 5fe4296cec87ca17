/* tok_tiktoken.c: a tiktoken ranks file, as Meta's Llama 3 downloads carry it in
 * original/tokenizer.model: one line per token, "base64(bytes) rank". The rank is the token id
 * and the merge order: a piece merges, as in tiktoken's byte_pair_merge, the adjacent pair whose
 * concatenation has the lowest rank first, and a piece that is a whole token is taken as is.
 * The file holds neither the split pattern nor the special tokens: they are Llama 3's (Meta's
 * llama-models tokenizer.py): the pattern below and 256 specials after the 128000 ranks,
 * <|begin_of_text|> = 128000 (BOS, added), <|end_of_text|> = 128001 (EOS). A ranks file of
 * another size gets the same pattern and no specials.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "tok_internal.h"

#define LLAMA3_RANKS    128000
#define LLAMA3_SPECIALS 256

typedef struct tt_priv {
    void *re;
    int byte_tok[256];
} tt_priv;

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decodes n base64 characters; returns the byte count, -1 if malformed. */
static int b64_decode(const unsigned char *p, size_t n, unsigned char *out)
{
    int k = 0, bits = 0;
    unsigned acc = 0;
    size_t i = 0;
    for (; i < n && p[i] != '='; i++) {
        int v = b64_val(p[i]);
        if (v < 0) return -1;
        acc = acc << 6 | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (unsigned char)(acc >> bits);
        }
    }
    for (; i < n; i++)
        if (p[i] != '=') return -1;
    return k;
}

static int tt_probe(const unsigned char *data, size_t size)
{
    size_t i = 0;
    while (i < size && b64_val(data[i]) >= 0) i++;
    while (i < size && data[i] == '=') i++;
    if (i == 0 || i >= size || data[i] != ' ') return 0;
    size_t d = ++i;
    while (i < size && data[i] >= '0' && data[i] <= '9') i++;
    return i > d && (i == size || data[i] == '\n' || data[i] == '\r');
}

static double tt_prio(const pe_tok *t, int id)
{
    return id; /* the rank */
}

/* Llama 3.1's names (llama-models, models/llama3/tokenizer.py) */
static void special_name(int i, char *buf, size_t cap)
{
    static const char *const named[] = {
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_tag|>",
        "<|image|>",
    };
    int nn = (int)(sizeof named / sizeof named[0]);
    if (i < nn)
        snprintf(buf, cap, "%s", named[i]);
    else
        snprintf(buf, cap, "<|reserved_special_token_%d|>", 2 + i - nn);
}

static int tt_load(pe_tok *t, const unsigned char *data, size_t size, const char *dir, char *err,
                   size_t errlen)
{
    tt_priv *p = calloc(1, sizeof *p);
    if (!p) return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    t->priv = p;
    unsigned char buf[4096];
    int maxrank = -1, line = 0, count = 0;
    for (size_t i = 0; i < size;) {
        line++;
        size_t e = i;
        while (e < size && data[e] != '\n') e++;
        size_t le = e;
        if (le > i && data[le - 1] == '\r') le--;
        if (le == i) { /* an empty line (the last one) */
            i = e + 1;
            continue;
        }
        size_t sp = i;
        while (sp < le && data[sp] != ' ') sp++;
        long rank = -1;
        if (sp < le && sp - i <= 4 * sizeof buf / 3) {
            char *end;
            char num[16];
            size_t nl = le - sp - 1;
            if (nl > 0 && nl < sizeof num) {
                memcpy(num, data + sp + 1, nl);
                num[nl] = '\0';
                rank = strtol(num, &end, 10);
                if (*end || num[0] < '0' || num[0] > '9') rank = -1;
            }
        }
        int n = rank >= 0 ? b64_decode(data + i, sp - i, buf) : -1;
        if (n <= 0 || rank >= (1 << 24)) {
            return tok_fail(err, errlen, PE_TOK_EFORMAT,
                            "%s: line %d is not \"base64 rank\" (a token of 1..3072 bytes and a "
                            "rank 0..2^24)",
                            t->path, line);
        }
        if (t->key.n > rank && t->key.len[rank] > 0)
            return tok_fail(err, errlen, PE_TOK_EFORMAT, "%s: line %d repeats rank %ld", t->path,
                            line, rank);
        if (tok_strs_set(&t->key, (int)rank, (const char *)buf, n) < 0 ||
            tok_strs_set(&t->out, (int)rank, (const char *)buf, n) < 0)
            return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        if (rank > maxrank) maxrank = (int)rank;
        count++;
        i = e + 1;
    }
    if (count == 0) return tok_fail(err, errlen, PE_TOK_EFORMAT, "%s: no ranks", t->path);
    int nspecial = count == LLAMA3_RANKS && maxrank == LLAMA3_RANKS - 1 ? LLAMA3_SPECIALS : 0;
    t->n_vocab = maxrank + 1 + nspecial;
    if (tok_strs_set(&t->key, t->n_vocab - 1, "", 0) < 0 ||
        tok_strs_set(&t->out, t->n_vocab - 1, "", 0) < 0)
        return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    if (tok_map_build(&t->map, &t->key) < 0)
        return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    t->special = calloc((size_t)t->n_vocab, 1);
    t->added = calloc((size_t)nspecial + 1, sizeof *t->added);
    if (!t->special || !t->added) return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    for (int i = 0; i < nspecial; i++) {
        char name[64];
        special_name(i, name, sizeof name);
        int id = maxrank + 1 + i, len = (int)strlen(name);
        tok_added *a = &t->added[t->n_added++];
        a->id = id;
        a->len = len;
        a->special = 1;
        a->content = strdup(name);
        if (!a->content || tok_strs_set(&t->out, id, name, len) < 0)
            return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    }
    if (nspecial) {
        t->bos = maxrank + 1;
        t->eos = maxrank + 2;
        t->adds_bos = 1;
    }
    for (int b = 0; b < 256; b++) {
        unsigned char c = (unsigned char)b;
        p->byte_tok[b] = tok_map_get(&t->map, &t->key, (const char *)&c, 1);
    }
    if (tok_pairs_from_vocab(&t->pairs, &t->key, &t->map, tt_prio, t) < 0)
        return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    p->re = tok_regex_new(TOK_PAT_LLAMA3, t->path, err, errlen);
    if (!p->re) return PE_TOK_EFORMAT;
    snprintf(t->name, sizeof t->name, "tiktoken ranks (%s)",
             nspecial ? "Llama 3" : "Llama 3's split pattern, no specials");
    return 0;
}

typedef struct tt_ctx {
    const pe_tok *t;
    const char *text;
    int base;
    pe_tok_ids *out;
    tok_sym *s;
    char *err;
    size_t errlen;
} tt_ctx;

static int tt_piece(void *vctx, size_t a, size_t b)
{
    tt_ctx *c = vctx;
    const pe_tok *t = c->t;
    const tt_priv *p = t->priv;
    int id = tok_map_get(&t->map, &t->key, c->text + a, b - a);
    if (id >= 0) return tok_push(c->out, id, c->base + (int)a, c->base + (int)b);
    int n = 0;
    for (size_t i = a; i < b; i++) {
        int bt = p->byte_tok[(unsigned char)c->text[i]];
        if (bt < 0)
            return tok_fail(c->err, c->errlen, PE_EINVAL, "%s: byte 0x%02X has no rank of its own",
                            t->path, (unsigned char)c->text[i]);
        c->s[n++] = (tok_sym){bt, c->base + (int)i, c->base + (int)i + 1};
    }
    n = tok_merge(&t->pairs, c->s, n);
    if (n < 0) return n;
    for (int k = 0; k < n; k++) {
        int st = tok_push(c->out, c->s[k].id, c->s[k].start, c->s[k].end);
        if (st < 0) return st;
    }
    return 0;
}

static int tt_encode(const pe_tok *t, const char *text, size_t len, int base, pe_tok_ids *out,
                     char *err, size_t errlen)
{
    const tt_priv *p = t->priv;
    tt_ctx c = {t, text, base, out, malloc(len * sizeof(tok_sym)), err, errlen};
    if (!c.s) return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    int st = tok_regex_split(p->re, text, len, tt_piece, &c, err, errlen);
    free(c.s);
    if (st == PE_ENOMEM) tok_fail(err, errlen, st, "out of memory");
    return st;
}

static void tt_free(pe_tok *t)
{
    tt_priv *p = t->priv;
    if (p) tok_regex_free(p->re);
    free(p);
    t->priv = NULL;
}

const tok_format tok_format_tiktoken = {
    .name = "tiktoken ranks",
    .probe = tt_probe,
    .load = tt_load,
    .encode = tt_encode,
    .free_priv = tt_free,
};
