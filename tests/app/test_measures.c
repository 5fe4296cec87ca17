/* test_measures.c: the usage, distance and model-distance views (issue 23) against a second
 * computation written here.
 *
 * - The shipped models' attention comes from the tiny model's own session: the step's attention
 *   of the newest token (model_session_attn), not the rows the views recompute from cached q and
 *   k (lmi_attn_row). Distance, received attention and the model distance are summed here from
 *   those rows with this file's own Jensen-Shannon divergence.
 * - q and k (lmi_qk, before the rotation) are checked by rotating them here with RoPE's formula
 *   in double (theta_k = base^(-2k/d)) and recomputing every attention row of the rope model
 *   and of stories260K (../shared/realmodels) from them: softmax(q.k / sqrt(d)) equals
 *   lmi_attn_row. stories260K's distance and sink numbers are then summed from those rows, and
 *   the usage view's pair norms and massive values (the (layers, heads, band) shares of
 *   --show massive, and the header's per-band shares) from those q and k.
 * - Analytic properties: a model against itself is at distance 0, the distance is symmetric and
 *   at most ln 2; the weights by distance and by position each add up to one per query. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "lmi.h"
#include "model/tiny/model.h"
#include "options.h"
#include "tap.h"
#include "views.h"

static const char *const presets[] = {"toy", "cake", "friend", "long", "start", "unknown"};
#define NP   6
#define MAXT 512

/* ---- a view's numbers ---------------------------------------------------------------------- */

/* Set each "name=value" of opts (NULL-terminated) and run the view's data. */
static int view_data(const char *view, const char *const *opts, app_data *d, char *err,
                     size_t errlen)
{
    app_state st;
    app_state_default(&st);
    int rc = app_option_set(&st, app_option_find("view"), view, err, errlen);
    for (int i = 0; rc == 0 && opts && opts[i]; i++) {
        char name[64];
        const char *eq = strchr(opts[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - opts[i]), opts[i]);
        const app_option *o = app_option_find(name);
        if (!o) {
            snprintf(err, errlen, "no option %s", name);
            return -1;
        }
        rc = app_option_set(&st, o, eq + 1, err, errlen);
    }
    app_view_ctx c = {0};
    if (rc == 0) {
        const app_view *v = app_view_at((size_t)st.view);
        rc = v->validate ? v->validate(&st, err, errlen) : 0;
        if (rc == 0) rc = v->data(&c, &st, d, err, errlen);
    }
    app_view_ctx_free(&c);
    return rc;
}

/* ---- the prompts ------------------------------------------------------------------------- */

typedef struct prompts {
    int n, len[NP];
    int ids[NP][MAXT];
} prompts;

static int preset_ids(const lmi_model *m, prompts *ps)
{
    static char text[65536];
    lmi_token tk[4096];
    char err[256];
    ps->n = 0;
    for (int p = 0; p < NP; p++) {
        if (app_attn_preset_text(presets[p], text, sizeof text, err, sizeof err) < 0) return -1;
        int n = lmi_tokenize(m, text, strlen(text), tk, 4096, err, sizeof err);
        if (n > m->info.ctx) n = m->info.ctx;
        if (n <= 0) continue;
        for (int t = 0; t < n; t++) ps->ids[ps->n][t] = tk[t].id;
        ps->len[ps->n++] = n;
    }
    return 0;
}

/* ---- attention rows of the tiny model's own step ------------------------------------------ */

/* rows[(l, h, t, j)] of one prompt, from model_session_attn after each step: (L, H, n, n) */
static float *step_rows(const char *name, const int *ids, int n, int *L, int *H)
{
    char path[512], err[256];
    if (app_attn_model_path(name, path, sizeof path, err, sizeof err) < 0) return NULL;
    model m;
    memset(&m, 0, sizeof m);
    if (model_load(path, &m, err, sizeof err) < 0) return NULL;
    *L = m.cfg.layers;
    *H = m.cfg.heads;
    float *rows = calloc((size_t)*L * *H * n * n, sizeof *rows);
    model_session s;
    memset(&s, 0, sizeof s);
    model_session_init(&s, &m, n, err, sizeof err);
    for (int t = 0; t < n; t++) {
        model_session_step(&s, ids[t], NULL, err, sizeof err);
        for (int l = 0; l < *L; l++)
            for (int h = 0; h < *H; h++)
                memcpy(rows + (((size_t)l * *H + h) * n + t) * n, model_session_attn(&s, l, h),
                       sizeof(float) * (size_t)(t + 1));
    }
    model_session_free(&s);
    model_free(&m);
    return rows;
}

/* ---- RoPE and rows from q and k, here --------------------------------------------------- */

/* Rotate x (hd) at position pos by the model's RoPE, in double. */
static void rope(double *x, const lmi_info *in, int pos)
{
    int np = in->rot_dim / 2;
    for (int k = 0; k < np; k++) {
        int i0 = in->pairing == PE_PAIRING_HALF ? k : 2 * k;
        int i1 = in->pairing == PE_PAIRING_HALF ? k + np : 2 * k + 1;
        double a = pos * pow(in->rope_base, -2.0 * k / in->rot_dim);
        double x0 = x[i0], x1 = x[i1];
        x[i0] = x0 * cos(a) - x1 * sin(a);
        x[i1] = x0 * sin(a) + x1 * cos(a);
    }
}

/* Rows (L, H, n, n) of a session recomputed here from lmi_qk; *worst receives the largest
 * difference from lmi_attn_row. q and k (L, H, n, hd) are kept for the usage check. */
static double *qk_rows(const lmi_session *s, int n, float *qs, float *ks, double *worst)
{
    const lmi_info *in = &s->m->info;
    int L = in->layers, H = in->heads, hd = in->head_dim;
    double *rows = calloc((size_t)L * H * n * n, sizeof *rows);
    double *qr = malloc(sizeof *qr * hd), *kr = malloc(sizeof *kr * (size_t)n * hd);
    float *row = malloc(sizeof *row * n);
    char err[256];
    *worst = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            float *q = qs + (((size_t)l * H + h) * n) * hd,
                  *k = ks + (((size_t)l * H + h) * n) * hd;
            for (int t = 0; t < n; t++)
                lmi_qk(s, l, h, t, q + (size_t)t * hd, k + (size_t)t * hd, err, sizeof err);
            for (int j = 0; j < n; j++) {
                for (int i = 0; i < hd; i++) kr[j * hd + i] = k[(size_t)j * hd + i];
                if (in->rot_dim) rope(kr + (size_t)j * hd, in, j);
            }
            for (int t = 0; t < n; t++) {
                for (int i = 0; i < hd; i++) qr[i] = q[(size_t)t * hd + i];
                if (in->rot_dim) rope(qr, in, t);
                double *r = rows + (((size_t)l * H + h) * n + t) * n, mx = -INFINITY, sum = 0;
                for (int j = 0; j <= t; j++) {
                    double d = 0;
                    for (int i = 0; i < hd; i++) d += qr[i] * kr[j * hd + i];
                    r[j] = d / sqrt((double)hd);
                    mx = fmax(mx, r[j]);
                }
                for (int j = 0; j <= t; j++) sum += r[j] = exp(r[j] - mx);
                for (int j = 0; j <= t; j++) r[j] /= sum;
                lmi_attn_row(s, l, h, t, row, NULL, NULL, err, sizeof err);
                for (int j = 0; j <= t; j++) *worst = fmax(*worst, fabs(r[j] - row[j]));
            }
        }
    free(qr);
    free(kr);
    free(row);
    return rows;
}

/* ---- distance sums, here ---------------------------------------------------------------- */

typedef struct dist_ref {
    int L, H, T;
    double *dist, *recv, *cnt_d, *cnt_r;
} dist_ref;

static void dist_add(dist_ref *r, int l, int h, int n, const double *rows, int first)
{
    for (int t = 0; t < n; t++)
        for (int j = 0; j <= t; j++) {
            double w = rows[(size_t)t * n + j];
            r->dist[((size_t)l * r->H + h) * r->T + (t - j)] += w;
            r->recv[((size_t)l * r->H + h) * r->T + j] += w;
            if (first) r->cnt_d[t - j] += 1, r->cnt_r[j] += 1;
        }
}

/* Compare the view's (L, H, T) means with the sums; also the sum rules. */
static void dist_check(const char *what, dist_ref *r, int tokens, const char *const *extra)
{
    for (int by = 0; by < 2; by++) {
        const char *opts[8] = {by ? "by=position" : "by=distance"};
        int k = 1;
        for (int i = 0; extra && extra[i]; i++) opts[k++] = extra[i];
        opts[k] = NULL;
        app_data d = {0};
        char err[512] = "";
        int rc = view_data("distance", opts, &d, err, sizeof err);
        TAP_OK(rc == 0 && d.ndim == 3 && (int)d.shape[0] == r->L && (int)d.shape[1] == r->H &&
                   (int)d.shape[2] == r->T,
               "%s: distance --%s data is (layers %d, heads %d, tokens %d) (%s)", what, opts[0],
               r->L, r->H, r->T, err);
        if (rc) continue;
        double worst = 0, rule = 0;
        const double *sum = by ? r->recv : r->dist, *cnt = by ? r->cnt_r : r->cnt_d;
        for (int lh = 0; lh < r->L * r->H; lh++) {
            double tot = 0;
            for (int i = 0; i < r->T; i++) {
                double want = cnt[i] > 0 ? sum[(size_t)lh * r->T + i] / cnt[i] : NAN;
                double got = d.data[(size_t)lh * r->T + i];
                if (isnan(want) != isnan(got)) worst = INFINITY;
                if (!isnan(want)) worst = fmax(worst, fabs(got - want)), tot += got * cnt[i];
            }
            /* every query's weights add up to one: the means times their counts sum to the
             * number of queries */
            rule = fmax(rule, fabs(tot - tokens));
        }
        TAP_OK(worst < 2e-6, "%s: %s equals the sums here (max %.2g)", what,
               by ? "received by position" : "weight by distance", worst);
        TAP_OK(rule < 1e-3, "%s: %s x counts adds up to the %d queries (off by %.2g)", what,
               by ? "received" : "by distance", tokens, rule);
        TAP_OK(strstr(d.what, by ? "(layers, heads, position" : "(layers, heads, distance") != NULL,
               "%s: the header names the axes: %.60s", what, d.what);
        app_data_free(&d);
    }
}

static void dist_ref_init(dist_ref *r, int L, int H, int T)
{
    r->L = L, r->H = H, r->T = T;
    r->dist = calloc((size_t)L * H * T, sizeof(double));
    r->recv = calloc((size_t)L * H * T, sizeof(double));
    r->cnt_d = calloc((size_t)T, sizeof(double));
    r->cnt_r = calloc((size_t)T, sizeof(double));
}
static void dist_ref_free(dist_ref *r)
{
    free(r->dist), free(r->recv), free(r->cnt_d), free(r->cnt_r);
}

/* ---- the shipped models ------------------------------------------------------------------ */

static double jsd(const float *p, const float *q, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        double a = p[i], b = q[i], m = (a + b) / 2;
        if (a > 0) s += 0.5 * a * log(a / m);
        if (b > 0) s += 0.5 * b * log(b / m);
    }
    return s;
}

static void shipped(void)
{
    static const char *const names[] = {"nope", "learned", "sinusoidal", "alibi", "rope", "t5"};
    lmi_model m = {0};
    char path[512], err[512];
    app_attn_model_path("nope", path, sizeof path, err, sizeof err);
    lmi_open(&m, path, err, sizeof err);
    prompts ps;
    preset_ids(&m, &ps);
    lmi_close(&m);
    int tokens = 0, T = 0;
    for (int p = 0; p < ps.n; p++) tokens += ps.len[p], T = ps.len[p] > T ? ps.len[p] : T;
    /* every model's step rows of every prompt */
    static float *rows[6][NP];
    int L = 0, H = 0;
    for (int k = 0; k < 6; k++)
        for (int p = 0; p < ps.n; p++)
            rows[k][p] = step_rows(names[k], ps.ids[p], ps.len[p], &L, &H);
    for (int k = 0; k < 6; k++) {
        dist_ref r;
        dist_ref_init(&r, L, H, T);
        for (int p = 0; p < ps.n; p++) {
            int n = ps.len[p];
            double *rd = malloc(sizeof *rd * (size_t)n * n);
            for (int l = 0; l < L; l++)
                for (int h = 0; h < H; h++) {
                    for (int i = 0; i < n * n; i++)
                        rd[i] = rows[k][p][((size_t)l * H + h) * n * n + (size_t)i];
                    dist_add(&r, l, h, n, rd, l == 0 && h == 0);
                }
            free(rd);
        }
        char opt[64];
        snprintf(opt, sizeof opt, "model=%s", names[k]);
        const char *extra[] = {opt, NULL};
        dist_check(names[k], &r, tokens, extra);
        dist_ref_free(&r);
    }
    /* model distance: nope against the other five, min over head pairs here */
    app_data d = {0};
    int rc = view_data("model-distance", NULL, &d, err, sizeof err);
    TAP_OK(rc == 0 && d.ndim == 2 && (int)d.shape[0] == L && d.shape[1] == 5,
           "model-distance: (layers %d, 5 models) (%s)", L, err);
    double worst = 0;
    for (int k = 1; rc == 0 && k < 6; k++)
        for (int l = 0; l < L; l++) {
            double best = INFINITY;
            for (int h1 = 0; h1 < H; h1++)
                for (int h2 = 0; h2 < H; h2++) {
                    double s = 0;
                    for (int p = 0; p < ps.n; p++) {
                        int n = ps.len[p];
                        for (int t = 0; t < n; t++)
                            s += jsd(rows[0][p] + (((size_t)l * H + h1) * n + t) * n,
                                     rows[k][p] + (((size_t)l * H + h2) * n + t) * n, t + 1);
                    }
                    best = fmin(best, s / tokens);
                }
            double got = d.data[l * 5 + (k - 1)];
            worst = fmax(worst, fabs(got - best));
            tap_diag("| %d | %s | %.4f |", l, names[k], got);
        }
    TAP_OK(rc == 0 && worst < 1e-6,
           "model-distance: nope against each scheme equals the min over "
           "head pairs here (max %.2g)",
           worst);
    TAP_OK(rc == 0 && strstr(d.what, "models: learned sinusoidal alibi rope t5") &&
               strstr(d.what, "held-out presets (toy cake friend long start unknown)"),
           "model-distance: the header names the models and the prompts: %s", d.what);
    double mx = 0;
    for (size_t i = 0; rc == 0 && i < d.shape[0] * d.shape[1]; i++) mx = fmax(mx, d.data[i]);
    TAP_OK(rc == 0 && mx <= log(2.0) && mx > 0, "model-distance: 0 < values <= ln 2 (max %.4f)",
           mx);
    app_data_free(&d);
    /* symmetric, and 0 against itself */
    app_data ab = {0}, ba = {0}, self = {0};
    const char *o1[] = {"reference=rope", "against=alibi", NULL};
    const char *o2[] = {"reference=alibi", "against=rope", NULL};
    const char *o3[] = {"reference=t5", "against=t5,rope", NULL};
    int r1 = view_data("model-distance", o1, &ab, err, sizeof err);
    int r2 = view_data("model-distance", o2, &ba, err, sizeof err);
    int r3 = view_data("model-distance", o3, &self, err, sizeof err);
    worst = 0;
    for (int l = 0; r1 == 0 && r2 == 0 && l < L; l++)
        worst = fmax(worst, fabs(ab.data[l] - ba.data[l]));
    TAP_OK(r1 == 0 && r2 == 0 && worst < 1e-12, "model-distance is symmetric (rope/alibi, %.2g)",
           worst);
    double selfmax = 0;
    for (int l = 0; r3 == 0 && l < L; l++) selfmax = fmax(selfmax, fabs(self.data[l * 2]));
    TAP_OK(r3 == 0 && selfmax == 0 && self.data[1] > 0,
           "model-distance of t5 with itself is 0 (%.2g), with rope above 0", selfmax);
    app_data_free(&ab), app_data_free(&ba), app_data_free(&self);
    for (int k = 0; k < 6; k++)
        for (int p = 0; p < ps.n; p++) free(rows[k][p]);
}

/* ---- q and k: rows from them, usage ------------------------------------------------------ */

/* Check a RoPE model's lmi_qk through its rows, and the usage view's numbers, over prompts ps.
 * With dist (not NULL) the distance view is checked against the rows made from q and k. */
static void qk_model(const char *what, const char *model_opt, const char *path, const prompts *ps,
                     const char *ids_opt, int check_dist)
{
    lmi_model m = {0};
    char err[512] = "";
    if (!TAP_OK(lmi_open(&m, path, err, sizeof err) == 0, "%s: opens (%s)", what, err)) return;
    const lmi_info *in = &m.info;
    int L = in->layers, H = in->heads, hd = in->head_dim, np = in->rot_dim / 2;
    int T = 0, tokens = 0;
    for (int p = 0; p < ps->n; p++) T = ps->len[p] > T ? ps->len[p] : T, tokens += ps->len[p];
    double *norm[2] = {calloc((size_t)L * H * np, sizeof(double)),
                       calloc((size_t)L * H * np, sizeof(double))};
    static const double lams[2] = {5, 1.5}; /* the paper's, and one that finds some */
    long band[2][2][5] = {{{0}}}, massive[2][2] = {{0}};
    /* (lambda, side): massive counts per (layer, head, band) */
    long *lhb[2][2];
    for (int li = 0; li < 2; li++)
        for (int side = 0; side < 2; side++)
            lhb[li][side] = calloc((size_t)L * H * 5, sizeof(long));
    double *alpha = calloc((size_t)L * H, sizeof(double)); /* sinks: sum over prompts */
    double worst = 0;
    dist_ref r;
    dist_ref_init(&r, L, H, T);
    for (int p = 0; p < ps->n; p++) {
        int n = ps->len[p];
        lmi_session s = {0};
        lmi_session_init(&s, &m, n, err, sizeof err);
        for (int t = 0; t < n; t++) lmi_step(&s, ps->ids[p][t], NULL, err, sizeof err);
        float *qs = malloc(sizeof *qs * (size_t)L * H * n * hd);
        float *ks = malloc(sizeof *ks * (size_t)L * H * n * hd);
        double w = 0;
        double *rows = qk_rows(&s, n, qs, ks, &w);
        worst = fmax(worst, w);
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                dist_add(&r, l, h, n, rows + ((size_t)l * H + h) * n * n, l == 0 && h == 0);
                double a0 = 0; /* alpha: the mean over the queries of their weight on token 0 */
                for (int t = 0; t < n; t++) a0 += rows[(((size_t)l * H + h) * n + t) * n] / n;
                alpha[l * H + h] += a0 / ps->n;
                for (int side = 0; side < 2; side++) {
                    const float *x = (side ? ks : qs) + ((size_t)l * H + h) * n * hd;
                    double *acc = norm[side] + ((size_t)l * H + h) * np;
                    for (int t = 0; t < n; t++)
                        for (int k = 0; k < np; k++) {
                            int i0 = in->pairing == PE_PAIRING_HALF ? k : 2 * k;
                            int i1 = in->pairing == PE_PAIRING_HALF ? k + np : 2 * k + 1;
                            acc[k] += sqrt((double)x[t * hd + i0] * x[t * hd + i0] +
                                           (double)x[t * hd + i1] * x[t * hd + i1]);
                        }
                    /* massive: per dimension the norm over the prompt, above 5x their mean */
                    double M[512], mean = 0;
                    for (int i = 0; i < hd; i++) {
                        double ss = 0;
                        for (int t = 0; t < n; t++) ss += (double)x[t * hd + i] * x[t * hd + i];
                        M[i] = sqrt(ss);
                        mean += M[i] / hd;
                    }
                    for (int li = 0; li < 2; li++)
                        for (int i = 0; i < hd; i++)
                            if (M[i] > lams[li] * mean) {
                                int k = i >= in->rot_dim                 ? -1
                                        : in->pairing == PE_PAIRING_HALF ? (i < np ? i : i - np)
                                                                         : i / 2;
                                band[li][side][k < 0 ? 4 : k * 4 / np]++;
                                lhb[li][side][((size_t)l * H + h) * 5 + (k < 0 ? 4 : k * 4 / np)]++;
                                massive[li][side]++;
                            }
                }
            }
        free(rows), free(qs), free(ks);
        lmi_session_free(&s);
    }
    TAP_OK(worst < 2e-5, "%s: q and k of lmi_qk, rotated here, give lmi_attn_row (max %.2g)", what,
           worst);
    if (check_dist) {
        const char *extra[] = {model_opt, ids_opt, NULL};
        dist_check(what, &r, tokens, extra);
    }
    {
        /* sinks: alpha(l, h) from the rows made here from q and k */
        const char *opts[] = {model_opt, ids_opt, NULL};
        app_data d = {0};
        int rc = view_data("sinks", opts, &d, err, sizeof err);
        double wa = 0;
        int above = 0;
        for (int i = 0; rc == 0 && i < L * H; i++)
            wa = fmax(wa, fabs(d.data[i] - alpha[i])), above += alpha[i] > 0.3;
        TAP_OK(rc == 0 && d.ndim == 2 && (int)d.shape[0] == L && (int)d.shape[1] == H && wa < 2e-6,
               "%s: sinks alpha (%d, %d) equals the rows' weight on token 0 here (max %.2g; %s)",
               what, L, H, wa, err);
        char want[64];
        snprintf(want, sizeof want, "(%d of %d)", above, L * H);
        TAP_OK(rc == 0 && strstr(d.what, want) && strstr(d.what, "(layers, heads)") &&
                   strstr(d.what, ids_opt ? "--ids" : "held-out presets"),
               "%s: the sinks header names the axes, the prompts and %s: %s", what, want, d.what);
        app_data_free(&d);
    }
    for (int li = 0; li < 2; li++)
        for (int side = 0; side < 2; side++) {
            const char *opts[] = {model_opt, side ? "side=k" : "side=q",
                                  li ? "massive=1.5" : "massive=5", ids_opt, NULL};
            app_data d = {0};
            int rc = view_data("usage", opts, &d, err, sizeof err);
            TAP_OK(rc == 0 && d.ndim == 3 && (int)d.shape[2] == np,
                   "%s: usage %s is (%d, %d, %d) (%s)", what, opts[1], L, H, np, err);
            double wn = 0;
            for (int i = 0; rc == 0 && i < L * H * np; i++)
                wn = fmax(wn, fabs(d.data[i] - norm[side][i] / tokens) / (norm[side][i] / tokens));
            TAP_OK(rc == 0 && wn < 1e-6, "%s: usage %s pair norms equal the means here (rel %.2g)",
                   what, opts[1], wn);
            char want[128];
            size_t u = 0;
            for (int b = 0; b < 4; b++)
                u += (size_t)snprintf(
                    want + u, sizeof want - u, "%s%.0f%%", b ? " " : "",
                    massive[li][side] ? 100.0 * band[li][side][b] / massive[li][side] : 0.0);
            TAP_OK(rc == 0 && strstr(d.what, want),
                   "%s: usage %s %s massive shares %s (%ld found): %s", what, opts[1], opts[2],
                   want, massive[li][side], d.what);
            app_data_free(&d);
            /* --show massive: (layers, heads, band), each entry its count over all massive */
            const char *om[] = {model_opt, opts[1], opts[2], "show=massive", ids_opt, NULL};
            rc = view_data("usage", om, &d, err, sizeof err);
            int nb = in->rot_dim < hd ? 5 : 4;
            TAP_OK(rc == 0 && d.ndim == 3 && (int)d.shape[0] == L && (int)d.shape[1] == H &&
                       (int)d.shape[2] == nb,
                   "%s: usage --show massive %s %s is (layers %d, heads %d, bands %d) (%s)", what,
                   opts[1], opts[2], L, H, nb, err);
            double wm = 0, tot = 0, bsum[5] = {0};
            for (int lh = 0; rc == 0 && lh < L * H; lh++)
                for (int b = 0; b < nb; b++) {
                    double want_v = massive[li][side] ? (double)lhb[li][side][(size_t)lh * 5 + b] /
                                                            massive[li][side]
                                                      : 0;
                    double got = d.data[(size_t)lh * nb + b];
                    wm = fmax(wm, fabs(got - want_v));
                    tot += got;
                    bsum[b] += got;
                }
            double ws = 0;
            for (int b = 0; b < nb && massive[li][side]; b++)
                ws = fmax(ws, fabs(bsum[b] - (double)band[li][side][b] / massive[li][side]));
            TAP_OK(rc == 0 && wm < 1e-12 && ws < 1e-12 &&
                       (massive[li][side] ? fabs(tot - 1) < 1e-9 : tot == 0),
                   "%s: usage %s %s massive shares per (layer, head, band) equal the counts here "
                   "(max %.2g), sum over layers and heads to the band shares (%.2g), in all to %s "
                   "(%.6f)",
                   what, opts[1], opts[2], wm, ws, massive[li][side] ? "1" : "0", tot);
            char found[64];
            snprintf(found, sizeof found, "%ld of %ld", massive[li][side],
                     (long)ps->n * L * H * hd);
            TAP_OK(rc == 0 && strstr(d.what, "(layers, heads, band)") && strstr(d.what, want) &&
                       strstr(d.what, found),
                   "%s: the massive header names the axes, the shares %s and %s: %s", what, want,
                   found, d.what);
            app_data_free(&d);
        }
    free(norm[0]), free(norm[1]);
    for (int li = 0; li < 2; li++) free(lhb[li][0]), free(lhb[li][1]);
    free(alpha);
    dist_ref_free(&r);
    lmi_close(&m);
}

int main(void)
{
    shipped();
    /* the shipped rope model over the presets */
    char path[1024], err[512];
    app_attn_model_path("rope", path, sizeof path, err, sizeof err);
    lmi_model m = {0};
    lmi_open(&m, path, err, sizeof err);
    prompts ps;
    preset_ids(&m, &ps);
    lmi_close(&m);
    qk_model("rope", "model=rope", path, &ps, NULL, 0);
    /* stories260K: no tokenizer beside it, so ids: BOS and a fixed run of the vocabulary */
    const char *src = getenv("PELAB_SRC");
    snprintf(path, sizeof path, "%s/../shared/realmodels/stories260K/stories260K.bin",
             src ? src : ".");
    static char ids_opt[4096];
    prompts one = {.n = 1, .len = {96}};
    size_t u = (size_t)snprintf(ids_opt, sizeof ids_opt, "ids=");
    unsigned x = 12345;
    for (int t = 0; t < 96; t++) {
        x = x * 1103515245u + 12345u;
        one.ids[0][t] = t == 0 ? 1 : (int)(3 + (x >> 16) % 509);
        u += (size_t)snprintf(ids_opt + u, sizeof ids_opt - u, "%s%d", t ? "," : "", one.ids[0][t]);
    }
    char model_opt[1100];
    snprintf(model_opt, sizeof model_opt, "model=%s", path);
    qk_model("stories260K", model_opt, path, &one, ids_opt, 1);
    /* the same weights as a Hugging Face folder (rotate-half pairing, the q and k weights
     * permuted by the conversion): its pairs are the .bin's (interleaved) pairs, so every mean
     * pair norm agrees to float rounding */
    {
        char hf[1100];
        snprintf(hf, sizeof hf, "model=%s/../shared/realmodels/stories260K-hf-derived",
                 src ? src : ".");
        const char *ob[] = {model_opt, ids_opt, NULL}, *oh[] = {hf, ids_opt, NULL};
        app_data db = {0}, dh = {0};
        int rb = view_data("usage", ob, &db, err, sizeof err);
        int rh = view_data("usage", oh, &dh, err, sizeof err);
        double w = 0;
        int same = rb == 0 && rh == 0 && db.shape[0] == dh.shape[0] && db.shape[1] == dh.shape[1] &&
                   db.shape[2] == dh.shape[2];
        for (size_t i = 0; same && i < db.shape[0] * db.shape[1] * db.shape[2]; i++)
            w = fmax(w, fabs(dh.data[i] - db.data[i]) / db.data[i]);
        TAP_OK(same && w < 1e-5,
               "stories260K as a Hugging Face folder (half pairing): the .bin's pair norms (rel "
               "%.2g) (%s)",
               w, err);
        app_data_free(&db), app_data_free(&dh);
    }
    /* stories260K against itself: 0 at every layer */
    char ref[1100], ag[1100];
    snprintf(ref, sizeof ref, "reference=%s", path);
    snprintf(ag, sizeof ag, "against=%s", path);
    const char *o[] = {ref, ag, ids_opt, NULL};
    app_data d = {0};
    int rc = view_data("model-distance", o, &d, err, sizeof err);
    double mx = 0;
    for (size_t i = 0; rc == 0 && i < d.shape[0]; i++) mx = fmax(mx, fabs(d.data[i]));
    TAP_OK(rc == 0 && d.shape[0] == 5 && mx == 0,
           "stories260K against itself: 0 at its 5 layers "
           "(%s)",
           err);
    app_data_free(&d);
    /* stories260K against the shipped rope model on the same 64 ids (both vocabularies hold
     * them; the rope model's context): its rows made here from q and k, rope's the tiny model's
     * own step attention, the JSD and the min over head pairs here; layers past rope's 3 NaN */
    {
        enum { N2 = 64 };
        int ids2[N2];
        static char ids2_opt[1024];
        size_t k2 = (size_t)snprintf(ids2_opt, sizeof ids2_opt, "ids=");
        for (int t = 0; t < N2; t++) {
            x = x * 1103515245u + 12345u;
            ids2[t] = t == 0 ? 1 : (int)(3 + (x >> 16) % 290);
            k2 += (size_t)snprintf(ids2_opt + k2, sizeof ids2_opt - k2, "%s%d", t ? "," : "",
                                   ids2[t]);
        }
        lmi_model sm = {0};
        lmi_session ss = {0};
        int ok = lmi_open(&sm, path, err, sizeof err) == 0 &&
                 lmi_session_init(&ss, &sm, N2, err, sizeof err) == 0;
        for (int t = 0; ok && t < N2; t++) ok = lmi_step(&ss, ids2[t], NULL, err, sizeof err) == 0;
        int L1 = sm.info.layers, H1 = sm.info.heads, hd = sm.info.head_dim, L2 = 0, H2 = 0;
        float *qs = malloc(sizeof *qs * (size_t)L1 * H1 * N2 * hd);
        float *ks = malloc(sizeof *ks * (size_t)L1 * H1 * N2 * hd);
        double w = 0;
        double *r1 = ok ? qk_rows(&ss, N2, qs, ks, &w) : NULL;
        float *r2 = step_rows("rope", ids2, N2, &L2, &H2);
        float *f1 = malloc(sizeof *f1 * (size_t)N2 * N2);
        char refm[1100];
        snprintf(refm, sizeof refm, "reference=%s", path);
        const char *om[] = {refm, "against=rope", ids2_opt, NULL};
        int rc2 = view_data("model-distance", om, &d, err, sizeof err);
        int Lc = L1 < L2 ? L1 : L2;
        TAP_OK(r1 && r2 && rc2 == 0 && d.ndim == 2 && (int)d.shape[0] == (L1 > L2 ? L1 : L2) &&
                   d.shape[1] == 1,
               "model-distance stories260K against rope: (layers %d, 1 model) (%s)",
               L1 > L2 ? L1 : L2, err);
        double worst = 0;
        int nan_past = 1;
        for (int l = 0; r1 && r2 && rc2 == 0 && l < Lc; l++) {
            double best = INFINITY;
            for (int h1 = 0; h1 < H1; h1++) {
                for (int i = 0; i < N2 * N2; i++)
                    f1[i] = (float)r1[((size_t)l * H1 + h1) * N2 * N2 + (size_t)i];
                for (int h2 = 0; h2 < H2; h2++) {
                    double sum = 0;
                    for (int t = 0; t < N2; t++)
                        sum += jsd(f1 + (size_t)t * N2, r2 + (((size_t)l * H2 + h2) * N2 + t) * N2,
                                   t + 1);
                    best = fmin(best, sum / N2);
                }
            }
            worst = fmax(worst, fabs(d.data[l] - best));
            tap_diag("stories260K~rope layer %d: %.4f", l, d.data[l]);
        }
        for (int l = Lc; rc2 == 0 && l < (int)d.shape[0]; l++) nan_past &= isnan(d.data[l]);
        TAP_OK(r1 && r2 && rc2 == 0 && worst < 1e-6 && nan_past,
               "model-distance stories260K against rope equals the min over head pairs of the "
               "JSD here at layers 0..%d (max %.2g), NaN past them",
               Lc - 1, worst);
        app_data_free(&d);
        free(r1), free(r2), free(f1), free(qs), free(ks);
        lmi_session_free(&ss);
        lmi_close(&sm);
    }
    /* refusals: a model without RoPE, a tokenizer that is missing */
    const char *nr[] = {"model=alibi", NULL};
    rc = view_data("usage", nr, &d, err, sizeof err);
    TAP_OK(rc != 0 && strstr(err, "--model alibi") && strstr(err, "no RoPE"),
           "usage refuses alibi: %s", err);
    const char *nt[] = {model_opt, NULL};
    rc = view_data("distance", nt, &d, err, sizeof err);
    TAP_OK(rc != 0 && strstr(err, "--ids"), "stories260K without a tokenizer points to --ids: %s",
           err);
    return tap_done();
}
