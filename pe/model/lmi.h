/* lmi.h: the one model interface the views consume (issue 21, item 4).
 *
 * llama2.c-flat structs behind an ops table, the way mpv's video-output drivers sit behind one
 * struct of function pointers. An architecture (pelab's own tiny transformer, a llama2.c .bin, a
 * Hugging Face Llama or GPT-2 folder, ...) is one file defining `const lmi_arch lmi_arch_<name>`
 * plus one X(<name>) line in lmi_archs.h; lmi_open probes them in that order.
 *
 *   lmi_model m = {0};
 *   lmi_open(&m, "assets/models/rope.pelab", err, sizeof err);   // probes every architecture
 *   lmi_token tk[64];
 *   int n = lmi_tokenize(&m, text, strlen(text), tk, 64, err, sizeof err);
 *   lmi_session s = {0};
 *   lmi_session_init(&s, &m, m.info.ctx, err, sizeof err);
 *   for (int t = 0; t < n; t++) lmi_step(&s, tk[t].id, &logits, err, sizeof err);
 *   lmi_attn_row(&s, layer, head, t, weights, NULL, NULL, err, sizeof err); // any t < s.len
 *   lmi_session_free(&s); lmi_close(&m);
 *
 * Attention rows are not kept by the session: it keeps q and k of every layer and token (the
 * KV cache plus the queries) and recomputes the row of (layer, head, token t) on demand exactly
 * as the step computed it, so a view holds O(layers x tokens x width) numbers, not
 * O(layers x heads x tokens^2).
 *
 * Like the rest of pe/, nothing here prints or exits: functions return 0 or a negative status
 * (PE_E*, LMI_E*) and write one line into err (errlen bytes) when err is not NULL. A zeroed
 * lmi_model / lmi_session is a valid empty one and the *_free / close functions accept it.
 */
#ifndef PELAB_MODEL_LMI_H
#define PELAB_MODEL_LMI_H

#include <stddef.h>

#include "pe.h"

enum {
    LMI_ENOSPLIT = -40, /* the scheme has no content / position split of its scores */
    LMI_ENOTSUP = -41,  /* the model cannot do this (no RoPE base to set, no ALiBi slopes, ...) */
};

/* Capability bits of lmi_info.caps. */
enum {
    LMI_CAN_SPLIT = 1u << 0,        /* a score = content (q.k scaled) + a position part: ALiBi,
                                       T5, NoPE (part 0). RoPE and absolute tables mix position
                                       into q and k, so they have no split */
    LMI_CAN_OFFSET = 1u << 1,       /* token t can sit at position offset + t */
    LMI_CAN_ROPE_BASE = 1u << 2,    /* the RoPE frequency base can be changed */
    LMI_CAN_ALIBI_SCALE = 1u << 3,  /* the ALiBi slopes can be scaled */
    LMI_CAN_ROPE_SCALING = 1u << 4, /* a RoPE context extension (linear, NTK, dynamic, YaRN,
                                       llama3) can be applied at inference */
};

/* Token flags of lmi_token.flags. */
enum {
    LMI_TOK_UNKNOWN = 1u << 0, /* the text is outside the vocabulary: the model sees info.unk */
};

/* What a model is. Filled by the architecture's open; read-only afterwards. */
typedef struct lmi_info {
    const char *arch;  /* the architecture's registry name ("tiny", ...) */
    char name[128];    /* what to call it in titles: the file's name without its folder */
    char pe_name[16];  /* its position scheme, a name in pe/'s registry (pe_encoding_find):
                          nope learned sinusoidal alibi rope t5 */
    int layers, heads; /* transformer blocks; query heads per block */
    int kv_heads;      /* key/value heads (== heads without grouped-query attention) */
    int head_dim;      /* width of one head's q and k */
    int dim;           /* model width */
    int ctx;           /* the context it was trained on */
    int max_pos;       /* positions it has a vector for (a learned table's rows); 0 = no limit */
    int vocab;         /* token ids are 0..vocab-1 */
    int bos, eos, unk; /* special ids, -1 when the model has none */
    unsigned caps;     /* LMI_CAN_* */
    double rope_base;  /* the trained RoPE base (LMI_CAN_ROPE_BASE), else 0 */
    const double *alibi_slopes; /* (heads) the trained ALiBi slopes (LMI_CAN_ALIBI_SCALE), else
                                   NULL */
    int rot_dim;        /* RoPE: the rotated width of a head (head_dim unless partial rotary);
                           0 for a model without RoPE */
    pe_pairing pairing; /* RoPE: which dimensions form a rotary pair (as pe_rope_pair) */
    pe_rope_scaling rope_scaling; /* RoPE: the config's own scaling (type NONE without one) */
} lmi_info;

/* What a model's position scheme holds, as lmi_pos_params reports it (issue 23: the trained
 * tables, where the explorer used to show only the formulas and a random init). */
enum {
    LMI_POS_NONE = 0,    /* nothing: NoPE (only the causal mask orders the tokens) */
    LMI_POS_TABLE = 1,   /* a (rows, cols) table added to the input: learned, sinusoidal */
    LMI_POS_BUCKETS = 2, /* T5: a scalar per (head, bucket of the distance j - i) */
    LMI_POS_SLOPES = 3,  /* ALiBi: a slope per head */
    LMI_POS_ROPE = 4,    /* RoPE: the frequency base of the rotation */
};

typedef struct lmi_pos {
    int kind;    /* LMI_POS_* */
    int trained; /* 1: training set the values (a learned table, T5's biases); 0: the scheme fixes
                    them (a sinusoidal table, ALiBi slopes and a RoPE base as configured) */
    /* TABLE: row p (of rows) is added at position p; cols = the model width. BUCKETS: (heads,
     * buckets) bias values, shared by every layer. NULL for a fixed table: pe/'s registry
     * computes it from params. Valid while the model is open. */
    const float *values;
    const float *init; /* the same shape as values at initialisation, when the model knows it
                          (pelab's own models: from their seed); else NULL */
    int rows, cols;
    int reached; /* TABLE: rows 0..reached-1 are positions training used (the context); later rows
                    never got a gradient */
    int buckets, max_distance, bidirectional; /* BUCKETS: T5's bucketing of j - i */
    const double *slopes;                     /* SLOPES: (info.heads) the slopes in use */
    double base;                              /* ROPE: the trained base */
    int rot_dim;                              /* ROPE: rotated dimensions of a head */
    pe_params params; /* the scheme's parameters as pe/ reads them (pe_name's encoding): the
                         defaults and fixed tables are computed from these */
} lmi_pos;

typedef struct lmi_arch lmi_arch;

typedef struct lmi_model {
    const lmi_arch *arch;
    lmi_info info;
    void *impl; /* the architecture's own model */
} lmi_model;

/* One token of a text: its id and the bytes [start, end) of the input it covers. Spans are in
 * order and do not overlap; bytes between them (spaces) belong to no token. */
typedef struct lmi_token {
    int id;
    int start, end;
    unsigned flags; /* LMI_TOK_* */
} lmi_token;

/* A run over a sequence with a KV cache (and the queries, for rows on demand). */
typedef struct lmi_session {
    const lmi_model *m;
    int max_len;             /* tokens it can hold */
    int len;                 /* tokens fed so far */
    int offset;              /* token t sits at position offset + t */
    double rope_base;        /* the RoPE base in use (LMI_CAN_ROPE_BASE), else 0 */
    double alibi_scale;      /* ALiBi slopes = trained slopes * this (1 unless changed) */
    pe_rope_scaling scaling; /* the RoPE scaling applied at inference (type NONE: as trained) */
    double *alibi_slopes;    /* (heads) the slopes in use (LMI_CAN_ALIBI_SCALE), else NULL */
    const float *logits;     /* (vocab) next-token logits after the newest token; NULL when empty */
    void *impl;              /* the architecture's own session */
} lmi_session;

/* The ops table of one architecture. Every function but probe, open and close receives a model
 * (or a session of a model) that this architecture opened. The public functions below check the
 * arguments (ranges, capabilities) before they call an op, so ops may assume them. */
struct lmi_arch {
    const char *name; /* registry name, lower case */
    const char *desc; /* one line: the files it reads */
    /* 1 when path is this architecture's. head holds the first n bytes of the file (n = 0 for a
     * directory or an unreadable file). Never fails, never reads more. */
    int (*probe)(const char *path, const unsigned char *head, size_t n);
    /* Open path into m (zeroed): set m->info (arch is set by lmi_open) and m->impl. */
    int (*open)(lmi_model *m, const char *path, char *err, size_t errlen);
    void (*close)(lmi_model *m);
    /* Tokens of text[0..len): at most cap written, the total returned (as lmi_tokenize). */
    int (*tokenize)(const lmi_model *m, const char *text, size_t len, lmi_token *out, int cap,
                    char *err, size_t errlen);
    /* The vocabulary's text of id (0 <= id < vocab) into buf, like snprintf. */
    int (*token_text)(const lmi_model *m, int id, char *buf, size_t cap);
    /* Session: s->m, max_len, rope_base, alibi_scale and alibi_slopes are set by the caller. */
    int (*session_init)(lmi_session *s, char *err, size_t errlen);
    void (*session_free)(lmi_session *s);
    void (*session_reset)(lmi_session *s);
    /* Feed token at position offset + len; set s->logits; len is advanced by the caller. */
    int (*step)(lmi_session *s, int token, char *err, size_t errlen);
    /* Row of (layer, head) for token t < len over keys 0..t from the cached q and k: weights
     * (t + 1, summing to 1), and when not NULL the content and position parts of the scores
     * (only asked of a model with LMI_CAN_SPLIT). Any of the three may be NULL. */
    int (*attn_row)(const lmi_session *s, int layer, int head, int t, float *weights,
                    float *content, float *position, char *err, size_t errlen);
    /* q of (layer, head) and k of the key/value head it reads, for token t < len, as the
     * projections made them (biases included, before any RoPE rotation): head_dim entries
     * each, either may be NULL. */
    int (*qk)(const lmi_session *s, int layer, int head, int t, float *q, float *k, char *err,
              size_t errlen);
    /* Position experiments: replay the tokens fed so far under the new setting, or fail and
     * keep the old one. NULL when the model lacks the capability. */
    int (*set_offset)(lmi_session *s, int offset, char *err, size_t errlen);
    int (*set_rope_base)(lmi_session *s, double base, char *err, size_t errlen);
    int (*set_alibi_scale)(lmi_session *s, double scale, char *err, size_t errlen);
    /* The model's position parameters (lmi_pos; out is zeroed by the caller). */
    int (*pos_params)(const lmi_model *m, lmi_pos *out, char *err, size_t errlen);
    /* Replace the trained RoPE scaling with sc (type NONE: back to the trained one). */
    int (*set_rope_scaling)(lmi_session *s, const pe_rope_scaling *sc, char *err, size_t errlen);
    /* Optional (NULL: the model's vocabulary is its own, words as typed). Use the tokenizer at
     * path instead of the one found beside the model (--tokenizer). */
    int (*set_tokenizer)(lmi_model *m, const char *path, char *err, size_t errlen);
    /* Optional (NULL: token_text per id). The texts a sequence of ids shows, as
     * pe_tok_display: texts[i] points into *pool (one malloc, the caller frees it). */
    int (*display)(const lmi_model *m, const int *ids, int n, const char **texts, char **pool,
                   char *err, size_t errlen);
};

/* ---- the registry ----------------------------------------------------------------------- */

/* The architectures in probe order (lmi_archs.h), NULL-terminated. */
extern const lmi_arch *const lmi_archs[];
/* An architecture by name; NULL when none has it. */
const lmi_arch *lmi_arch_find(const char *name);

/* ---- models ----------------------------------------------------------------------------- */

/* Open the model at path with the first architecture whose probe claims it. When none does,
 * the first architecture of the registry (pelab's own checkpoint) opens it, so the message says
 * what that format expected ("not a pelab checkpoint (bad magic ...)"). */
int lmi_open(lmi_model *m, const char *path, char *err, size_t errlen);
/* The same with a named architecture (no probing). */
int lmi_open_arch(lmi_model *m, const lmi_arch *arch, const char *path, char *err, size_t errlen);
void lmi_close(lmi_model *m);

/* Split text[0..len) into tokens. Writes at most cap tokens into out and returns how many the
 * whole text has (so a second call with a larger buffer gets them all), or a negative status. */
int lmi_tokenize(const lmi_model *m, const char *text, size_t len, lmi_token *out, int cap,
                 char *err, size_t errlen);
/* The text of token id as the vocabulary has it ("<eos>" for the tiny model's end of story).
 * Writes at most cap bytes with a NUL; returns the length needed, or -1 for an id out of range
 * (buf then holds ""). */
int lmi_token_text(const lmi_model *m, int id, char *buf, size_t cap);

/* What the model's position scheme holds: a trained table, T5's bucket biases, ALiBi's slopes,
 * RoPE's base, or nothing (lmi_pos). Pointers stay valid while m is open. LMI_ENOTSUP when the
 * architecture cannot say. */
int lmi_pos_params(const lmi_model *m, lmi_pos *out, char *err, size_t errlen);

/* Use the tokenizer at path (a file, or a folder to search) instead of the one found beside the
 * model. LMI_ENOTSUP with one line for a model whose vocabulary is its own (pelab's tiny
 * models); PE_EINVAL when the file cannot be read or has more tokens than the model. */
int lmi_set_tokenizer(lmi_model *m, const char *path, char *err, size_t errlen);
/* 1 when the model's tokens are subword pieces with display texts of their own (a real
 * tokenizer: show lmi_display's texts), 0 when they are the words typed (the tiny models). */
int lmi_has_display(const lmi_model *m);
/* The text each of ids[0..n) shows in a token strip, a tick or an export: "▁" and "Ġ"
 * as spaces, byte tokens that together form one UTF-8 character as that character on the
 * first of them and "" on the rest (pe_tok_display); token_text per id for a model without
 * the op. texts[i] points into *pool (malloc'd; free it). Control characters are left for the
 * caller to escape. 0 or a negative status (an id out of range: PE_EINVAL). */
int lmi_display(const lmi_model *m, const int *ids, int n, const char **texts, char **pool,
                char *err, size_t errlen);

/* ---- sessions --------------------------------------------------------------------------- */

/* The RoPE scaling in force for the tokens held: the one lmi_set_rope_scaling set, else the
 * model's own (info.rope_scaling); dynamic NTK and LongRoPE with seq_len at offset + len as the
 * forward takes it (LongRoPE: pe_longrope_long then says whether long_factor is in force). */
pe_rope_scaling lmi_rope_scaling_now(const lmi_session *s);

/* Room for max_len tokens (1..PE_MAX_LEN) at offset 0 with the trained settings. */
int lmi_session_init(lmi_session *s, const lmi_model *m, int max_len, char *err, size_t errlen);
void lmi_session_free(lmi_session *s);
/* Forget the tokens (the settings stay). */
void lmi_session_reset(lmi_session *s);
/* Append token (0..vocab-1) at position offset + len. *logits (may be NULL) receives the (vocab)
 * next-token logits, valid until the next call. PE_ERANGE when the session is full or the
 * position has no vector (info.max_pos), PE_EINVAL for a bad id. */
int lmi_step(lmi_session *s, int token, const float **logits, char *err, size_t errlen);
/* The attention of token t (0 <= t < len) in (layer, head) over tokens 0..t, computed now from
 * the cached q and k, equal to what the step that fed token t computed: weights (t + 1 entries,
 * may be NULL). content and position (t + 1 each, may be NULL) receive the parts of the
 * pre-softmax scores: content = q.k / sqrt(head_dim), position = the scheme's bias (ALiBi
 * -m_h (t - j), T5's bucket bias, 0 for NoPE); asking for them of a model without LMI_CAN_SPLIT
 * fails with LMI_ENOSPLIT and a message saying why. */
int lmi_attn_row(const lmi_session *s, int layer, int head, int t, float *weights, float *content,
                 float *position, char *err, size_t errlen);

/* The query of (layer, head) and the key it reads (its key/value head's) for token t
 * (0 <= t < len), as the model's projections made them, before the position rotation: what
 * Barbero et al. 2024 and Jin et al. 2025 measure. RoPE rotates each pair (pe_rope_pair of
 * info.pairing, the first info.rot_dim dimensions) by the angle of its position; undone here
 * with the cos and sin the step used, so rotating them again by the model's RoPE gives the
 * scores of lmi_attn_row (tests/pe/realmodel and tests/app/test_measures check it). q and k
 * (head_dim entries each) may be NULL. LMI_ENOTSUP when the architecture keeps no q and k. */
int lmi_qk(const lmi_session *s, int layer, int head, int t, float *q, float *k, char *err,
           size_t errlen);

/* Position experiments. Each replays the tokens fed so far under the new setting and, when the
 * replay fails, keeps the old setting (and says why). LMI_ENOTSUP when the model lacks the
 * capability. */
int lmi_set_offset(lmi_session *s, int offset, char *err, size_t errlen);        /* offset >= 0 */
int lmi_set_rope_base(lmi_session *s, double base, char *err, size_t errlen);    /* base > 1 */
int lmi_set_alibi_scale(lmi_session *s, double scale, char *err, size_t errlen); /* >= 0 */
/* A RoPE context extension at inference, transformers' semantics (pe_rope_inv_freq): sc's type
 * and factor (>= 1), its original context (0: the model's trained context) and the method's
 * own parameters; type PE_SCALING_NONE restores what the model was trained with (its config's
 * rope_scaling included). LMI_ENOTSUP without LMI_CAN_ROPE_SCALING. Dynamic NTK ignores sc's
 * seq_len: it follows the session, as transformers' dynamic rope does, with seq_len = offset +
 * len (the largest position + 1); each lmi_step or lmi_set_offset that moves it into a new base
 * replays the tokens held, so every row is that of one forward over them all. */
int lmi_set_rope_scaling(lmi_session *s, const pe_rope_scaling *sc, char *err, size_t errlen);

/* ---- next-token choice (any model's logits) -------------------------------------------- */

/* The k most likely tokens (softmax of logits at temperature 1), most likely first, ties by
 * lower id. ids and probs need min(k, vocab) entries; returns that count. */
int lmi_topk(const float *logits, int vocab, int k, int *ids, float *probs);
/* Greedy when temperature <= 0 (lowest id among equal maxima), else a sample from
 * softmax(logits / temperature) drawn with rng. */
int lmi_sample(const float *logits, int vocab, double temperature, pe_rng *rng);

#endif
