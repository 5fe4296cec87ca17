/* test_explorer_work.c (issue 14): the explorer's views built on its worker thread. Keys that
 * leave the computation's inputs alone (cursor moves) do not cancel long work, which then
 * finishes and is drawn; a parameter change during the work cancels it and the frame drawn is
 * for the newest value; nothing stays reserved after the explorer is freed. And the memory
 * budget: caches of views visited earlier are freed (least recently built first) when the next
 * view needs the room, so each view still shows, on the worker and on the caller's thread; a
 * view that alone needs more than the budget shows the budget's message. Not timed: the loops
 * wait for the work however long it takes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cellgrid.h"
#include "explorer.h"
#include "tap.h"

static void send_key(app_explorer *x, uint32_t k)
{
    ui_event e = {0};
    e.type = UI_EV_KEY;
    e.key = k;
    app_explorer_event(x, &e);
}

static void frame(app_explorer *x, scene *s, cellgrid *g)
{
    scene_target t = cellgrid_target(g->cols, g->rows);
    app_explorer_frame(x, s, &t);
    cellgrid_render(g, s);
}

static int grid_contains(cellgrid *g, const char *needle)
{
    char line[1024];
    for (int r = 0; r < g->rows; r++) {
        int k = 0;
        for (int c = 0; c < g->cols && k + 1 < (int)sizeof line; c++) {
            uint32_t ch = cellgrid_at(g, c, r)->ch;
            line[k++] = ch < 128 ? (char)ch : '#';
        }
        line[k] = '\0';
        if (strstr(line, needle)) return 1;
    }
    return 0;
}

static app_explorer *explorer(const char *const *opts)
{
    app_state st;
    app_state_default(&st);
    app_explorer *x = calloc(1, sizeof *x);
    app_explorer_init(x, &st, 0);
    for (; opts[0]; opts += 2)
        if (app_explorer_apply(x, opts[0], opts[1]) != 0)
            printf("# %s %s: %s\n", opts[0], opts[1], x->message);
    return x;
}

/* Frames until the worker is done, pressing key (0: none) before each; the frames it took. */
static long finish(app_explorer *x, scene *s, cellgrid *g, uint32_t key)
{
    long n = 0;
    while (app_explorer_working(x) && n < 1000000) {
        if (key) send_key(x, key);
        usleep(10000);
        frame(x, s, g);
        n++;
    }
    /* the frame after a cursor move during the work has the new readout */
    while (x->dirty && n < 1000000) {
        frame(x, s, g);
        n++;
    }
    return n;
}

static void test_keys_during_work(void)
{
    /* W_R^T q alone is L d^2 = 4.3e9 products: seconds, on any machine */
    const char *const opts[] = {"view", "xl", "len", "1024", "dim", "2048", NULL};
    app_explorer *x = explorer(opts);
    TAP_OK(app_explorer_threaded(x) == 0, "the worker thread starts");
    cellgrid g;
    cellgrid_init(&g, 120, 40, 0);
    scene s;
    scene_init(&s, 1, 1, 0);
    frame(x, &s, &g);
    TAP_OK(app_explorer_working(x) && grid_contains(&g, "computing xl"),
           "xl at L 1024 d 2048: the frame shows the progress while the worker computes");
    long keys = finish(x, &s, &g, UI_KEY_RIGHT);
    TAP_OK(keys > 0 && x->work_cancels == 0,
           "%ld cursor keys during the work cancelled nothing (%lu cancels)", keys,
           x->work_cancels);
    TAP_OK(!app_explorer_working(x) && x->view_error[0] == '\0' && grid_contains(&g, "(a) content"),
           "the work finished under the keys and the view is drawn");
    send_key(x, UI_KEY_RIGHT); /* the cursor, now that there is a plot to put it on */
    frame(x, &s, &g);
    finish(x, &s, &g, 0);
    TAP_OK(x->st.cursor_on && grid_contains(&g, "i-j"), "then the cursor reads its cell (%s)",
           x->ctx[x->st.view].readout);

    /* a change of d during the work: the stale work is cancelled, the newest d is drawn */
    send_key(x, 'D'); /* d 1024: new draws, seconds of work again */
    frame(x, &s, &g);
    TAP_OK(app_explorer_working(x), "after D the worker computes d 1024");
    send_key(x, 'D'); /* d 512 while that runs */
    frame(x, &s, &g);
    TAP_OK(x->work_cancels == 1, "a second D during the work cancels it (%lu cancels)",
           x->work_cancels);
    finish(x, &s, &g, 0);
    TAP_OK(x->view_error[0] == '\0' && grid_contains(&g, "d=512") &&
               grid_contains(&g, "(a) content"),
           "the frame drawn is for d 512");
    /* a cancel while q quits: the explorer stops the work and frees every cache */
    send_key(x, 'D');
    frame(x, &s, &g);
    app_explorer_free(x);
    free(x);
    TAP_OK(pe_mem_used() == 0, "nothing reserved after the explorer is freed (%zu bytes)",
           pe_mem_used());
    scene_free(&s);
    cellgrid_free(&g);
}

/* Two views that each keep a binary table of 32 MiB (L 4096, d 2048) under a budget of 48 MiB,
 * visited in turn: each shows, because the one built before gives its room. */
static void test_eviction(int threaded)
{
    const char *const opts[] = {"view", "heatmap", "pe",   "binary", "len",
                                "4096", "dim",     "2048", NULL};
    pe_mem_set_budget((size_t)48 << 20);
    app_explorer *x = explorer(opts);
    if (threaded) app_explorer_threaded(x);
    cellgrid g;
    cellgrid_init(&g, 120, 40, 0);
    scene s;
    scene_init(&s, 1, 1, 0);
    const char *order[] = {"heatmap", "similarity", "heatmap", "similarity"};
    const char *how = threaded ? "on the worker" : "on the caller's thread";
    int prev = -1;
    for (int i = 0; i < 4; i++) {
        app_explorer_apply(x, "view", order[i]);
        frame(x, &s, &g);
        finish(x, &s, &g, 0);
        TAP_OK(x->view_error[0] == '\0', "%s: %s shows under a 48 MiB budget (%s)", how, order[i],
               x->view_error);
        TAP_OK(pe_mem_used() <= pe_mem_budget(), "%s: %zu MiB held, inside the budget", how,
               pe_mem_used() >> 20);
        if (prev >= 0)
            TAP_OK(app_view_ctx_held(&x->ctx[prev]) == 0,
                   "%s: the view before (%s) gave its table up", how, order[i - 1]);
        prev = x->st.view;
    }
    /* one table past the budget on its own: the budget's message, nothing else is lost */
    app_explorer_apply(x, "len", "8192");
    frame(x, &s, &g);
    finish(x, &s, &g, 0);
    TAP_OK(strstr(x->view_error, "memory budget of 48 MiB") != NULL,
           "%s: a 64 MiB table alone shows the budget's message (%s)", how, x->view_error);
    app_explorer_free(x);
    free(x);
    TAP_OK(pe_mem_used() == 0, "%s: nothing reserved after the explorer is freed", how);
    pe_mem_set_budget(PE_MEM_DEFAULT);
    scene_free(&s);
    cellgrid_free(&g);
}

int main(void)
{
    test_keys_during_work();
    test_eviction(0);
    test_eviction(1);
    return tap_done();
}
