/* gguf_meta.c: a GGUF header's rope metadata -> pe_hf_config (see gguf_meta.h). */
#include "gguf_meta.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* GGUF value types (ggml's gguf.h). */
enum {
    GT_U8,
    GT_I8,
    GT_U16,
    GT_I16,
    GT_U32,
    GT_I32,
    GT_F32,
    GT_BOOL,
    GT_STRING,
    GT_ARRAY,
    GT_U64,
    GT_I64,
    GT_F64,
    GT_COUNT
};
static const unsigned char type_size[GT_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

/* Bytes from memory or from a file; pos counts from the start, size bounds every skip (a file's
 * fseek past its end would not fail). */
typedef struct rd {
    const unsigned char *mem;
    FILE *f;
    uint64_t pos, size;
    const char *src;
    char *err;
    size_t errlen;
    int failed;
} rd;

__attribute__((format(printf, 2, 3))) static int fail(rd *r, const char *fmt, ...)
{
    if (!r->failed && r->err && r->errlen) {
        int n = snprintf(r->err, r->errlen, "%s: ", r->src);
        if (n >= 0 && (size_t)n < r->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    r->failed = 1;
    return PE_EINVAL;
}

static int get(rd *r, void *dst, uint64_t n, const char *what)
{
    if (r->failed) return PE_EINVAL;
    if (n > r->size - r->pos)
        return fail(r, "GGUF header truncated at byte %llu reading %s (the file has %llu bytes)",
                    (unsigned long long)r->pos, what, (unsigned long long)r->size);
    if (r->mem) {
        memcpy(dst, r->mem + r->pos, (size_t)n);
    } else if (fread(dst, 1, (size_t)n, r->f) != (size_t)n) {
        return fail(r, "cannot read byte %llu: %s", (unsigned long long)r->pos,
                    ferror(r->f) ? strerror(errno) : "unexpected end of file");
    }
    r->pos += n;
    return PE_OK;
}

static int skip(rd *r, uint64_t n, const char *what)
{
    if (r->failed) return PE_EINVAL;
    if (n > r->size - r->pos)
        return fail(r, "GGUF header truncated at byte %llu skipping %s (the file has %llu bytes)",
                    (unsigned long long)r->pos, what, (unsigned long long)r->size);
    if (!r->mem && fseeko(r->f, (off_t)n, SEEK_CUR) != 0)
        return fail(r, "cannot seek past byte %llu: %s", (unsigned long long)r->pos,
                    strerror(errno));
    r->pos += n;
    return PE_OK;
}

/* Little-endian integers, whatever the host. */
static uint64_t le(const unsigned char *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static int get_u32(rd *r, uint32_t *v, const char *what)
{
    unsigned char b[4];
    int rc = get(r, b, 4, what);
    if (rc == PE_OK) *v = (uint32_t)le(b, 4);
    return rc;
}

static int get_u64(rd *r, uint64_t *v, const char *what)
{
    unsigned char b[8];
    int rc = get(r, b, 8, what);
    if (rc == PE_OK) *v = le(b, 8);
    return rc;
}

/* A GGUF string: its length, then that many bytes. Keys and the strings pelab wants are short;
 * longer ones are skipped (*out = "" and *skipped = 1) or, for keys, refused. */
static int get_string(rd *r, char *out, size_t cap, int *skipped, const char *what)
{
    uint64_t n = 0;
    int rc = get_u64(r, &n, what);
    if (rc != PE_OK) return rc;
    if (n >= cap) {
        if (!skipped)
            return fail(r, "%s at byte %llu is %llu bytes long; keys are at most %zu", what,
                        (unsigned long long)(r->pos - 8), (unsigned long long)n, cap - 1);
        *skipped = 1;
        out[0] = '\0';
        return skip(r, n, what);
    }
    if ((rc = get(r, out, n, what)) != PE_OK) return rc;
    out[n] = '\0';
    if (skipped) *skipped = 0;
    if (strlen(out) != n)
        return fail(r, "%s at byte %llu holds a NUL byte", what, (unsigned long long)(r->pos - n));
    /* names end up in one-line messages: no control characters */
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return PE_OK;
}

/* One scalar as a double (numbers and booleans); *is_num = 0 for strings and arrays. */
static int get_scalar(rd *r, uint32_t type, double *v, const char *key)
{
    unsigned char b[8];
    int rc = get(r, b, type_size[type], key);
    if (rc != PE_OK) return rc;
    uint64_t u = le(b, type_size[type]);
    switch (type) {
    case GT_U8:
    case GT_U16:
    case GT_U32:
    case GT_U64:
    case GT_BOOL:
        *v = (double)u;
        break;
    case GT_I8:
        *v = (double)(int8_t)u;
        break;
    case GT_I16:
        *v = (double)(int16_t)u;
        break;
    case GT_I32:
        *v = (double)(int32_t)u;
        break;
    case GT_I64:
        *v = (double)(int64_t)u;
        break;
    case GT_F32: {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, sizeof f);
        *v = f;
        break;
    }
    default: {
        double d;
        memcpy(&d, &u, sizeof d);
        *v = d;
    }
    }
    return PE_OK;
}

/* Skip one value of the given type (arrays of scalars in one seek, of strings one by one). */
static int skip_value(rd *r, uint32_t type, const char *key, int depth)
{
    if (type >= GT_COUNT)
        return fail(r, "key '%s': unknown value type %u at byte %llu (GGUF has 0..12)", key, type,
                    (unsigned long long)(r->pos - 4));
    if (type == GT_STRING) {
        uint64_t n = 0;
        int rc = get_u64(r, &n, key);
        return rc == PE_OK ? skip(r, n, key) : rc;
    }
    if (type != GT_ARRAY) return skip(r, type_size[type], key);
    if (depth > 0) return fail(r, "key '%s': an array of arrays; pelab reads flat arrays", key);
    uint32_t et = 0;
    uint64_t count = 0;
    int rc = get_u32(r, &et, key);
    if (rc == PE_OK) rc = get_u64(r, &count, key);
    if (rc != PE_OK) return rc;
    if (et >= GT_COUNT)
        return fail(r, "key '%s': unknown array element type %u (GGUF has 0..12)", key, et);
    if (et == GT_ARRAY)
        return fail(r, "key '%s': an array of arrays; pelab reads flat arrays", key);
    if (et != GT_STRING) {
        if (count > (r->size - r->pos) / type_size[et])
            return fail(r, "key '%s': %llu elements do not fit in the %llu bytes left", key,
                        (unsigned long long)count, (unsigned long long)(r->size - r->pos));
        return skip(r, count * type_size[et], key);
    }
    /* each string takes at least its 8-byte length */
    if (count > (r->size - r->pos) / 8)
        return fail(r, "key '%s': %llu strings do not fit in the %llu bytes left", key,
                    (unsigned long long)count, (unsigned long long)(r->size - r->pos));
    for (uint64_t i = 0; i < count; i++)
        if ((rc = skip_value(r, GT_STRING, key, depth + 1)) != PE_OK) return rc;
    return PE_OK;
}

/* The {arch}.* keys pelab reads, by the part after the architecture. */
static const char *const wanted[] = {
    "context_length",           "embedding_length",     "attention.head_count",
    "attention.head_count_kv",  "attention.key_length", "rope.freq_base",
    "rope.dimension_count",     "rope.scaling.factor",  "rope.scaling.original_context_length",
    "rope.scaling.attn_factor", "rope.scale_linear",    "rope.scaling.type",
};
enum {
    W_CTX,
    W_EMB,
    W_HEADS,
    W_KV,
    W_KEYLEN,
    W_BASE,
    W_ROTDIM,
    W_FACTOR,
    W_ORIG,
    W_ATTN,
    W_SCALE_LINEAR,
    W_TYPE,
    W_N
};

typedef struct found {
    char prefix[64]; /* the architecture the key was under */
    double v;
    char s[32]; /* W_TYPE */
    int have;
} found;

static int parse(rd *r, pe_hf_config *out)
{
    unsigned char magic[4];
    uint32_t version = 0;
    uint64_t n_tensors = 0, n_kv = 0;
    int rc = get(r, magic, 4, "the magic");
    if (rc != PE_OK) return rc;
    if (memcmp(magic, "GGUF", 4) != 0) return fail(r, "not a GGUF file (no GGUF magic)");
    if ((rc = get_u32(r, &version, "the version")) != PE_OK) return rc;
    if (version != 2 && version != 3)
        return fail(r, "GGUF version %u; pelab reads versions 2 and 3", version);
    if ((rc = get_u64(r, &n_tensors, "the tensor count")) != PE_OK) return rc;
    if ((rc = get_u64(r, &n_kv, "the metadata count")) != PE_OK) return rc;
    if (n_kv > PE_GGUF_MAX_KV)
        return fail(r, "metadata count %llu: pelab reads at most %d entries",
                    (unsigned long long)n_kv, PE_GGUF_MAX_KV);
    if (n_tensors > PE_GGUF_MAX_TENSORS)
        return fail(r, "tensor count %llu: pelab reads at most %d tensor names",
                    (unsigned long long)n_tensors, PE_GGUF_MAX_TENSORS);

    char arch[64] = "", name[128] = "", key[256];
    found fw[W_N];
    memset(fw, 0, sizeof fw);
    for (uint64_t i = 0; i < n_kv; i++) {
        if ((rc = get_string(r, key, sizeof key, NULL, "a metadata key")) != PE_OK) return rc;
        uint32_t type = 0;
        if ((rc = get_u32(r, &type, key)) != PE_OK) return rc;
        if (type >= GT_COUNT)
            return fail(r, "key '%s': unknown value type %u at byte %llu (GGUF has 0..12)", key,
                        type, (unsigned long long)(r->pos - 4));
        const char *dot = strchr(key, '.');
        int w = -1;
        if (dot && (size_t)(dot - key) < sizeof fw[0].prefix)
            for (int k = 0; k < W_N; k++)
                if (strcmp(dot + 1, wanted[k]) == 0) w = k;
        int skipped = 0;
        if (strcmp(key, "general.architecture") == 0 && type == GT_STRING) {
            if ((rc = get_string(r, arch, sizeof arch, &skipped, key)) != PE_OK) return rc;
        } else if (strcmp(key, "general.name") == 0 && type == GT_STRING) {
            if ((rc = get_string(r, name, sizeof name, &skipped, key)) != PE_OK) return rc;
        } else if (w == W_TYPE && type == GT_STRING) {
            if ((rc = get_string(r, fw[w].s, sizeof fw[w].s, &skipped, key)) != PE_OK) return rc;
            fw[w].have = !skipped;
        } else if (w >= 0 && w != W_TYPE && type != GT_STRING && type != GT_ARRAY) {
            if ((rc = get_scalar(r, type, &fw[w].v, key)) != PE_OK) return rc;
            fw[w].have = 1;
        } else {
            w = -1;
            if ((rc = skip_value(r, type, key, 0)) != PE_OK) return rc;
        }
        if (w >= 0) {
            memcpy(fw[w].prefix, key, (size_t)(dot - key));
            fw[w].prefix[dot - key] = '\0';
        }
    }
    if (!arch[0]) return fail(r, "general.architecture: missing; GGUF names the model's family");
    for (char *p = arch; *p; p++) /* it becomes a model_type: keep it plain */
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
            *p = '_';
    for (int k = 0; k < W_N; k++)
        if (fw[k].have && strcmp(fw[k].prefix, arch) != 0) fw[k].have = 0;

    /* Tensor names (not their data): llama.cpp keeps llama3's and LongRoPE's per-pair factors
     * as tensors, which a header alone cannot give. */
    int rope_freqs = 0, rope_factors = 0;
    for (uint64_t i = 0; i < n_tensors; i++) {
        char tname[128];
        int skipped = 0;
        uint32_t ndim = 0, ttype = 0;
        uint64_t off = 0;
        if ((rc = get_string(r, tname, sizeof tname, &skipped, "a tensor name")) != PE_OK)
            return rc;
        if ((rc = get_u32(r, &ndim, "a tensor's dimension count")) != PE_OK) return rc;
        if (ndim > 8) return fail(r, "tensor '%s': %u dimensions; GGUF has at most 8", tname, ndim);
        if ((rc = skip(r, 8ull * ndim, "a tensor's shape")) != PE_OK) return rc;
        if ((rc = get_u32(r, &ttype, "a tensor's type")) != PE_OK) return rc;
        if ((rc = get_u64(r, &off, "a tensor's offset")) != PE_OK) return rc;
        if (strncmp(tname, "rope_freqs", 10) == 0) rope_freqs = 1;
        if (strncmp(tname, "rope_factors", 12) == 0) rope_factors = 1;
    }

    pe_hf_config m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "%s", name[0] ? name : arch);
    snprintf(m.model_type, sizeof m.model_type, "%s", arch);
    if (!fw[W_HEADS].have)
        return fail(r, "%s.attention.head_count: missing (or not a number)", arch);
    double heads = fw[W_HEADS].v;
    if (!(heads >= 1 && heads <= PE_MAX_HEADS) || heads != floor(heads))
        return fail(r, "%s.attention.head_count %g: must be 1..%d", arch, heads, PE_MAX_HEADS);
    m.num_heads = (int)heads;
    double kv = fw[W_KV].have ? fw[W_KV].v : heads;
    if (!(kv >= 1 && kv <= heads) || kv != floor(kv) || m.num_heads % (int)kv != 0)
        return fail(r, "%s.attention.head_count_kv %g: must divide head_count %d", arch, kv,
                    m.num_heads);
    m.num_kv_heads = (int)kv;
    double hd = 0;
    if (fw[W_KEYLEN].have) {
        hd = fw[W_KEYLEN].v;
    } else if (fw[W_EMB].have) {
        double emb = fw[W_EMB].v;
        if (!(emb >= 1 && emb <= 1e9) || emb != floor(emb) || fmod(emb, heads) != 0)
            return fail(r, "%s.embedding_length %g: not divisible by head_count %d", arch, emb,
                        m.num_heads);
        hd = emb / heads;
        m.hidden_size = (int)emb;
    } else {
        return fail(r,
                    "%s.attention.key_length and %s.embedding_length: missing; one gives the "
                    "head dimension",
                    arch, arch);
    }
    if (!(hd >= 2 && hd <= PE_MAX_DIM) || hd != floor(hd) || fmod(hd, 2) != 0)
        return fail(r, "head dimension %g: must be even and 2..%d", hd, PE_MAX_DIM);
    m.head_dim = (int)hd;
    m.rope_theta = fw[W_BASE].have ? fw[W_BASE].v : 10000.0;
    m.partial_rotary_factor = 1.0;
    if (fw[W_ROTDIM].have) {
        double rdim = fw[W_ROTDIM].v;
        if (!(rdim >= 2 && rdim <= hd))
            return fail(r, "%s.rope.dimension_count %g: must be 2..%g (the head dimension)", arch,
                        rdim, hd);
        m.partial_rotary_factor = rdim / hd;
    }
    if (fw[W_CTX].have) {
        double ctx = fw[W_CTX].v;
        if (!(ctx >= 1 && ctx <= PE_HF_MAX_CONTEXT) || ctx != floor(ctx))
            return fail(r, "%s.context_length %g: pelab reads contexts of 1..%d positions", arch,
                        ctx, PE_HF_MAX_CONTEXT);
        m.max_position = (int)ctx;
    }
    const char *type = "none";
    double factor = 1;
    if (fw[W_TYPE].have) type = fw[W_TYPE].s;
    if (fw[W_FACTOR].have) factor = fw[W_FACTOR].v;
    if (!fw[W_TYPE].have && fw[W_SCALE_LINEAR].have && fw[W_SCALE_LINEAR].v > 1) {
        type = "linear";
        factor = fw[W_SCALE_LINEAR].v;
    }
    if (strcmp(type, "none") != 0 && strcmp(type, "linear") != 0 && strcmp(type, "yarn") != 0)
        return fail(r, "%s.rope.scaling.type '%s': pelab reads none, linear and yarn from GGUF",
                    arch, type);
    if (strcmp(type, "none") != 0 && factor == 1) type = "none";
    double orig = fw[W_ORIG].have ? fw[W_ORIG].v : 0;
    if (orig != 0 && (!(orig >= 1 && orig <= PE_MAX_LEN) || orig != floor(orig)))
        return fail(r, "%s.rope.scaling.original_context_length %g: must be 1..%d", arch, orig,
                    PE_MAX_LEN);
    /* llama.cpp's attn_factor multiplies its own YaRN magnitude (and DeepSeek's converters fold
     * the softmax mscale into it): not transformers' attention_factor, so the attention factor
     * stays derived and a value other than 1 is named as not modelled */
    double attn = 0;
    int attn_other = fw[W_ATTN].have && fw[W_ATTN].v != 1;
    char err2[300] = "";
    rc = pe_hf_config_finish_simple(&m, r->src, type, factor, (int)orig, attn, err2, sizeof err2);
    if (rc != PE_OK) {
        if (r->err && r->errlen) snprintf(r->err, r->errlen, "%s (from the GGUF header)", err2);
        r->failed = 1;
        return rc;
    }
    /* named, not applied: the frequencies shown are the base's alone (Phi-3's GGUF carries its
     * LongRoPE lists as rope_factors_long/short tensors and no scaling type at all) */
    const char *what[3] = {
        rope_freqs ? "rope_freqs tensor (llama.cpp's per-pair factors, e.g. llama3 scaling)" : NULL,
        rope_factors ? "rope_factors_long/short tensors (llama.cpp's LongRoPE factor lists)" : NULL,
        attn_other ? "rope.scaling.attn_factor (llama.cpp's YaRN or LongRoPE magnitude)" : NULL};
    for (int i = 0, u = 0; i < 3; i++)
        if (what[i]) {
            int w = snprintf(m.unmodelled + u, sizeof m.unmodelled - (size_t)u, "%s%s",
                             u ? ", " : "", what[i]);
            if (w < 0 || (size_t)(u + w) >= sizeof m.unmodelled) break;
            u += w;
        }
    *out = m;
    return PE_OK;
}

int pe_gguf_parse_config(const unsigned char *buf, size_t len, const char *src, pe_hf_config *out,
                         char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    rd r = {buf, NULL, 0, len, src && *src ? src : "model.gguf", err, errlen, 0};
    if (!buf || !out) return fail(&r, "no header to parse");
    return parse(&r, out);
}

int pe_gguf_read_config(const char *path, pe_hf_config *out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    rd r = {NULL, NULL, 0, 0, path && *path ? path : "(no path)", err, errlen, 0};
    if (!path || !*path || !out) return fail(&r, "no GGUF file given");
    r.f = fopen(path, "rb");
    if (!r.f) return fail(&r, "cannot open: %s", strerror(errno));
    struct stat st;
    int rc;
    if (fstat(fileno(r.f), &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = fail(&r, "not a regular file; a GGUF model is one");
    } else {
        r.size = (uint64_t)st.st_size;
        rc = parse(&r, out);
    }
    fclose(r.f);
    return rc;
}
