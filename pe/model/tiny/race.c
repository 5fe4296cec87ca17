/* race.c: several models trained side by side on worker threads (race.h). */
#include "race.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "measure.h"
#include "nn.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Mean attention to token 0 of every (layer, head) over the first `prompts` windows of ctx held-out
 * ids, and the share above RACE_SINK_EPS: the sinks view's measure (app/views/attention/sinks.c)
 * on the race's own prompts. */
static int sink_share(const model *m, const int *held, size_t n_held, int prompts, double *out,
                      char *err, size_t errlen)
{
    int T = m->cfg.ctx, L = m->cfg.layers, H = m->cfg.heads;
    double alpha[MODEL_MAX_LAYERS * MODEL_MAX_HEADS] = {0};
    float *row = malloc(sizeof *row * (size_t)T), *col = malloc(sizeof *col * (size_t)T);
    model_session s = {0};
    int rc = 0, done = 0;
    if (!row || !col) {
        rc = model_fail(err, errlen, PE_ENOMEM, "sink share: out of memory");
        goto out;
    }
    if ((rc = model_session_init(&s, m, T, err, errlen))) goto out;
    for (int p = 0; p < prompts && (size_t)(p + 1) * (size_t)T <= n_held; p++) {
        model_session_reset(&s);
        for (int t = 0; t < T; t++)
            if ((rc = model_session_step(&s, held[(size_t)p * T + (size_t)t], NULL, err, errlen)))
                goto out;
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                for (int t = 0; t < T; t++) {
                    if ((rc = model_session_row(&s, l, h, t, row, NULL, NULL, err, errlen)))
                        goto out;
                    col[t] = row[0];
                }
                alpha[l * H + h] += pe_sink_alpha(col, 1, (size_t)T);
            }
        done++;
    }
    for (int i = 0; i < L * H; i++) alpha[i] /= done > 0 ? done : 1;
    *out = pe_sink_share(alpha, (size_t)(L * H), RACE_SINK_EPS);
out:
    model_session_free(&s);
    free(row);
    free(col);
    return rc;
}

int model_race_measure(const model *m, const int *held, size_t n_held, int prompts,
                       model_race_eval *out, char *err, size_t errlen)
{
    int T = m->cfg.ctx, W = 4 * T, rc;
    double *sum = calloc((size_t)W, sizeof *sum), *cnt = calloc((size_t)W, sizeof *cnt);
    if (!sum || !cnt) {
        free(sum);
        free(cnt);
        return model_fail(err, errlen, PE_ENOMEM, "evaluation: out of memory");
    }
    /* exactly pelab eval's two passes (cmd_model.c): windows of ctx for the loss at ctx, then
     * windows of 4 ctx for the ranges past it */
    rc = model_eval_positions(m, held, n_held, T, 0, 1, sum, cnt, err, errlen);
    if (!rc) {
        double s = 0, k = 0;
        for (int t = 0; t < T; t++) s += sum[t], k += cnt[t];
        out->held[0] = s / k;
        memset(sum, 0, (size_t)W * sizeof *sum);
        memset(cnt, 0, (size_t)W * sizeof *cnt);
        rc = model_eval_positions(m, held, n_held, W, 0, 1, sum, cnt, err, errlen);
    }
    if (!rc)
        for (int r = 1; r < 3; r++) {
            int a = r == 1 ? T : 2 * T, e = r == 1 ? 2 * T : 4 * T;
            double s = 0, k = 0;
            for (int t = a; t < e; t++) s += sum[t], k += cnt[t];
            out->held[r] = s / k;
        }
    free(sum);
    free(cnt);
    if (!rc) rc = sink_share(m, held, n_held, prompts, &out->sink, err, errlen);
    return rc;
}

/* Measure lane l at its current step and append the result (called without the lock by the
 * worker owning the lane, or after the join). */
static int lane_measure(model_race *r, model_race_lane *l)
{
    model_race_eval e = {0};
    char err[256];
    double c0 = cpu_now();
    int rc = model_race_measure(&l->m, r->held, r->n_held, r->sink_prompts, &e, err, sizeof err);
    e.step = l->done;
    e.tokens = (long)l->done * l->m.cfg.batch * l->m.cfg.ctx;
    pthread_mutex_lock(&r->mu);
    l->cpu_s += cpu_now() - c0;
    if (rc) {
        snprintf(l->err, sizeof l->err, "%s", err);
        l->state = RACE_LANE_FAILED;
    } else if (l->nevals == l->evals_cap) {
        int cap = l->evals_cap ? 2 * l->evals_cap : 16;
        model_race_eval *ne = realloc(l->evals, (size_t)cap * sizeof *ne);
        if (!ne) {
            snprintf(l->err, sizeof l->err, "out of memory");
            l->state = RACE_LANE_FAILED;
            rc = PE_ENOMEM;
        } else {
            l->evals = ne;
            l->evals_cap = cap;
        }
    }
    if (!rc) l->evals[l->nevals++] = e;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int model_race_init(model_race *r, model *models, int n, const int *ids, size_t n_ids,
                    const int *held, size_t n_held, int eval_every, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (n < 1) return model_fail(err, errlen, PE_EINVAL, "race: no model to train");
    r->lanes = calloc((size_t)n, sizeof *r->lanes);
    if (!r->lanes) return model_fail(err, errlen, PE_ENOMEM, "race: out of memory");
    r->n = n;
    r->held = held;
    r->n_held = n_held;
    r->eval_every = eval_every > 0 ? eval_every : 1;
    r->sink_prompts = 4;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    for (int i = 0; i < n; i++) {
        model_race_lane *l = &r->lanes[i];
        l->m = models[i];
        memset(&models[i], 0, sizeof models[i]);
    }
    for (int i = 0; i < n; i++) {
        model_race_lane *l = &r->lanes[i];
        if (n_held < (size_t)4 * l->m.cfg.ctx + 1)
            return model_fail(err, errlen, PE_EINVAL,
                              "race: %zu held-out tokens, %s needs at least %d", n_held,
                              l->m.cfg.pe_name, 4 * l->m.cfg.ctx + 1);
        l->loss = calloc((size_t)l->m.cfg.steps, sizeof *l->loss);
        if (!l->loss) return model_fail(err, errlen, PE_ENOMEM, "race: out of memory");
        int rc = model_trainer_new(&l->m, ids, n_ids, &l->tr, err, errlen);
        if (rc) return rc;
        /* step 0's measurement is the workers' (before the lane's first step): made here, one
         * lane after another, it kept both cores but one idle for a second before the race */
    }
    return 0;
}

/* The lane to step next: not busy, still running, furthest behind (ties: the first). -1 when
 * none is free now; *left receives how many lanes are still running. Under the lock. */
static int pick(model_race *r, int *left)
{
    int best = -1;
    *left = 0;
    for (int i = 0; i < r->n; i++) {
        model_race_lane *l = &r->lanes[i];
        if (l->state != RACE_LANE_RUNNING) continue;
        ++*left;
        if (l->busy) continue;
        if (best < 0 || l->done < r->lanes[best].done) best = i;
    }
    return best;
}

static void *worker(void *arg)
{
    model_race *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        int left = 0, i = -1;
        while (!r->stop && (r->paused || (i = pick(r, &left)) < 0) && (r->paused || left > 0))
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->stop || i < 0) break;
        model_race_lane *l = &r->lanes[i];
        l->busy = 1;
        /* a lane alone at the end may use the threads the others left idle */
        int nt = left < r->nth ? r->nth / left : 1;
        int first = l->done == 0 && l->nevals == 0;
        pthread_mutex_unlock(&r->mu);
        /* the untrained model's losses (step 0) before its first step, on this lane's thread */
        if (first && lane_measure(r, l)) {
            pthread_mutex_lock(&r->mu);
            l->busy = 0; /* failed: lane_measure said why */
            pthread_cond_broadcast(&r->cv);
            continue;
        }
        char err[256];
        model_progress p;
        double c0 = cpu_now();
        int rc = model_trainer_step(l->tr, nt, &p, err, sizeof err);
        double dt = cpu_now() - c0;
        pthread_mutex_lock(&r->mu);
        l->cpu_s += dt;
        if (rc) {
            snprintf(l->err, sizeof l->err, "%s", err);
            l->state = RACE_LANE_FAILED;
        } else {
            l->loss[l->done] = p.loss;
            l->done = p.step;
        }
        int due = !rc && (l->done % r->eval_every == 0 || l->done == l->m.cfg.steps);
        pthread_mutex_unlock(&r->mu);
        if (due) lane_measure(r, l);
        pthread_mutex_lock(&r->mu);
        if (l->state == RACE_LANE_RUNNING && l->done == l->m.cfg.steps) l->state = RACE_LANE_DONE;
        l->busy = 0;
        pthread_cond_broadcast(&r->cv);
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int model_race_start(model_race *r, int threads, char *err, size_t errlen)
{
    if (threads < 1) threads = 1;
    r->th = calloc((size_t)threads, sizeof *r->th);
    if (!r->th) return model_fail(err, errlen, PE_ENOMEM, "race: out of memory");
    r->nth = threads;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&r->th[i], NULL, worker, r)) {
            model_race_stop(r);
            for (int j = 0; j < i; j++) pthread_join(r->th[j], NULL);
            free(r->th);
            r->th = NULL;
            r->nth = 0;
            return model_fail(err, errlen, PE_ENOMEM, "race: cannot start thread %d", i + 1);
        }
    r->started = 1;
    return 0;
}

void model_race_pause(model_race *r, int on)
{
    pthread_mutex_lock(&r->mu);
    r->paused = on;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

int model_race_busy(model_race *r)
{
    pthread_mutex_lock(&r->mu);
    int busy = 0;
    for (int i = 0; i < r->n; i++) busy += r->lanes[i].busy;
    pthread_mutex_unlock(&r->mu);
    return busy;
}

void model_race_stop(model_race *r)
{
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static int finished_locked(const model_race *r)
{
    int busy = 0, running = 0;
    for (int i = 0; i < r->n; i++) {
        busy += r->lanes[i].busy;
        running += r->lanes[i].state == RACE_LANE_RUNNING;
    }
    return !busy && (running == 0 || r->stop);
}

int model_race_finished(model_race *r)
{
    pthread_mutex_lock(&r->mu);
    int fin = finished_locked(r);
    pthread_mutex_unlock(&r->mu);
    return fin;
}

int model_race_wait(model_race *r, double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until); /* the condition variable's clock */
    long ns = until.tv_nsec + (long)(seconds * 1e9);
    until.tv_sec += ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    pthread_mutex_lock(&r->mu);
    int fin;
    /* every step's end broadcasts: wait again until the race is over or the time is up */
    while (!(fin = finished_locked(r)))
        if (pthread_cond_timedwait(&r->cv, &r->mu, &until)) break;
    pthread_mutex_unlock(&r->mu);
    return fin;
}

void model_race_join(model_race *r)
{
    if (r->started) {
        /* workers end when every lane is done or on stop; a finished race has no step left */
        for (int i = 0; i < r->nth; i++) pthread_join(r->th[i], NULL);
        r->started = 0;
    }
    for (int i = 0; i < r->n; i++) {
        model_race_lane *l = &r->lanes[i];
        if (l->state == RACE_LANE_FAILED) continue;
        if (l->nevals == 0 || l->evals[l->nevals - 1].step != l->done) lane_measure(r, l);
    }
}

void model_race_free(model_race *r)
{
    if (r->started) {
        model_race_stop(r);
        model_race_join(r);
    }
    for (int i = 0; i < r->n; i++) {
        model_race_lane *l = &r->lanes[i];
        model_trainer_free(l->tr);
        model_free(&l->m);
        free(l->loss);
        free(l->evals);
    }
    free(r->lanes);
    free(r->th);
    if (r->lanes || r->n) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
    }
    memset(r, 0, sizeof *r);
}

void model_race_lock(model_race *r)
{
    pthread_mutex_lock(&r->mu);
}

void model_race_unlock(model_race *r)
{
    pthread_mutex_unlock(&r->mu);
}
