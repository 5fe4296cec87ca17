/* tok_test.h: what the tokenizer tests share: the real files in ../shared/realmodels (a test
 * FAILS when they are missing: CI has them) and llama.cpp's test vectors. */
#ifndef PELAB_TOK_TEST_H
#define PELAB_TOK_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tok.h"
#include "tap.h"

static char realmodels_[2048];

/* ../shared/realmodels beside the source tree (PELAB_REALMODELS overrides it: a git worktree
 * elsewhere); NULL (after a failed assertion) when missing. */
static inline const char *realmodels(void)
{
    const char *src = getenv("PELAB_SRC"), *over = getenv("PELAB_REALMODELS");
    if (over && *over)
        snprintf(realmodels_, sizeof realmodels_, "%s", over);
    else
        snprintf(realmodels_, sizeof realmodels_, "%s/../shared/realmodels", src ? src : ".");
    FILE *f = fopen(realmodels_, "r");
    if (f) fclose(f);
    if (!TAP_OK(f != NULL, "the fixtures are in %s", realmodels_)) return NULL;
    return realmodels_;
}

static inline char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += got;
        if (len == cap) {
            char *b = realloc(buf, (cap *= 2) + 1);
            if (!b) free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    if (n) *n = len;
    return buf;
}

/* llama.cpp's vectors: .inp strings separated by "\n__ggml_vocab_test__\n" (one after the last
 * too), .out one line of space-separated ids per string. */
typedef struct vectors {
    int n;
    char *text[64];
    size_t len[64];
    int *ids[64];
    int nids[64];
    char *inp, *outp;
} vectors;

static inline int vectors_read(vectors *v, const char *dir, const char *name)
{
    char p[2300];
    memset(v, 0, sizeof *v);
    snprintf(p, sizeof p, "%s/tokenizer-test-vectors/ggml-vocab-%s.gguf.inp", dir, name);
    size_t n;
    v->inp = slurp(p, &n);
    snprintf(p, sizeof p, "%s/tokenizer-test-vectors/ggml-vocab-%s.gguf.out", dir, name);
    v->outp = slurp(p, NULL);
    if (!TAP_OK(v->inp && v->outp, "%s vectors read", name)) return -1;
    const char *sep = "\n__ggml_vocab_test__\n";
    char *s = v->inp, *e;
    while ((e = strstr(s, sep)) && v->n < 64) {
        *e = '\0';
        v->text[v->n] = s;
        v->len[v->n] = (size_t)(e - s);
        v->n++;
        s = e + strlen(sep);
    }
    char *line = v->outp;
    for (int i = 0; i < v->n; i++) {
        char *nl = strchr(line, '\n');
        if (!nl) nl = line + strlen(line);
        v->ids[i] = malloc(sizeof(int) * (size_t)(nl - line + 1));
        int k = 0;
        for (char *q = line; q < nl;) {
            char *end;
            long x = strtol(q, &end, 10);
            if (end == q) break;
            v->ids[i][k++] = (int)x;
            q = end;
        }
        v->nids[i] = k;
        line = *nl ? nl + 1 : nl;
    }
    return 0;
}

static inline void vectors_free(vectors *v)
{
    for (int i = 0; i < v->n; i++) free(v->ids[i]);
    free(v->inp);
    free(v->outp);
}

/* Printable form of a test string for the TAP line. */
static inline const char *shown(const char *s, size_t n)
{
    static char buf[64];
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < sizeof buf; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            buf[k++] = '\\', buf[k++] = 'n';
        else if (c == '\t')
            buf[k++] = '\\', buf[k++] = 't';
        else if (c < 0x20)
            k += (size_t)snprintf(buf + k, 5, "\\x%02x", c);
        else
            buf[k++] = (char)c;
    }
    if (k + 5 >= sizeof buf) memcpy(buf + k, "...", 3), k += 3;
    buf[k] = '\0';
    /* a cut UTF-8 character at the end is dropped */
    while (k > 0 && (unsigned char)buf[k - 1] >= 0x80 && (unsigned char)buf[k - 1] < 0xC0) k--;
    if (k > 0 && (unsigned char)buf[k - 1] >= 0xC0) buf[--k] = '\0';
    return buf;
}

/* Spans in order, contiguous, covering the whole text. */
static inline int spans_cover(const pe_tok_ids *ids, size_t len)
{
    int at = 0;
    for (int i = 0; i < ids->n; i++) {
        if (ids->spans[i].start != at || ids->spans[i].end < at) return 0;
        at = ids->spans[i].end;
    }
    return (size_t)at == len;
}

/* Every vector encodes to its ids (no BOS), its spans cover the text, and it decodes back. */
static inline void check_vectors(const pe_tok *t, const vectors *v, const char *what)
{
    int all_ids = 0, all_dec = 0;
    for (int i = 0; i < v->n; i++) {
        pe_tok_ids ids = {0};
        char err[512] = "";
        int n = pe_tok_encode(t, v->text[i], v->len[i], 0, &ids, err, sizeof err);
        int same =
            n == v->nids[i] && (n == 0 || !memcmp(ids.ids, v->ids[i], sizeof(int) * (size_t)n));
        all_ids += same;
        TAP_OK(same, "%s: \"%s\" encodes to llama.cpp's %d ids", what, shown(v->text[i], v->len[i]),
               v->nids[i]);
        if (!same) {
            char got[400] = "", want[400] = "";
            for (int k = 0; k < n && strlen(got) < 380; k++)
                snprintf(got + strlen(got), sizeof got - strlen(got), " %d", ids.ids[k]);
            for (int k = 0; k < v->nids[i] && strlen(want) < 380; k++)
                snprintf(want + strlen(want), sizeof want - strlen(want), " %d", v->ids[i][k]);
            tap_diag("got %s (%s)\nwant%s", got, err, want);
        }
        TAP_OK(n >= 0 && spans_cover(&ids, v->len[i]), "%s: \"%s\" spans cover its %zu bytes", what,
               shown(v->text[i], v->len[i]), v->len[i]);
        char *dec = NULL;
        size_t dn = 0;
        int st = pe_tok_decode(t, v->ids[i], v->nids[i], &dec, &dn, err, sizeof err);
        int back = st == 0 && dn == v->len[i] && (dn == 0 || !memcmp(dec, v->text[i], dn));
        all_dec += back;
        TAP_OK(back, "%s: llama.cpp's ids for \"%s\" decode back to it", what,
               shown(v->text[i], v->len[i]));
        if (!back && dec) tap_diag("decoded \"%s\"", shown(dec, dn));
        free(dec);
        pe_tok_ids_free(&ids);
    }
    TAP_OK(v->n == 46 && all_ids == v->n && all_dec == v->n,
           "%s: all %d strings encode and decode (%d, %d)", what, v->n, all_ids, all_dec);
}

#endif
