/* attn.h: a model run over a prompt, kept for the attention views (issue 6).
 *
 * An app_attn opens a model through the model interface (pe/model/lmi.h) by scheme name
 * (assets/models) or path, splits the prompt with the model's tokenizer, runs one session over
 * the prompt and the generated tokens ONCE, and keeps the session (its cached q and k of every
 * layer and token) with the top-5 next tokens of every step. It runs again only when what the
 * run depends on changes (model, text, shift, RoPE base, ALiBi scale, sampling): a key compared
 * against the state on every update. Stepping through the tokens is then indexing, so forward
 * and back return exactly the same numbers, and a frame costs no model work.
 *
 * The attention rows are not stored for every (layer, head, step): a view asks for a row and
 * the store computes the rows of that (layer, head) from the cached q and k (the very bits the
 * step computed) into a cache that holds one layer at a time. So a run holds O(layers x tokens x
 * width) numbers, not O(layers x heads x tokens^2): a 12-layer, 12-head model keeps 1024 tokens
 * (tests/app/test_attention_store.c).
 *
 * Generation appends: asking for more generated tokens continues the session where it stopped
 * (the sampler's random stream continues too), asking for fewer shows fewer, so a run of N
 * generated tokens is the same whether made at once or one key press at a time.
 *
 * Long texts: a run holds at most the model's training context (cap). A longer prompt is cut
 * there and generation stops there, with a notice; pelab does not slide a window, because a
 * window would re-position every token at every step and hide what the view is about. */
#ifndef PELAB_APP_ATTN_H
#define PELAB_APP_ATTN_H

#include <stddef.h>

#include "lmi.h"
#include "options.h"
#include "state.h"

struct app_view_ctx;

#define APP_ATTN_TOPK 5
/* The most bytes the attention rows of one layer may take in the store's cache (rows x keys x
 * heads, with the score parts where the model splits its scores); a model whose context would
 * need more keeps fewer tokens (said in the notice). */
#define APP_ATTN_MAX_BYTES ((size_t)192 << 20)
/* Option ranges the views check before any model is open (the model then says its own). */
#define APP_ATTN_MAX_LAYER    1023
#define APP_ATTN_MAX_GENERATE 4096

/* One token as shown: the word as typed (unknown words keep their spelling), or the vocabulary
 * word for generated tokens. */
typedef struct app_attn_token {
    char word[40];           /* display text; "¶" for <eos>; long words cut with "~" */
    int id;                  /* vocabulary id; the model's unknown id for an unknown word */
    unsigned char unknown;   /* the word is outside the vocabulary: the model sees <unk> */
    unsigned char generated; /* made by the model, not typed */
    int start, end;          /* the bytes [start, end) of the text it covers (BOS: [0, 0));
                                -1 for --ids and generated tokens, which cover no typed text */
} app_attn_token;

/* What a run depends on (compared byte for byte). */
typedef struct app_attn_key {
    char model[512];
    char prompt[1024];
    char ids[1024]; /* --ids: token ids instead of the prompt */
    char tokenizer[512];
    char preset[64];
    int shift;
    double rope_base, alibi_scale, temperature;
    int scaling;   /* st->p.scaling.type (real RoPE models: applied at inference) */
    double factor; /* its factor */
    int orig_ctx;  /* --orig-ctx when given (L0 of the scaling), else 0: the model's context */
    int gen_seed;
} app_attn_key;

struct app_attn_rows; /* the cache of one layer's rows (attn.c) */

typedef struct app_attn {
    app_attn_key key;
    int valid;  /* key describes the arrays below */
    int failed; /* the run for key failed with fail_msg (not retried until key changes) */
    char fail_msg[512];
    /* the model, through the interface */
    lmi_model m;
    int loaded;
    char path[1024];    /* the file the model came from */
    char tok_path[512]; /* --tokenizer in use for it ("" = the one beside it) */
    const char *pe;     /* its position scheme, pe/'s name (m.info.pe_name) */
    char label[64];     /* what titles call it: the scheme for pelab's own models ("rope"), the
                           file or folder and its scheme for a real one ("stories260K.bin, rope") */
    unsigned caps;      /* LMI_CAN_* of the model */
    int layers, heads;
    size_t held;     /* bytes of the run reserved in the memory budget (pe_mem_*) */
    lmi_session s;   /* the run: its cached q and k give the rows */
    lmi_session ref; /* the same tokens at shift 0, when shift > 0 */
    pe_rng rng;      /* the sampler, continued across generate requests */
    /* the text */
    int cap;             /* tokens a run can hold: the training context (or less, see MAX_BYTES) */
    int n_text;          /* tokens in the prompt text */
    int n_prompt;        /* prompt tokens run (min(n_text, cap)) */
    int n_run;           /* tokens run so far: prompt + every generated token made */
    int n;               /* tokens shown: n_prompt + min(generate, made); steps are 0..n-1 */
    int n_unknown;       /* prompt words outside the vocabulary */
    app_attn_token *tok; /* (cap) */
    int split;           /* the model splits its scores into content and position parts */
    char split_msg[256]; /* why there is no split (rope, learned, sinusoidal) */
    int *top_id;         /* (cap, TOPK) next-token candidates after step t, most likely first */
    float *top_p;        /* (cap, TOPK) their probabilities */
    float *next_p;       /* (cap) probability step t gave the token that came next (t + 1) */
    int *next_rank;      /* (cap) its rank there, 0 = the most likely; -1 for the last token */
    double shift_diff;   /* max |attention - attention at shift 0| over the run; -1: no shift */
    /* the position experiments */
    double trained_base;        /* rope: the base the model was trained with */
    double base;                /* rope: the base in use */
    int scaled;                 /* a RoPE scaling (key.scaling, key.factor) is applied */
    double *trained_slopes;     /* alibi: (heads) the trained slopes; NULL for other schemes */
    double *slopes;             /* alibi: (heads) in use */
    char notice[320];           /* the text was cut / the context is full / every word is unknown */
    struct app_attn_rows *rows; /* internal: the rows asked for, computed from s */
} app_attn;

/* Free everything; a zeroed app_attn is valid and free accepts it. */
void app_attn_free(app_attn *a);

/* Bring a up to date for st with the model named `name` (st->attn.model_name, or st->attn.compare
 * for the right side of the compare view: that very pointer takes st->attn.compare_tokenizer,
 * any other name st->attn.tokenizer): load, split the text (or take st->attn.ids), run. Real
 * models' tokens show lmi_display's texts. Does nothing when nothing the
 * run depends on changed. Returns 0, or -1 with one line in err (a missing model says where
 * pelab looked and how to train one; an empty text says how to give one). */
int app_attn_update(app_attn *a, const app_state *st, const char *name, char *err, size_t errlen);

/* The step shown: st->attn.step (-1 = the last token) clamped to 0..n-1. */
int app_attn_step(const app_attn *a, const app_state *st);
/* The rows below are computed from the run's cached q and k when first asked for and kept in
 * a cache of one layer: a pointer stays valid until a row of another layer is asked for or the
 * run changes (app_attn_update, app_attn_free). An app_attn is used by one thread at a time.
 *
 * Attention of token `step` over tokens 0..step in (layer, head): step + 1 weights summing to
 * 1. NULL when out of range (or out of memory). */
const float *app_attn_row(const app_attn *a, int step, int layer, int head);
/* The content / position parts of that row's scores (step + 1 each); NULL when the scheme has
 * no split (see split_msg) or out of range. */
const float *app_attn_content(const app_attn *a, int step, int layer, int head);
const float *app_attn_position(const app_attn *a, int step, int layer, int head);
/* The causal matrix of (layer, head) with row stride a->cap: row t is step t (t < a->n), NaN
 * above the diagonal (the future). */
const float *app_attn_matrix(const app_attn *a, int layer, int head);

/* The compare view with two tokenizers: the step of run b that covers the same text as step
 * `step` of run a, so both panels show one place in the text. A prompt token of a that has read
 * the text up to byte e (its end) maps to b's last prompt token starting before e (the one
 * covering byte e - 1), a BOS (no bytes) to b's first token; the k-th generated token of a to
 * the k-th of b. When the two runs cut the text alike, or either has no spans (--ids), the step
 * is the same index; *by_text (may be NULL) says which: 1 = aligned by text. The result is
 * clamped to b's tokens. */
int app_attn_align(const app_attn *a, int step, const app_attn *b, int *by_text);

/* The vocabulary's text of id as the strip shows a word (a real model's readable piece, control
 * characters escaped, a line break as a pilcrow): the "next token" lists. */
void app_attn_vocab_text(const app_attn *a, int id, char *buf, size_t n);
/* Grouped-query attention (fewer key/value heads than heads): the kv group head reads, its
 * key/value head (head / (heads / kv_heads), as the forward shares them); -1 for a model
 * without grouping or a head out of range. */
int app_attn_kv_group(const app_attn *a, int head);
/* "; grouped-query attention, 2 kv heads: heads 0-3 kv 0, heads 4-7 kv 1" for a grouped model, ""
 * otherwise: what an export's description adds. */
void app_attn_kv_groups_text(const app_attn *a, char *buf, size_t n);

/* The bytes a run of cap tokens of a model like `in` holds beyond the session (which its
 * architecture reserves itself): the cache of one layer's rows and the per-step arrays. */
size_t app_attn_store_bytes(const lmi_info *in, int cap);

/* Generate one more token (the explorer's key): st->attn.generate + 1 if the context has room.
 * Returns the new generate count, or -1 with a message when the context is full. */
int app_attn_more(const app_attn *a, const app_state *st, char *msg, size_t msglen);

/* ---- the module's option rows (added to the option table through the views) ---------- */

extern const app_option app_attn_options[]; /* ended by a row with name NULL */

/* ---- names ------------------------------------------------------------------------------ */

/* The scheme names a model can be given by. */
extern const char *const app_attn_model_names[]; /* NULL-terminated */
/* Check a model name without loading it: a scheme name or a path (contains '/' or ends in
 * .pelab). 0, or -1 with "did you mean". */
int app_attn_check_name(const char *opt, const char *name, char *err, size_t errlen);
/* The checkpoint file of name: a path as is, or assets/models/<scheme>.pelab (or the first
 * <scheme>-*.pelab there). 0, or -1 saying where pelab looked and how to train the model. */
/* Load the model name names (a scheme or a checkpoint path) and free it again: 0, or -1 with
 * "--model NAME: why" (lesson --check: a path that exists but is no checkpoint, issue 28). */
int app_attn_check_model(const char *name, char *err, size_t errlen);
int app_attn_model_path(const char *name, char *path, size_t n, char *err, size_t errlen);
/* The text of preset `name` (assets/prompts/<name>.txt, trailing newlines dropped). 0, or -1
 * listing the presets there. */
int app_attn_preset_text(const char *name, char *buf, size_t n, char *err, size_t errlen);
/* The text a state asks for: --prompt when set, else the preset's text, else "". */
int app_attn_text(const app_state *st, char *buf, size_t n, char *err, size_t errlen);

/* ---- the views' cache ------------------------------------------------------------------- */

/* The two runs an attention view keeps in its context (left/right in the compare view),
 * created on first use and freed with the context. NULL when out of memory. */
app_attn *app_attn_of(struct app_view_ctx *c, int which);
/* The same without creating anything: NULL until the view has built once. */
const app_attn *app_attn_peek(const struct app_view_ctx *c, int which);

#endif
