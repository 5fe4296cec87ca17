/* model.h: pelab's built-in transformer, its tokenizer and its story corpus.
 *
 * A tiny decoder-only transformer (pre-norm, causal multi-head attention, GELU MLP) trained by
 * pelab on generated children's stories, one model per position scheme: nope, learned,
 * sinusoidal, alibi, rope and t5. Every position formula comes from pe/ (pe.h); this module
 * only decides where the encoding enters the network:
 *   learned, sinusoidal  a (position, dim) table added to the token embeddings
 *   alibi                -m_h (i - j) added to the scaled logits q.k / sqrt(d_head)
 *   rope                 q and k of every head rotated by pe_rope_rotate_f
 *   t5                   a learned scalar per (head, bucket of j - i) added to the logits
 *   nope                 nothing; only the causal mask orders the tokens
 *
 * Like pe/, it never prints and never exits; long work reports through a callback. Functions
 * that can fail return 0 or a negative status (PE_E* or MODEL_E*) and write one line into
 * err (errlen bytes) when err is not NULL. Structs are flat; a zeroed struct is a valid empty
 * one and every *_free accepts it.
 */
#ifndef PELAB_MODEL_H
#define PELAB_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pe.h"

enum {
    MODEL_EFORMAT = -10,  /* a checkpoint or grammar file was refused */
    MODEL_EIO = -11,      /* a file could not be opened, read or written */
    MODEL_ENOSPLIT = -12, /* the scheme has no content / position split of the scores */
    MODEL_ESTOPPED = -13, /* training was stopped by the progress callback */
};

/* ==== tokenizer ============================================================================ */

#define TOK_UNK       0  /* "<unk>": a word outside the vocabulary, shown as is */
#define TOK_EOS       1  /* "<eos>": end of a story; a newline in text */
#define TOK_MAX_WORD  31 /* bytes of the longest token */
#define TOK_MAX_VOCAB 65536

/* Word-level vocabulary. Tokens are words or single punctuation marks (. , ! ? ; : " ( )). */
typedef struct tok_vocab {
    int n;        /* number of tokens, ids 0..n-1 */
    char **words; /* (n) NUL-terminated, pointing into pool */
    char *pool;   /* all the words */
    int *slots;   /* (nslots) open-addressing hash of ids, -1 = empty */
    int nslots;
} tok_vocab;

/* Copy n words into v (zeroed or freed). words[0] must be "<unk>" and words[1] "<eos>"; every
 * word must be 1..TOK_MAX_WORD bytes without whitespace and unique. */
int tok_vocab_init(tok_vocab *v, const char *const *words, int n, char *err, size_t errlen);
void tok_vocab_free(tok_vocab *v);
/* Id of word, exact match; -1 when it is not in the vocabulary. */
int tok_find(const tok_vocab *v, const char *word);
/* The word of id; "<unk>" for TOK_UNK and for an id out of range (never NULL). */
const char *tok_word(const tok_vocab *v, int id);
/* Split text into tokens and map them to ids. Runs of newlines become one TOK_EOS. A word not
 * found exactly is tried in lower case and with a capital first letter; if still missing it
 * becomes TOK_UNK with unknown[i] = 1 (unknown may be NULL). Writes at most cap ids and
 * returns the total number of tokens (so a second call with a larger buffer gets them all). */
int tok_encode(const tok_vocab *v, const char *text, int *ids, unsigned char *unknown, int cap);
/* Join ids into readable text (no space before punctuation, quotes paired, TOK_EOS = "\n").
 * Writes at most cap bytes including the NUL; returns the length the full text needs, like
 * snprintf. decode(encode(text)) == text for text written in the corpus's spacing. */
size_t tok_decode(const tok_vocab *v, const int *ids, int n, char *out, size_t cap);

/* ==== story corpus ========================================================================= */

/* A story grammar read from a directory (assets/story): grammar.txt plus one word list per
 * {list} it names. The format is described in assets/story/README.md. */
typedef struct model_grammar {
    char **words; /* internal: (nwords) distinct words, each malloc'ed */
    int nwords, words_cap;
    int *cap_of;              /* internal: (nwords) id of the capitalised form */
    int a, a_cap, an, an_cap; /* internal: ids of "a", "A", "an", "An" */
    struct model_rule *rules; /* internal: (nrules) */
    int nrules;
    struct model_list *lists; /* internal: (nlists) word lists */
    int nlists;
    char **vars; /* internal: (nvars) variable names */
    int nvars;
    int start;     /* internal: the rule "story" */
    uint64_t hash; /* FNV-1a of the grammar and every list file, in the order read */
} model_grammar;

int model_grammar_load(model_grammar *g, const char *dir, char *err, size_t errlen);
void model_grammar_free(model_grammar *g);

/* Story number index of the corpus with the given seed, as token strings owned by g (valid
 * until model_grammar_free). Stories depend only on (grammar, seed, index). Returns the number
 * of tokens (at most cap are written) or a negative status for a grammar error. */
int model_story(const model_grammar *g, uint64_t seed, uint64_t index, const char **words, int cap,
                char *err, size_t errlen);

/* The corpus stream: stories 0, 1, 2, ... of seed, each followed by TOK_EOS, mapped through v
 * (words outside v become TOK_UNK), until n ids are written. *n_unk (may be NULL) receives the
 * number of TOK_UNK ids. */
int model_corpus(const model_grammar *g, const tok_vocab *v, uint64_t seed, size_t n, int *ids,
                 size_t *n_unk, char *err, size_t errlen);

/* A vocabulary of every token type in the first n tokens of the corpus of seed: "<unk>",
 * "<eos>", then by falling frequency, ties in byte order. */
int model_vocab_build(const model_grammar *g, uint64_t seed, size_t n, tok_vocab *v, char *err,
                      size_t errlen);

/* Both at once from one pass over the stories: the vocabulary of the first n tokens of seed (as
 * model_vocab_build) and those n tokens mapped through it (as model_corpus, which then finds no
 * unknown word). The stories are made once instead of twice: half of what a race or a training
 * run spends before its first step (0.4 of 0.84 s for the shipped recipe's 1M tokens). */
int model_corpus_vocab(const model_grammar *g, uint64_t seed, size_t n, tok_vocab *v, int *ids,
                       char *err, size_t errlen);

/* The seed of the held-out stories for a model trained on data_seed (never equal to it). */
uint64_t model_heldout_seed(uint64_t data_seed);

/* ==== configuration ======================================================================== */

typedef enum {
    MODEL_PE_NOPE = 0,
    MODEL_PE_LEARNED,
    MODEL_PE_SINUSOIDAL,
    MODEL_PE_ALIBI,
    MODEL_PE_ROPE,
    MODEL_PE_T5,
    MODEL_PE_COUNT
} model_pe;

#define MODEL_MAX_LAYERS  16
#define MODEL_MAX_DIM     1024
#define MODEL_MAX_HEADS   16
#define MODEL_MAX_CTX     4096
#define MODEL_MAX_COMMAND 512

typedef struct model_config {
    char
        pe_name[16]; /* the pe registry name of the scheme: nope learned sinusoidal alibi rope t5 */
    pe_params pe;    /* the scheme's parameters. dim, len and heads are set by model_config_fix:
                        dim = head dim for rope, model dim otherwise; len = pos_len. Used:
                        sinusoidal base/layout/freq; rope base/pairing/rotary_frac; alibi
                        slope_ratio; t5 t5_buckets/t5_max_distance (causal; max
                         distance 0 = ctx, or buckets/2 + 1 if larger); learned
                        learned_std; seed for the learned table and the T5 initial values */
    int layers;      /* transformer blocks, 1..MODEL_MAX_LAYERS */
    int dim;         /* model width C, divisible by heads */
    int heads;       /* attention heads H */
    int ctx;         /* training context T */
    int hidden;      /* MLP width, usually 4 * dim */
    int vocab;       /* V, equals the vocabulary's n */
    int tied;        /* 1: the output layer reuses the token embedding */
    int pos_len;     /* learned: table rows (4 * ctx; rows past ctx get no gradient, only
                        weight decay); else 0 */
    float emb_scale; /* token embeddings are multiplied by this at the input (sinusoidal:
                        sqrt(dim), the paper's recipe; others 1) */
    uint64_t seed;   /* weight initialisation and training batches */
    /* what the weights were trained on, recorded in the checkpoint */
    uint64_t data_seed;       /* corpus seed; held-out stories use model_heldout_seed(data_seed) */
    uint64_t grammar_hash;    /* model_grammar.hash of the grammar used */
    int steps, batch, warmup; /* requested training steps, batch size, warmup steps */
    int steps_done;           /* steps actually trained (fewer when stopped) */
    float lr, min_lr, weight_decay, clip;
    float train_loss;   /* mean loss of the last 10 steps */
    float heldout_loss; /* held-out loss at the training length, measured after training */
    char command[MODEL_MAX_COMMAND]; /* the command line that trained it */
    uint32_t checksum; /* CRC-32 of the checkpoint (set by model_write and model_load) */
} model_config;

/* Scheme from a name ("nope", "learned", ...); -1 when unknown. */
int model_pe_from_name(const char *name);
const char *model_pe_name(int pe);
/* One line per scheme on what --extrapolate measures for it (no trailing newline). */
const char *model_pe_extrapolation_note(int pe);

/* Defaults for scheme pe: 3 layers, dim 64, 4 heads, ctx 64, hidden 256, untied, pe params
 * from pe_params_default (t5: 32 buckets, max distance = ctx, causal), seed 1, data seed 1,
 * training 2000 steps of batch 16, warmup 100, lr 3e-3 -> 3e-4, wd 0.1, clip 1. */
void model_config_default(model_config *c, int pe);
/* Fill the derived fields (pe.dim, pe.len, pe.heads, pos_len, emb_scale) and check every
 * field; the message names the field, its value and the allowed range. */
int model_config_fix(model_config *c, char *err, size_t errlen);
/* Number of float parameters of a checked config. */
size_t model_config_params(const model_config *c);

/* ==== the network ========================================================================== */

typedef struct model {
    model_config cfg;
    tok_vocab vocab;
    size_t n_params;
    float *params;      /* (n_params): one allocation carved into the tensors below */
    float *wte;         /* (vocab, dim) token embedding */
    float *wpe;         /* (pos_len, dim) learned table, NULL for other schemes */
    float *t5;          /* (heads, t5_buckets) bucket biases shared by all layers, NULL unless t5 */
    float *ln1w, *ln1b; /* (layers, dim) */
    float *qkvw;        /* (layers, dim, 3 * dim) as (in, out): q | k | v */
    float *qkvb;        /* (layers, 3 * dim) */
    float *projw;       /* (layers, dim, dim) */
    float *projb;       /* (layers, dim) */
    float *ln2w, *ln2b; /* (layers, dim) */
    float *fcw;         /* (layers, dim, hidden) */
    float *fcb;         /* (layers, hidden) */
    float *fcprojw;     /* (layers, hidden, dim) */
    float *fcprojb;     /* (layers, dim) */
    float *lnfw, *lnfb; /* (dim) */
    float *wout;        /* (dim, vocab) untied output; NULL when tied (uses wte) */
} model;

/* A fresh model for cfg (checked with model_config_fix) with random weights from cfg->seed and
 * a copy of vocab (whose n must equal cfg->vocab). */
int model_init(model *m, const model_config *cfg, const tok_vocab *vocab, char *err, size_t errlen);
void model_free(model *m);

/* Write the checkpoint to f and set m->cfg.checksum (the app saves files through its output
 * module, render/outfile.c: a unique temporary renamed into place). Format (little-endian):
 * "PELABMDL", u32 version 1, u64 file size, the config, the vocabulary, u64 float count and
 * float32 weights, u32 CRC-32 of everything before it. Returns 0, or MODEL_EIO when a write
 * failed (the stream knows why). */
int model_write(model *m, FILE *f, char *err, size_t errlen);
/* Read a checkpoint. A short, truncated, corrupted, wrong-version or wrong-size file is
 * refused with MODEL_EFORMAT and a message saying what is wrong; a missing file with
 * MODEL_EIO. On failure m is left zeroed. */
int model_load(const char *path, model *m, char *err, size_t errlen);
/* The same from bytes in memory (what model_load calls; used by the fuzz test). */
int model_load_mem(const unsigned char *buf, size_t len, model *m, char *err, size_t errlen);

/* Forward FLOPs per token of a full sequence of length T (matmuls and attention; the training
 * step costs three times this). */
double model_flops_per_token(const model_config *c, int T);

/* Mean loss at each position of windows of length win taken back to back from ids[0..n): every
 * window is one sequence starting at position offset (0 normally). loss_sum[p] and count[p]
 * (win entries each, added to) collect the cross-entropy of predicting ids[w + p + 1]. Uses up
 * to threads threads (0 = all). Positions past the learned table are refused (PE_ERANGE). */
int model_eval_positions(const model *m, const int *ids, size_t n, int win, int offset, int threads,
                         double *loss_sum, double *count, char *err, size_t errlen);

/* ==== training ============================================================================= */

typedef struct model_progress {
    int step, steps; /* step just finished (1-based) of steps */
    float loss;      /* its training loss (nats per token) */
    float lr;        /* learning rate used */
    float grad_norm; /* gradient norm before clipping */
    long tokens;     /* tokens processed so far */
} model_progress;

/* Called after every step; return nonzero to stop (the weights then hold the last step). */
typedef int (*model_progress_fn)(void *user, const model_progress *p);

/* Train m for m->cfg.steps AdamW steps on random windows of m->cfg.ctx + 1 ids of ids[0..n),
 * warmup then cosine decay to min_lr, gradient clipping, weight decay on matrices only. Batches
 * come from m->cfg.seed; results depend only on the seed and the data (not on threads, 0 =
 * all). Returns 0, MODEL_ESTOPPED when the callback stopped it, or an error. */
int model_train(model *m, const int *ids, size_t n, int threads, model_progress_fn cb, void *user,
                char *err, size_t errlen);

/* The same, one step at a time: model_train is these in a loop (with the thread count chosen per
 * step), so a caller that steps several models in turn (the race, race.h) gets the very weights
 * model_train gives each alone. new checks the data and allocates the optimizer state (m and ids
 * must outlive the trainer); step runs step number steps_done + 1 on nt threads (>= 1; the
 * result does not depend on it) and fills *p (may be NULL). */
typedef struct model_trainer model_trainer;
int model_trainer_new(model *m, const int *ids, size_t n, model_trainer **out, char *err,
                      size_t errlen);
int model_trainer_step(model_trainer *t, int nt, model_progress *p, char *err, size_t errlen);
void model_trainer_free(model_trainer *t);

/* CPUs this process may run on, and how many of them are free now (measured over 50 ms from
 * /proc/stat): what threads = 0 uses in model_train and model_eval_positions. */
int model_cpus(void);
int model_cpus_free(void);

/* Single-precision GFLOP/s of a multiply-add loop on threads threads, per second of CPU time
 * (so a busy machine does not lower it): the arithmetic peak the training figures compare
 * with. About 0.1 s of CPU per thread. */
double model_peak_gflops(int threads);

/* Benchmark results. */
typedef struct model_bench_result {
    double train_tokens_per_s;     /* tokens per second of full training steps */
    double train_tokens_per_cpu_s; /* the same per second of CPU time of the process: what
                                      one core gives when other programs share the machine */
    double train_gflops;           /* achieved GFLOP/s of those steps */
    double step_latency_ms;        /* one model_session_step with attention readout, median */
    int threads;
} model_bench_result;
/* Time train_steps (>= 2) training steps of m's config on synthetic ids (m's weights are copied,
 * not changed; the first step is a warm-up, not timed) and session_steps single-token steps.
 * Wall clock (CLOCK_MONOTONIC) and the process's CPU time. */
int model_bench(const model *m, int train_steps, int session_steps, int threads,
                model_bench_result *out, char *err, size_t errlen);

/* ==== inference session (KV cache) ========================================================= */

typedef struct model_session {
    const model *m;
    int max_len;                  /* capacity in tokens */
    int len;                      /* tokens so far */
    int offset;                   /* position experiment: token t sits at position offset + t */
    double rope_base;             /* rope: frequency base in use */
    pe_rope_scaling rope_scaling; /* rope: a context extension at inference (type NONE: none) */
    double alibi_slopes[MODEL_MAX_HEADS]; /* alibi: slopes in use */
    int *tokens;    /* (max_len) the tokens fed so far (replayed when a setting changes) */
    float *mem;     /* one allocation carved below */
    float *k_cache; /* (layers, max_len, dim) keys, rotated for rope */
    float *v_cache; /* (layers, max_len, dim) */
    float *q_cache; /* (layers, max_len, dim) queries, rotated for rope: rows on demand */
    float *att;     /* (layers, heads, max_len) weights of the newest token */
    float *content; /* (layers, heads, max_len) q.k / sqrt(d_head) of the newest token */
    float *posbias; /* (layers, heads, max_len) position part (alibi, t5), else 0 */
    float *logits;  /* (vocab) */
    float *x, *xn, *qkv, *y, *h; /* (dim) (dim) (3 dim) (dim) (hidden) scratch */
    struct nn_pos *pos;          /* internal: position data of positions 0..pos_rows-1 (pe/) */
    struct nn_posbuf *posbuf;    /* internal */
    int pos_rows;
} model_session;

/* Room for max_len tokens (1..PE_MAX_LEN). The session reads m, which must outlive it. */
int model_session_init(model_session *s, const model *m, int max_len, char *err, size_t errlen);
void model_session_free(model_session *s);
/* Bytes a session of max_len tokens allocates (the caches and the scratch; the position tables
 * come on top, a few per position). */
size_t model_session_bytes(const model *m, int max_len);
/* Forget the tokens (settings stay). */
void model_session_reset(model_session *s);
/* Append token (0..vocab-1) at position offset + len using the KV cache. *logits (may be NULL)
 * receives the (vocab) next-token logits, valid until the next call. Fails with PE_ERANGE when
 * the session is full or the position is past the learned table (learned has no row there:
 * pelab refuses rather than invent one), PE_EINVAL for a bad id. */
int model_session_step(model_session *s, int token, const float **logits, char *err, size_t errlen);
/* Attention weights of the newest token in (layer, head): len entries summing to 1, index =
 * key token. NULL when the session is empty or layer/head are out of range. */
const float *model_session_attn(const model_session *s, int layer, int head);
/* The attention of token t (0 <= t < len) in (layer, head), recomputed from the cached q and k
 * with the very arithmetic of the step that fed it (the same bits): weights (t + 1 entries), the
 * content part q.k / sqrt(d_head) and the position part (0 for schemes without one); any may
 * be NULL. PE_EINVAL out of range. */
int model_session_row(const model_session *s, int layer, int head, int t, float *weights,
                      float *content, float *position, char *err, size_t errlen);
/* Pre-softmax scores of the newest token split into content (q.k / sqrt(d_head), after rotation
 * for rope) and position parts (len entries each). alibi: -m_h (i - j); t5: the bucket bias;
 * nope: position part 0 (the scores have no position term). rope, learned and sinusoidal mix
 * position into q and k, so there is no split: MODEL_ENOSPLIT. Either pointer may be NULL. */
int model_session_score_parts(const model_session *s, int layer, int head, const float **content,
                              const float **position, char *err, size_t errlen);

/* Position experiments. Each replays the tokens fed so far under the new setting and fails
 * (leaving the old setting in place) when the replay would. */
/* Token t sits at position k + t (k >= 0). */
int model_session_set_offset(model_session *s, int k, char *err, size_t errlen);
/* q of (layer, head) and its k for token t < len, as the projection made them (bias included,
 * before the RoPE rotation, which is undone with the very cos and sin the step used): head-dim
 * entries each; either may be NULL. PE_EINVAL for an index out of range. */
int model_session_qk(const model_session *s, int layer, int head, int t, float *q, float *k,
                     char *err, size_t errlen);
/* rope: frequency base (> 1); other schemes: PE_EINVAL. */
int model_session_set_rope_base(model_session *s, double base, char *err, size_t errlen);
/* rope: a context extension applied at inference (pe_rope_inv_freq's semantics; type NONE:
 * as trained), the tokens replayed under it; other schemes: PE_EINVAL. */
int model_session_set_rope_scaling(model_session *s, const pe_rope_scaling *sc, char *err,
                                   size_t errlen);
/* alibi: slopes = trained slopes * mult (mult >= 0); other schemes: PE_EINVAL. */
int model_session_set_alibi_scale(model_session *s, double mult, char *err, size_t errlen);
/* alibi: explicit slopes, one per head (each >= 0). */
int model_session_set_alibi_slopes(model_session *s, const double *slopes, char *err,
                                   size_t errlen);

/* ==== next-token choice ==================================================================== */

/* The k most likely tokens (softmax of logits at temperature 1), most likely first, ties by
 * lower id. ids and probs need min(k, vocab) entries; returns that count. */
int model_topk(const float *logits, int vocab, int k, int *ids, float *probs);
/* Greedy when temperature <= 0 (lowest id among equal maxima), else a sample from
 * softmax(logits / temperature) drawn with rng. */
int model_sample(const float *logits, int vocab, double temperature, pe_rng *rng);

#endif
