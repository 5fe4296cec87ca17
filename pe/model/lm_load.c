/* lm_load.c: opening a checkpoint (which loader), the storage of a model (maps, copies, the
 * memory budget) and the llama2.c .bin format. */
#define _DEFAULT_SOURCE /* madvise, MADV_DONTNEED: POSIX_MADV_DONTNEED is a no-op in glibc */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"
#include "lm_internal.h"

const char *lm_base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

int lm_read_head(const char *path, unsigned char *buf, size_t n, size_t *got, uint64_t *file_size,
                 char *err, size_t errlen)
{
    /* pe_infile's rules (infile.h): the open never waits (a FIFO nobody writes), a device, a
     * socket or a folder is refused before reading; only a regular file is read here, since
     * the weights are mapped. The file is noted as an input, so no -o may replace it. */
    int rc = pe_infile_check(path, "", err, errlen);
    if (rc != PE_OK) return rc;
    pe_infile_note(path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return pe_fail(err, errlen, PE_EINVAL, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return pe_fail(err, errlen, PE_EINVAL,
                       "%s: not a regular file (the weights are memory-mapped)", path);
    }
    size_t have = 0;
    while (have < n) {
        ssize_t r = read(fd, buf + have, n - have);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return pe_fail(err, errlen, PE_EINVAL, "%s: cannot read: %s", path, strerror(e));
        }
        if (r == 0) break;
        have += (size_t)r;
    }
    close(fd);
    *got = have;
    *file_size = (uint64_t)st.st_size;
    return PE_OK;
}

int lm_reserve(lm_model *m, size_t bytes, char *err, size_t errlen)
{
    char what[160];
    snprintf(what, sizeof what, "the model %s", lm_base_name(m->path));
    int rc = pe_mem_reserve_hint(bytes, what, "a smaller model needs less", err, errlen);
    if (rc == PE_OK) m->held += bytes;
    return rc;
}

int lm_map_add(lm_model *m, const char *path, uint64_t size, const void **base, char *err,
               size_t errlen)
{
    if (size == 0 || size > (uint64_t)SIZE_MAX)
        return pe_fail(err, errlen, PE_EINVAL, "%s: empty or too large to map", path);
    lm_map *nm = realloc(m->maps, (size_t)(m->n_maps + 1) * sizeof *nm);
    if (!nm) return pe_fail(err, errlen, PE_ENOMEM, "%s: out of memory", path);
    m->maps = nm;
    /* never waits: the file was a regular one when its head was read; if it was replaced by a
     * FIFO since, the size check below refuses it */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return pe_fail(err, errlen, PE_EINVAL, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != size) {
        close(fd);
        return pe_fail(err, errlen, PE_EINVAL, "%s: the file changed while it was being read",
                       path);
    }
    void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return pe_fail(err, errlen, PE_ENOMEM, "%s: cannot map %llu bytes: %s", path,
                       (unsigned long long)size, strerror(e));
    m->maps[m->n_maps].base = p;
    m->maps[m->n_maps].size = (size_t)size;
    m->n_maps++;
    *base = p;
    return PE_OK;
}

float *lm_buf_add(lm_model *m, size_t count, char *err, size_t errlen)
{
    if (m->n_bufs == m->cap_bufs) {
        int cap = m->cap_bufs ? 2 * m->cap_bufs : 16;
        float **nb = realloc(m->bufs, (size_t)cap * sizeof *nb);
        if (nb) m->bufs = nb;
        size_t *nn = nb ? realloc(m->buf_n, (size_t)cap * sizeof *nn) : NULL;
        if (!nn) {
            pe_fail(err, errlen, PE_ENOMEM, "out of memory for the model's tensors");
            return NULL;
        }
        m->buf_n = nn;
        m->cap_bufs = cap;
    }
    /* 64-byte aligned (the packed panels are read by aligned 64-byte loads), huge pages for
     * the big ones (fewer faults while packing, fewer TLB misses while reading) */
    float *b = pe_floats_map(count);
    if (!b) {
        pe_fail(err, errlen, PE_ENOMEM, "out of memory for a tensor of %zu floats", count);
        return NULL;
    }
    m->buf_n[m->n_bufs] = count;
    m->bufs[m->n_bufs++] = b;
    return b;
}

/* ---- packing the layers' linears ------------------------------------------------------------ */

/* The floats a linear's W spans from w (both layouts; a view of a fused matrix spans rows of
 * the whole). */
static size_t lin_extent(const lm_linear *L)
{
    return L->t ? ((size_t)L->in - 1) * L->ld + (size_t)L->out
                : ((size_t)L->out - 1) * L->ld + (size_t)L->in;
}

/* Give back what held a layer's packed Ws: the copies they were converted into (each converted
 * tensor is a copy of its own; GPT-2's q, k and v views share c_attn's, freed once), or the
 * whole 4 KiB pages of their mapped ranges (the file stays mapped for the tensors around them; a
 * page shared with a neighbour stays). The views' ranges overlap, so the pages are merged before
 * they are counted. The bytes leave the budget. */
typedef struct span {
    uintptr_t a, e;
} span;

static int span_cmp(const void *x, const void *y)
{
    const span *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

static void give_back(lm_model *m, lm_linear *const *Ls, int n)
{
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    span sp[16];
    int ns = 0, cp[16], nc = 0;
    for (int k = 0; k < n && k < 16; k++) {
        const float *w = Ls[k]->w;
        if (!w) continue;
        int copy = -1;
        for (int i = 0; i < m->n_bufs && copy < 0; i++)
            if (m->bufs[i] && w >= m->bufs[i] && w < m->bufs[i] + m->buf_n[i]) copy = i;
        if (copy >= 0) {
            int seen = 0;
            for (int j = 0; j < nc; j++) seen |= cp[j] == copy;
            if (!seen) cp[nc++] = copy;
            continue;
        }
        uintptr_t a = ((uintptr_t)w + pg - 1) & ~(pg - 1),
                  e = (uintptr_t)(w + lin_extent(Ls[k])) & ~(pg - 1);
        int mapped = 0;
        for (int i = 0; i < m->n_maps; i++) {
            uintptr_t b0 = (uintptr_t)m->maps[i].base, b1 = b0 + m->maps[i].size;
            mapped |= m->maps[i].size && (uintptr_t)w >= b0 && (uintptr_t)w < b1;
        }
        if (mapped && e > a) sp[ns++] = (span){a, e};
    }
    for (int j = 0; j < nc; j++) {
        size_t bytes = m->buf_n[cp[j]] * sizeof(float);
        pe_floats_unmap(m->bufs[cp[j]], m->buf_n[cp[j]]);
        m->bufs[cp[j]] = NULL;
        m->buf_n[cp[j]] = 0;
        pe_mem_release(bytes);
        m->held -= bytes;
    }
    qsort(sp, (size_t)ns, sizeof *sp, span_cmp);
    for (int i = 0; i < ns;) {
        uintptr_t a = sp[i].a, e = sp[i].e;
        for (i++; i < ns && sp[i].a <= e; i++)
            if (sp[i].e > e) e = sp[i].e;
        /* a read-only private file map: the pages leave the process (a later read would fault
         * them back from the file, but nothing reads W once packed) */
        madvise((void *)a, e - a, MADV_DONTNEED);
        pe_mem_release(e - a);
        m->held -= e - a;
    }
}

/* Pack every layer's linears into panels (lm_linear_pack), a layer at a time: its panels are
 * reserved in the budget, then its sources given back, so the model holds about what it held
 * before (one layer more while packing). Why: the prompt's matrix products then read W in the
 * order the registers take it, with no copy per call (twice the prompt's speed, README). */
static int pack_layers(lm_model *m, char *err, size_t errlen)
{
    for (int l = 0; l < m->c.n_layers; l++) {
        lm_layer *ly = &m->layers[l];
        lm_linear *Ls[] = {&ly->q, &ly->k, &ly->v, &ly->o, &ly->gate, &ly->up, &ly->down};
        enum { NL = sizeof Ls / sizeof Ls[0] };
        size_t n = 0;
        for (int i = 0; i < NL; i++)
            if (Ls[i]->w) n += lm_linear_packed_floats(Ls[i]->in, Ls[i]->out);
        int rc = lm_reserve(m, n * sizeof(float), err, errlen);
        if (rc) return rc;
        float *buf = lm_buf_add(m, n, err, errlen);
        if (!buf) return PE_ENOMEM;
        for (int i = 0; i < NL; i++)
            if (Ls[i]->w) {
                lm_linear_pack(Ls[i], buf);
                buf += lm_linear_packed_floats(Ls[i]->in, Ls[i]->out);
            }
        give_back(m, Ls, NL);
        for (int i = 0; i < NL; i++) Ls[i]->w = NULL;
    }
    return PE_OK;
}

void lm_close(lm_model *m)
{
    if (!m) return;
    for (int i = 0; i < m->n_maps; i++)
        if (m->maps[i].size) munmap(m->maps[i].base, m->maps[i].size);
    lm_spare_free(m);
    for (int i = 0; i < m->n_bufs; i++) pe_floats_unmap(m->bufs[i], m->buf_n[i]);
    free(m->maps);
    free(m->bufs);
    free(m->buf_n);
    free(m->layers);
    if (m->held) pe_mem_release(m->held);
    free(m);
}

size_t lm_param_count(const lm_config *c)
{
    size_t d = (size_t)c->dim, hd = (size_t)c->head_dim, q = (size_t)c->n_heads * hd,
           kv = (size_t)c->n_kv_heads * hd, f = (size_t)c->hidden_dim, V = (size_t)c->vocab;
    size_t per;
    size_t n = V * d + (c->tied ? 0 : V * d);
    if (c->arch == LM_ARCH_GPT2) {
        per = 2 * d + d * 3 * d + 3 * d + d * d + d + 2 * d + d * f + f + f * d + d;
        n += (size_t)c->seq_len * d + 2 * d;
    } else {
        per = 2 * d + d * q + 2 * d * kv + q * d + 3 * d * f;
        if (c->qkv_bias) per += q + 2 * kv;
        if (c->o_bias) per += d;
        if (c->mlp_bias) per += 2 * f + d;
        n += d;
    }
    return n + (size_t)c->n_layers * per;
}

/* ---- llama2.c ----------------------------------------------------------------------------- */

#define AK42_MAGIC 0x616b3432u

static int32_t rd_i32(const unsigned char *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    int32_t r;
    memcpy(&r, &v, sizeof r);
    return r;
}

static int check_range(const char *name, const char *field, long long v, long long lo, long long hi,
                       char *err, size_t errlen)
{
    if (v < lo || v > hi)
        return pe_fail(err, errlen, PE_EINVAL,
                       "%s: llama2.c header: %s %lld is impossible (allowed %lld..%lld)", name,
                       field, v, lo, hi);
    return PE_OK;
}

int lm_llama2c_parse(const unsigned char *buf, size_t len, uint64_t file_size, const char *name,
                     lm_config *c, size_t *data_off, char *err, size_t errlen)
{
    if (len < 28 || file_size < 28)
        return pe_fail(err, errlen, PE_EINVAL,
                       "%s: %llu bytes is too short for a llama2.c checkpoint (a 28-byte header "
                       "and the weights)",
                       name, (unsigned long long)file_size);
    int32_t h[7];
    int shared, v1 = 0;
    size_t off;
    if ((uint32_t)rd_i32(buf) == AK42_MAGIC) {
        if (len < 256 || file_size < 256)
            return pe_fail(err, errlen, PE_EINVAL,
                           "%s: truncated: the \"ak42\" header is 256 bytes, the file has %llu",
                           name, (unsigned long long)file_size);
        int32_t version = rd_i32(buf + 4);
        if (version != 1)
            return pe_fail(err, errlen, PE_EINVAL,
                           "%s: llama2.c export version %d is not supported (version 1, "
                           "float32, is; version 2 is Q8_0 quantized)",
                           name, (int)version);
        for (int i = 0; i < 7; i++) h[i] = rd_i32(buf + 8 + 4 * i);
        shared = buf[36];
        if (shared > 1)
            return pe_fail(err, errlen, PE_EINVAL,
                           "%s: llama2.c header: shared_classifier %d must be 0 or 1", name,
                           shared);
        if (h[5] <= 0)
            return pe_fail(err, errlen, PE_EINVAL,
                           "%s: llama2.c header: vocab_size %d must be positive in version 1", name,
                           (int)h[5]);
        off = 256;
        v1 = 1;
    } else {
        for (int i = 0; i < 7; i++) h[i] = rd_i32(buf + 4 * i);
        shared = h[5] > 0;
        if (h[5] == INT32_MIN)
            return pe_fail(err, errlen, PE_EINVAL,
                           "%s: llama2.c header: vocab_size %d is impossible", name, (int)h[5]);
        if (h[5] < 0) h[5] = -h[5];
        off = 28;
    }
    int rc;
    if ((rc = check_range(name, "dim", h[0], 1, LM_MAX_DIM, err, errlen)) ||
        (rc = check_range(name, "hidden_dim", h[1], 1, 4LL * LM_MAX_DIM, err, errlen)) ||
        (rc = check_range(name, "n_layers", h[2], 1, LM_MAX_LAYERS, err, errlen)) ||
        (rc = check_range(name, "n_heads", h[3], 1, PE_MAX_HEADS, err, errlen)) ||
        (rc = check_range(name, "n_kv_heads", h[4], 1, h[3], err, errlen)) ||
        (rc = check_range(name, "vocab_size", h[5], 1, LM_MAX_VOCAB, err, errlen)) ||
        (rc = check_range(name, "seq_len", h[6], 1, LM_MAX_CTX, err, errlen)))
        return rc;
    if (h[0] % h[3] != 0 || (h[0] / h[3]) % 2 != 0)
        return pe_fail(err, errlen, PE_EINVAL,
                       "%s: llama2.c header: dim %d must split into %d heads of an even size", name,
                       (int)h[0], (int)h[3]);
    if (h[3] % h[4] != 0)
        return pe_fail(err, errlen, PE_EINVAL,
                       "%s: llama2.c header: n_heads %d is not a multiple of n_kv_heads %d", name,
                       (int)h[3], (int)h[4]);
    memset(c, 0, sizeof *c);
    c->arch = LM_ARCH_LLAMA;
    c->format = LM_FORMAT_LLAMA2C;
    snprintf(c->arch_name, sizeof c->arch_name, "%s", v1 ? "llama2.c v1" : "llama2.c");
    c->dim = h[0];
    c->hidden_dim = h[1];
    c->n_layers = h[2];
    c->n_heads = h[3];
    c->n_kv_heads = h[4];
    c->head_dim = h[0] / h[3];
    c->vocab = h[5];
    c->seq_len = h[6];
    c->norm_eps = 1e-5;
    c->tied = shared;
    c->bos_id = 1;
    c->eos_id = 2;
    pe_params_default(&c->rope);
    c->rope.dim = c->head_dim;
    c->rope.len = c->seq_len;
    c->rope.base = 10000.0;
    c->rope.pairing = PE_PAIRING_INTERLEAVED; /* run.c rotates (2i, 2i+1) of each head */
    c->rope.rotary_frac = 1.0;
    /* Sizes in 64 bits: each factor is bounded above, so no product overflows. */
    uint64_t d = (uint64_t)c->dim, L = (uint64_t)c->n_layers,
             kv = (uint64_t)c->n_kv_heads * (uint64_t)c->head_dim, f = (uint64_t)c->hidden_dim,
             V = (uint64_t)c->vocab;
    uint64_t floats = V * d + L * (2 * d + 2 * d * d + 2 * kv * d + 3 * f * d) + d;
    if (!v1) floats += (uint64_t)c->seq_len * (uint64_t)c->head_dim; /* freq_cis real + imag */
    if (!shared) floats += V * d;
    uint64_t want = (uint64_t)off + 4 * floats;
    if (want != file_size)
        return pe_fail(err, errlen, PE_EINVAL,
                       "%s: the llama2.c header (dim %d, hidden %d, %d layers, %d heads, %d kv "
                       "heads, vocab %d%s, seq_len %d) needs %llu bytes, the file has %llu",
                       name, c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads,
                       c->vocab, shared ? "" : " untied", c->seq_len, (unsigned long long)want,
                       (unsigned long long)file_size);
    *data_off = off;
    return PE_OK;
}

static lm_linear lin(const float *w, int out, int in)
{
    return (lm_linear){.w = w, .in = in, .out = out, .ld = (size_t)in};
}

int lm_load_llama2c(lm_model *m, const char *path, char *err, size_t errlen)
{
    unsigned char head[256];
    size_t got;
    uint64_t fsize;
    int rc = lm_read_head(path, head, sizeof head, &got, &fsize, err, errlen);
    if (rc) return rc;
    size_t off;
    rc = lm_llama2c_parse(head, got, fsize, lm_base_name(path), &m->c, &off, err, errlen);
    if (rc) return rc;
    const lm_config *c = &m->c;
    if ((rc = lm_reserve(m, (size_t)fsize, err, errlen))) return rc;
    m->layers = calloc((size_t)c->n_layers, sizeof *m->layers);
    if (!m->layers) return pe_fail(err, errlen, PE_ENOMEM, "out of memory");
    const void *base;
    if ((rc = lm_map_add(m, path, fsize, &base, err, errlen))) return rc;
    const float *p = (const float *)((const char *)base + off);
    size_t d = (size_t)c->dim, L = (size_t)c->n_layers, hd = (size_t)c->head_dim,
           kv = (size_t)c->n_kv_heads * hd, f = (size_t)c->hidden_dim, V = (size_t)c->vocab;
    int D = c->dim, KV = (int)kv, F = c->hidden_dim;
    const float *rms_att, *rms_ffn = NULL, *wq, *wk, *wv, *wo, *w1, *w2, *w3;
    if (strcmp(c->arch_name, "llama2.c v1") == 0) {
        rms_att = p, p += L * d;
        rms_ffn = p, p += L * d;
        m->norm_f = p, p += d;
        m->tok_emb = p, p += V * d;
    } else {
        m->tok_emb = p, p += V * d;
        rms_att = p, p += L * d;
    }
    wq = p, p += L * d * d;
    wk = p, p += L * kv * d;
    wv = p, p += L * kv * d;
    wo = p, p += L * d * d;
    if (strcmp(c->arch_name, "llama2.c v1") != 0) rms_ffn = p, p += L * d;
    w1 = p, p += L * f * d;
    w2 = p, p += L * d * f;
    w3 = p, p += L * f * d;
    if (strcmp(c->arch_name, "llama2.c v1") != 0) {
        m->norm_f = p, p += d;
        p += (size_t)c->seq_len * hd; /* freq_cis_real, freq_cis_imag: recomputed from pe/ */
    }
    m->cls = c->tied ? m->tok_emb : p;
    for (size_t l = 0; l < L; l++) {
        lm_layer *ly = &m->layers[l];
        ly->norm1 = rms_att + l * d;
        ly->norm2 = rms_ffn + l * d;
        ly->q = lin(wq + l * d * d, D, D);
        ly->k = lin(wk + l * kv * d, KV, D);
        ly->v = lin(wv + l * kv * d, KV, D);
        ly->o = lin(wo + l * d * d, D, D);
        ly->gate = lin(w1 + l * f * d, F, D);
        ly->down = lin(w2 + l * d * f, D, F);
        ly->up = lin(w3 + l * f * d, F, D);
    }
    return PE_OK;
}

/* ---- opening ------------------------------------------------------------------------------- */

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The folder of a file inside a Hugging Face folder, or "" when path is not one. */
static void hf_folder(const char *path, char *dir, size_t size)
{
    dir[0] = '\0';
    if (is_dir(path)) {
        snprintf(dir, size, "%s", path);
        return;
    }
    const char *b = lm_base_name(path);
    if (strcmp(b, "config.json") == 0 || ends_with(b, ".safetensors") ||
        strcmp(b, "model.safetensors.index.json") == 0) {
        size_t n = (size_t)(b - path);
        if (n == 0)
            snprintf(dir, size, ".");
        else
            snprintf(dir, size, "%.*s", (int)(n > 1 ? n - 1 : n), path);
    }
}

int lm_probe(const char *path)
{
    char dir[1024], cfg[1100];
    hf_folder(path, dir, sizeof dir);
    if (dir[0]) {
        snprintf(cfg, sizeof cfg, "%s/config.json", dir);
        return access(cfg, R_OK) == 0;
    }
    return ends_with(path, ".bin") && access(path, R_OK) == 0;
}

int lm_open(const char *path, lm_model **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!path || !*path) return pe_fail(err, errlen, PE_EINVAL, "--model: empty path");
    if (strlen(path) >= sizeof((lm_model *)0)->path)
        return pe_fail(err, errlen, PE_EINVAL, "--model: the path is too long");
    lm_model *m = calloc(1, sizeof *m);
    if (!m) return pe_fail(err, errlen, PE_ENOMEM, "out of memory");
    snprintf(m->path, sizeof m->path, "%s", path);
    if (lm_spare_init(m, err, errlen) != PE_OK) {
        free(m);
        return PE_ENOMEM;
    }
    char dir[1024];
    hf_folder(path, dir, sizeof dir);
    int rc;
    if (dir[0])
        rc = lm_load_hf(m, dir, err, errlen);
    else if (access(path, F_OK) != 0)
        rc = pe_fail(err, errlen, PE_EINVAL, "--model %s: no such file or folder", path);
    else
        rc = lm_load_llama2c(m, path, err, errlen);
    if (rc == PE_OK) rc = pack_layers(m, err, errlen);
    if (rc != PE_OK) {
        lm_close(m);
        return rc;
    }
    *out = m;
    return PE_OK;
}
