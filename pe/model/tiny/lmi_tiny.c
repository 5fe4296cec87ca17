/* lmi_tiny.c: pelab's own transformer behind the model interface (lmi.h). A thin adapter: the
 * numbers are model.h's (model_load, model_session_*), the tokenizer is its word tokenizer. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmi.h"
#include "model.h"
#include "nn.h"

/* The weights and a session are counted in the process's memory budget (pe_mem_*) while they
 * are held, so a model or a context that does not fit is refused with the sizes. */
typedef struct tiny_model {
    model m;
    double slopes[MODEL_MAX_HEADS]; /* alibi: the trained slopes */
    float *init;                    /* learned: wpe, t5: the bucket biases, as model_init made
                                       them from the seed (lmi_pos.init); else NULL */
    size_t held;                    /* bytes reserved for the weights */
} tiny_model;

typedef struct tiny_session {
    model_session s;
    size_t held;
} tiny_session;

#define TINY(m)  ((tiny_model *)(m)->impl)
#define TSESS(s) (&((tiny_session *)(s)->impl)->s)

static int tiny_probe(const char *path, const unsigned char *head, size_t n)
{
    size_t l = strlen(path);
    return (n >= 8 && memcmp(head, "PELABMDL", 8) == 0) ||
           (l > 6 && strcmp(path + l - 6, ".pelab") == 0);
}

/* The learned table or T5's biases as model_init drew them: the same pe/ calls on the recorded
 * config (seed included), so a view can put the trained values beside their start. */
static int tiny_init_values(tiny_model *t, char *err, size_t errlen)
{
    const model_config *c = &t->m.cfg;
    pe_params p = c->pe;
    pe_matrix v = {0};
    int rc;
    double scale = 1;
    if (t->m.wpe) {
        p.len = c->pos_len;
        p.dim = c->dim;
        rc = pe_learned_table(&p, &v, err, errlen);
    } else {
        rc = pe_t5_values(&p, &v, err, errlen);
        scale = 2.0 / sqrt((double)c->dim); /* model_init's rescaling to std d^-1/2 */
    }
    if (rc) return rc;
    size_t n = v.rows * v.cols;
    t->init = malloc(n * sizeof *t->init);
    if (!t->init) {
        pe_matrix_free(&v);
        return model_fail(err, errlen, PE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) t->init[i] = (float)(v.data[i] * scale);
    pe_matrix_free(&v);
    return 0;
}

static int tiny_open(lmi_model *lm, const char *path, char *err, size_t errlen)
{
    tiny_model *t = calloc(1, sizeof *t);
    if (!t) return model_fail(err, errlen, PE_ENOMEM, "%s: out of memory", path);
    int rc = model_load(path, &t->m, err, errlen);
    if (rc) {
        free(t);
        return rc;
    }
    const model_config *c = &t->m.cfg;
    size_t bytes = t->m.n_params * sizeof(float);
    if ((rc = pe_mem_reserve_hint(bytes, "the model's weights", "a smaller model needs less", err,
                                  errlen))) {
        model_free(&t->m);
        free(t);
        return rc;
    }
    t->held = bytes;
    int pe = model_pe_from_name(c->pe_name);
    if (pe == MODEL_PE_ALIBI &&
        (rc = pe_alibi_slopes(c->heads, c->pe.slope_ratio, t->slopes, err, errlen))) {
        pe_mem_release(t->held);
        model_free(&t->m);
        free(t);
        return rc;
    }
    if ((pe == MODEL_PE_LEARNED || pe == MODEL_PE_T5) && (rc = tiny_init_values(t, err, errlen))) {
        pe_mem_release(t->held);
        model_free(&t->m);
        free(t);
        return rc;
    }
    lmi_info *in = &lm->info;
    const char *base = strrchr(path, '/');
    snprintf(in->name, sizeof in->name, "%s", base ? base + 1 : path);
    snprintf(in->pe_name, sizeof in->pe_name, "%s", c->pe_name);
    in->layers = c->layers;
    in->heads = in->kv_heads = c->heads;
    in->head_dim = c->dim / c->heads;
    in->dim = c->dim;
    in->ctx = c->ctx;
    in->max_pos = pe == MODEL_PE_LEARNED ? c->pos_len : 0;
    in->vocab = c->vocab;
    in->bos = -1;
    in->eos = TOK_EOS;
    in->unk = TOK_UNK;
    in->caps = LMI_CAN_OFFSET;
    if (pe == MODEL_PE_ALIBI || pe == MODEL_PE_T5 || pe == MODEL_PE_NOPE) in->caps |= LMI_CAN_SPLIT;
    if (pe == MODEL_PE_ROPE) {
        in->caps |= LMI_CAN_ROPE_BASE | LMI_CAN_ROPE_SCALING;
        in->rope_base = c->pe.base;
        pe_params p = c->pe; /* as the position data has it (model.c: head width) */
        p.dim = in->head_dim;
        in->rot_dim = pe_rope_rotary_dim(&p);
        in->pairing = p.pairing;
    }
    if (pe == MODEL_PE_ALIBI) {
        in->caps |= LMI_CAN_ALIBI_SCALE;
        in->alibi_slopes = t->slopes;
    }
    lm->impl = t;
    return 0;
}

static void tiny_close(lmi_model *lm)
{
    tiny_model *t = TINY(lm);
    if (!t) return;
    pe_mem_release(t->held);
    model_free(&t->m);
    free(t->init);
    free(t);
    lm->impl = NULL;
}

static int is_punct(int c)
{
    return c == '.' || c == ',' || c == '!' || c == '?' || c == ';' || c == ':' || c == '"' ||
           c == '(' || c == ')';
}

/* Split the text the way tok_encode does and look every piece up alone, so each token keeps the
 * span it was typed in (an unknown word is shown as typed, not as <unk>): runs of line breaks
 * (with the blanks after them) are one <eos>, punctuation marks are tokens of their own, words
 * are the runs between. A word longer than any token is unknown. Stops at a NUL. */
static int tiny_tokenize(const lmi_model *lm, const char *text, size_t len, lmi_token *out, int cap,
                         char *err, size_t errlen)
{
    const tok_vocab *v = &TINY(lm)->m.vocab;
    const char *s = text, *end = text + len;
    char piece[64];
    int n = 0;
#define MORE(p) ((p) < end && *(p))
    while (MORE(s)) {
        const char *b = s;
        int c = (unsigned char)*s;
        if (c == '\n' || c == '\r') {
            while (MORE(s) && (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t')) s++;
        } else if (isspace(c)) {
            s++;
            continue;
        } else if (is_punct(c)) {
            s++;
        } else {
            while (MORE(s) && !isspace((unsigned char)*s) && !is_punct((unsigned char)*s)) s++;
        }
        if (n < cap) {
            lmi_token *t = &out[n];
            size_t l = (size_t)(s - b);
            int id;
            unsigned char unk = 0;
            if (c == '\n' || c == '\r') {
                id = TOK_EOS;
            } else {
                size_t cl = l < sizeof piece - 1 ? l : sizeof piece - 1;
                memcpy(piece, b, cl);
                piece[cl] = '\0';
                if (l > TOK_MAX_WORD || tok_encode(v, piece, &id, &unk, 1) != 1) {
                    id = TOK_UNK;
                    unk = 1;
                }
            }
            t->id = id;
            t->start = (int)(b - text);
            t->end = (int)(s - text);
            t->flags = unk ? LMI_TOK_UNKNOWN : 0;
        }
        n++;
    }
#undef MORE
    (void)err;
    (void)errlen;
    return n;
}

static int tiny_token_text(const lmi_model *lm, int id, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%s", tok_word(&TINY(lm)->m.vocab, id));
}

static int tiny_session_init(lmi_session *s, char *err, size_t errlen)
{
    tiny_session *ts = calloc(1, sizeof *ts);
    if (!ts) return model_fail(err, errlen, PE_ENOMEM, "session: out of memory");
    const model *m = &TINY(s->m)->m;
    size_t bytes = model_session_bytes(m, s->max_len);
    char what[96];
    snprintf(what, sizeof what, "a session of %d tokens (keys, values and queries)", s->max_len);
    int rc = pe_mem_reserve_hint(bytes, what, "a shorter context needs less", err, errlen);
    if (!rc) {
        ts->held = bytes;
        rc = model_session_init(&ts->s, m, s->max_len, err, errlen);
        if (rc) pe_mem_release(bytes);
    }
    if (rc) {
        free(ts);
        return rc;
    }
    s->impl = ts;
    return 0;
}

static void tiny_session_free(lmi_session *s)
{
    if (!s->impl) return;
    pe_mem_release(((tiny_session *)s->impl)->held);
    model_session_free(TSESS(s));
    free(s->impl);
    s->impl = NULL;
}

static void tiny_session_reset(lmi_session *s)
{
    model_session_reset(TSESS(s));
}

static int tiny_step(lmi_session *s, int token, char *err, size_t errlen)
{
    const float *lg;
    int rc = model_session_step(TSESS(s), token, &lg, err, errlen);
    if (!rc) s->logits = lg;
    return rc;
}

static int tiny_attn_row(const lmi_session *s, int layer, int head, int t, float *weights,
                         float *content, float *position, char *err, size_t errlen)
{
    return model_session_row(TSESS(s), layer, head, t, weights, content, position, err, errlen);
}

static int tiny_qk(const lmi_session *s, int layer, int head, int t, float *q, float *k, char *err,
                   size_t errlen)
{
    return model_session_qk(TSESS(s), layer, head, t, q, k, err, errlen);
}

/* The settings replay the tokens; the newest token's logits are the session's again. */
static int tiny_set_offset(lmi_session *s, int offset, char *err, size_t errlen)
{
    int rc = model_session_set_offset(TSESS(s), offset, err, errlen);
    if (!rc && s->len) s->logits = TSESS(s)->logits;
    return rc;
}

static int tiny_set_rope_base(lmi_session *s, double base, char *err, size_t errlen)
{
    int rc = model_session_set_rope_base(TSESS(s), base, err, errlen);
    if (!rc && s->len) s->logits = TSESS(s)->logits;
    return rc;
}

static int tiny_set_rope_scaling(lmi_session *s, const pe_rope_scaling *sc, char *err,
                                 size_t errlen)
{
    int rc = model_session_set_rope_scaling(TSESS(s), sc, err, errlen);
    if (!rc && s->len) s->logits = TSESS(s)->logits;
    return rc;
}

static int tiny_set_alibi_scale(lmi_session *s, double scale, char *err, size_t errlen)
{
    int rc = model_session_set_alibi_scale(TSESS(s), scale, err, errlen);
    if (!rc && s->len) s->logits = TSESS(s)->logits;
    return rc;
}

static int tiny_pos_params(const lmi_model *lm, lmi_pos *out, char *err, size_t errlen)
{
    const tiny_model *t = TINY(lm);
    const model_config *c = &t->m.cfg;
    out->params = c->pe;
    switch (model_pe_from_name(c->pe_name)) {
    case MODEL_PE_LEARNED:
        out->kind = LMI_POS_TABLE;
        out->trained = 1;
        out->values = t->m.wpe;
        out->init = t->init;
        out->rows = c->pos_len;
        out->cols = c->dim;
        out->reached = c->ctx;
        break;
    case MODEL_PE_SINUSOIDAL: /* fixed: pe/ computes it from params (len = ctx, dim = C) */
        out->kind = LMI_POS_TABLE;
        out->rows = out->reached = c->ctx;
        out->cols = c->dim;
        break;
    case MODEL_PE_T5:
        out->kind = LMI_POS_BUCKETS;
        out->trained = 1;
        out->values = t->m.t5;
        out->init = t->init;
        out->rows = c->heads;
        out->cols = out->buckets = c->pe.t5_buckets;
        out->max_distance = c->pe.t5_max_distance;
        out->bidirectional = c->pe.t5_bidirectional;
        break;
    case MODEL_PE_ALIBI: /* pelab's ALiBi keeps the slopes of its ratio; training leaves them */
        out->kind = LMI_POS_SLOPES;
        out->slopes = t->slopes;
        break;
    case MODEL_PE_ROPE:
        out->kind = LMI_POS_ROPE;
        out->base = c->pe.base;
        out->rot_dim = pe_rope_rotary_dim(&c->pe);
        break;
    default:
        out->kind = LMI_POS_NONE;
    }
    (void)err;
    (void)errlen;
    return 0;
}

const lmi_arch lmi_arch_tiny = {
    .name = "tiny",
    .desc = "pelab's own transformer: a .pelab checkpoint from `pelab train`",
    .probe = tiny_probe,
    .open = tiny_open,
    .close = tiny_close,
    .tokenize = tiny_tokenize,
    .token_text = tiny_token_text,
    .session_init = tiny_session_init,
    .session_free = tiny_session_free,
    .session_reset = tiny_session_reset,
    .step = tiny_step,
    .attn_row = tiny_attn_row,
    .qk = tiny_qk,
    .set_offset = tiny_set_offset,
    .set_rope_base = tiny_set_rope_base,
    .set_alibi_scale = tiny_set_alibi_scale,
    .pos_params = tiny_pos_params,
    .set_rope_scaling = tiny_set_rope_scaling,
};
