/* race_fig.h: the position race's figure (issue 24) and its log. The numbers come either from a
 * live race (app/cmd/cmd_race.c copies them out of the engine, pe/model/tiny/race.h) or from the
 * log a race wrote (pelab export race --from DIR); one scene builder draws them for the terminal,
 * the window and the exported files, so all three agree.
 *
 * Panels: the training loss of every scheme against tokens seen (log y; the debiased
 * exponential moving average of TensorBoard and W&B drawn over the faint raw curve), the
 * held-out loss at the trained context (solid) and past it (2x or 4x ctx, dashed) at every
 * measurement, the first-token sink share of each scheme now (bars), and a status line with
 * tokens/s, elapsed time and the ETA. */
#ifndef PELAB_APP_RACE_FIG_H
#define PELAB_APP_RACE_FIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "figure.h"
#include "scene.h"

#define APP_RACE_MAX_LANES 8 /* the theme's series colours */
#define APP_RACE_LABEL     48

typedef struct app_race_eval {
    int step;
    long tokens;
    double held[3]; /* held-out loss at [0, ctx), [ctx, 2ctx), [2ctx, 4ctx) */
    double sink;    /* share of heads with mean attention to token 0 above 0.3 */
} app_race_eval;

typedef struct app_race_lane {
    char label[APP_RACE_LABEL]; /* "rope", "rope:base=500" */
    int steps;                  /* the goal */
    int done;                   /* steps with a loss in loss[] */
    long tokens_per_step;       /* batch x ctx */
    int ctx;
    float *loss; /* (steps) raw training loss per step, owned */
    app_race_eval *evals;
    int nevals, evals_cap;
    int failed;
} app_race_lane;

typedef struct app_race_data {
    int n;
    app_race_lane lanes[APP_RACE_MAX_LANES];
    double elapsed_s, tokens_per_s, eta_s; /* eta < 0: unknown */
    int paused, finished, stopped;
    int threads;
} app_race_data;

/* What the viewer chose: the same keys in the terminal and the window. */
enum {
    APP_RACE_FOCUS_ALL = 0,
    APP_RACE_FOCUS_TRAIN,
    APP_RACE_FOCUS_HELD,
    APP_RACE_FOCUS_SINK,
    APP_RACE_FOCUS_COUNT
};
typedef struct app_race_ui {
    unsigned hidden; /* bit i: lane i hidden */
    int focus;       /* APP_RACE_FOCUS_*: one panel fills the figure, or all */
    int far;         /* held-out panel's dashed curves: 1 = [ctx, 2ctx), 2 = [2ctx, 4ctx) */
    double smooth;   /* EMA weight a in 0..0.999 */
    int dark;
    int live; /* 1: the key help and the status line of a running race */
    /* live: a line said in place of the key help (what S recorded, or why it failed) */
    char note[240];
    int note_bad;
} app_race_ui;

void app_race_ui_default(app_race_ui *u);

/* Allocate lane i's loss array for steps (its other fields are the caller's to set). */
int app_race_lane_init(app_race_lane *l, const char *label, int steps, long tokens_per_step,
                       int ctx);
int app_race_add_eval(app_race_lane *l, const app_race_eval *e);
void app_race_data_free(app_race_data *d);

/* TensorBoard's smoothing: ema_t = a ema_{t-1} + (1 - a) x_t from ema_0 = 0, shown as
 * ema_t / (1 - a^t) so the start is not pulled towards 0. out has n entries. */
void app_race_ema(const float *x, int n, double a, double *out);

/* The figure for target t. */
void app_race_build(scene *s, const scene_target *t, const app_race_data *d, const app_race_ui *u);

/* The key help line of the live race. */
extern const char app_race_keys_help[];

/* A key of the live race (the terminal's and the window's): returns what the race should do.
 * Keys that change the figure change u and return APP_RACE_ACT_REDRAW. */
enum {
    APP_RACE_ACT_NONE = 0,
    APP_RACE_ACT_REDRAW,
    APP_RACE_ACT_PAUSE,  /* toggle pause */
    APP_RACE_ACT_STOP,   /* stop, save what is trained */
    APP_RACE_ACT_QUIT,   /* the same as stop, the window closed or q */
    APP_RACE_ACT_RECORD, /* S: the race so far as an animation (race_out.h) */
};
int app_race_key(app_race_ui *u, const app_race_data *d, uint32_t key);

/* ---- the log: DIR/race.csv ------------------------------------------------------------------
 * "# pelab race" and "# command ..." comment lines, one "# lane LABEL steps=N tokens_per_step=N
 * ctx=N" line per lane, then a header row and rows
 *   scheme,step,tokens,train_loss,heldout_ctx,heldout_2x,heldout_4x,sink_share,tokens_per_s,
 *   elapsed_s
 * one per training step (the held-out fields empty) and one per measurement (train_loss empty),
 * each lane's rows in step order. */
int app_race_log_header(FILE *f, const app_race_data *d, const char *command);
/* Rows of lane i from step *step_at + 1 and measurement *eval_at on; advances both. */
int app_race_log_rows(FILE *f, const app_race_data *d, int i, int *step_at, int *eval_at);
/* Read a log (bytes in memory) into d. -1 with a message naming the line on a malformed log. */
int app_race_log_parse(const char *buf, size_t len, app_race_data *d, char *err, size_t errlen);
int app_race_log_read(const char *path, app_race_data *d, char *err, size_t errlen);

#endif
