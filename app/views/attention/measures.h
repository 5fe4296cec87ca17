/* measures.h: what the measure views (usage, distance, model-distance; issue 23) share: the
 * prompts they measure over and the option rows that choose them.
 *
 * The prompts are, in this order of precedence:
 *   --ids 1,2,3   one prompt given as token ids (no tokenizer needed);
 *   --text FILE   the file's text cut into windows of the model's context (each window starts
 *                 with the model's BOS when it has one, as `pelab eval --text` cuts it);
 *   --prompt TEXT one prompt;
 *   otherwise     the held-out stories of assets/prompts (every preset: no shipped model was
 *                 trained on them), each cut to the model's context.
 * A set is tokenized once by one model; a second model (model-distance) runs the same ids. */
#ifndef PELAB_APP_MEASURES_H
#define PELAB_APP_MEASURES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "figure.h"
#include "lmi.h"
#include "options.h"
#include "state.h"

/* snprintf whose cutting is intended (titles, headers and messages that end where their buffer
 * does, as the names in them may be long): vsnprintf behind a function of our own. */
__attribute__((format(printf, 3, 4))) void app_fmt(char *buf, size_t n, const char *fmt, ...);

/* The prompts as token ids. */
typedef struct app_mset {
    int n;          /* prompts */
    int *len;       /* (n) tokens of each */
    int **ids;      /* (n) their ids */
    int tokens;     /* sum of len */
    int cap;        /* the most tokens a prompt was allowed (the model's context) */
    int longest;    /* max len */
    char desc[160]; /* what they are, for export headers: "the 6 held-out presets (toy cake
                       friend long start unknown)", "--text story.txt: 3 windows of ..." */
    char brief[64]; /* the same for a figure's subtitle: "6 held-out presets", "story.txt" */
} app_mset;

void app_mset_free(app_mset *ps);
/* The prompts st asks for, tokenized by m and cut to cap tokens each (cap <= the model's
 * context; 0: the context, and the learned table's rows). 0, or -1 with one line in err (an
 * empty text, an unreadable --text, a tokenizer that is missing). */
int app_mset_load(app_mset *ps, const lmi_model *m, const app_state *st, int cap, char *err,
                  size_t errlen);
/* The tokens a model can hold: its context, and no more than its position table. */
int app_mset_model_cap(const lmi_model *m);

/* Run prompt i of ps through m: s (zeroed) becomes a session holding its tokens. 0, or -1 with
 * err (an id outside the model's vocabulary says which). */
int app_mset_run(const app_mset *ps, int i, const lmi_model *m, lmi_session *s, char *err,
                 size_t errlen);

/* One model's measurement over st's prompts (usage, distance, sinks): --model opened and its
 * prompts loaded by begin, each prompt run by each, both released by end. */
typedef struct app_measure {
    lmi_model m;
    app_mset ps;
} app_measure;
/* What every measure's result says of itself: the model's name for a figure, the prompts for an
 * export header (desc) and a subtitle (brief), how many prompts and tokens. */
typedef struct app_measure_about {
    int prompts, tokens;
    char name[128];
    char desc[160], brief[64];
} app_measure_about;
/* Run on each prompt's session s (n tokens) with the caller's arg; 0 or -1 with err. */
typedef int (*app_measure_fn)(void *arg, const lmi_session *s, int n, char *err, size_t errlen);

int app_measure_begin(app_measure *ms, const app_state *st, char *err, size_t errlen);
int app_measure_each(app_measure *ms, app_measure_fn fn, void *arg, char *err, size_t errlen);
void app_measure_end(app_measure *ms);
void app_measure_about_of(const app_measure *ms, const app_state *st, app_measure_about *a);

/* The cache key of a state's prompts (the options above, byte for byte). */
typedef struct app_mset_key {
    char tokenizer[512];
    char prompt[1024];
    char text_path[512];
    char ids[1024];
} app_mset_key;
void app_mset_key_of(const app_state *st, app_mset_key *k);
/* The cache key of a measure of --model over the prompts: the model's path and app_mset_key. */
typedef struct app_measure_key {
    char model[1024];
    app_mset_key prompts;
} app_measure_key;
int app_measure_key_of(const app_state *st, app_measure_key *k, char *err, size_t errlen);

/* Open the model named name (a scheme or a path, as --model) into m, with st's --tokenizer when
 * given; messages name --opt. 0, or -1 with err. */
int app_measure_open(const app_state *st, const char *opt, const char *name, lmi_model *m,
                     char *err, size_t errlen);
/* The checkpoint path of name as app_attn_model_path finds it, messages naming --opt. */
int app_measure_path(const char *opt, const char *name, char *path, size_t n, char *err,
                     size_t errlen);

/* What a figure calls the model opened as name: the scheme for a shipped one ("rope"), else
 * the file's name (info.name). */
void app_measure_name(const char *name, const lmi_info *in, char *buf, size_t n);

/* A comma-separated list of models (--against, sinks' --models) into dst (cap bytes): each name
 * checked as --model checks it, at most APP_MEASURE_MAX_MODELS; the word all (e.g. "shipped")
 * or "" stores "". 0, or -1 with one line naming --opt. */
#define APP_MEASURE_MAX_MODELS 16
int app_measure_set_list(const char *opt, const char *all, char *dst, size_t cap, const char *v,
                         char *err, size_t errlen);

/* One model's curve against the layer (x: the layers, y: NaN past its depth) in color, with a
 * mark at every layer (a 3-layer model's curve is three points): model-distance, sinks. */
void app_layer_curve(scene *s, const scene_target *t, const fig_axes *a, const double *x,
                     const double *y, int n, uint32_t color);

/* The option rows of the measure views (text, ids, per-head, by, reference, against, lambda,
 * side), ended by a row with name NULL; option_groups.h lists them (in st->attn). */
extern const app_option app_measure_options[];

#endif
