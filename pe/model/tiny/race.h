/* race.h: the position race (issue 24): several models trained at once on the same data, each
 * with its own position scheme, measured on held-out stories while they learn.
 *
 * Each lane is one model stepped by model_trainer_step, the loop of model_train, so a lane's
 * weights after k steps are bit for bit those of model_train run k steps alone with the same
 * config. Worker threads take the lane that is furthest behind, one step at a time, so the lanes
 * advance together whatever their costs; one step of one model runs on one thread (the models
 * are small: running whole steps side by side wastes nothing on the pool's hand-offs), and the
 * results never depend on which thread ran a step.
 *
 * Every eval_every steps (and at step 0 and the last step) a lane measures itself on the
 * held-out ids, as `pelab eval --extrapolate --tokens N` does: the mean loss over windows of ctx
 * (eval's "held-out" column), and over positions [ctx, 2 ctx) and [2 ctx, 4 ctx) of windows of
 * 4 ctx (its ranges), plus the first-token sink share (pe_sink_share of Gu et al.'s alpha over
 * the first sink_prompts windows of ctx, threshold 0.3).
 *
 * Like the rest of pe/, it never prints; the app reads the lanes under model_race_lock. */
#ifndef PELAB_MODEL_RACE_H
#define PELAB_MODEL_RACE_H

#include <pthread.h>

#include "model.h"

#define RACE_SINK_EPS 0.3 /* Gu et al. 2025: a head is a sink head when alpha > 0.3 */

typedef struct model_race_eval {
    int step;
    long tokens;    /* training tokens seen at that step */
    double held[3]; /* held-out loss at [0, ctx) (windows of ctx), [ctx, 2ctx), [2ctx, 4ctx) */
    double sink;    /* fraction of (layer, head) with alpha > RACE_SINK_EPS */
} model_race_eval;

enum { RACE_LANE_RUNNING = 0, RACE_LANE_DONE, RACE_LANE_FAILED };

typedef struct model_race_lane {
    model m;     /* owned; m.cfg.steps is the goal */
    float *loss; /* (m.cfg.steps) training loss of each step done */
    int done;    /* steps done */
    model_race_eval *evals;
    int nevals, evals_cap;
    int state;     /* RACE_LANE_* */
    char err[256]; /* when FAILED */
    double cpu_s;  /* seconds spent in its steps and evaluations */
    /* internal */
    model_trainer *tr;
    int busy;
} model_race_lane;

typedef struct model_race {
    int n;
    model_race_lane *lanes; /* (n) */
    const int *held;        /* held-out ids (caller's, outlive the race) */
    size_t n_held;
    int eval_every; /* steps between measurements (>= 1) */
    int sink_prompts;
    /* internal */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t *th;
    int nth, started;
    int paused, stop;
} model_race;

/* Take the n models (moved in: *models are zeroed) to race on ids[0..n_ids) (shared, outlive the
 * race), measured on held[0..n_held) every eval_every steps (n_held >= 4 ctx + 1 of every model).
 * Step 0 of every lane is measured by the workers, before the lane's first step. */
int model_race_init(model_race *r, model *models, int n, const int *ids, size_t n_ids,
                    const int *held, size_t n_held, int eval_every, char *err, size_t errlen);
/* Start threads (>= 1) workers; returns at once. */
int model_race_start(model_race *r, int threads, char *err, size_t errlen);
/* Workers finish the step they are in and wait (1) or go on (0). */
void model_race_pause(model_race *r, int on);
/* How many lanes have a step or a measurement in flight (a pause takes effect at the end of
 * those: a caller that needs nothing to move, as the tests do, waits for 0). */
int model_race_busy(model_race *r);
/* Ask the workers to stop after the step they are in (what is trained stays). */
void model_race_stop(model_race *r);
/* 1 when every lane is done or failed, or the race was stopped and no step is running. */
int model_race_finished(model_race *r);
/* Wait until the race is finished or seconds have passed (whichever first); finished or not. A
 * front end with nothing to draw waits here, not in a sleep: the end is seen when it comes (a
 * 200 ms sleep lost 0.1 s on average at the end of every race). */
int model_race_wait(model_race *r, double seconds);
/* Wait for the workers to end (after finished or stop); then measures every lane whose last
 * step was not measured (a stopped race), so each lane's last eval is its final weights. */
void model_race_join(model_race *r);
void model_race_free(model_race *r);

/* Readers of the lanes (the display, the log) hold the lock while they copy. */
void model_race_lock(model_race *r);
void model_race_unlock(model_race *r);

/* One measurement of m (what the lanes record): eval over held[0..n_held), sink over the first
 * prompts windows of ctx. */
int model_race_measure(const model *m, const int *held, size_t n_held, int prompts,
                       model_race_eval *out, char *err, size_t errlen);

#endif
