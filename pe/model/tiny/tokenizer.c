/* tokenizer.c: word-level vocabulary, text -> ids and ids -> readable text. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static void set_err(char *err, size_t errlen, const char *msg, const char *word)
{
    if (err && errlen) snprintf(err, errlen, msg, word);
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int is_punct(int c)
{
    return c == '.' || c == ',' || c == '!' || c == '?' || c == ';' || c == ':' || c == '"' ||
           c == '(' || c == ')';
}

void tok_vocab_free(tok_vocab *v)
{
    free(v->words);
    free(v->pool);
    free(v->slots);
    memset(v, 0, sizeof *v);
}

int tok_find(const tok_vocab *v, const char *word)
{
    if (!v->nslots) return -1;
    size_t mask = (size_t)v->nslots - 1;
    for (size_t i = fnv(word) & mask;; i = (i + 1) & mask) {
        int id = v->slots[i];
        if (id < 0) return -1;
        if (!strcmp(v->words[id], word)) return id;
    }
}

int tok_vocab_init(tok_vocab *v, const char *const *words, int n, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (n < 2 || n > TOK_MAX_VOCAB) {
        if (err && errlen)
            snprintf(err, errlen, "vocabulary of %d tokens: must have 2..%d", n, TOK_MAX_VOCAB);
        return PE_EINVAL;
    }
    if (strcmp(words[0], "<unk>") || strcmp(words[1], "<eos>")) {
        set_err(err, errlen, "vocabulary starts with \"%s\": token 0 must be <unk>, 1 <eos>",
                words[0]);
        return PE_EINVAL;
    }
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(words[i]);
        if (l == 0 || l > TOK_MAX_WORD) {
            if (err && errlen)
                snprintf(err, errlen, "vocabulary token %d has %zu bytes: allowed 1..%d", i, l,
                         TOK_MAX_WORD);
            return PE_EINVAL;
        }
        for (size_t j = 0; j < l; j++)
            if (isspace((unsigned char)words[i][j])) {
                set_err(err, errlen, "vocabulary token \"%s\" contains white space", words[i]);
                return PE_EINVAL;
            }
        bytes += l + 1;
    }
    int nslots = 4;
    while (nslots < 2 * n) nslots *= 2;
    v->words = calloc((size_t)n, sizeof *v->words);
    v->pool = malloc(bytes);
    v->slots = malloc((size_t)nslots * sizeof *v->slots);
    if (!v->words || !v->pool || !v->slots) {
        tok_vocab_free(v);
        set_err(err, errlen, "%s", "vocabulary: out of memory");
        return PE_ENOMEM;
    }
    for (int i = 0; i < nslots; i++) v->slots[i] = -1;
    v->nslots = nslots;
    char *p = v->pool;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(words[i]);
        memcpy(p, words[i], l + 1);
        v->words[i] = p;
        p += l + 1;
        if (tok_find(v, p - l - 1) >= 0) {
            set_err(err, errlen, "vocabulary token \"%s\" appears twice", words[i]);
            tok_vocab_free(v);
            return PE_EINVAL;
        }
        size_t mask = (size_t)nslots - 1, s = fnv(words[i]) & mask;
        while (v->slots[s] >= 0) s = (s + 1) & mask;
        v->slots[s] = i;
        v->n = i + 1;
    }
    return PE_OK;
}

const char *tok_word(const tok_vocab *v, int id)
{
    if (id < 0 || id >= v->n) return "<unk>";
    return v->words[id];
}

/* Look a word up exactly, then in lower case, then capitalised. */
static int lookup(const tok_vocab *v, const char *w)
{
    int id = tok_find(v, w);
    if (id >= 0) return id;
    char alt[TOK_MAX_WORD + 1];
    size_t l = strlen(w);
    for (size_t i = 0; i <= l; i++) alt[i] = (char)tolower((unsigned char)w[i]);
    if ((id = tok_find(v, alt)) >= 0) return id;
    alt[0] = (char)toupper((unsigned char)alt[0]);
    return tok_find(v, alt);
}

int tok_encode(const tok_vocab *v, const char *text, int *ids, unsigned char *unknown, int cap)
{
    int n = 0;
    const char *s = text;
    char word[TOK_MAX_WORD + 1];
    while (*s) {
        int c = (unsigned char)*s;
        int id, unk = 0;
        if (c == '\n' || c == '\r') {
            while (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t') s++;
            id = TOK_EOS;
        } else if (isspace(c)) {
            s++;
            continue;
        } else if (is_punct(c)) {
            word[0] = (char)c;
            word[1] = 0;
            s++;
            id = lookup(v, word);
        } else {
            const char *b = s;
            while (*s && !isspace((unsigned char)*s) && !is_punct((unsigned char)*s)) s++;
            size_t l = (size_t)(s - b);
            if (l > TOK_MAX_WORD) {
                id = -1;
            } else {
                memcpy(word, b, l);
                word[l] = 0;
                id = lookup(v, word);
            }
        }
        if (id < 0) {
            id = TOK_UNK;
            unk = 1;
        }
        if (n < cap) {
            ids[n] = id;
            if (unknown) unknown[n] = (unsigned char)unk;
        }
        n++;
    }
    return n;
}

/* Append to out as snprintf would, tracking the length the whole text needs. */
static void put(char *out, size_t cap, size_t *len, const char *s)
{
    size_t l = strlen(s);
    if (*len + 1 < cap) {
        size_t room = cap - 1 - *len;
        memcpy(out + *len, s, l < room ? l : room);
    }
    *len += l;
}

size_t tok_decode(const tok_vocab *v, const int *ids, int n, char *out, size_t cap)
{
    size_t len = 0;
    int line_start = 1, quote_open = 0, after_open = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] == TOK_EOS) {
            put(out, cap, &len, "\n");
            line_start = 1;
            quote_open = 0;
            continue;
        }
        const char *w = tok_word(v, ids[i]);
        int space = !line_start && !after_open;
        after_open = 0;
        if (w[0] && !w[1] && is_punct((unsigned char)w[0])) {
            if (w[0] == '"') {
                if (quote_open)
                    space = 0;
                else
                    after_open = 1;
                quote_open = !quote_open;
            } else if (w[0] == '(') {
                after_open = 1;
            } else {
                space = 0;
            }
        }
        if (space) put(out, cap, &len, " ");
        put(out, cap, &len, w);
        line_start = 0;
    }
    if (cap) out[len < cap ? len : cap - 1] = 0;
    return len;
}
