/* session.c: one token at a time with a KV cache, keeping the attention of the newest token.
 * Checked against the full-sequence forward of nn.c in tests/pe/model/test_session.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

#define SESSION_MAX_LEN (MODEL_MAX_CTX * 16)

static int scheme(const model_session *s)
{
    return model_pe_from_name(s->m->cfg.pe_name);
}

void model_session_free(model_session *s)
{
    free(s->tokens);
    free(s->mem);
    if (s->posbuf) nn_posbuf_free(s->posbuf);
    free(s->posbuf);
    free(s->pos);
    memset(s, 0, sizeof *s);
}

void model_session_reset(model_session *s)
{
    s->len = 0;
}

/* Position data for positions 0..offset+max_len-1 under the current settings. */
static int build_pos(model_session *s, int offset, double rope_base, const double *slopes,
                     char *err, size_t errlen)
{
    model_config c = s->m->cfg; /* with the scaling in use (the trained config has none) */
    c.pe.scaling = s->rope_scaling;
    int rows = offset + s->max_len;
    if (scheme(s) == MODEL_PE_LEARNED && rows > c.pos_len) rows = c.pos_len;
    nn_pos pos;
    nn_posbuf buf;
    int rc = nn_pos_build(&c, rows, rope_base, slopes, &pos, &buf, err, errlen);
    if (rc) return rc;
    nn_posbuf_free(s->posbuf);
    *s->posbuf = buf;
    *s->pos = pos;
    /* pos points into buf's matrices, which moved with the struct copy only by value: the data
     * pointers are unchanged, but slopes live inside buf itself. */
    if (pos.slopes) s->pos->slopes = s->posbuf->slopes;
    s->pos_rows = rows;
    return 0;
}

size_t model_session_bytes(const model *m, int max_len)
{
    const model_config *c = &m->cfg;
    size_t L = (size_t)c->layers, C = (size_t)c->dim, H = (size_t)c->heads;
    size_t n = (size_t)(max_len > 0 ? max_len : 0);
    size_t floats = 3 * L * n * C + 3 * L * H * n + (size_t)c->vocab + 6 * C + (size_t)c->hidden;
    return floats * sizeof(float) + n * sizeof(int);
}

int model_session_init(model_session *s, const model *m, int max_len, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    const model_config *c = &m->cfg;
    if (max_len < 1 || max_len > SESSION_MAX_LEN)
        return model_fail(err, errlen, PE_EINVAL, "session length %d: allowed 1..%d", max_len,
                          SESSION_MAX_LEN);
    s->m = m;
    s->max_len = max_len;
    size_t L = (size_t)c->layers, C = (size_t)c->dim, H = (size_t)c->heads, n = (size_t)max_len;
    size_t total = 3 * L * n * C + 3 * L * H * n + (size_t)c->vocab + 6 * C + (size_t)c->hidden;
    s->mem = calloc(total, sizeof(float));
    s->tokens = calloc(n, sizeof(int));
    s->pos = calloc(1, sizeof *s->pos);
    s->posbuf = calloc(1, sizeof *s->posbuf);
    if (!s->mem || !s->tokens || !s->pos || !s->posbuf) {
        model_session_free(s);
        return model_fail(err, errlen, PE_ENOMEM, "session of %d tokens: out of memory", max_len);
    }
    float *p = s->mem;
    s->k_cache = p, p += L * n * C;
    s->v_cache = p, p += L * n * C;
    s->q_cache = p, p += L * n * C;
    s->att = p, p += L * H * n;
    s->content = p, p += L * H * n;
    s->posbias = p, p += L * H * n;
    s->logits = p, p += c->vocab;
    s->x = p, p += C;
    s->xn = p, p += C;
    s->qkv = p, p += 3 * C;
    s->y = p, p += C;
    s->h = p;
    s->rope_base = c->pe.base;
    s->rope_scaling = c->pe.scaling;
    if (scheme(s) == MODEL_PE_ALIBI) {
        int rc = pe_alibi_slopes(c->heads, c->pe.slope_ratio, s->alibi_slopes, err, errlen);
        if (rc) {
            model_session_free(s);
            return rc;
        }
    }
    int rc = build_pos(s, 0, s->rope_base, s->alibi_slopes, err, errlen);
    if (rc) model_session_free(s);
    return rc;
}

static void layernorm(float *out, const float *x, const float *w, const float *b, int C)
{
    float m = 0, v = 0;
    for (int i = 0; i < C; i++) m += x[i];
    m /= C;
    for (int i = 0; i < C; i++) v += (x[i] - m) * (x[i] - m);
    v /= C;
    float s = (float)(1.0 / sqrt((double)v + 1e-5));
    for (int i = 0; i < C; i++) out[i] = (x[i] - m) * s * w[i] + b[i];
}

/* out (m) = x (k) . w (k, m) + b (m), or added to out when b is NULL. */
static void matvec(float *restrict out, const float *restrict x, const float *restrict w,
                   const float *restrict b, int k, int m)
{
    if (b)
        for (int j = 0; j < m; j++) out[j] = b[j];
    for (int i = 0; i < k; i++) {
        const float *restrict row = w + (size_t)i * m;
        float xi = x[i];
        for (int j = 0; j < m; j++) out[j] += xi * row[j];
    }
}

/* The row of (layer l, head h) for token t over keys 0..t from query q (the head's hd numbers)
 * and the cached keys: con = q.k / sqrt(hd), pb = the position part, att = softmax(con + pb).
 * The step and model_session_row both call this, so a row recomputed later is the same bits. */
static void score_row(const model_session *s, int l, int h, int t, const float *q, float *att,
                      float *con, float *pb)
{
    const model *m = s->m;
    const model_config *c = &m->cfg;
    int pe = scheme(s), C = c->dim, H = c->heads, hd = C / H;
    const nn_pos *pos = s->pos;
    float scale = (float)(1.0 / sqrt((double)hd));
    const float *kc = s->k_cache + ((size_t)l * (size_t)s->max_len) * C;
    float mx = -INFINITY;
    for (int j = 0; j <= t; j++) {
        const float *k = kc + (size_t)j * C + (size_t)h * hd;
        float d = 0;
        for (int i = 0; i < hd; i++) d += q[i] * k[i];
        con[j] = d * scale;
        float b = 0;
        if (pe == MODEL_PE_ALIBI)
            b = (float)(-pos->slopes[h] * (double)(t - j));
        else if (pe == MODEL_PE_T5)
            b = m->t5[(size_t)h * c->pe.t5_buckets + pos->t5_bucket[t - j]];
        pb[j] = b;
        att[j] = con[j] + b;
        if (att[j] > mx) mx = att[j];
    }
    float sum = 0;
    for (int j = 0; j <= t; j++) {
        att[j] = expf(att[j] - mx);
        sum += att[j];
    }
    for (int j = 0; j <= t; j++) att[j] /= sum;
}

int model_session_step(model_session *s, int token, const float **logits, char *err, size_t errlen)
{
    const model *m = s->m;
    const model_config *c = &m->cfg;
    int pe = scheme(s), C = c->dim, H = c->heads, hd = C / H, F = c->hidden, t = s->len;
    int p = s->offset + t;
    if (token < 0 || token >= c->vocab)
        return model_fail(err, errlen, PE_EINVAL, "token %d: allowed 0..%d", token, c->vocab - 1);
    if (t >= s->max_len)
        return model_fail(err, errlen, PE_ERANGE, "session is full (%d tokens)", s->max_len);
    if (pe == MODEL_PE_LEARNED && p >= c->pos_len)
        return model_fail(err, errlen, PE_ERANGE,
                          "position %d is past the learned table (%d rows, trained on the first "
                          "%d): learned has no vector there",
                          p, c->pos_len, c->ctx);
    const nn_pos *pos = s->pos;
    float *x = s->x, *xn = s->xn, *qkv = s->qkv;
    const float *e = m->wte + (size_t)token * C;
    for (int i = 0; i < C; i++) x[i] = e[i] * c->emb_scale;
    if (pe == MODEL_PE_LEARNED)
        for (int i = 0; i < C; i++) x[i] += m->wpe[(size_t)p * C + i];
    if (pe == MODEL_PE_SINUSOIDAL)
        for (int i = 0; i < C; i++) x[i] += pos->table[(size_t)p * C + i];
    size_t n = (size_t)s->max_len;
    for (int l = 0; l < c->layers; l++) {
        size_t lc = (size_t)l * C;
        layernorm(xn, x, m->ln1w + lc, m->ln1b + lc, C);
        matvec(qkv, xn, m->qkvw + lc * 3 * C, m->qkvb + lc * 3, C, 3 * C);
        if (pe == MODEL_PE_ROPE) {
            int half = pos->rot_dim / 2;
            for (int h = 0; h < H; h++)
                for (int part = 0; part < 2; part++)
                    pe_rope_rotate_f(qkv + (size_t)part * C + (size_t)h * hd, hd, pos->rot_dim,
                                     pos->rope_p.pairing, pos->rope_cos + (size_t)p * half,
                                     pos->rope_sin + (size_t)p * half);
        }
        float *kc = s->k_cache + ((size_t)l * n) * C, *vc = s->v_cache + ((size_t)l * n) * C;
        memcpy(kc + (size_t)t * C, qkv + C, (size_t)C * sizeof(float));
        memcpy(vc + (size_t)t * C, qkv + 2 * C, (size_t)C * sizeof(float));
        memcpy(s->q_cache + ((size_t)l * n + (size_t)t) * C, qkv, (size_t)C * sizeof(float));
        for (int h = 0; h < H; h++) {
            size_t at = ((size_t)l * H + h) * n;
            float *att = s->att + at;
            score_row(s, l, h, t, qkv + (size_t)h * hd, att, s->content + at, s->posbias + at);
            float *y = s->y + (size_t)h * hd;
            for (int i = 0; i < hd; i++) y[i] = 0;
            for (int j = 0; j <= t; j++) {
                const float *v = vc + (size_t)j * C + (size_t)h * hd;
                for (int i = 0; i < hd; i++) y[i] += att[j] * v[i];
            }
        }
        float *tmp = xn; /* reuse: the projection added to the residual */
        matvec(tmp, s->y, m->projw + lc * C, m->projb + lc, C, C);
        for (int i = 0; i < C; i++) x[i] += tmp[i];
        layernorm(xn, x, m->ln2w + lc, m->ln2b + lc, C);
        matvec(s->h, xn, m->fcw + lc * F, m->fcb + (size_t)l * F, C, F);
        for (int i = 0; i < F; i++) {
            float v = s->h[i];
            float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
            s->h[i] = 0.5f * v * (2 - 2 / (expf(2 * u) + 1)); /* tanh as in nn.c */
        }
        matvec(tmp, s->h, m->fcprojw + lc * F, m->fcprojb + lc, F, C);
        for (int i = 0; i < C; i++) x[i] += tmp[i];
    }
    layernorm(xn, x, m->lnfw, m->lnfb, C);
    if (m->wout) {
        for (int v = 0; v < c->vocab; v++) s->logits[v] = 0;
        matvec(s->logits, xn, m->wout, NULL, C, c->vocab);
    } else {
        for (int v = 0; v < c->vocab; v++) {
            const float *w = m->wte + (size_t)v * C;
            float d = 0;
            for (int i = 0; i < C; i++) d += xn[i] * w[i];
            s->logits[v] = d;
        }
    }
    s->tokens[t] = token;
    s->len = t + 1;
    if (logits) *logits = s->logits;
    return 0;
}

const float *model_session_attn(const model_session *s, int layer, int head)
{
    if (!s->len || layer < 0 || layer >= s->m->cfg.layers || head < 0 || head >= s->m->cfg.heads)
        return NULL;
    return s->att + ((size_t)layer * s->m->cfg.heads + head) * (size_t)s->max_len;
}

int model_session_row(const model_session *s, int layer, int head, int t, float *weights,
                      float *content, float *position, char *err, size_t errlen)
{
    const model_config *c = &s->m->cfg;
    if (layer < 0 || layer >= c->layers || head < 0 || head >= c->heads || t < 0 || t >= s->len)
        return model_fail(err, errlen, PE_EINVAL,
                          "layer %d head %d token %d: allowed 0..%d, 0..%d and 0..%d", layer, head,
                          t, c->layers - 1, c->heads - 1, s->len - 1);
    int hd = c->dim / c->heads;
    const float *q =
        s->q_cache + ((size_t)layer * (size_t)s->max_len + (size_t)t) * c->dim + (size_t)head * hd;
    /* score_row writes all three; scratch stands in for the ones not asked for */
    float *scratch = NULL;
    if (!weights || !content || !position) {
        scratch = malloc(3 * (size_t)(t + 1) * sizeof *scratch);
        if (!scratch)
            return model_fail(err, errlen, PE_ENOMEM, "attention row of %d keys: out of memory",
                              t + 1);
    }
    size_t n1 = (size_t)(t + 1);
    score_row(s, layer, head, t, q, weights ? weights : scratch, content ? content : scratch + n1,
              position ? position : scratch + 2 * n1);
    free(scratch);
    return 0;
}

int model_session_qk(const model_session *s, int layer, int head, int t, float *q, float *k,
                     char *err, size_t errlen)
{
    const model_config *c = &s->m->cfg;
    if (layer < 0 || layer >= c->layers || head < 0 || head >= c->heads || t < 0 || t >= s->len)
        return model_fail(err, errlen, PE_EINVAL,
                          "layer %d head %d token %d: allowed 0..%d, 0..%d and 0..%d", layer, head,
                          t, c->layers - 1, c->heads - 1, s->len - 1);
    int hd = c->dim / c->heads;
    size_t at =
        ((size_t)layer * (size_t)s->max_len + (size_t)t) * (size_t)c->dim + (size_t)head * hd;
    if (q) memcpy(q, s->q_cache + at, (size_t)hd * sizeof *q);
    if (k) memcpy(k, s->k_cache + at, (size_t)hd * sizeof *k);
    if (scheme(s) == MODEL_PE_ROPE) {
        const nn_pos *pos = s->pos;
        size_t half = (size_t)(pos->rot_dim / 2), p = (size_t)(s->offset + t);
        const float *cs = pos->rope_cos + p * half, *sn = pos->rope_sin + p * half;
        if (q) pe_rope_unrotate_f(q, hd, pos->rot_dim, pos->rope_p.pairing, cs, sn);
        if (k) pe_rope_unrotate_f(k, hd, pos->rot_dim, pos->rope_p.pairing, cs, sn);
    }
    return 0;
}

int model_session_score_parts(const model_session *s, int layer, int head, const float **content,
                              const float **position, char *err, size_t errlen)
{
    int pe = scheme(s);
    if (pe == MODEL_PE_ROPE || pe == MODEL_PE_LEARNED || pe == MODEL_PE_SINUSOIDAL)
        return model_fail(err, errlen, MODEL_ENOSPLIT,
                          "%s: position is mixed into q and k, so the scores have no separate "
                          "position part",
                          model_pe_name(pe));
    if (!s->len || layer < 0 || layer >= s->m->cfg.layers || head < 0 || head >= s->m->cfg.heads)
        return model_fail(err, errlen, PE_EINVAL,
                          "layer %d head %d: allowed 0..%d and 0..%d with at least one token",
                          layer, head, s->m->cfg.layers - 1, s->m->cfg.heads - 1);
    size_t at = ((size_t)layer * s->m->cfg.heads + head) * (size_t)s->max_len;
    if (content) *content = s->content + at;
    if (position) *position = s->posbias + at;
    return 0;
}

/* Apply new settings and replay the tokens; on failure restore the old ones. */
static int replay(model_session *s, int offset, double base, const double *slopes, char *err,
                  size_t errlen)
{
    int old_offset = s->offset;
    double old_base = s->rope_base, old_slopes[MODEL_MAX_HEADS];
    memcpy(old_slopes, s->alibi_slopes, sizeof old_slopes);
    int n = s->len, rc = build_pos(s, offset, base, slopes, err, errlen);
    if (!rc) {
        s->offset = offset;
        s->rope_base = base;
        if (slopes != s->alibi_slopes)
            memcpy(s->alibi_slopes, slopes, (size_t)s->m->cfg.heads * sizeof(double));
        s->len = 0;
        for (int i = 0; i < n && !rc; i++)
            rc = model_session_step(s, s->tokens[i], NULL, err, errlen);
        if (!rc) return 0;
    }
    char ignore[8];
    s->offset = old_offset;
    s->rope_base = old_base;
    memcpy(s->alibi_slopes, old_slopes, sizeof old_slopes);
    if (build_pos(s, old_offset, old_base, old_slopes, ignore, sizeof ignore) == 0) {
        s->len = 0;
        for (int i = 0; i < n; i++)
            if (model_session_step(s, s->tokens[i], NULL, ignore, sizeof ignore)) break;
    }
    return rc;
}

int model_session_set_offset(model_session *s, int k, char *err, size_t errlen)
{
    if (k < 0 || k > PE_MAX_LEN - s->max_len)
        return model_fail(err, errlen, PE_EINVAL, "--offset %d: allowed 0..%d", k,
                          PE_MAX_LEN - s->max_len);
    return replay(s, k, s->rope_base, s->alibi_slopes, err, errlen);
}

int model_session_set_rope_base(model_session *s, double base, char *err, size_t errlen)
{
    if (scheme(s) != MODEL_PE_ROPE)
        return model_fail(err, errlen, PE_EINVAL, "--rope-base: the model uses %s, not rope",
                          s->m->cfg.pe_name);
    if (!(base > 1 && base < 1e30))
        return model_fail(err, errlen, PE_EINVAL, "--rope-base %g: the frequency base must be > 1",
                          base);
    return replay(s, s->offset, base, s->alibi_slopes, err, errlen);
}

int model_session_set_rope_scaling(model_session *s, const pe_rope_scaling *sc, char *err,
                                   size_t errlen)
{
    if (scheme(s) != MODEL_PE_ROPE)
        return model_fail(err, errlen, PE_EINVAL, "--scaling: the model uses %s, not rope",
                          s->m->cfg.pe_name);
    pe_rope_scaling old = s->rope_scaling;
    s->rope_scaling = sc->type == PE_SCALING_NONE ? s->m->cfg.pe.scaling : *sc;
    int rc = replay(s, s->offset, s->rope_base, s->alibi_slopes, err, errlen);
    if (rc) { /* replay put the old tables back under the new scaling: build them once more */
        s->rope_scaling = old;
        char ignore[8];
        replay(s, s->offset, s->rope_base, s->alibi_slopes, ignore, sizeof ignore);
    }
    return rc;
}

int model_session_set_alibi_slopes(model_session *s, const double *slopes, char *err, size_t errlen)
{
    if (scheme(s) != MODEL_PE_ALIBI)
        return model_fail(err, errlen, PE_EINVAL, "--alibi-slopes: the model uses %s, not alibi",
                          s->m->cfg.pe_name);
    double copy[MODEL_MAX_HEADS];
    for (int h = 0; h < s->m->cfg.heads; h++) {
        if (!(slopes[h] >= 0 && slopes[h] < 1e6))
            return model_fail(err, errlen, PE_EINVAL, "ALiBi slope %g of head %d: allowed 0..1e6",
                              slopes[h], h);
        copy[h] = slopes[h];
    }
    return replay(s, s->offset, s->rope_base, copy, err, errlen);
}

int model_session_set_alibi_scale(model_session *s, double mult, char *err, size_t errlen)
{
    if (scheme(s) != MODEL_PE_ALIBI)
        return model_fail(err, errlen, PE_EINVAL, "--alibi-scale: the model uses %s, not alibi",
                          s->m->cfg.pe_name);
    if (!(mult >= 0 && mult < 1e6))
        return model_fail(err, errlen, PE_EINVAL, "--alibi-scale %g: allowed 0..1e6", mult);
    double sl[MODEL_MAX_HEADS];
    int rc = pe_alibi_slopes(s->m->cfg.heads, s->m->cfg.pe.slope_ratio, sl, err, errlen);
    if (rc) return rc;
    for (int h = 0; h < s->m->cfg.heads; h++) sl[h] *= mult;
    return model_session_set_alibi_slopes(s, sl, err, errlen);
}
