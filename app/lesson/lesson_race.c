/* lesson_race.c: a lesson slide's short race (lesson_race.h). One coordinator thread makes the
 * stories and the models, runs them on pe/model/tiny/race.c's workers and copies their numbers
 * into an app_race_data under its own lock, ten times a second; the presenter's thread only
 * reads that copy (to draw it, to quote it). Leaving the slide asks the coordinator to stop and
 * joins it, which stops and joins the workers after the step each is in. */
#include "lesson_race.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assets.h"
#include "figure.h"
#include "model.h"
#include "race.h"
#include "race_sync.h"
#include "views.h"

enum { LR_PREPARING = 0, LR_RACING, LR_DONE, LR_FAILED };
enum { LR_LANES = 3, LR_TOKENS = 100000, LR_HELD = 2048 };

struct lesson_race {
    pthread_t th;
    pthread_mutex_t mu;
    int steps, threads;
    /* under mu: what the presenter's thread reads and asks */
    int stop, phase;
    char err[256];
    app_race_data d;
    /* the coordinator's own */
    model_race race;
    model models[LR_LANES];
    model_grammar g;
    tok_vocab v;
    int *ids, *held;
    double t0;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int stop_asked(lesson_race *r)
{
    pthread_mutex_lock(&r->mu);
    int s = r->stop;
    pthread_mutex_unlock(&r->mu);
    return s;
}

static void fail(lesson_race *r, const char *what, const char *err)
{
    pthread_mutex_lock(&r->mu);
    r->phase = LR_FAILED;
    snprintf(r->err, sizeof r->err, "the race: %s%s%.200s", what, err[0] ? ": " : "", err);
    pthread_mutex_unlock(&r->mu);
}

/* The stories, the vocabulary and the models, as `pelab race --pe learned,rope,alibi --steps N
 * --tokens 100000 --eval-tokens 2048` makes them (cmd_race.c). 0 or -1 (fail said why). */
static int prepare(lesson_race *r)
{
    char dir[1024], err[256] = "";
    if (app_asset_path("story", dir, sizeof dir, err, sizeof err) < 0 ||
        model_grammar_load(&r->g, dir, err, sizeof err)) {
        fail(r, "the story grammar", err);
        return -1;
    }
    r->ids = malloc(sizeof *r->ids * LR_TOKENS);
    r->held = malloc(sizeof *r->held * LR_HELD);
    if (!r->ids || !r->held) {
        fail(r, "out of memory", "");
        return -1;
    }
    if (model_corpus_vocab(&r->g, 1, LR_TOKENS, &r->v, r->ids, err, sizeof err) ||
        model_corpus(&r->g, &r->v, model_heldout_seed(1), LR_HELD, r->held, NULL, err,
                     sizeof err)) {
        fail(r, "the stories", err);
        return -1;
    }
    char list[] = LESSON_RACE_SCHEMES, *save = NULL;
    int i = 0;
    for (char *name = strtok_r(list, ",", &save); name && i < LR_LANES;
         name = strtok_r(NULL, ",", &save), i++) {
        model_config c;
        model_config_default(&c, model_pe_from_name(name));
        c.steps = r->steps;
        c.vocab = r->v.n;
        c.grammar_hash = r->g.hash;
        c.hidden = 4 * c.dim;
        snprintf(c.command, sizeof c.command,
                 "pelab race --pe %s --steps %d --tokens %d --eval-tokens %d", LESSON_RACE_SCHEMES,
                 r->steps, LR_TOKENS, LR_HELD);
        if (model_init(&r->models[i], &c, &r->v, err, sizeof err)) {
            fail(r, name, err);
            return -1;
        }
        pthread_mutex_lock(&r->mu);
        int bad = app_race_lane_init(&r->d.lanes[i], name, r->steps, (long)c.batch * c.ctx, c.ctx);
        if (!bad) r->d.n = i + 1;
        pthread_mutex_unlock(&r->mu);
        if (bad) {
            fail(r, "out of memory", "");
            return -1;
        }
    }
    return 0;
}

/* The lanes' new steps and measurements into r->d (cmd_race.c's snapshot). */
static void snapshot(lesson_race *r)
{
    long seen, goal;
    pthread_mutex_lock(&r->mu);
    app_race_sync(&r->d, &r->race, &seen, &goal);
    r->d.elapsed_s = now_s() - r->t0;
    r->d.tokens_per_s = r->d.elapsed_s > 0 ? (double)seen / r->d.elapsed_s : 0;
    r->d.eta_s = seen > 0 && r->d.tokens_per_s > 0 ? (double)(goal - seen) / r->d.tokens_per_s : -1;
    pthread_mutex_unlock(&r->mu);
}

static void *coordinate(void *arg)
{
    lesson_race *r = arg;
    char err[256] = "";
    if (prepare(r) || stop_asked(r)) return NULL;
    if (model_race_init(&r->race, r->models, LR_LANES, r->ids, LR_TOKENS, r->held, LR_HELD,
                        r->steps >= 4 ? r->steps / 4 : 1, err, sizeof err)) {
        fail(r, "start", err);
        return NULL;
    }
    int threads = r->threads ? r->threads : model_cpus();
    if (threads > LR_LANES) threads = LR_LANES;
    if (threads < 1) threads = 1;
    pthread_mutex_lock(&r->mu);
    r->d.threads = threads;
    r->phase = LR_RACING;
    pthread_mutex_unlock(&r->mu);
    if (model_race_start(&r->race, threads, err, sizeof err)) {
        fail(r, "start", err);
        return NULL;
    }
    int stopped = 0;
    for (;;) {
        int fin = model_race_finished(&r->race);
        snapshot(r);
        if (fin) break;
        if (stop_asked(r)) {
            stopped = 1;
            break;
        }
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
    }
    model_race_stop(&r->race);
    model_race_join(&r->race);
    snapshot(r);
    pthread_mutex_lock(&r->mu);
    r->d.finished = 1;
    r->d.stopped = stopped;
    r->d.eta_s = -1;
    for (int i = 0; i < r->race.n; i++)
        if (r->race.lanes[i].state == RACE_LANE_FAILED && r->phase != LR_FAILED) {
            r->phase = LR_FAILED;
            snprintf(r->err, sizeof r->err, "the race: %s: %.200s", r->d.lanes[i].label,
                     r->race.lanes[i].err);
        }
    if (r->phase != LR_FAILED) r->phase = LR_DONE;
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int lesson_race_start(lesson_race **out, int steps, int threads, char *err, size_t errlen)
{
    *out = NULL;
    lesson_race *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "the race: out of memory");
        return -1;
    }
    r->steps = steps;
    r->threads = threads;
    r->d.eta_s = -1; /* unknown until the first steps are timed (not "ETA 00:00") */
    r->t0 = now_s(); /* before the thread: both read it, neither writes it again */
    pthread_mutex_init(&r->mu, NULL);
    if (pthread_create(&r->th, NULL, coordinate, r) != 0) {
        snprintf(err, errlen, "the race: cannot start a thread");
        pthread_mutex_destroy(&r->mu);
        free(r);
        return -1;
    }
    *out = r;
    return 0;
}

void lesson_race_build(lesson_race *r, scene *s, const scene_target *t, const app_race_ui *u)
{
    pthread_mutex_lock(&r->mu);
    /* the clock runs while the models measure their step 0, before the first snapshot */
    if (!r->d.finished) r->d.elapsed_s = now_s() - r->t0;
    if (r->d.n > 0) {
        app_race_build(s, t, &r->d, u);
    } else {
        /* the stories and models are being made (a second or so): the figure's frame says so */
        const fig_theme *th = fig_theme_get(u->dark);
        scene_reset(s, t->width, t->height, th->bg);
        s->text_h = t->text_h;
        app_frame(s, t, th, "The position race",
                  r->phase == LR_FAILED ? r->err : "making the stories and the models ...");
    }
    pthread_mutex_unlock(&r->mu);
}

int lesson_race_finished(lesson_race *r, char *err, size_t errlen)
{
    pthread_mutex_lock(&r->mu);
    int fin = r->phase == LR_DONE || r->phase == LR_FAILED;
    if (err && errlen) snprintf(err, errlen, "%s", r->phase == LR_FAILED ? r->err : "");
    pthread_mutex_unlock(&r->mu);
    return fin;
}

void lesson_race_numbers_get(lesson_race *r, lesson_race_numbers *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&r->mu);
    if (r->phase == LR_DONE) {
        int best = -1, worst = -1;
        for (int i = 0; i < r->d.n; i++) {
            const app_race_lane *l = &r->d.lanes[i];
            if (l->failed || l->nevals == 0 || !isfinite(l->evals[l->nevals - 1].held[2])) continue;
            double v = l->evals[l->nevals - 1].held[2];
            if (best < 0 || v < r->d.lanes[best].evals[r->d.lanes[best].nevals - 1].held[2])
                best = i;
            if (worst < 0 || v > r->d.lanes[worst].evals[r->d.lanes[worst].nevals - 1].held[2])
                worst = i;
        }
        if (best >= 0) {
            const app_race_lane *b = &r->d.lanes[best], *w = &r->d.lanes[worst];
            out->done = 1;
            snprintf(out->best, sizeof out->best, "%s (%.2f)", b->label,
                     b->evals[b->nevals - 1].held[2]);
            snprintf(out->worst, sizeof out->worst, "%s (%.2f)", w->label,
                     w->evals[w->nevals - 1].held[2]);
            fig_num(r->d.tokens_per_s, 3, out->speed, sizeof out->speed);
        }
    }
    pthread_mutex_unlock(&r->mu);
}

void lesson_race_free(lesson_race *r)
{
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->th, NULL);
    model_race_free(&r->race);
    for (int i = 0; i < LR_LANES; i++) model_free(&r->models[i]);
    app_race_data_free(&r->d);
    tok_vocab_free(&r->v);
    model_grammar_free(&r->g);
    free(r->ids);
    free(r->held);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

int lesson_race_still(app_race_data *d, int steps)
{
    memset(d, 0, sizeof *d);
    char list[] = LESSON_RACE_SCHEMES, *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name && d->n < LR_LANES;
         name = strtok_r(NULL, ",", &save)) {
        model_config c;
        model_config_default(&c, model_pe_from_name(name));
        if (app_race_lane_init(&d->lanes[d->n], name, steps, (long)c.batch * c.ctx, c.ctx))
            return -1;
        d->n++;
    }
    d->eta_s = -1;
    return 0;
}
