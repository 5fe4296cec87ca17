/* tok_core.c: the tokenizer table, opening (a file, or the one beside a model), the encode driver
 * (added tokens split out first, then the format encodes the text between them), decoding and
 * the display texts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pe.h"
#include "tok_internal.h"

/* The formats, tried in this order on a file's content. Adding one = a file + a line here. */
static const tok_format *const formats[] = {
    &tok_format_json,
    &tok_format_tiktoken,
    &tok_format_bin,
};
#define NFORMATS (int)(sizeof formats / sizeof formats[0])

/* What a model folder is searched for, in order. */
static const char *const beside[] = {
    "tokenizer.json",
    "tokenizer.model",
    "original/tokenizer.model",
    "tokenizer.bin",
};
#define NBESIDE (int)(sizeof beside / sizeof beside[0])

#define TOK_MAX_FILE ((size_t)1 << 30) /* a tokenizer file larger than 1 GiB is refused */

void pe_tok_ids_free(pe_tok_ids *v)
{
    free(v->ids);
    free(v->spans);
    memset(v, 0, sizeof *v);
}

void pe_tok_free(pe_tok *t)
{
    if (!t) return;
    if (t->fmt && t->fmt->free_priv) t->fmt->free_priv(t);
    tok_strs_free(&t->key);
    tok_strs_free(&t->out);
    free(t->special);
    tok_map_free(&t->map);
    tok_pairs_free(&t->pairs);
    for (int i = 0; i < t->n_added; i++) free(t->added[i].content);
    free(t->added);
    free(t);
}

static pe_tok *load_mem(const char *path, const char *dir, const unsigned char *data, size_t size,
                        const tok_format *only, char *err, size_t errlen)
{
    const tok_format *f = only;
    for (int i = 0; !f && i < NFORMATS; i++)
        if (formats[i]->probe(data, size)) f = formats[i];
    if (!f) {
        tok_fail(err, errlen, PE_TOK_EFORMAT,
                 "%s: not a tokenizer pelab reads (tokenizer.json, a tiktoken ranks file, "
                 "llama2.c's tokenizer.bin)",
                 path);
        return NULL;
    }
    pe_tok *t = calloc(1, sizeof *t);
    if (!t) {
        tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        return NULL;
    }
    snprintf(t->path, sizeof t->path, "%s", path);
    snprintf(t->name, sizeof t->name, "%s", f->name);
    t->fmt = f;
    t->bos = t->eos = t->unk = -1;
    if (f->load(t, data, size, dir, err, errlen) < 0) {
        pe_tok_free(t);
        return NULL;
    }
    if (!t->special) t->special = calloc((size_t)t->n_vocab + 1, 1);
    if (!t->special || tok_added_finish(t, err, errlen) < 0) {
        if (!t->special) tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        pe_tok_free(t);
        return NULL;
    }
    return t;
}

pe_tok *pe_tok_open_mem(const char *name, const void *data, size_t size, char *err, size_t errlen)
{
    return load_mem(name ? name : "(memory)", NULL, data, size, NULL, err, errlen);
}

/* Reads the file; NULL with err set when it cannot be read or is too large. */
static unsigned char *read_file(const char *path, size_t *size, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tok_fail(err, errlen, PE_TOK_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            if (cap >= TOK_MAX_FILE) {
                tok_fail(err, errlen, PE_TOK_EFORMAT,
                         "%s: larger than 1 GiB, too large for a tokenizer", path);
                goto fail;
            }
            cap = cap ? cap * 2 : 65536;
            unsigned char *b = realloc(buf, cap + 1);
            if (!b) {
                tok_fail(err, errlen, PE_ENOMEM, "%s: out of memory", path);
                goto fail;
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        tok_fail(err, errlen, PE_TOK_EIO, "%s: read error", path);
        goto fail;
    }
    fclose(f);
    buf[n] = 0;
    *size = n;
    return buf;
fail:
    free(buf);
    fclose(f);
    return NULL;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Opens the first tokenizer pelab reads in dir; *found_any: some candidate file exists. */
static pe_tok *open_in_dir(const char *dir, char *err, size_t errlen, int *found_any)
{
    char skipped[512] = "";
    for (int i = 0; i < NBESIDE; i++) {
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, beside[i]);
        if (!is_file(p)) continue;
        *found_any = 1;
        size_t size;
        unsigned char *data = read_file(p, &size, err, errlen);
        if (!data) return NULL;
        const tok_format *f = NULL;
        for (int k = 0; !f && k < NFORMATS; k++)
            if (formats[k]->probe(data, size)) f = formats[k];
        if (!f && strstr(beside[i], ".model")) {
            /* SentencePiece's protobuf model (Llama 2's tokenizer.model): not read; look on */
            size_t used = strlen(skipped);
            snprintf(skipped + used, sizeof skipped - used, "%s%s", used ? ", " : "", beside[i]);
            free(data);
            continue;
        }
        pe_tok *t = load_mem(p, dir, data, size, f, err, errlen);
        free(data);
        if (!t && !f) tok_fail(err, errlen, PE_TOK_EFORMAT, "%s: not a tokenizer pelab reads", p);
        return t;
    }
    if (skipped[0])
        tok_fail(err, errlen, PE_TOK_ENOTFOUND,
                 "no tokenizer pelab reads in %s: %s is SentencePiece's protobuf model (pelab "
                 "reads tokenizer.json, a tiktoken tokenizer.model or llama2.c's tokenizer.bin)",
                 dir, skipped);
    else
        tok_fail(err, errlen, PE_TOK_ENOTFOUND,
                 "no tokenizer in %s (looked for tokenizer.json, tokenizer.model, "
                 "original/tokenizer.model, tokenizer.bin)",
                 dir);
    return NULL;
}

/* A file whose name says it is a tokenizer: its own errors are reported, no folder search. */
static int named_tokenizer(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    return strstr(base, "tokenizer") || strstr(base, "tok") == base ||
           (n > 9 && !strcmp(base + n - 9, ".tiktoken"));
}

pe_tok *pe_tok_open(const char *path, char *err, size_t errlen)
{
    if (!path || !*path) {
        tok_fail(err, errlen, PE_EINVAL, "no tokenizer path given");
        return NULL;
    }
    int found = 0;
    if (is_dir(path)) return open_in_dir(path, err, errlen, &found);
    if (!is_file(path)) {
        struct stat st;
        tok_fail(err, errlen, PE_TOK_EIO, "%s: %s", path,
                 stat(path, &st) ? strerror(errno) : "not a regular file or folder");
        return NULL;
    }
    char dir[1024];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    if (!dir[0]) snprintf(dir, sizeof dir, "/");
    /* A tokenizer file itself? Only its head is read first: a model file can be gigabytes. */
    unsigned char head[4096];
    size_t nhead = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        tok_fail(err, errlen, PE_TOK_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    nhead = fread(head, 1, sizeof head, f);
    fclose(f);
    const tok_format *fmt = NULL;
    for (int k = 0; !fmt && k < NFORMATS; k++)
        if (formats[k]->probe(head, nhead)) fmt = formats[k];
    if (fmt) {
        size_t size;
        unsigned char *data = read_file(path, &size, err, errlen);
        if (!data) return NULL;
        char err2[512];
        pe_tok *t = load_mem(path, dir, data, size, fmt, err2, sizeof err2);
        free(data);
        if (t) return t;
        /* a llama2.c model .bin's header also looks like a tokenizer.bin's: a file not named
         * as a tokenizer falls through to the folder search */
        if (named_tokenizer(path) || fmt != &tok_format_bin) {
            tok_fail(err, errlen, PE_TOK_EFORMAT, "%s", err2);
            return NULL;
        }
    } else if (named_tokenizer(path)) {
        tok_fail(err, errlen, PE_TOK_EFORMAT,
                 "%s: not a tokenizer pelab reads (tokenizer.json, a tiktoken ranks file, "
                 "llama2.c's tokenizer.bin%s)",
                 path,
                 nhead >= 2 && head[0] == 0x0A ? "; this looks like SentencePiece's protobuf "
                                                 "model, which is not read"
                                               : "");
        return NULL;
    }
    pe_tok *t = open_in_dir(dir, err, errlen, &found);
    if (!t && !found)
        tok_fail(err, errlen, PE_TOK_ENOTFOUND,
                 "no tokenizer beside %s (looked for tokenizer.json, tokenizer.model, "
                 "original/tokenizer.model, tokenizer.bin in %s)",
                 path, dir);
    return t;
}

/* ---- added tokens ----------------------------------------------------------------------- */

static int added_cmp(const void *a, const void *b)
{
    const tok_added *x = a, *y = b;
    if (x->len != y->len) return y->len - x->len;
    return x->id - y->id;
}

int tok_added_finish(pe_tok *t, char *err, size_t errlen)
{
    if (t->n_added) qsort(t->added, (size_t)t->n_added, sizeof *t->added, added_cmp);
    for (int i = 0; i < t->n_added; i++)
        if (t->added[i].special && t->added[i].id < t->n_vocab) t->special[t->added[i].id] = 1;
    return 0;
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int word_char(unsigned char c)
{
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '_';
}

/* The added token that starts at pos, or NULL (longest first). */
static const tok_added *added_at(const pe_tok *t, const char *text, size_t len, size_t pos,
                                 int flags)
{
    for (int i = 0; i < t->n_added; i++) {
        const tok_added *a = &t->added[i];
        if (!a->len || (size_t)a->len > len - pos) continue;
        if (a->special && (flags & PE_TOK_NO_SPECIAL)) continue;
        if (memcmp(text + pos, a->content, (size_t)a->len)) continue;
        if (a->single_word) {
            if (pos > 0 && word_char((unsigned char)text[pos - 1])) continue;
            size_t e = pos + (size_t)a->len;
            if (e < len && word_char((unsigned char)text[e])) continue;
        }
        return a;
    }
    return NULL;
}

static int encode_segment(const pe_tok *t, const char *text, size_t s, size_t e, pe_tok_ids *out,
                          char *err, size_t errlen)
{
    if (e <= s) return 0;
    return t->fmt->encode(t, text + s, e - s, (int)s, out, err, errlen);
}

int pe_tok_encode(const pe_tok *t, const char *text, size_t len, int flags, pe_tok_ids *out,
                  char *err, size_t errlen)
{
    if (!t || !out || (!text && len)) return tok_fail(err, errlen, PE_EINVAL, "no text");
    if (len > (size_t)1 << 30)
        return tok_fail(err, errlen, PE_EINVAL, "text of %zu bytes: at most 1 GiB is encoded", len);
    int n0 = out->n, st;
    if ((flags & PE_TOK_BOS) && t->adds_bos && t->bos >= 0)
        if ((st = tok_push(out, t->bos, 0, 0)) < 0) goto fail;
    size_t seg = 0;
    if (t->n_added) {
        unsigned char first[256] = {0};
        for (int i = 0; i < t->n_added; i++)
            if (t->added[i].len) first[(unsigned char)t->added[i].content[0]] = 1;
        for (size_t pos = 0; pos < len; pos++) {
            if (!first[(unsigned char)text[pos]]) continue;
            const tok_added *a = added_at(t, text, len, pos, flags);
            if (!a) continue;
            size_t s = pos, e = pos + (size_t)a->len;
            if (a->lstrip)
                while (s > seg && is_space((unsigned char)text[s - 1])) s--;
            if (a->rstrip)
                while (e < len && is_space((unsigned char)text[e])) e++;
            if ((st = encode_segment(t, text, seg, s, out, err, errlen)) < 0) goto fail;
            if ((st = tok_push(out, a->id, (int)s, (int)e)) < 0) goto fail;
            seg = e;
            pos = e - 1;
        }
    }
    if ((st = encode_segment(t, text, seg, len, out, err, errlen)) < 0) goto fail;
    /* A normalizer that writes several characters for one (Replace " " -> "a b") gives them all
     * that input byte; keep the spans in order, touching, and ending at the text's end. */
    int at = 0;
    for (int i = n0; i < out->n; i++) {
        if (out->spans[i].start != at) out->spans[i].start = at;
        if (out->spans[i].end < at) out->spans[i].end = at;
        at = out->spans[i].end;
    }
    if (out->n > n0) out->spans[out->n - 1].end = (int)len;
    return out->n - n0;
fail:
    out->n = n0;
    if (st == PE_ENOMEM) tok_fail(err, errlen, st, "out of memory");
    return st;
}

/* ---- decoding --------------------------------------------------------------------------- */

static int copy_out(const char *p, size_t n, char *buf, size_t cap)
{
    if (cap) {
        size_t k = n < cap - 1 ? n : cap - 1;
        memcpy(buf, p, k);
        buf[k] = '\0';
    }
    return (int)n;
}

int pe_tok_token_text(const pe_tok *t, int id, char *buf, size_t cap)
{
    if (!t || id < 0 || id >= t->n_vocab) return -1;
    return copy_out(tok_str(&t->out, id), (size_t)t->out.len[id], buf, cap);
}

int pe_tok_decode_next(const pe_tok *t, int prev, int id, char *buf, size_t cap)
{
    if (!t || id < 0 || id >= t->n_vocab) return -1;
    const char *p = tok_str(&t->out, id);
    size_t n = (size_t)t->out.len[id];
    if ((t->runc || t->strip_space) && prev >= 0 && prev == t->bos && n && p[0] == ' ') p++, n--;
    return copy_out(p, n, buf, cap);
}

int pe_tok_decode(const pe_tok *t, const int *ids, int n, char **out, size_t *outlen, char *err,
                  size_t errlen)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->n_vocab)
            return tok_fail(err, errlen, PE_EINVAL, "token id %d: the vocabulary has ids 0..%d",
                            ids[i], t->n_vocab - 1);
        total += (size_t)t->out.len[ids[i]];
    }
    char *s = malloc(total + 1);
    if (!s) return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    size_t k = 0;
    int lead = 1; /* still before the first ordinary token */
    for (int i = 0; i < n; i++) {
        const char *p = tok_str(&t->out, ids[i]);
        size_t len = (size_t)t->out.len[ids[i]];
        if (lead && !t->special[ids[i]]) {
            /* SentencePiece's dummy prefix: the first space of the text, or of the first
             * piece after BOS (run.c; SentencePiece drops control tokens and strips it) */
            if (t->strip_space && len && p[0] == ' ' && (k == 0 || ids[i - 1] == t->bos))
                p++, len--;
            lead = 0;
        }
        memcpy(s + k, p, len);
        k += len;
    }
    s[k] = '\0';
    *out = s;
    if (outlen) *outlen = k;
    return 0;
}

/* Bytes missing at the end of p[0..n) to complete its last UTF-8 character (0 if complete or
 * not a character start). */
static int utf8_missing(const unsigned char *p, size_t n)
{
    size_t i = n;
    int back = 0;
    while (i > 0 && back < 4 && (p[i - 1] & 0xC0) == 0x80) i--, back++;
    if (i == 0) return 0;
    unsigned char c = p[i - 1];
    if (c < 0xC0) return 0;
    int need = tok_utf8_len(c);
    int have = back + 1;
    return need > have ? need - have : 0;
}

int pe_tok_display(const pe_tok *t, const int *ids, int n, const char **texts, char **pool,
                   char *err, size_t errlen)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->n_vocab)
            return tok_fail(err, errlen, PE_EINVAL, "token id %d: the vocabulary has ids 0..%d",
                            ids[i], t->n_vocab - 1);
        total += (size_t)t->out.len[ids[i]] + 1;
    }
    /* given[j]: leading continuation bytes of token j shown by an earlier token, whose last
     * character they finish */
    size_t *given = calloc((size_t)n + 1, sizeof *given);
    size_t *at = malloc(((size_t)n + 1) * sizeof *at);
    char *s = malloc(total + 1);
    if (!given || !at || !s) {
        free(given);
        free(at);
        free(s);
        return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        const unsigned char *p = (const unsigned char *)tok_str(&t->out, ids[i]);
        size_t len = (size_t)t->out.len[ids[i]];
        if (given[i] >= len) continue;
        int miss = utf8_missing(p + given[i], len - given[i]);
        for (int j = i + 1; miss > 0 && j < n; j++) {
            const unsigned char *q = (const unsigned char *)tok_str(&t->out, ids[j]);
            size_t qn = (size_t)t->out.len[ids[j]], take = 0;
            while (take < qn && miss > 0 && (q[take] & 0xC0) == 0x80) take++, miss--;
            given[j] = take;
            if (take < qn || take == 0) break; /* token j has more of its own, or none fit */
        }
    }
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        const char *p = tok_str(&t->out, ids[i]);
        size_t len = (size_t)t->out.len[ids[i]];
        at[i] = k;
        if (given[i] < len) {
            memcpy(s + k, p + given[i], len - given[i]);
            k += len - given[i];
            for (int j = i + 1; j < n && given[j]; j++) { /* the bytes it borrows */
                memcpy(s + k, tok_str(&t->out, ids[j]), given[j]);
                k += given[j];
                if (given[j] < (size_t)t->out.len[ids[j]]) break;
            }
        }
        s[k++] = '\0';
    }
    for (int i = 0; i < n; i++) texts[i] = s + at[i];
    free(given);
    free(at);
    *pool = s;
    return 0;
}

/* ---- accessors -------------------------------------------------------------------------- */

int pe_tok_vocab_size(const pe_tok *t)
{
    return t ? t->n_vocab : 0;
}
int pe_tok_bos(const pe_tok *t)
{
    return t ? t->bos : -1;
}
int pe_tok_eos(const pe_tok *t)
{
    return t ? t->eos : -1;
}
int pe_tok_adds_bos(const pe_tok *t)
{
    return t && t->adds_bos && t->bos >= 0;
}
int pe_tok_is_special(const pe_tok *t, int id)
{
    return t && id >= 0 && id < t->n_vocab && t->special[id];
}
int pe_tok_find(const pe_tok *t, const char *piece)
{
    if (!t || !piece) return -1;
    int id = tok_map_get(&t->map, &t->key, piece, strlen(piece));
    if (id >= 0) return id;
    for (int i = 0; i < t->n_added; i++)
        if (!strcmp(t->added[i].content, piece)) return t->added[i].id;
    return -1;
}
const char *pe_tok_format(const pe_tok *t)
{
    return t ? t->name : "";
}
const char *pe_tok_path(const pe_tok *t)
{
    return t ? t->path : "";
}
