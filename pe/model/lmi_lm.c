/* lmi_lm.c: real checkpoints behind the model interface (lmi.h), as two registry entries that
 * share one adapter: "llama2c" (a llama2.c .bin) and "hf" (a Hugging Face folder, or a file
 * inside one). The numbers are lm.h's (lm_open, lm_forward, lm_attention_row). The session keeps
 * the ids it was fed so that a new offset or RoPE base can replay them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lm.h"
#include "lmi.h"
#include "pe_internal.h"
#include "tok.h"

/* The model and the tokenizer found beside it (NULL when none: why says what was looked for). */
typedef struct lm_lmi_model {
    lm_model *m;
    pe_tok *tok;
    char why[512];
} lm_lmi_model;

#define LMM(x) ((lm_lmi_model *)(x)->impl)
#define LM(x)  (LMM(x)->m)

extern const lmi_arch lmi_arch_llama2c, lmi_arch_hf;

typedef struct lm_lmi_session {
    lm_session s;
    int *ids; /* (max_len) the tokens fed */
} lm_lmi_session;

#define LS(s) ((lm_lmi_session *)(s)->impl)

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A llama2.c .bin: the "ak42" magic, or a .bin name that is not pelab's own checkpoint. */
static int llama2c_probe(const char *path, const unsigned char *head, size_t n)
{
    if (n >= 4 && memcmp(head, "24ka", 4) == 0) return 1; /* 0x616b3432 little-endian */
    if (n >= 8 && memcmp(head, "PELABMDL", 8) == 0) return 0;
    /* n == 0: empty, or not a regular file (a FIFO): the llama2.c loader says which */
    return ends_with(path, ".bin") && (n >= 28 || n == 0);
}

static int hf_probe(const char *path, const unsigned char *head, size_t n)
{
    (void)head;
    (void)n;
    struct stat st;
    char cfg[4200];
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(cfg, sizeof cfg, "%s/config.json", path);
        return stat(cfg, &st) == 0;
    }
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return strcmp(b, "config.json") == 0 || ends_with(b, ".safetensors") ||
           strcmp(b, "model.safetensors.index.json") == 0;
}

static int lm_lmi_open(lmi_model *lm, const char *path, char *err, size_t errlen)
{
    lm_lmi_model *w = calloc(1, sizeof *w);
    if (!w) return pe_fail(err, errlen, PE_ENOMEM, "out of memory");
    lm_model *m = NULL;
    int rc = lm_open(path, &m, err, errlen);
    if (rc) {
        free(w);
        return rc;
    }
    w->m = m;
    /* a tokenizer beside the model, when there is one (ids work without) */
    w->tok = pe_tok_open(path, w->why, sizeof w->why);
    if (w->tok && pe_tok_vocab_size(w->tok) > m->c.vocab) {
        snprintf(w->why, sizeof w->why, "%s has %d tokens, more than the model's %d",
                 pe_tok_path(w->tok), pe_tok_vocab_size(w->tok), m->c.vocab);
        pe_tok_free(w->tok);
        w->tok = NULL;
    }
    const lm_config *c = &m->c;
    lmi_info *in = &lm->info;
    const char *p = path;
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/') len--; /* a folder's name, not "" */
    const char *b = p + len;
    while (b > p && b[-1] != '/') b--;
    snprintf(in->name, sizeof in->name, "%.*s", (int)(p + len - b), b);
    snprintf(in->pe_name, sizeof in->pe_name, "%s", c->arch == LM_ARCH_GPT2 ? "learned" : "rope");
    in->layers = c->n_layers;
    in->heads = c->n_heads;
    in->kv_heads = c->n_kv_heads;
    in->head_dim = c->head_dim;
    in->dim = c->dim;
    in->ctx = c->seq_len;
    in->max_pos = c->arch == LM_ARCH_GPT2 ? c->seq_len : 0;
    in->vocab = c->vocab;
    in->bos = c->bos_id;
    in->eos = c->eos_id;
    in->unk = -1;
    in->caps = LMI_CAN_OFFSET;
    if (c->arch == LM_ARCH_LLAMA) {
        in->caps |= LMI_CAN_ROPE_BASE | LMI_CAN_ROPE_SCALING;
        in->rope_base = c->rope.base;
        in->rot_dim = pe_rope_rotary_dim(&c->rope);
        in->pairing = c->rope.pairing;
        in->rope_scaling = c->rope.scaling;
    }
    lm->impl = w;
    return PE_OK;
}

static void lm_lmi_close(lmi_model *lm)
{
    lm_lmi_model *w = LMM(lm);
    if (!w) return;
    lm_close(w->m);
    pe_tok_free(w->tok);
    free(w);
    lm->impl = NULL;
}

const lm_model *lm_of_lmi(const lmi_model *m)
{
    return m->arch && (m->arch == &lmi_arch_llama2c || m->arch == &lmi_arch_hf) ? LM(m) : NULL;
}

static int lm_lmi_display(const lmi_model *m, const int *ids, int n, const char **texts,
                          char **pool, char *err, size_t errlen)
{
    const lm_lmi_model *w = LMM(m);
    int nt = w->tok ? pe_tok_vocab_size(w->tok) : 0;
    for (int i = 0; i < n; i++)
        if (ids[i] >= nt) {
            /* ids past the tokenizer (padding rows of the embedding), or no tokenizer: [id] */
            size_t total = 1;
            for (int k = 0; k < n; k++) total += 64;
            char *p = malloc(total);
            if (!p) return pe_fail(err, errlen, PE_ENOMEM, "out of memory");
            size_t at = 0;
            for (int k = 0; k < n; k++) {
                texts[k] = p + at;
                if (ids[k] < nt)
                    pe_tok_token_text(w->tok, ids[k], p + at, 64);
                else
                    snprintf(p + at, 64, "[%d]", ids[k]);
                at += 64;
            }
            *pool = p;
            return PE_OK;
        }
    return pe_tok_display(w->tok, ids, n, texts, pool, err, errlen);
}

int lm_lmi_set_tokenizer(lmi_model *m, const char *path, char *err, size_t errlen)
{
    if (!lm_of_lmi(m))
        return pe_fail(err, errlen, PE_EINVAL,
                       "--tokenizer %s: the model %s has its own vocabulary", path, m->info.name);
    pe_tok *t = pe_tok_open(path, err, errlen);
    if (!t) return PE_EINVAL;
    if (pe_tok_vocab_size(t) > m->info.vocab) {
        int n = pe_tok_vocab_size(t);
        pe_tok_free(t);
        return pe_fail(err, errlen, PE_EINVAL,
                       "--tokenizer %s: %d tokens, more than the model's vocabulary of %d", path, n,
                       m->info.vocab);
    }
    pe_tok_free(LMM(m)->tok);
    LMM(m)->tok = t;
    return PE_OK;
}

/* Text through the tokenizer, BOS first where its convention adds one (a span of no bytes). */
static int lm_lmi_tokenize(const lmi_model *lm, const char *text, size_t len, lmi_token *out,
                           int cap, char *err, size_t errlen)
{
    const lm_lmi_model *w = LMM(lm);
    if (!w->tok) /* the way out first: a long path in why may be cut by the caller's buffer */
        return pe_fail(err, errlen, PE_EINVAL,
                       "--tokenizer FILE names a tokenizer, --ids 1,2,3 gives ids: %s", w->why);
    pe_tok_ids v = {0};
    int rc = pe_tok_encode(w->tok, text, len, PE_TOK_BOS, &v, err, errlen);
    if (rc < 0) {
        pe_tok_ids_free(&v);
        return rc;
    }
    for (int i = 0; i < v.n && i < cap; i++)
        out[i] = (lmi_token){v.ids[i], v.spans[i].start, v.spans[i].end, 0};
    int n = v.n;
    pe_tok_ids_free(&v);
    return n;
}

/* The token's text (spaces for "▁"/"Ġ", byte tokens as bytes), or [id] without a tokenizer. */
static int lm_lmi_token_text(const lmi_model *lm, int id, char *buf, size_t cap)
{
    const lm_lmi_model *w = LMM(lm);
    if (w->tok && id < pe_tok_vocab_size(w->tok)) return pe_tok_token_text(w->tok, id, buf, cap);
    return snprintf(buf, cap, "[%d]", id);
}

static void lm_lmi_session_free(lmi_session *s)
{
    lm_lmi_session *ls = LS(s);
    if (!ls) return;
    lm_session_free(&ls->s);
    free(ls->ids);
    free(ls);
    s->impl = NULL;
}

static int lm_lmi_session_init(lmi_session *s, char *err, size_t errlen)
{
    lm_lmi_session *ls = calloc(1, sizeof *ls);
    if (!ls) return pe_fail(err, errlen, PE_ENOMEM, "session: out of memory");
    ls->ids = malloc((size_t)s->max_len * sizeof *ls->ids);
    int rc = ls->ids ? lm_session_init(&ls->s, LM(s->m), s->max_len, 0, err, errlen)
                     : pe_fail(err, errlen, PE_ENOMEM, "session: out of memory");
    if (rc) {
        free(ls->ids);
        free(ls);
        return rc;
    }
    s->impl = ls;
    return PE_OK;
}

static void lm_lmi_session_reset(lmi_session *s)
{
    lm_session_reset(&LS(s)->s);
}

/* Feed the tokens again under the session's settings; on failure the old settings are put back
 * by the caller and the tokens replayed once more. */
static int replay(lmi_session *s, char *err, size_t errlen)
{
    lm_lmi_session *ls = LS(s);
    /* the length lm_session_dynamic set stays: the replay is of the same sequence (LongRoPE's
     * long_factor for the tokens before the one that passes L0) */
    int pinned = ls->s.dyn_set;
    lm_session_reset(&ls->s);
    ls->s.dyn_set = pinned;
    if (s->len == 0) return PE_OK;
    int rc = lm_forward(&ls->s, ls->ids, s->len, NULL, err, errlen);
    if (rc == PE_OK) s->logits = ls->s.logits;
    return rc;
}

static int lm_lmi_step(lmi_session *s, int token, char *err, size_t errlen)
{
    lm_lmi_session *ls = LS(s);
    /* dynamic NTK and LongRoPE (the config's own or --scaling's): the rows shown are those of
     * one forward over every token held, so a new length that moves the frequencies (a new
     * base, the other factor set) replays them under it */
    int rc = lm_session_dynamic(&ls->s, (long)ls->s.offset + s->len + 1, err, errlen);
    if (rc < 0) return rc;
    if (rc == 1 && (rc = replay(s, err, errlen))) return rc;
    rc = lm_forward(&ls->s, &token, 1, NULL, err, errlen);
    if (rc) return rc;
    ls->ids[s->len] = token;
    s->logits = ls->s.logits;
    return PE_OK;
}

static int lm_lmi_attn_row(const lmi_session *s, int layer, int head, int t, float *weights,
                           float *content, float *position, char *err, size_t errlen)
{
    (void)content;
    (void)position; /* RoPE and learned tables have no split (lmi_attn_row refuses first) */
    if (!weights) return PE_OK;
    return lm_attention_row(&LS(s)->s, layer, head, t, weights, err, errlen);
}

static int lm_lmi_qk(const lmi_session *s, int layer, int head, int t, float *q, float *k,
                     char *err, size_t errlen)
{
    return lm_qk(&LS(s)->s, layer, head, t, q, k, err, errlen);
}

static int lm_lmi_set_offset(lmi_session *s, int offset, char *err, size_t errlen)
{
    lm_lmi_session *ls = LS(s);
    const lm_config *c = &LM(s->m)->c;
    if (c->arch == LM_ARCH_GPT2 && (long long)offset + s->len > c->seq_len)
        return pe_fail(err, errlen, PE_ERANGE,
                       "--offset %d: GPT-2 has %d learned positions, and %d tokens are held",
                       offset, c->seq_len, s->len);
    int old = ls->s.offset;
    ls->s.offset = offset;
    /* dynamic NTK: the frequencies of the new largest position, exactly (one forward) */
    int rc = lm_session_dynamic(&ls->s, (long)offset + s->len, err, errlen);
    if (rc >= 0) rc = replay(s, err, errlen);
    if (rc) {
        ls->s.offset = old;
        lm_session_dynamic(&ls->s, (long)old + s->len, NULL, 0);
        replay(s, NULL, 0);
    }
    return rc;
}

/* RoPE p in force from now on and the tokens replayed under it; on failure the old RoPE and
 * the old replay are put back. */
static int use_rope(lmi_session *s, const pe_params *p, char *err, size_t errlen)
{
    lm_lmi_session *ls = LS(s);
    pe_params old = ls->s.rope;
    int rc = lm_session_set_rope(&ls->s, p, err, errlen);
    if (rc == PE_OK) rc = replay(s, err, errlen);
    if (rc) {
        lm_session_set_rope(&ls->s, &old, NULL, 0);
        replay(s, NULL, 0);
    }
    return rc;
}

static int lm_lmi_set_rope_base(lmi_session *s, double base, char *err, size_t errlen)
{
    pe_params p = LS(s)->s.rope;
    p.base = base;
    return use_rope(s, &p, err, errlen);
}

/* GPT-2: its wpe table, every row within the trained context (n_positions); the Llama family:
 * its RoPE base (rope_theta) and rotary dimension. */
static int lm_lmi_pos_params(const lmi_model *lm, lmi_pos *out, char *err, size_t errlen)
{
    const lm_model *m = LM(lm);
    const lm_config *c = &m->c;
    (void)err;
    (void)errlen;
    out->params = c->rope;
    if (c->arch == LM_ARCH_GPT2) {
        out->kind = LMI_POS_TABLE;
        out->trained = 1;
        out->values = m->pos_emb;
        out->rows = out->reached = c->seq_len;
        out->cols = c->dim;
        out->params.len = c->seq_len;
        out->params.dim = c->dim;
        return 0;
    }
    out->kind = LMI_POS_ROPE;
    out->base = c->rope.base;
    out->rot_dim = pe_rope_rotary_dim(&c->rope);
    return 0;
}

/* The trained RoPE (the config's own rope_scaling included) with sc in its place, or the trained
 * scaling back for type NONE; the base in use stays. */
static int lm_lmi_set_rope_scaling(lmi_session *s, const pe_rope_scaling *sc, char *err,
                                   size_t errlen)
{
    pe_params p = LS(s)->s.rope;
    p.scaling = sc->type == PE_SCALING_NONE ? LM(s->m)->c.rope.scaling : *sc;
    if (sc->type == PE_SCALING_NONE &&
        (p.scaling.type == PE_SCALING_DYNAMIC || p.scaling.type == PE_SCALING_LONGROPE)) {
        /* the config's dynamic NTK back at the length held, not at its factor's full effect;
         * its LongRoPE with the factor set of that length, not long_factor whatever it is */
        long n = (long)LS(s)->s.offset + s->len;
        p.scaling.seq_len = n > p.scaling.original_ctx ? (int)n : 0;
    }
    return use_rope(s, &p, err, errlen);
}

const lmi_arch lmi_arch_llama2c = {
    .name = "llama2c",
    .desc = "a llama2.c checkpoint (.bin: the legacy header or the \"ak42\" version 1 export)",
    .probe = llama2c_probe,
    .open = lm_lmi_open,
    .close = lm_lmi_close,
    .tokenize = lm_lmi_tokenize,
    .token_text = lm_lmi_token_text,
    .session_init = lm_lmi_session_init,
    .session_free = lm_lmi_session_free,
    .session_reset = lm_lmi_session_reset,
    .step = lm_lmi_step,
    .attn_row = lm_lmi_attn_row,
    .qk = lm_lmi_qk,
    .set_offset = lm_lmi_set_offset,
    .set_rope_base = lm_lmi_set_rope_base,
    .pos_params = lm_lmi_pos_params,
    .set_rope_scaling = lm_lmi_set_rope_scaling,
    .set_tokenizer = lm_lmi_set_tokenizer,
    .display = lm_lmi_display,
};

const lmi_arch lmi_arch_hf = {
    .name = "hf",
    .desc = "a Hugging Face folder (config.json + safetensors): Llama, Mistral, Qwen2, GPT-2",
    .probe = hf_probe,
    .open = lm_lmi_open,
    .close = lm_lmi_close,
    .tokenize = lm_lmi_tokenize,
    .token_text = lm_lmi_token_text,
    .session_init = lm_lmi_session_init,
    .session_free = lm_lmi_session_free,
    .session_reset = lm_lmi_session_reset,
    .step = lm_lmi_step,
    .attn_row = lm_lmi_attn_row,
    .qk = lm_lmi_qk,
    .set_offset = lm_lmi_set_offset,
    .set_rope_base = lm_lmi_set_rope_base,
    .pos_params = lm_lmi_pos_params,
    .set_rope_scaling = lm_lmi_set_rope_scaling,
    .set_tokenizer = lm_lmi_set_tokenizer,
    .display = lm_lmi_display,
};
