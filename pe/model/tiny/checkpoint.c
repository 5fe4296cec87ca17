/* checkpoint.c: the model file. Little-endian, explicit field by field (never a struct dump):
 *
 *   "PELABMDL"  u32 version  u64 file size  u32 config bytes  config  vocabulary
 *   u64 float count  float32 weights  u32 CRC-32 of all bytes before it
 *
 * The loader checks, in order: length, magic, version, declared size, checksum, then every
 * field against the ranges model_config_fix allows, the vocabulary, the weight count implied by
 * the config, and finally that every weight is finite. Each refusal says what is wrong.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"
#include "nn.h"

#define MAGIC        "PELABMDL"
#define VERSION      1u
#define HEADER_BYTES 24 /* magic, version, size, config bytes */
#define MAX_FILE     ((size_t)1 << 30)

static uint32_t crc32(const unsigned char *p, size_t n)
{
    static const uint32_t nib[16] = {0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
                                     0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
                                     0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
                                     0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c};
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        c = (c >> 4) ^ nib[c & 15];
        c = (c >> 4) ^ nib[c & 15];
    }
    return c ^ 0xffffffffu;
}

/* ---- writer ------------------------------------------------------------------------------- */

typedef struct wbuf {
    unsigned char *p;
    size_t n, cap;
    int oom;
} wbuf;

static void put(wbuf *w, const void *src, size_t n)
{
    if (w->oom) return;
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->n + n) cap *= 2;
        unsigned char *q = realloc(w->p, cap);
        if (!q) {
            w->oom = 1;
            return;
        }
        w->p = q;
        w->cap = cap;
    }
    memcpy(w->p + w->n, src, n);
    w->n += n;
}

static void put_u(wbuf *w, uint64_t v, int bytes)
{
    unsigned char b[8];
    for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(v >> (8 * i));
    put(w, b, (size_t)bytes);
}

static void put_i32(wbuf *w, int v)
{
    put_u(w, (uint32_t)v, 4);
}

static void put_f32(wbuf *w, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u(w, u, 4);
}

static void put_f64(wbuf *w, double f)
{
    uint64_t u;
    memcpy(&u, &f, 8);
    put_u(w, u, 8);
}

static void put_config(wbuf *w, const model_config *c)
{
    char name[16] = {0};
    memcpy(name, c->pe_name, strnlen(c->pe_name, 15));
    put(w, name, 16);
    int ints[] = {c->layers, c->dim, c->heads, c->ctx, c->hidden, c->vocab, c->tied, c->pos_len};
    for (size_t i = 0; i < 8; i++) put_i32(w, ints[i]);
    put_f32(w, c->emb_scale);
    put_u(w, c->seed, 8);
    put_u(w, c->data_seed, 8);
    put_u(w, c->grammar_hash, 8);
    put_i32(w, c->steps);
    put_i32(w, c->steps_done);
    put_i32(w, c->batch);
    put_i32(w, c->warmup);
    float fl[] = {c->lr, c->min_lr, c->weight_decay, c->clip, c->train_loss, c->heldout_loss};
    for (size_t i = 0; i < 6; i++) put_f32(w, fl[i]);
    const pe_params *p = &c->pe;
    put_i32(w, p->dim);
    put_i32(w, p->len);
    put_f64(w, p->base);
    put_i32(w, (int)p->layout);
    put_i32(w, (int)p->freq);
    put_i32(w, (int)p->pairing);
    put_f64(w, p->rotary_frac);
    put_i32(w, (int)p->scaling.type);
    put_f64(w, p->scaling.factor);
    put_i32(w, p->scaling.original_ctx);
    put_i32(w, p->scaling.seq_len);
    put_f64(w, p->scaling.beta_fast);
    put_f64(w, p->scaling.beta_slow);
    put_f64(w, p->scaling.low_freq_factor);
    put_f64(w, p->scaling.high_freq_factor);
    put_f64(w, p->scaling.attention_factor);
    put_i32(w, p->heads);
    put_f64(w, p->slope_ratio);
    put_i32(w, p->alibi_symmetric);
    put_i32(w, p->t5_buckets);
    put_i32(w, p->t5_max_distance);
    put_i32(w, p->t5_bidirectional);
    put_f64(w, p->xpos_scale_base);
    put_f64(w, p->learned_std);
    put_u(w, p->seed, 8);
    size_t cl = strnlen(c->command, MODEL_MAX_COMMAND - 1);
    put_u(w, cl, 2);
    put(w, c->command, cl);
}

/* Bytes of the config section for a command of cl bytes. */
static size_t config_bytes(size_t cl)
{
    return 16 + 8 * 4 + 4 + 3 * 8 + 4 * 4 + 6 * 4 + /* pe params */ 2 * 4 + 8 + 3 * 4 + 8 + 4 + 8 +
           2 * 4 + 5 * 8 + 4 + 8 + 4 * 4 + 2 * 8 + 8 + 2 + cl;
}

int model_write(model *m, FILE *f, char *err, size_t errlen)
{
    wbuf w = {0};
    size_t cl = strnlen(m->cfg.command, MODEL_MAX_COMMAND - 1);
    put(&w, MAGIC, 8);
    put_u(&w, VERSION, 4);
    put_u(&w, 0, 8); /* file size, patched below */
    put_u(&w, config_bytes(cl), 4);
    size_t at = w.n;
    put_config(&w, &m->cfg);
    if (!w.oom && w.n - at != config_bytes(cl)) {
        free(w.p);
        return model_fail(err, errlen, PE_EINVAL, "internal error: config section size");
    }
    put_u(&w, (uint64_t)m->vocab.n, 4);
    for (int i = 0; i < m->vocab.n; i++) {
        size_t l = strlen(m->vocab.words[i]);
        put_u(&w, l, 1);
        put(&w, m->vocab.words[i], l);
    }
    put_u(&w, m->n_params, 8);
    for (size_t i = 0; i < m->n_params; i++) put_f32(&w, m->params[i]);
    put_u(&w, 0, 4);
    if (w.oom) {
        free(w.p);
        return model_fail(err, errlen, PE_ENOMEM, "out of memory");
    }
    for (int i = 0; i < 8; i++) w.p[12 + i] = (unsigned char)((uint64_t)w.n >> (8 * i));
    uint32_t crc = crc32(w.p, w.n - 4);
    for (int i = 0; i < 4; i++) w.p[w.n - 4 + (size_t)i] = (unsigned char)(crc >> (8 * i));
    int ok = fwrite(w.p, 1, w.n, f) == w.n;
    free(w.p);
    if (!ok) return model_fail(err, errlen, MODEL_EIO, "write failed");
    m->cfg.checksum = crc;
    return 0;
}

/* ---- reader ------------------------------------------------------------------------------- */

typedef struct rbuf {
    const unsigned char *p;
    size_t n, at;
    int short_;
} rbuf;

static uint64_t get_u(rbuf *r, int bytes)
{
    if (r->short_ || r->n - r->at < (size_t)bytes) {
        r->short_ = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint64_t)r->p[r->at + (size_t)i] << (8 * i);
    r->at += (size_t)bytes;
    return v;
}

static int get_i32(rbuf *r)
{
    return (int)(int32_t)(uint32_t)get_u(r, 4);
}

static float get_f32(rbuf *r)
{
    uint32_t u = (uint32_t)get_u(r, 4);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double get_f64(rbuf *r)
{
    uint64_t u = get_u(r, 8);
    double f;
    memcpy(&f, &u, 8);
    return f;
}

static void get_config(rbuf *r, model_config *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 16; i++) c->pe_name[i] = (char)get_u(r, 1);
    c->pe_name[15] = 0;
    c->layers = get_i32(r);
    c->dim = get_i32(r);
    c->heads = get_i32(r);
    c->ctx = get_i32(r);
    c->hidden = get_i32(r);
    c->vocab = get_i32(r);
    c->tied = get_i32(r);
    c->pos_len = get_i32(r);
    c->emb_scale = get_f32(r);
    c->seed = get_u(r, 8);
    c->data_seed = get_u(r, 8);
    c->grammar_hash = get_u(r, 8);
    c->steps = get_i32(r);
    c->steps_done = get_i32(r);
    c->batch = get_i32(r);
    c->warmup = get_i32(r);
    c->lr = get_f32(r);
    c->min_lr = get_f32(r);
    c->weight_decay = get_f32(r);
    c->clip = get_f32(r);
    c->train_loss = get_f32(r);
    c->heldout_loss = get_f32(r);
    pe_params *p = &c->pe;
    pe_params_default(p); /* fields the format does not store keep their defaults */
    p->dim = get_i32(r);
    p->len = get_i32(r);
    p->base = get_f64(r);
    p->layout = (pe_layout)get_i32(r);
    p->freq = (pe_freq)get_i32(r);
    p->pairing = (pe_pairing)get_i32(r);
    p->rotary_frac = get_f64(r);
    p->scaling.type = (pe_scaling_type)get_i32(r);
    p->scaling.factor = get_f64(r);
    p->scaling.original_ctx = get_i32(r);
    p->scaling.seq_len = get_i32(r);
    p->scaling.beta_fast = get_f64(r);
    p->scaling.beta_slow = get_f64(r);
    p->scaling.low_freq_factor = get_f64(r);
    p->scaling.high_freq_factor = get_f64(r);
    p->scaling.attention_factor = get_f64(r);
    p->heads = get_i32(r);
    p->slope_ratio = get_f64(r);
    p->alibi_symmetric = get_i32(r);
    p->t5_buckets = get_i32(r);
    p->t5_max_distance = get_i32(r);
    p->t5_bidirectional = get_i32(r);
    p->xpos_scale_base = get_f64(r);
    p->learned_std = get_f64(r);
    p->seed = get_u(r, 8);
    size_t cl = (size_t)get_u(r, 2);
    if (cl >= MODEL_MAX_COMMAND || r->short_ || r->n - r->at < cl) {
        r->short_ = 1;
        return;
    }
    memcpy(c->command, r->p + r->at, cl);
    c->command[cl] = 0;
    r->at += cl;
}

int model_load_mem(const unsigned char *buf, size_t len, model *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (len < 8)
        return model_fail(err, errlen, MODEL_EFORMAT,
                          "too short to be a pelab model (%zu bytes; the header alone has %d)", len,
                          HEADER_BYTES);
    if (memcmp(buf, MAGIC, 8))
        return model_fail(err, errlen, MODEL_EFORMAT,
                          "not a pelab checkpoint (bad magic: it does not start with \"%s\")",
                          MAGIC);
    if (len < HEADER_BYTES)
        return model_fail(err, errlen, MODEL_EFORMAT,
                          "truncated: %zu bytes, the header alone has %d", len, HEADER_BYTES);
    rbuf r = {buf, len, 8, 0};
    uint32_t version = (uint32_t)get_u(&r, 4);
    if (version != VERSION)
        return model_fail(err, errlen, MODEL_EFORMAT,
                          "version %u: this pelab reads model files of version %u", version,
                          VERSION);
    uint64_t size = get_u(&r, 8);
    if (size > len)
        return model_fail(err, errlen, MODEL_EFORMAT,
                          "truncated: %zu of %llu bytes (the file was cut short)", len,
                          (unsigned long long)size);
    if (size < len)
        return model_fail(err, errlen, MODEL_EFORMAT,
                          "%zu bytes of unexpected data after the end of the model (%llu bytes)",
                          len - (size_t)size, (unsigned long long)size);
    if (len < HEADER_BYTES + 4)
        return model_fail(err, errlen, MODEL_EFORMAT, "truncated: no room for the checksum");
    uint32_t stored = (uint32_t)buf[len - 4] | (uint32_t)buf[len - 3] << 8 |
                      (uint32_t)buf[len - 2] << 16 | (uint32_t)buf[len - 1] << 24;
    uint32_t crc = crc32(buf, len - 4);
    if (crc != stored)
        return model_fail(err, errlen, MODEL_EFORMAT,
                          "corrupted: checksum %08x does not match the contents (%08x)", stored,
                          crc);
    /* From here the bytes are what model_write wrote (or were forged with a valid checksum):
     * still check every field. */
    r.n = len - 4;
    uint32_t cfg_bytes = (uint32_t)get_u(&r, 4);
    size_t cfg_at = r.at;
    model_config c;
    get_config(&r, &c);
    if (r.short_)
        return model_fail(err, errlen, MODEL_EFORMAT, "truncated inside the config section");
    if (r.at - cfg_at != cfg_bytes)
        return model_fail(err, errlen, MODEL_EFORMAT,
                          "config section has %u bytes, version %u stores %zu", cfg_bytes, VERSION,
                          r.at - cfg_at);
    model_config fixed = c;
    char why[200];
    if (model_config_fix(&fixed, why, sizeof why))
        return model_fail(err, errlen, MODEL_EFORMAT, "bad config: %s", why);
    if (fixed.pos_len != c.pos_len || fixed.emb_scale != c.emb_scale || fixed.pe.dim != c.pe.dim ||
        fixed.pe.len != c.pe.len || fixed.pe.heads != c.pe.heads)
        return model_fail(err, errlen, MODEL_EFORMAT,
                          "bad config: derived sizes disagree (position table %d rows, expected "
                          "%d)",
                          c.pos_len, fixed.pos_len);
    int nv = (int)get_u(&r, 4);
    if (r.short_) return model_fail(err, errlen, MODEL_EFORMAT, "truncated before the vocabulary");
    if (nv != c.vocab)
        return model_fail(err, errlen, MODEL_EFORMAT,
                          "vocabulary has %d tokens, the config says %d", nv, c.vocab);
    char *pool = malloc((size_t)nv * (TOK_MAX_WORD + 1));
    const char **words = malloc((size_t)nv * sizeof *words);
    int rc = 0;
    if (!pool || !words) {
        rc = model_fail(err, errlen, PE_ENOMEM, "out of memory for the vocabulary");
        goto out;
    }
    for (int i = 0; i < nv; i++) {
        size_t l = (size_t)get_u(&r, 1);
        if (r.short_ || r.n - r.at < l) {
            rc = model_fail(err, errlen, MODEL_EFORMAT, "truncated inside vocabulary token %d", i);
            goto out;
        }
        char *w = pool + (size_t)i * (TOK_MAX_WORD + 1);
        if (l == 0 || l > TOK_MAX_WORD || memchr(r.p + r.at, 0, l)) {
            rc = model_fail(err, errlen, MODEL_EFORMAT,
                            "vocabulary token %d has a bad length (%zu) or a NUL byte", i, l);
            goto out;
        }
        memcpy(w, r.p + r.at, l);
        w[l] = 0;
        r.at += l;
        words[i] = w;
    }
    if (tok_vocab_init(&m->vocab, words, nv, why, sizeof why)) {
        rc = model_fail(err, errlen, MODEL_EFORMAT, "bad vocabulary: %s", why);
        goto out;
    }
    uint64_t nf = get_u(&r, 8);
    size_t need = model_config_params(&c);
    if (r.short_) {
        rc = model_fail(err, errlen, MODEL_EFORMAT, "truncated before the weights");
        goto out;
    }
    if (nf != need) {
        rc = model_fail(err, errlen, MODEL_EFORMAT,
                        "wrong size: the file holds %llu weights, the config needs %zu",
                        (unsigned long long)nf, need);
        goto out;
    }
    if ((r.n - r.at) / 4 < need) {
        rc = model_fail(err, errlen, MODEL_EFORMAT,
                        "truncated: %zu bytes for %zu weights of 4 bytes", r.n - r.at, need);
        goto out;
    }
    if ((r.n - r.at) != need * 4) {
        rc = model_fail(err, errlen, MODEL_EFORMAT, "%zu unexpected bytes after the weights",
                        r.n - r.at - need * 4);
        goto out;
    }
    tok_vocab keep = m->vocab;
    memset(&m->vocab, 0, sizeof m->vocab);
    if ((rc = model_alloc(m, &c, err, errlen))) {
        tok_vocab_free(&keep);
        goto out;
    }
    m->vocab = keep;
    for (size_t i = 0; i < need; i++) {
        m->params[i] = get_f32(&r);
        if (!isfinite(m->params[i])) {
            rc = model_fail(err, errlen, MODEL_EFORMAT, "weight %zu is not a finite number", i);
            goto out;
        }
    }
    m->cfg.checksum = stored;
out:
    free(pool);
    free(words);
    if (rc) model_free(m);
    return rc;
}

int model_load(const char *path, model *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    /* infile.h: a FIFO nobody writes, a device or a folder are refused before reading, a file
     * over MAX_FILE by its size, and the read asks pe_work whether to stop */
    unsigned char *buf = NULL;
    size_t n = 0;
    int rc = pe_infile_read(path, "", MAX_FILE, (char **)&buf, &n, err, errlen);
    if (rc != PE_OK) return rc == PE_ENOMEM || rc == PE_ECANCELED ? rc : MODEL_EIO;
    if (!rc) {
        char why[256];
        rc = model_load_mem(buf, n, m, why, sizeof why);
        if (rc) model_fail(err, errlen, rc, "%s: %s", path, why);
    }
    free(buf);
    return rc;
}
