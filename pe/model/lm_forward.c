/* lm_forward.c: sessions (KV cache) and the forward passes of the Llama family and GPT-2.
 *
 * Llama (HF LlamaForCausalLM, llama2.c run.c):
 *   x = E[tok]; per layer: h = RMSNorm(x) w1; q, k, v = Wq h (+bq), Wk h, Wv h; q, k rotated
 *   by RoPE at their position; a = softmax(q k^T / sqrt(hd)) v, causal, kv head = h / (H / KV);
 *   x += Wo a; h = RMSNorm(x) w2; x += Wdown (silu(Wgate h) * Wup h); logits = Wcls RMSNorm(x).
 * GPT-2 (HF GPT2LMHeadModel):
 *   x = wte[tok] + wpe[pos]; per layer: h = LN1(x); q, k, v = c_attn(h); x += c_proj(attn);
 *   x += mlp.c_proj(gelu_tanh(mlp.c_fc(LN2(x)))); logits = wte LN_f(x).
 * The rotated q of every token is cached next to k and v, so an attention row of any (layer,
 * head, token) is recomputed on demand with the very operations the forward used. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lm_internal.h"
#include "pool.h"

/* Tokens one pass through the layers takes at once. Every weight is read from memory once a
 * pass, so a prompt of up to FWD_T tokens reads the model once (the kernels of lm_kernels.c
 * keep their working set in cache at any T); lm_forward splits longer inputs. The results do
 * not depend on it (each output is the same sequence of operations at any T). */
#define FWD_T LM_PASS
/* The attention of a pass runs as up to ATT_CHUNKS pool chunks of (token, head) items, each with
 * its own row of probabilities (s->att: ATT_CHUNKS rows of ctx). */
#define ATT_CHUNKS 64

static size_t qdim(const lm_config *c)
{
    return (size_t)c->n_heads * (size_t)c->head_dim;
}

static size_t kvdim(const lm_config *c)
{
    return (size_t)c->n_kv_heads * (size_t)c->head_dim;
}

/* Tokens per pass for a session of ctx positions. */
static int pass_tokens(int ctx)
{
    return ctx < FWD_T ? ctx : FWD_T;
}

int lm_spare_init(lm_model *m, char *err, size_t errlen)
{
    m->spare = calloc(1, sizeof *m->spare);
    if (!m->spare || pthread_mutex_init(&m->spare->mu, NULL) != 0) {
        free(m->spare);
        m->spare = NULL;
        return pe_fail(err, errlen, PE_ENOMEM, "out of memory");
    }
    return PE_OK;
}

void lm_spare_free(lm_model *m)
{
    if (!m->spare) return;
    pe_floats_unmap(m->spare->block, m->spare->n);
    if (m->spare->held) pe_mem_release(m->spare->held);
    pthread_mutex_destroy(&m->spare->mu);
    free(m->spare);
    m->spare = NULL;
}

/* The model's kept block when it has n floats, as a session of the same shape and context
 * asks (its budget bytes given back: the session reserves its own, the same), else NULL. */
static float *spare_take(const lm_model *m, size_t n)
{
    lm_spare *sp = m->spare;
    float *b = NULL;
    if (!sp) return NULL;
    pthread_mutex_lock(&sp->mu);
    if (sp->block && sp->n == n) {
        b = sp->block;
        pe_mem_release(sp->held);
        sp->block = NULL;
        sp->n = sp->held = 0;
    }
    pthread_mutex_unlock(&sp->mu);
    return b;
}

/* Keep s's block in its model when the model keeps none (its bytes stay held); 1 when kept. */
static int spare_keep(lm_session *s)
{
    lm_spare *sp = s->m ? s->m->spare : NULL;
    int kept = 0;
    if (!sp || !s->block) return 0;
    pthread_mutex_lock(&sp->mu);
    if (!sp->block) {
        sp->block = s->block;
        sp->n = s->block_n;
        sp->held = s->held;
        kept = 1;
    }
    pthread_mutex_unlock(&sp->mu);
    return kept;
}

void lm_session_free(lm_session *s)
{
    if (!s) return;
    free(s->inv_freq);
    if (!spare_keep(s)) {
        pe_floats_unmap(s->block, s->block_n);
        if (s->held) pe_mem_release(s->held);
    }
    memset(s, 0, sizeof *s);
}

void lm_session_reset(lm_session *s)
{
    s->n = 0;
    s->dyn_set = 0;
}

int lm_session_set_rope(lm_session *s, const pe_params *rope, char *err, size_t errlen)
{
    const lm_config *c = &s->m->c;
    if (c->arch != LM_ARCH_LLAMA)
        return pe_fail(err, errlen, PE_EINVAL, "%s has learned positions, not RoPE", c->arch_name);
    if (rope->dim != c->head_dim)
        return pe_fail(err, errlen, PE_EINVAL,
                       "RoPE dimension %d: must be the model's head dimension %d", rope->dim,
                       c->head_dim);
    int rot = pe_rope_rotary_dim(rope);
    double *f = calloc((size_t)rot / 2 + 1, sizeof *f);
    if (!f) return pe_fail(err, errlen, PE_ENOMEM, "out of memory");
    double attn = 1.0;
    int rc = pe_rope_inv_freq(rope, f, &attn, err, errlen);
    if (rc != PE_OK) {
        free(f);
        return rc;
    }
    free(s->inv_freq);
    s->inv_freq = f;
    s->rope_attn = attn;
    s->rot_dim = rot;
    s->rope = *rope;
    return PE_OK;
}

/* The RoPE scalings whose frequencies follow the sequence length, as transformers'
 * dynamic_rope_update does: dynamic NTK and LongRoPE (of the Llama family). */
static int length_dependent(const lm_session *s)
{
    pe_scaling_type t = s->rope.scaling.type;
    return s->m->c.arch == LM_ARCH_LLAMA && (t == PE_SCALING_DYNAMIC || t == PE_SCALING_LONGROPE);
}

/* The frequencies of a forward whose largest position + 1 is len, as transformers computes them
 * past L0 (original_ctx): dynamic NTK's _compute_dynamic_ntk_parameters at seq_len = len, the
 * trained ones at or below it; LongRoPE's long_factor past L0, short_factor at or below it
 * (_longrope_frequency_update; the attention factor is the same for both). 1 when they changed,
 * 0 when not (or neither scaling), < 0 on error. */
static int dynamic_apply(lm_session *s, long len, char *err, size_t errlen)
{
    if (!length_dependent(s)) return 0;
    pe_params p = s->rope;
    long l0 = p.scaling.original_ctx;
    int want = len > l0 ? (int)(len < INT_MAX ? len : INT_MAX) : 0;
    int now = p.scaling.seq_len > l0 ? p.scaling.seq_len : 0;
    if (p.scaling.type == PE_SCALING_LONGROPE) {
        /* one factor set or the other: any length past L0 is the long set */
        if ((want > 0) == (now > 0)) return 0;
        want = want > 0 ? (int)(l0 + 1 < INT_MAX ? l0 + 1 : INT_MAX) : 0;
    }
    if (want == now) return 0;
    p.scaling.seq_len = want;
    int rc = lm_session_set_rope(s, &p, err, errlen);
    return rc ? rc : 1;
}

int lm_session_dynamic(lm_session *s, long len, char *err, size_t errlen)
{
    int rc = dynamic_apply(s, len, err, errlen);
    if (rc >= 0) s->dyn_set = 1;
    return rc;
}

/* The session's arrays are carved from one block (s->block, 16 floats of slack per array):
 * one allocation on huge pages rather than fourteen that fault a 4 KiB page at a time during
 * the first pass (pe_floats_map). */
#define CARVES 14

static float *carve(lm_session *s, size_t count)
{
    float *p = s->block + s->used;
    s->used += (count + 15) & ~(size_t)15;
    return p;
}

int lm_session_init(lm_session *s, const lm_model *m, int ctx, int threads, char *err,
                    size_t errlen)
{
    memset(s, 0, sizeof *s);
    const lm_config *c = &m->c;
    if (ctx < 1 || ctx > LM_MAX_CTX)
        return pe_fail(err, errlen, PE_EINVAL, "--ctx %d: must be 1..%d", ctx, LM_MAX_CTX);
    s->m = m;
    s->ctx = ctx;
    s->threads = threads > 0 ? threads : pool_cpus_free();
    size_t L = (size_t)c->n_layers, C = (size_t)ctx, B = (size_t)pass_tokens(ctx),
           D = (size_t)c->dim, F = (size_t)c->hidden_dim, Q = qdim(c), KV = kvdim(c);
    size_t wide = Q > D ? Q : D;
    size_t floats = L * C * (2 * KV + Q) + (size_t)c->vocab + B * (3 * wide + Q + 2 * KV + 2 * F) +
                    ATT_CHUNKS * C + B * (size_t)c->head_dim;
    /* the last session's block when it has the same size (given back to the budget first, so
     * that a tight budget still takes this session) */
    s->block_n = floats + 16 * CARVES;
    float *spare = spare_take(m, s->block_n);
    int rc = pe_mem_reserve_hint(floats * sizeof(float), "the model's cache (--ctx positions)",
                                 "a smaller --ctx needs less", err, errlen);
    if (rc) {
        pe_floats_unmap(spare, s->block_n);
        return rc;
    }
    s->held = floats * sizeof(float);
    s->block = spare ? spare : pe_floats_map(s->block_n);
    if (!s->block) {
        rc = pe_fail(err, errlen, PE_ENOMEM, "out of memory for the session");
        goto fail;
    }
    s->kc = carve(s, L * C * KV);
    s->vc = carve(s, L * C * KV);
    s->qc = carve(s, L * C * Q);
    s->logits = carve(s, (size_t)c->vocab);
    s->x = carve(s, B * wide);
    s->xb = carve(s, B * wide);
    s->xb2 = carve(s, B * wide);
    s->q = carve(s, B * Q);
    s->k = carve(s, B * KV);
    s->v = carve(s, B * KV);
    s->hb = carve(s, B * F);
    s->hb2 = carve(s, B * F);
    s->att = carve(s, ATT_CHUNKS * C);
    s->cs = carve(s, B * (size_t)c->head_dim);
    if (c->arch == LM_ARCH_LLAMA && (rc = lm_session_set_rope(s, &c->rope, err, errlen))) goto fail;
    /* a config's dynamic NTK starts as trained and its LongRoPE with short_factor (HF's state
     * before any long input), not at the factor's full effect or with long_factor where the
     * config reader puts them for figures */
    if (c->arch == LM_ARCH_LLAMA && (rc = dynamic_apply(s, 0, err, errlen)) < 0) goto fail;
    return PE_OK;
fail:
    lm_session_free(s);
    return rc;
}

/* ---- pieces -------------------------------------------------------------------------------- */

static void rmsnorm(float *o, const float *x, const float *w, int n, double eps)
{
    float ss = 0.0f;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    float r = 1.0f / sqrtf(ss / (float)n + (float)eps);
    for (int i = 0; i < n; i++) o[i] = w[i] * (r * x[i]);
}

static void layernorm(float *o, const float *x, const float *w, const float *b, int n, double eps)
{
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < n; i++) mean += x[i];
    mean /= n;
    for (int i = 0; i < n; i++) var += ((double)x[i] - mean) * ((double)x[i] - mean);
    var /= n;
    float r = (float)(1.0 / sqrt(var + eps)), mu = (float)mean;
    for (int i = 0; i < n; i++) o[i] = (x[i] - mu) * r * w[i] + b[i];
}

/* Rotate one head vector by the cos/sin pairs cs (rot/2 of each, cos first). */
static void rope_rotate(float *x, int rot, pe_pairing pairing, const float *cs)
{
    int np = rot / 2;
    for (int k = 0; k < np; k++) {
        int i0 = pairing == PE_PAIRING_HALF ? k : 2 * k;
        int i1 = pairing == PE_PAIRING_HALF ? k + np : 2 * k + 1;
        float a = x[i0], b = x[i1], c = cs[k], sn = cs[np + k];
        x[i0] = a * c - b * sn;
        x[i1] = a * sn + b * c;
    }
}

/* softmax(q . k_j * scale) over keys j = 0..n-1 (row stride kstride) into p. */
static void attn_probs(const float *q, const float *k0, size_t kstride, int n, int hd, float scale,
                       float *p)
{
    lm_attn_scores(q, k0, kstride, n, hd, scale, p);
    float mx = -INFINITY;
    for (int j = 0; j < n; j++)
        if (p[j] > mx) mx = p[j];
    float sum = 0.0f;
    for (int j = 0; j < n; j++) {
        p[j] = expf(p[j] - mx);
        sum += p[j];
    }
    float inv = 1.0f / sum;
    for (int j = 0; j < n; j++) p[j] *= inv;
}

/* The first key token t (cache index) of layer l sees: its window's start, 0 without one. */
static int first_key(const lm_config *c, int l, int t)
{
    return c->window > 0 && l >= c->window_from && t - c->window + 1 > 0 ? t - c->window + 1 : 0;
}

typedef struct attn_job {
    lm_session *s;
    int layer, n0, T;
    size_t grain;
} attn_job;

/* Items are (token, head) pairs; chunk i0 / grain (< ATT_CHUNKS) has row i0 / grain of s->att. */
static void attn_items(void *ctx, size_t i0, size_t i1)
{
    const attn_job *j = ctx;
    lm_session *s = j->s;
    const lm_config *c = &s->m->c;
    int H = c->n_heads, hd = c->head_dim, grp = c->n_heads / c->n_kv_heads;
    size_t Q = qdim(c), KV = kvdim(c), C = (size_t)s->ctx;
    const float *kl = s->kc + (size_t)j->layer * C * KV, *vl = s->vc + (size_t)j->layer * C * KV,
                *ql = s->qc + (size_t)j->layer * C * Q;
    float scale = 1.0f / sqrtf((float)hd);
    for (size_t it = i0; it < i1; it++) {
        int t = (int)(it / (size_t)H), h = (int)(it % (size_t)H), kvh = h / grp;
        int n = j->n0 + t + 1, j0 = first_key(c, j->layer, j->n0 + t);
        float *p = s->att + i0 / j->grain * C;
        attn_probs(ql + (size_t)(j->n0 + t) * Q + (size_t)h * (size_t)hd,
                   kl + (size_t)j0 * KV + (size_t)kvh * (size_t)hd, KV, n - j0, hd, scale, p);
        lm_attn_mix(p, vl + (size_t)j0 * KV + (size_t)kvh * (size_t)hd, KV, n - j0, hd,
                    s->xb2 + (size_t)t * Q + (size_t)h * (size_t)hd);
    }
}

/* One pass of T tokens at cache indices n0..; the head runs for every row into logits when
 * given, else for the last row into s->logits when last is set (the last pass of a call). */
static int forward_chunk(lm_session *s, const int *tok, int T, float *logits, int last, char *err,
                         size_t errlen)
{
    const lm_model *m = s->m;
    const lm_config *c = &m->c;
    int D = c->dim, hd = c->head_dim, nt = s->threads, n0 = s->n;
    size_t Q = qdim(c), KV = kvdim(c), C = (size_t)s->ctx, F = (size_t)c->hidden_dim;
    int gpt2 = c->arch == LM_ARCH_GPT2;
    for (int t = 0; t < T; t++) {
        long long pos = (long long)s->offset + n0 + t;
        if (gpt2 && pos >= c->seq_len)
            return pe_fail(err, errlen, PE_ERANGE,
                           "position %lld: past GPT-2's %d learned positions", pos, c->seq_len);
        float *x = s->x + (size_t)t * (size_t)D;
        memcpy(x, m->tok_emb + (size_t)tok[t] * (size_t)D, (size_t)D * sizeof *x);
        if (gpt2)
            for (int i = 0; i < D; i++) x[i] += m->pos_emb[(size_t)pos * (size_t)D + (size_t)i];
        else {
            /* cos then sin of every pair at this position, the attention factor folded in */
            int np = s->rot_dim / 2;
            float *cs = s->cs + (size_t)t * (size_t)hd;
            for (int k = 0; k < np; k++) {
                double a = (double)pos * s->inv_freq[k];
                cs[k] = (float)(s->rope_attn * cos(a));
                cs[np + k] = (float)(s->rope_attn * sin(a));
            }
        }
    }
    for (int l = 0; l < c->n_layers; l++) {
        if (pe_work(((double)l + 1.0) / (c->n_layers + 1.0))) return pe_work_cancelled(err, errlen);
        const lm_layer *ly = &m->layers[l];
        for (int t = 0; t < T; t++) {
            const float *x = s->x + (size_t)t * (size_t)D;
            float *o = s->xb + (size_t)t * (size_t)D;
            if (gpt2)
                layernorm(o, x, ly->norm1, ly->norm1_b, D, c->norm_eps);
            else
                rmsnorm(o, x, ly->norm1, D, c->norm_eps);
        }
        lm_linear_apply(&ly->q, s->xb, T, s->q, nt);
        lm_linear_apply(&ly->k, s->xb, T, s->k, nt);
        lm_linear_apply(&ly->v, s->xb, T, s->v, nt);
        float *ql = s->qc + (size_t)l * C * Q, *kl = s->kc + (size_t)l * C * KV,
              *vl = s->vc + (size_t)l * C * KV;
        for (int t = 0; t < T; t++) {
            float *q = s->q + (size_t)t * Q, *k = s->k + (size_t)t * KV;
            if (!gpt2) {
                const float *cs = s->cs + (size_t)t * (size_t)hd;
                for (int h = 0; h < c->n_heads; h++)
                    rope_rotate(q + (size_t)h * (size_t)hd, s->rot_dim, s->rope.pairing, cs);
                for (int h = 0; h < c->n_kv_heads; h++)
                    rope_rotate(k + (size_t)h * (size_t)hd, s->rot_dim, s->rope.pairing, cs);
            }
            size_t ci = (size_t)(n0 + t);
            memcpy(ql + ci * Q, q, Q * sizeof *q);
            memcpy(kl + ci * KV, k, KV * sizeof *k);
            memcpy(vl + ci * KV, s->v + (size_t)t * KV, KV * sizeof *k);
        }
        size_t items = (size_t)T * (size_t)c->n_heads;
        attn_job aj = {s, l, n0, T, (items + ATT_CHUNKS - 1) / ATT_CHUNKS};
        pool_run(nt, items, aj.grain, attn_items, &aj);
        lm_linear_apply(&ly->o, s->xb2, T, s->xb, nt);
        for (size_t i = 0; i < (size_t)T * (size_t)D; i++) s->x[i] += s->xb[i];
        for (int t = 0; t < T; t++) {
            const float *x = s->x + (size_t)t * (size_t)D;
            float *o = s->xb + (size_t)t * (size_t)D;
            if (gpt2)
                layernorm(o, x, ly->norm2, ly->norm2_b, D, c->norm_eps);
            else
                rmsnorm(o, x, ly->norm2, D, c->norm_eps);
        }
        lm_linear_apply(&ly->up, s->xb, T, s->hb2, nt);
        if (gpt2) {
            lm_gelu(s->hb, s->hb2, (size_t)T * F);
        } else {
            lm_linear_apply(&ly->gate, s->xb, T, s->hb, nt);
            lm_silu_mul(s->hb, s->hb2, (size_t)T * F);
        }
        lm_linear_apply(&ly->down, s->hb, T, s->xb, nt);
        for (size_t i = 0; i < (size_t)T * (size_t)D; i++) s->x[i] += s->xb[i];
    }
    /* The head: every row when the caller wants them, else the last only (of the last pass). */
    if (!logits && !last) {
        s->n += T;
        return PE_OK;
    }
    int first = logits ? 0 : T - 1;
    for (int t = first; t < T; t++) {
        const float *x = s->x + (size_t)t * (size_t)D;
        float *o = s->xb + (size_t)(t - first) * (size_t)D;
        if (gpt2)
            layernorm(o, x, m->norm_f, m->norm_f_b, D, c->norm_eps);
        else
            rmsnorm(o, x, m->norm_f, D, c->norm_eps);
    }
    lm_linear head = {.w = m->cls, .in = D, .out = c->vocab, .ld = (size_t)D};
    size_t V = (size_t)c->vocab;
    if (logits) {
        lm_linear_apply(&head, s->xb, T, logits, nt);
        memcpy(s->logits, logits + (size_t)(T - 1) * V, V * sizeof *logits);
    } else {
        lm_linear_apply(&head, s->xb, 1, s->logits, nt);
    }
    s->n += T;
    return PE_OK;
}

int lm_forward(lm_session *s, const int *tokens, int n, float *logits, char *err, size_t errlen)
{
    const lm_config *c = &s->m->c;
    if (n < 0 || n > s->ctx - s->n)
        return pe_fail(err, errlen, PE_ERANGE,
                       "%d more tokens do not fit the context of %d (%d are held; --ctx sets it)",
                       n, s->ctx, s->n);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= c->vocab)
            return pe_fail(err, errlen, PE_EINVAL, "token id %d: the vocabulary has ids 0..%d",
                           tokens[i], c->vocab - 1);
    /* dynamic NTK and LongRoPE as transformers' dynamic rope update: grown (long_factor) when
     * this call reaches past the length the frequencies were computed for, back to the trained
     * ones (short_factor) for a sequence at or below L0 (unless lm_session_dynamic set this
     * sequence's length); one call is one HF forward, so all its tokens share the frequencies */
    if (length_dependent(s)) {
        long len = (long)s->offset + s->n + n, l0 = s->rope.scaling.original_ctx;
        long cached = s->rope.scaling.seq_len > l0 ? s->rope.scaling.seq_len : l0;
        /* HF resets dynamic NTK below L0 (seq_len < original_max_seq_len), LongRoPE at or
         * below it (seq_len > L0 is the only test) */
        long back = s->rope.scaling.type == PE_SCALING_LONGROPE ? l0 + 1 : l0;
        int rc = len > cached || (len < back && cached > l0 && !s->dyn_set)
                     ? dynamic_apply(s, len, err, errlen)
                     : 0;
        if (rc < 0) return rc;
    }
    int B = pass_tokens(s->ctx);
    for (int i = 0; i < n; i += B) {
        int T = n - i < B ? n - i : B;
        int rc =
            forward_chunk(s, tokens + i, T, logits ? logits + (size_t)i * (size_t)c->vocab : NULL,
                          i + T == n, err, errlen);
        if (rc != PE_OK) return rc;
    }
    return PE_OK;
}

int lm_attention_row(const lm_session *s, int layer, int head, int t, float *out, char *err,
                     size_t errlen)
{
    const lm_config *c = &s->m->c;
    if (layer < 0 || layer >= c->n_layers || head < 0 || head >= c->n_heads || t < 0 || t >= s->n)
        return pe_fail(err, errlen, PE_EINVAL,
                       "attention row (layer %d, head %d, token %d): the model has %d layers, %d "
                       "heads and %d tokens so far",
                       layer, head, t, c->n_layers, c->n_heads, s->n);
    size_t Q = qdim(c), KV = kvdim(c), C = (size_t)s->ctx, hd = (size_t)c->head_dim;
    int kvh = head / (c->n_heads / c->n_kv_heads);
    const float *q = s->qc + (size_t)layer * C * Q + (size_t)t * Q + (size_t)head * hd;
    int j0 = first_key(c, layer, t);
    const float *k = s->kc + (size_t)layer * C * KV + (size_t)j0 * KV + (size_t)kvh * hd;
    for (int j = 0; j < j0; j++) out[j] = 0.0f; /* outside the window */
    attn_probs(q, k, KV, t + 1 - j0, c->head_dim, 1.0f / sqrtf((float)c->head_dim), out + j0);
    return PE_OK;
}

int lm_qk(const lm_session *s, int layer, int head, int t, float *q, float *k, char *err,
          size_t errlen)
{
    const lm_config *c = &s->m->c;
    if (layer < 0 || layer >= c->n_layers || head < 0 || head >= c->n_heads || t < 0 || t >= s->n)
        return pe_fail(err, errlen, PE_EINVAL,
                       "q and k (layer %d, head %d, token %d): the model has %d layers, %d heads "
                       "and %d tokens so far",
                       layer, head, t, c->n_layers, c->n_heads, s->n);
    size_t Q = qdim(c), KV = kvdim(c), C = (size_t)s->ctx, hd = (size_t)c->head_dim;
    int kvh = head / (c->n_heads / c->n_kv_heads);
    if (q)
        memcpy(q, s->qc + (size_t)layer * C * Q + (size_t)t * Q + (size_t)head * hd,
               hd * sizeof *q);
    if (k)
        memcpy(k, s->kc + (size_t)layer * C * KV + (size_t)t * KV + (size_t)kvh * hd,
               hd * sizeof *k);
    if (c->arch == LM_ARCH_GPT2) return PE_OK;
    /* the forward's cos and sin at this position, bit for bit (forward_chunk) */
    enum { MAXP = 4096 };
    int np = s->rot_dim / 2;
    if (np > MAXP) return pe_fail(err, errlen, PE_EINVAL, "q and k: %d rotary pairs", np);
    float cs[2 * MAXP];
    long long pos = (long long)s->offset + t;
    for (int i = 0; i < np; i++) {
        double a = (double)pos * s->inv_freq[i];
        cs[i] = (float)(s->rope_attn * cos(a));
        cs[MAXP + i] = (float)(s->rope_attn * sin(a));
    }
    if (q) pe_rope_unrotate_f(q, c->head_dim, s->rot_dim, s->rope.pairing, cs, cs + MAXP);
    if (k) pe_rope_unrotate_f(k, c->head_dim, s->rot_dim, s->rope.pairing, cs, cs + MAXP);
    return PE_OK;
}

int lm_argmax(const float *logits, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (logits[i] > logits[best]) best = i;
    return best;
}
