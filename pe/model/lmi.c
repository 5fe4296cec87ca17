/* lmi.c: the model interface's registry and the checks in front of every op (see lmi.h). */
#include "lmi.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lmi_archs.h"

#define LMI_ARCH_ENTRY(n) &lmi_arch_##n,
const lmi_arch *const lmi_archs[] = {LMI_ARCHS(LMI_ARCH_ENTRY) NULL};
#undef LMI_ARCH_ENTRY

__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen, int status,
                                                      const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

const lmi_arch *lmi_arch_find(const char *name)
{
    for (size_t i = 0; name && lmi_archs[i]; i++)
        if (strcmp(lmi_archs[i]->name, name) == 0) return lmi_archs[i];
    return NULL;
}

int lmi_open_arch(lmi_model *m, const lmi_arch *arch, const char *path, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (!arch || !path) return fail(err, errlen, PE_EINVAL, "no model path");
    int rc = arch->open(m, path, err, errlen);
    if (rc) {
        memset(m, 0, sizeof *m);
        return rc;
    }
    m->arch = arch;
    m->info.arch = arch->name;
    return 0;
}

int lmi_open(lmi_model *m, const char *path, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (!path || !*path) return fail(err, errlen, PE_EINVAL, "no model path");
    unsigned char head[64];
    size_t n = 0;
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
        FILE *f = fopen(path, "rb");
        if (f) {
            n = fread(head, 1, sizeof head, f);
            fclose(f);
        }
    }
    for (size_t i = 0; lmi_archs[i]; i++)
        if (lmi_archs[i]->probe(path, head, n))
            return lmi_open_arch(m, lmi_archs[i], path, err, errlen);
    return lmi_open_arch(m, lmi_archs[0], path, err, errlen);
}

void lmi_close(lmi_model *m)
{
    if (m->arch && m->arch->close) m->arch->close(m);
    memset(m, 0, sizeof *m);
}

int lmi_tokenize(const lmi_model *m, const char *text, size_t len, lmi_token *out, int cap,
                 char *err, size_t errlen)
{
    if (!m->arch) return fail(err, errlen, PE_EINVAL, "tokenize: no model");
    if (!text) len = 0;
    if (cap < 0 || (cap > 0 && !out)) cap = 0;
    return m->arch->tokenize(m, text ? text : "", len, out, cap, err, errlen);
}

int lmi_token_text(const lmi_model *m, int id, char *buf, size_t cap)
{
    if (buf && cap) buf[0] = '\0';
    if (!m->arch || id < 0 || id >= m->info.vocab) return -1;
    return m->arch->token_text(m, id, buf, cap);
}

int lmi_set_tokenizer(lmi_model *m, const char *path, char *err, size_t errlen)
{
    if (!m->arch) return fail(err, errlen, PE_EINVAL, "--tokenizer: no model");
    if (!path || !*path) return fail(err, errlen, PE_EINVAL, "--tokenizer: no path");
    if (!m->arch->set_tokenizer)
        return fail(err, errlen, LMI_ENOTSUP,
                    "--tokenizer %s: the %s model %s has a word vocabulary of its own", path,
                    m->info.arch, m->info.name);
    return m->arch->set_tokenizer(m, path, err, errlen);
}

int lmi_has_display(const lmi_model *m)
{
    return m->arch && m->arch->display;
}

int lmi_display(const lmi_model *m, const int *ids, int n, const char **texts, char **pool,
                char *err, size_t errlen)
{
    *pool = NULL;
    if (!m->arch) return fail(err, errlen, PE_EINVAL, "display: no model");
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= m->info.vocab)
            return fail(err, errlen, PE_EINVAL, "token %d: allowed 0..%d", ids[i],
                        m->info.vocab - 1);
    if (m->arch->display) return m->arch->display(m, ids, n, texts, pool, err, errlen);
    /* token_text per id, packed into one pool */
    size_t total = 1, *at = malloc(((size_t)n + 1) * sizeof *at);
    if (!at) return fail(err, errlen, PE_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        int l = m->arch->token_text(m, ids[i], NULL, 0);
        total += (size_t)(l > 0 ? l : 0) + 1;
    }
    char *p = malloc(total);
    if (!p) {
        free(at);
        return fail(err, errlen, PE_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        at[i] = k;
        int l = m->arch->token_text(m, ids[i], p + k, total - k);
        k += (size_t)(l > 0 ? l : 0) + 1;
        p[k - 1] = '\0';
    }
    for (int i = 0; i < n; i++) texts[i] = p + at[i];
    free(at);
    *pool = p;
    return 0;
}

/* ---- sessions ----------------------------------------------------------------------------- */

void lmi_session_free(lmi_session *s)
{
    if (s->m && s->m->arch && s->impl) s->m->arch->session_free(s);
    free(s->alibi_slopes);
    memset(s, 0, sizeof *s);
}

int lmi_session_init(lmi_session *s, const lmi_model *m, int max_len, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (!m->arch) return fail(err, errlen, PE_EINVAL, "session: no model");
    if (max_len < 1 || max_len > PE_MAX_LEN)
        return fail(err, errlen, PE_EINVAL, "session length %d: allowed 1..%d", max_len,
                    PE_MAX_LEN);
    s->m = m;
    s->max_len = max_len;
    s->rope_base = m->info.caps & LMI_CAN_ROPE_BASE ? m->info.rope_base : 0;
    s->alibi_scale = 1;
    if (m->info.caps & LMI_CAN_ALIBI_SCALE) {
        s->alibi_slopes = malloc((size_t)m->info.heads * sizeof *s->alibi_slopes);
        if (!s->alibi_slopes) return fail(err, errlen, PE_ENOMEM, "session: out of memory");
        memcpy(s->alibi_slopes, m->info.alibi_slopes,
               (size_t)m->info.heads * sizeof *s->alibi_slopes);
    }
    int rc = m->arch->session_init(s, err, errlen);
    if (rc) {
        free(s->alibi_slopes);
        memset(s, 0, sizeof *s);
    }
    return rc;
}

void lmi_session_reset(lmi_session *s)
{
    if (!s->m) return;
    s->m->arch->session_reset(s);
    s->len = 0;
    s->logits = NULL;
}

/* Dynamic NTK grows with the sequence, as transformers' dynamic rope does: the base is computed
 * from seq_len = the largest position + 1 once that passes L0, and the frequencies return to
 * the trained ones at or below L0. The rows shown are those of one forward over the n tokens
 * held (HF's model(input_ids) on them), so when the length crosses into a new base every token
 * is replayed under it. LongRoPE follows the same way with its factor set: short_factor at or
 * below L0, long_factor past it (transformers' longrope update). Nothing to do for other
 * scalings or while the frequencies stay the same. */
static int dynamic_follow(lmi_session *s, int n, char *err, size_t errlen)
{
    pe_rope_scaling c = s->scaling;
    if (c.type != PE_SCALING_DYNAMIC && c.type != PE_SCALING_LONGROPE) return 0;
    long want = (long)s->offset + n, l0 = c.original_ctx;
    long now = c.seq_len > l0 ? c.seq_len : l0;
    if ((want > l0 ? want : l0) == now) return 0;
    /* LongRoPE: one factor set or the other (short at or below L0, long past it) */
    if (c.type == PE_SCALING_LONGROPE && (want > l0) == (now > l0)) return 0;
    c.seq_len = want > l0 ? (int)want : 0;
    int rc = s->m->arch->set_rope_scaling(s, &c, err, errlen);
    if (!rc) s->scaling = c;
    return rc;
}

pe_rope_scaling lmi_rope_scaling_now(const lmi_session *s)
{
    pe_rope_scaling c = s->scaling;
    if (c.type == PE_SCALING_NONE && s->m) c = s->m->info.rope_scaling;
    if (c.type == PE_SCALING_DYNAMIC || c.type == PE_SCALING_LONGROPE) {
        long n = (long)s->offset + s->len;
        c.seq_len = n > c.original_ctx ? (int)n : 0;
    }
    return c;
}

int lmi_step(lmi_session *s, int token, const float **logits, char *err, size_t errlen)
{
    if (!s->m) return fail(err, errlen, PE_EINVAL, "step: no session");
    const lmi_info *in = &s->m->info;
    if (token < 0 || token >= in->vocab)
        return fail(err, errlen, PE_EINVAL, "token %d: allowed 0..%d", token, in->vocab - 1);
    if (s->len >= s->max_len)
        return fail(err, errlen, PE_ERANGE, "session is full (%d tokens)", s->max_len);
    int rc = dynamic_follow(s, s->len + 1, err, errlen);
    if (rc) return rc;
    rc = s->m->arch->step(s, token, err, errlen);
    if (rc) return rc;
    s->len++;
    if (logits) *logits = s->logits;
    return 0;
}

int lmi_attn_row(const lmi_session *s, int layer, int head, int t, float *weights, float *content,
                 float *position, char *err, size_t errlen)
{
    if (!s->m) return fail(err, errlen, PE_EINVAL, "attention row: no session");
    const lmi_info *in = &s->m->info;
    if ((content || position) && !(in->caps & LMI_CAN_SPLIT))
        return fail(err, errlen, LMI_ENOSPLIT,
                    "%s: position is mixed into q and k, so the scores have no separate "
                    "position part",
                    in->pe_name);
    if (layer < 0 || layer >= in->layers || head < 0 || head >= in->heads || t < 0 || t >= s->len)
        return fail(err, errlen, PE_EINVAL,
                    "layer %d head %d token %d: allowed 0..%d, 0..%d and 0..%d", layer, head, t,
                    in->layers - 1, in->heads - 1, s->len - 1);
    return s->m->arch->attn_row(s, layer, head, t, weights, content, position, err, errlen);
}

int lmi_qk(const lmi_session *s, int layer, int head, int t, float *q, float *k, char *err,
           size_t errlen)
{
    if (!s->m) return fail(err, errlen, PE_EINVAL, "q and k: no session");
    const lmi_info *in = &s->m->info;
    if (!s->m->arch->qk)
        return fail(err, errlen, LMI_ENOTSUP, "%s: the %s architecture does not expose q and k",
                    in->name, s->m->arch->name);
    if (layer < 0 || layer >= in->layers || head < 0 || head >= in->heads || t < 0 || t >= s->len)
        return fail(err, errlen, PE_EINVAL,
                    "layer %d head %d token %d: allowed 0..%d, 0..%d and 0..%d", layer, head, t,
                    in->layers - 1, in->heads - 1, s->len - 1);
    return s->m->arch->qk(s, layer, head, t, q, k, err, errlen);
}

static int unsupported(const lmi_session *s, const char *what, char *err, size_t errlen)
{
    return fail(err, errlen, LMI_ENOTSUP, "%s: the model uses %s, which has no %s",
                what[0] == 'r' ? "--rope-base" : "--alibi-scale", s->m->info.pe_name, what);
}

int lmi_set_offset(lmi_session *s, int offset, char *err, size_t errlen)
{
    if (!s->m) return fail(err, errlen, PE_EINVAL, "offset: no session");
    if (!(s->m->info.caps & LMI_CAN_OFFSET) || !s->m->arch->set_offset)
        return fail(err, errlen, LMI_ENOTSUP, "--offset: the %s model cannot shift positions",
                    s->m->info.pe_name);
    if (offset < 0 || offset > PE_MAX_LEN - s->max_len)
        return fail(err, errlen, PE_EINVAL, "--offset %d: allowed 0..%d", offset,
                    PE_MAX_LEN - s->max_len);
    int rc = s->m->arch->set_offset(s, offset, err, errlen);
    if (!rc) {
        s->offset = offset;
        rc = dynamic_follow(s, s->len, err, errlen); /* the largest position moved */
    }
    return rc;
}

int lmi_set_rope_base(lmi_session *s, double base, char *err, size_t errlen)
{
    if (!s->m) return fail(err, errlen, PE_EINVAL, "RoPE base: no session");
    if (!(s->m->info.caps & LMI_CAN_ROPE_BASE) || !s->m->arch->set_rope_base)
        return unsupported(s, "rope base", err, errlen);
    if (!(base > 1 && base < 1e30))
        return fail(err, errlen, PE_EINVAL, "--rope-base %g: the frequency base must be > 1", base);
    int rc = s->m->arch->set_rope_base(s, base, err, errlen);
    if (!rc) s->rope_base = base;
    return rc;
}

int lmi_set_alibi_scale(lmi_session *s, double scale, char *err, size_t errlen)
{
    if (!s->m) return fail(err, errlen, PE_EINVAL, "ALiBi scale: no session");
    if (!(s->m->info.caps & LMI_CAN_ALIBI_SCALE) || !s->m->arch->set_alibi_scale)
        return unsupported(s, "alibi slopes", err, errlen);
    if (!(scale >= 0 && scale < 1e6))
        return fail(err, errlen, PE_EINVAL, "--alibi-scale %g: allowed 0..1e6", scale);
    int rc = s->m->arch->set_alibi_scale(s, scale, err, errlen);
    if (!rc) {
        s->alibi_scale = scale;
        for (int h = 0; h < s->m->info.heads; h++)
            s->alibi_slopes[h] = s->m->info.alibi_slopes[h] * scale;
    }
    return rc;
}

int lmi_pos_params(const lmi_model *m, lmi_pos *out, char *err, size_t errlen)
{
    if (!m || !m->arch || !out)
        return fail(err, errlen, PE_EINVAL, "position parameters: no model");
    memset(out, 0, sizeof *out);
    if (!m->arch->pos_params)
        return fail(err, errlen, LMI_ENOTSUP,
                    "%s: the %s architecture cannot report its position parameters", m->info.name,
                    m->arch->name);
    return m->arch->pos_params(m, out, err, errlen);
}

int lmi_set_rope_scaling(lmi_session *s, const pe_rope_scaling *sc, char *err, size_t errlen)
{
    if (!s->m) return fail(err, errlen, PE_EINVAL, "RoPE scaling: no session");
    if (!(s->m->info.caps & LMI_CAN_ROPE_SCALING) || !s->m->arch->set_rope_scaling)
        return fail(err, errlen, LMI_ENOTSUP,
                    "--scaling: the %s model %s cannot rescale RoPE at inference",
                    s->m->info.pe_name, s->m->info.name);
    if (sc->type != PE_SCALING_NONE && !(sc->factor >= 1 && sc->factor <= 1e6))
        return fail(err, errlen, PE_EINVAL, "--factor %g: allowed 1..1e6", sc->factor);
    pe_rope_scaling c = *sc;
    if (c.type != PE_SCALING_NONE && c.original_ctx <= 0) c.original_ctx = s->m->info.ctx;
    if (c.type == PE_SCALING_DYNAMIC || c.type == PE_SCALING_LONGROPE) {
        /* the length of the tokens held, not sc's (LongRoPE: the factor set it selects) */
        long n = (long)s->offset + s->len;
        c.seq_len = n > c.original_ctx ? (int)n : 0;
    }
    int rc = s->m->arch->set_rope_scaling(s, &c, err, errlen);
    if (!rc) s->scaling = c;
    return rc;
}

/* ---- next-token choice -------------------------------------------------------------------- */

int lmi_topk(const float *logits, int vocab, int k, int *ids, float *probs)
{
    if (vocab < 1 || k < 1) return 0;
    if (k > vocab) k = vocab;
    float mx = logits[0];
    for (int v = 1; v < vocab; v++)
        if (logits[v] > mx) mx = logits[v];
    double s = 0;
    for (int v = 0; v < vocab; v++) s += exp((double)(logits[v] - mx));
    int n = 0;
    for (int v = 0; v < vocab; v++) {
        /* insertion into the sorted top list; equal logits keep the lower id first */
        int at = n;
        while (at > 0 && logits[v] > logits[ids[at - 1]]) at--;
        if (at >= k) continue;
        int last = n < k ? n : k - 1;
        for (int i = last; i > at; i--) ids[i] = ids[i - 1];
        ids[at] = v;
        if (n < k) n++;
    }
    for (int i = 0; i < n; i++) probs[i] = (float)(exp((double)(logits[ids[i]] - mx)) / s);
    return n;
}

int lmi_sample(const float *logits, int vocab, double temperature, pe_rng *rng)
{
    int best = 0;
    for (int v = 1; v < vocab; v++)
        if (logits[v] > logits[best]) best = v;
    if (!(temperature > 0) || !rng) return best;
    double s = 0, mx = logits[best];
    for (int v = 0; v < vocab; v++) s += exp((logits[v] - mx) / temperature);
    double u = pe_rng_uniform(rng) * s;
    for (int v = 0; v < vocab; v++) {
        u -= exp((logits[v] - mx) / temperature);
        if (u < 0) return v;
    }
    return best;
}
