/* explorer_work.c: the explorer's view builds on a worker thread, so the input thread stays free
 * while a view computes for seconds (issue 14). The front end's thread keeps every event and
 * draws the status line and the progress; the worker builds the view for a copy of the state
 * into a scene of its own.
 *
 * Ownership, so the two threads never touch the same memory: while the worker runs it owns the
 * view's context (its caches) and its scene; the explorer's slot for that view holds a shadow
 * with the last frame's plot geometry and readout (what the key handlers read) and no caches.
 * When the worker is done the input thread joins it and moves the context back.
 *
 * A key that leaves the computation's inputs alone (a cursor move, help, a message) lets the
 * work go on; a change of anything else (a parameter, the view, the size) cancels it through
 * pe_work and starts over with the new state. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "explorer.h"
#include "figure.h"

/* How long a frame waits for its build before it shows progress instead: below it a build
 * looks synchronous (no flash of "computing"); it also bounds how long a key can wait. */
#define WAIT_MS 30
/* Progress frames while the work runs. */
#define SHOW_S 0.1

typedef struct app_work {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running; /* a thread was started and is not joined yet */
    int done;    /* (mu) its build returned */
    atomic_int cancel;
    _Atomic double frac;
    /* what the worker reads and writes while running (nobody else does) */
    int view;
    app_state st;
    app_view_ctx ctx;
    scene s;
    scene_target t;
    int rc;
    char err[512];
    int refused; /* the memory budget refused a reservation during the build */
    double started, shown;
} app_work;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* pe_work's hook on the worker thread: the progress, and whether to stop. */
static int work_hook(void *ctx, double frac)
{
    app_work *w = ctx;
    if (frac >= 0) atomic_store(&w->frac, frac > 1 ? 1 : frac); /* < 0: only asks */
    return atomic_load(&w->cancel);
}

static void *work_main(void *arg)
{
    app_work *w = arg;
    size_t refusals = pe_mem_refusals();
    pe_work_set(work_hook, w);
    w->rc = app_view_build(&w->ctx, &w->st, &w->s, &w->t, w->err, sizeof w->err);
    pe_work_set(NULL, NULL);
    w->refused = w->rc < 0 && pe_mem_refusals() != refusals;
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int app_explorer_threaded(app_explorer *x)
{
    app_work *w = calloc(1, sizeof *w);
    if (!w) return -1;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        free(w);
        return -1;
    }
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->mu);
        free(w);
        return -1;
    }
    scene_init(&w->s, 1, 1, 0);
    x->work = w;
    return 0;
}

/* The worker's context back into the explorer (after the join): whatever the key handlers put
 * into the shadow meanwhile (nothing that holds memory, normally) is dropped. */
static void work_join(app_explorer *x)
{
    app_work *w = x->work;
    pthread_join(w->th, NULL);
    w->running = 0;
    app_view_ctx *vc = &x->ctx[w->view];
    app_view_ctx_free(vc);
    *vc = w->ctx;
    memset(&w->ctx, 0, sizeof w->ctx);
    /* the author's title pointed into the worker's copy of the state */
    if (vc->author.title == w->st.title) vc->author.title = x->st.title;
    if (vc->author.subtitle == w->st.subtitle) vc->author.subtitle = x->st.subtitle;
}

static void work_cancel(app_explorer *x)
{
    app_work *w = x->work;
    if (!w || !w->running) return;
    atomic_store(&w->cancel, 1);
    work_join(x);
}

void app_explorer_unthread(app_explorer *x)
{
    app_work *w = x->work;
    if (!w) return;
    work_cancel(x);
    scene_free(&w->s);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
    x->work = NULL;
}

static int work_start(app_explorer *x, const scene_target *vt)
{
    app_work *w = x->work;
    w->view = x->st.view;
    memcpy(&w->st, &x->st, sizeof w->st);
    app_view_ctx *vc = &x->ctx[w->view];
    w->ctx = *vc;
    /* the shadow: what the keys read (the plot the cursor lives in, the readout), no caches */
    memset(vc, 0, sizeof *vc);
    vc->main = w->ctx.main;
    vc->has_main = w->ctx.has_main;
    vc->main_rows = w->ctx.main_rows;
    vc->main_cols = w->ctx.main_cols;
    vc->full_res = w->ctx.full_res;
    memcpy(vc->readout, w->ctx.readout, sizeof vc->readout);
    memcpy(vc->notice, w->ctx.notice, sizeof vc->notice);
    w->t = *vt;
    w->done = 0;
    w->rc = 0;
    w->err[0] = '\0';
    w->refused = 0;
    atomic_store(&w->cancel, 0);
    atomic_store(&w->frac, 0.0);
    w->started = w->shown = now_s();
    if (pthread_create(&w->th, NULL, work_main, w) != 0) {
        *vc = w->ctx;
        memset(&w->ctx, 0, sizeof w->ctx);
        return -1;
    }
    w->running = 1;
    return 0;
}

/* Wait up to ms for the build; 1 when it is done. */
static int work_wait(app_work *w, int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)ms * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&w->mu);
    while (!w->done)
        if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) != 0) break;
    int done = w->done;
    pthread_mutex_unlock(&w->mu);
    return done;
}

/* The state as the computation sees it: the cursor only moves the cross-hair and the readout,
 * which the frame after the work redoes from the caches. */
static int same_inputs(const app_state *a, const app_state *b)
{
    app_state x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    x.cursor_on = y.cursor_on = 0;
    x.cur_r = y.cur_r = x.cur_c = y.cur_c = 0;
    return memcmp(&x, &y, sizeof x) == 0;
}

static int same_target(const scene_target *a, const scene_target *b)
{
    return a->width == b->width && a->height == b->height && a->text_h == b->text_h &&
           a->cells == b->cells;
}

int app_explorer_working(const app_explorer *x)
{
    return x->work && x->work->running;
}

double app_explorer_work_frac(const app_explorer *x)
{
    return app_explorer_working(x) ? atomic_load(&x->work->frac) : 0;
}

int app_explorer_work_poll(app_explorer *x)
{
    app_work *w = x->work;
    if (!w || !w->running) return 0;
    if (work_wait(w, 0)) return 1;
    return now_s() - w->shown >= SHOW_S;
}

/* Views visited earlier keep their caches; when the memory budget refuses the current view,
 * the least recently built view's caches go, then the next, and as the last resort the current
 * view's own older entries, before the refusal is shown. 1 when something was freed. */
static int evict_one(app_explorer *x, int *own_dropped)
{
    int best = -1;
    for (int i = 0; i < APP_MAX_VIEWS; i++) {
        if (i == x->st.view || !app_view_ctx_held(&x->ctx[i])) continue;
        if (best < 0 || x->built_at[i] < x->built_at[best]) best = i;
    }
    if (best < 0 && !*own_dropped && app_view_ctx_held(&x->ctx[x->st.view])) {
        best = x->st.view;
        *own_dropped = 1;
    }
    if (best < 0) return 0;
    app_view_ctx_drop(&x->ctx[best]);
    return 1;
}

int app_explorer_build_view(app_explorer *x, scene *s, const scene_target *vt, char *err,
                            size_t errlen)
{
    app_view_ctx *vc = &x->ctx[x->st.view];
    x->built_at[x->st.view] = ++x->builds;
    int own_dropped = 0;
    if (!x->work) { /* on this thread (tests, bench) */
        for (;;) {
            size_t refusals = pe_mem_refusals();
            int rc = app_view_build(vc, &x->st, s, vt, err, errlen);
            if (rc == 0 || pe_mem_refusals() == refusals || !evict_one(x, &own_dropped)) return rc;
        }
    }
    app_work *w = x->work;
    for (;;) {
        int cancelled = 0;
        if (w->running && !work_wait(w, 0) &&
            (w->view != x->st.view || !same_inputs(&w->st, &x->st) || !same_target(&w->t, vt))) {
            work_cancel(x); /* stale: a newer change wins */
            cancelled = 1;
            x->work_cancels++;
        }
        if (!w->running && work_start(x, vt) < 0) {
            snprintf(err, errlen, "could not start the worker thread");
            return -1;
        }
        /* a build just started gets WAIT_MS to finish; one already running is not waited on,
         * nor one that replaces cancelled work (the key has waited for the cancel already) */
        int wait = cancelled ? 0 : WAIT_MS - (int)((now_s() - w->started) * 1000);
        if (!work_wait(w, wait > 0 ? wait : 0)) {
            w->shown = now_s();
            return 1; /* still computing: the frame shows the progress */
        }
        work_join(x);
        if (w->view != x->st.view || !same_inputs(&w->st, &x->st) || !same_target(&w->t, vt))
            continue; /* changed while it finished: build the new state */
        if (w->rc < 0) {
            if (w->refused && evict_one(x, &own_dropped)) continue;
            snprintf(err, errlen, "%s", w->err);
            return -1;
        }
        /* the cursor moved meanwhile: show this frame now, the next one has the new readout */
        if (memcmp(&w->st, &x->st, sizeof w->st) != 0) x->redo = 1;
        /* the worker's scene becomes the frame's; the caller's goes back for the next build */
        scene tmp = *s;
        *s = w->s;
        w->s = tmp;
        s->ranges = tmp.ranges;
        w->s.ranges = NULL;
        s->author = &vc->author;
        return 0;
    }
}

/* The trial's pe_work hook: stop once the time is up. */
typedef struct trial {
    double until;
    int stopped;
} trial;

static int trial_hook(void *ctx, double frac)
{
    (void)frac;
    trial *tr = ctx;
    if (now_s() < tr->until) return 0;
    tr->stopped = 1;
    return 1;
}

int app_explorer_trial_build(app_explorer *x, scene *s, const scene_target *t, char *err,
                             size_t errlen)
{
    work_cancel(x); /* the view's caches back on this thread */
    trial tr = {now_s() + WAIT_MS / 1000.0, 0};
    int own_dropped = 0, rc;
    pe_work_set(trial_hook, &tr);
    for (;;) {
        size_t refusals = pe_mem_refusals();
        rc = app_view_build(&x->ctx[x->st.view], &x->st, s, t, err, errlen);
        if (rc == 0 || tr.stopped || pe_mem_refusals() == refusals || !evict_one(x, &own_dropped))
            break;
    }
    pe_work_set(NULL, NULL);
    return tr.stopped ? 0 : rc;
}
