/* tok_bpe.c: the machinery every tokenizer format shares: string and pair hash maps, the BPE
 * merge loop (a heap of candidate pairs over a linked list of symbols, so a long word merges in
 * O(n log n) rather than run.c's O(n^2) rescans, with the same result), PCRE2 split patterns and
 * UTF-8 helpers. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "tok_internal.h"

int tok_fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

int tok_push(pe_tok_ids *out, int id, int start, int end)
{
    if (out->n == out->cap) {
        int cap = out->cap ? out->cap * 2 : 64;
        int *ids = realloc(out->ids, (size_t)cap * sizeof *ids);
        if (!ids) return PE_ENOMEM;
        out->ids = ids;
        pe_tok_span *sp = realloc(out->spans, (size_t)cap * sizeof *sp);
        if (!sp) return PE_ENOMEM;
        out->spans = sp;
        out->cap = cap;
    }
    out->ids[out->n] = id;
    out->spans[out->n].start = start;
    out->spans[out->n].end = end;
    out->n++;
    return 0;
}

/* ---- strings ---------------------------------------------------------------------------- */

static int strs_grow(tok_strs *s, int n)
{
    if (n <= s->cap) return 0;
    int cap = s->cap ? s->cap : 256;
    while (cap < n) cap *= 2;
    size_t *off = realloc(s->off, (size_t)cap * sizeof *off);
    if (!off) return PE_ENOMEM;
    s->off = off;
    int *len = realloc(s->len, (size_t)cap * sizeof *len);
    if (!len) return PE_ENOMEM;
    s->len = len;
    for (int i = s->cap; i < cap; i++) s->off[i] = 0, s->len[i] = 0;
    s->cap = cap;
    return 0;
}

static long strs_store(tok_strs *s, const char *p, int len)
{
    if (!s->pool || s->used + (size_t)len + 1 > s->pool_cap) {
        size_t cap = s->pool_cap ? s->pool_cap : 4096;
        while (s->used + (size_t)len + 1 > cap) cap *= 2;
        char *pool = realloc(s->pool, cap);
        if (!pool) return PE_ENOMEM;
        if (!s->pool) pool[0] = '\0', s->used = 1; /* offset 0: the empty string */
        s->pool = pool;
        s->pool_cap = cap;
        if (s->used + (size_t)len + 1 > cap) return strs_store(s, p, len);
    }
    size_t at = s->used;
    if (len) memcpy(s->pool + at, p, (size_t)len);
    s->pool[at + (size_t)len] = '\0';
    s->used += (size_t)len + 1;
    return (long)at;
}

int tok_strs_set(tok_strs *s, int i, const char *p, int len)
{
    if (i < 0 || len < 0) return PE_EINVAL;
    if (strs_grow(s, i + 1)) return PE_ENOMEM;
    long at = strs_store(s, p, len);
    if (at < 0) return (int)at;
    s->off[i] = (size_t)at;
    s->len[i] = len;
    if (i >= s->n) s->n = i + 1;
    return i;
}

int tok_strs_add(tok_strs *s, const char *p, int len)
{
    return tok_strs_set(s, s->n, p, len);
}

void tok_strs_free(tok_strs *s)
{
    free(s->off);
    free(s->len);
    free(s->pool);
    memset(s, 0, sizeof *s);
}

/* ---- string -> id ----------------------------------------------------------------------- */

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

int tok_map_build(tok_map *m, const tok_strs *s)
{
    size_t cap = 16;
    while (cap < (size_t)s->n * 2 + 2) cap *= 2;
    m->slot = malloc(cap * sizeof *m->slot);
    if (!m->slot) return PE_ENOMEM;
    for (size_t i = 0; i < cap; i++) m->slot[i] = -1;
    m->mask = cap - 1;
    for (int id = 0; id < s->n; id++) {
        const char *p = tok_str(s, id);
        size_t h = hash_bytes(p, (size_t)s->len[id]) & m->mask;
        for (;; h = (h + 1) & m->mask) {
            int o = m->slot[h];
            if (o < 0) {
                m->slot[h] = id;
                break;
            }
            if (s->len[o] == s->len[id] && !memcmp(tok_str(s, o), p, (size_t)s->len[id])) break;
        }
    }
    return 0;
}

int tok_map_get(const tok_map *m, const tok_strs *s, const char *p, size_t len)
{
    if (!m->slot) return -1;
    for (size_t h = hash_bytes(p, len) & m->mask;; h = (h + 1) & m->mask) {
        int o = m->slot[h];
        if (o < 0) return -1;
        if ((size_t)s->len[o] == len && !memcmp(tok_str(s, o), p, len)) return o;
    }
}

void tok_map_free(tok_map *m)
{
    free(m->slot);
    m->slot = NULL;
    m->mask = 0;
}

/* ---- pairs ------------------------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    return x ^ (x >> 33);
}

static int pairs_grow(tok_pairs *p)
{
    size_t cap = p->slot ? (p->mask + 1) * 2 : 1024;
    tok_pair *slot = malloc(cap * sizeof *slot);
    if (!slot) return PE_ENOMEM;
    for (size_t i = 0; i < cap; i++) slot[i].key = UINT64_MAX;
    if (p->slot) {
        for (size_t i = 0; i <= p->mask; i++) {
            if (p->slot[i].key == UINT64_MAX) continue;
            size_t h = mix64(p->slot[i].key) & (cap - 1);
            while (slot[h].key != UINT64_MAX) h = (h + 1) & (cap - 1);
            slot[h] = p->slot[i];
        }
    }
    free(p->slot);
    p->slot = slot;
    p->mask = cap - 1;
    return 0;
}

int tok_pairs_add(tok_pairs *p, int l, int r, int merged, double prio)
{
    if (l < 0 || r < 0) return PE_EINVAL;
    if (!p->slot || (p->n + 1) * 2 > p->mask + 1)
        if (pairs_grow(p)) return PE_ENOMEM;
    uint64_t key = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;
    size_t h = mix64(key) & p->mask;
    for (; p->slot[h].key != UINT64_MAX; h = (h + 1) & p->mask) {
        if (p->slot[h].key == key) {
            if (prio < p->slot[h].prio) p->slot[h].prio = prio, p->slot[h].merged = merged;
            return 0;
        }
    }
    p->slot[h].key = key;
    p->slot[h].merged = merged;
    p->slot[h].prio = prio;
    p->n++;
    return 0;
}

const tok_pair *tok_pairs_get(const tok_pairs *p, int l, int r)
{
    if (!p->slot) return NULL;
    uint64_t key = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;
    for (size_t h = mix64(key) & p->mask; p->slot[h].key != UINT64_MAX; h = (h + 1) & p->mask)
        if (p->slot[h].key == key) return &p->slot[h];
    return NULL;
}

void tok_pairs_free(tok_pairs *p)
{
    free(p->slot);
    memset(p, 0, sizeof *p);
}

int tok_pairs_from_vocab(tok_pairs *p, const tok_strs *keys, const tok_map *map,
                         double (*prio_of)(const pe_tok *t, int id), const pe_tok *t)
{
    for (int id = 0; id < keys->n; id++) {
        const char *s = tok_str(keys, id);
        int len = keys->len[id];
        if (len < 2 || tok_map_get(map, keys, s, (size_t)len) != id) continue;
        for (int k = 1; k < len; k++) {
            int l = tok_map_get(map, keys, s, (size_t)k);
            if (l < 0) continue;
            int r = tok_map_get(map, keys, s + k, (size_t)(len - k));
            if (r < 0) continue;
            if (tok_pairs_add(p, l, r, id, prio_of(t, id))) return PE_ENOMEM;
        }
    }
    return 0;
}

/* ---- merging ---------------------------------------------------------------------------- */

typedef struct cand {
    double prio;
    int pos, l, r;
} cand;

static int cand_less(const cand *a, const cand *b)
{
    return a->prio < b->prio || (a->prio == b->prio && a->pos < b->pos);
}

static void heap_push(cand *h, int *n, cand c)
{
    int i = (*n)++;
    while (i > 0) {
        int up = (i - 1) / 2;
        if (!cand_less(&c, &h[up])) break;
        h[i] = h[up];
        i = up;
    }
    h[i] = c;
}

static cand heap_pop(cand *h, int *n)
{
    cand top = h[0], last = h[--*n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && cand_less(&h[c + 1], &h[c])) c++;
        if (!cand_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

int tok_merge(const tok_pairs *p, tok_sym *s, int n)
{
    if (n < 2 || !p->n) return n;
    int *next = malloc((size_t)n * 2 * sizeof *next);
    /* each merge pushes at most two candidates: n - 1 at first, 2 (n - 1) later */
    cand *heap = malloc((size_t)n * 3 * sizeof *heap);
    if (!next || !heap) {
        free(next);
        free(heap);
        return PE_ENOMEM;
    }
    int *prev = next + n, nh = 0;
    for (int i = 0; i < n; i++) next[i] = i + 1, prev[i] = i - 1;
    for (int i = 0; i + 1 < n; i++) {
        const tok_pair *q = tok_pairs_get(p, s[i].id, s[i + 1].id);
        if (q) heap_push(heap, &nh, (cand){q->prio, i, s[i].id, s[i + 1].id});
    }
    while (nh) {
        cand c = heap_pop(heap, &nh);
        int r = next[c.pos];
        if (s[c.pos].id != c.l || r >= n || s[r].id != c.r) continue; /* stale */
        const tok_pair *q = tok_pairs_get(p, c.l, c.r);
        s[c.pos].id = q->merged;
        s[c.pos].end = s[r].end;
        s[r].id = -1;
        next[c.pos] = next[r];
        if (next[r] < n) prev[next[r]] = c.pos;
        int a = prev[c.pos], b = next[c.pos];
        if (a >= 0 && (q = tok_pairs_get(p, s[a].id, s[c.pos].id)))
            heap_push(heap, &nh, (cand){q->prio, a, s[a].id, s[c.pos].id});
        if (b < n && (q = tok_pairs_get(p, s[c.pos].id, s[b].id)))
            heap_push(heap, &nh, (cand){q->prio, c.pos, s[c.pos].id, s[b].id});
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (s[i].id >= 0) s[k++] = s[i];
    free(next);
    free(heap);
    return k;
}

/* ---- UTF-8 ------------------------------------------------------------------------------ */

int tok_utf8_len(unsigned char c)
{
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) return 2;
    if ((c & 0xF0) == 0xE0) return 3;
    if ((c & 0xF8) == 0xF0) return 4;
    return 1;
}

int tok_utf8_get(const unsigned char *p, size_t n, unsigned *cp)
{
    if (!n) return 0;
    unsigned c = p[0];
    int len = tok_utf8_len((unsigned char)c);
    if (len == 1) {
        if (c >= 0x80) return 0;
        *cp = c;
        return 1;
    }
    if ((size_t)len > n) return 0;
    unsigned v = c & (0x7Fu >> len);
    for (int i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (p[i] & 0x3Fu);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

int tok_utf8_valid(const unsigned char *p, size_t n)
{
    unsigned cp;
    return tok_utf8_get(p, n, &cp);
}

int tok_utf8_put(unsigned cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* GPT-2's bytes_to_unicode(): printable Latin-1 bytes stand for themselves, the other 68 bytes
 * take the code points 256, 257, ... in byte order. */
static int byte_printable(int b)
{
    return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
}

unsigned tok_byte_cp(int b)
{
    if (byte_printable(b)) return (unsigned)b;
    unsigned n = 0;
    for (int i = 0; i < b; i++) n += !byte_printable(i);
    return 256 + n;
}

int tok_cp_byte(unsigned cp)
{
    if (cp < 256) return byte_printable((int)cp) ? (int)cp : -1;
    unsigned n = 256;
    for (int b = 0; b < 256; b++) {
        if (byte_printable(b)) continue;
        if (n++ == cp) return b;
    }
    return -1;
}

/* ---- split patterns --------------------------------------------------------------------- */

void *tok_regex_new(const char *pattern, const char *path, char *err, size_t errlen)
{
    int code;
    PCRE2_SIZE at;
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                      PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code, &at, NULL);
    if (!re) {
        char msg[160];
        pcre2_get_error_message(code, (PCRE2_UCHAR *)msg, sizeof msg);
        tok_fail(err, errlen, PE_TOK_EFORMAT,
                 "%s: the split pattern does not compile at offset %zu: %s", path, (size_t)at, msg);
        return NULL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* optional: the interpreter works without it */
    return re;
}

int tok_regex_split(void *code, const char *text, size_t len,
                    int (*piece)(void *ctx, size_t start, size_t end), void *ctx, char *err,
                    size_t errlen)
{
    pcre2_code *re = code;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    pcre2_match_context *mc = NULL;
    pcre2_jit_stack *js = NULL; /* made only when the default 32 KiB JIT stack runs out */
    int st = 0;
    if (!md) {
        st = tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        goto done;
    }
    size_t pos = 0, gap = 0;
    while (pos < len) {
        int rc = pcre2_match(re, (PCRE2_SPTR)text, len, pos, 0, md, mc);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT && !js) {
            /* long runs of spaces backtrack deeply in \s+(?!\S): retry on a larger stack */
            mc = pcre2_match_context_create(NULL);
            js = pcre2_jit_stack_create(32 * 1024, 16 * 1024 * 1024, NULL);
            if (!mc || !js) {
                st = tok_fail(err, errlen, PE_ENOMEM, "out of memory");
                goto done;
            }
            pcre2_jit_stack_assign(mc, NULL, js);
            continue;
        }
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            char msg[160];
            pcre2_get_error_message(rc, (PCRE2_UCHAR *)msg, sizeof msg);
            st = tok_fail(err, errlen, PE_EINVAL, "the split pattern failed at byte %zu: %s", pos,
                          msg);
            goto done;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t s = ov[0], e = ov[1];
        if (e == s) { /* an empty match: step over one character */
            pos = s + (size_t)tok_utf8_len((unsigned char)text[s]);
            if (pos > len) pos = len;
            continue;
        }
        if (s > gap && (st = piece(ctx, gap, s)) < 0) goto done;
        if ((st = piece(ctx, s, e)) < 0) goto done;
        pos = gap = e;
    }
    if (gap < len && (st = piece(ctx, gap, len)) < 0) goto done;
    st = 0;
done:
    if (js) pcre2_jit_stack_free(js);
    pcre2_match_context_free(mc);
    pcre2_match_data_free(md);
    return st;
}

void tok_regex_free(void *re)
{
    pcre2_code_free(re);
}
