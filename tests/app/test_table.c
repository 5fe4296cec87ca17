/* test_table.c: the table view's numbers (issue 23, point 1) against a second computation.
 *
 * The view reads a model's position parameters through the model interface (lmi_pos_params).
 * Here the shipped checkpoints are read as bytes: the float32 weights are the last block of a
 * .pelab file (before its CRC-32, after their u64 count), the token embedding (vocab x dim)
 * first, then the learned table or T5's biases (pe/model/tiny/model.c's layout). Against those:
 *   - the learned table the view exports is the stored one, entry for entry;
 *   - rows past the context are their seeded init times the weight decay's product, 0.71997
 *     (assets/models/README.md), and --weights init is that init;
 *   - the row cosines, computed here;
 *   - the principal components: the covariance of the trained rows diagonalised here by Jacobi
 *     rotations (not the view's subspace iteration), its variance shares and the scores up to
 *     each component's sign, the never-trained rows projected onto the same axes;
 *   - T5: each head's bias at every distance is the stored value of the distance's bucket. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "options.h"
#include "tap.h"
#include "views.h"

/* The weights of a .pelab checkpoint: *n floats, malloc'd. */
static float *read_weights(const char *name, size_t *n)
{
    char path[512], err[256];
    if (app_attn_model_path(name, path, sizeof path, err, sizeof err) < 0) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)size);
    if (!b || fread(b, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(b);
        return NULL;
    }
    fclose(f);
    /* the count that the u64 before count floats (and the CRC) names */
    float *w = NULL;
    for (size_t cnt = 1; 4 * cnt + 12 <= (size_t)size; cnt++) {
        size_t at = (size_t)size - 4 - 4 * cnt - 8;
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--) v = v << 8 | b[at + (size_t)i];
        if (v != cnt) continue;
        w = malloc(4 * cnt);
        if (w) memcpy(w, b + at + 8, 4 * cnt); /* little-endian float32, as this machine */
        *n = cnt;
        break;
    }
    free(b);
    return w;
}

static int view_data(const char *model, const char *part, const char *weights, app_data *d,
                     app_view_ctx *c, char *err, size_t errlen)
{
    app_state st;
    app_state_default(&st);
    if (app_option_set(&st, app_option_find("view"), "table", err, errlen) < 0) return -1;
    if (app_option_set(&st, app_option_find("model"), model, err, errlen) < 0) return -1;
    if (app_option_set(&st, app_option_find("part"), part, err, errlen) < 0) return -1;
    if (app_option_set(&st, app_option_find("weights"), weights, err, errlen) < 0) return -1;
    return app_view_at((size_t)st.view)->data(c, &st, d, err, errlen);
}

static double at(const app_data *d, size_t i)
{
    return d->f32 ? d->f32[i] : d->data[i];
}

/* Eigenvalues (descending) and vectors (columns of v) of the symmetric n x n a, by cyclic
 * Jacobi rotations. a is destroyed. */
static void jacobi(double *a, int n, double *ev, double *v)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) v[i * n + j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) off += a[p * n + q] * a[p * n + q];
        if (off < 1e-30) break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p * n + q];
                if (fabs(apq) < 1e-300) continue;
                double th = (a[q * n + q] - a[p * n + p]) / (2 * apq);
                double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; k++) { /* a <- a J */
                    double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) { /* a <- J^T a */
                    double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < n; k++) {
                    double vkp = v[k * n + p], vkq = v[k * n + q];
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < n; i++) ev[i] = a[i * n + i];
    for (int i = 0; i < n; i++) /* sort descending, vectors along */
        for (int j = i + 1; j < n; j++)
            if (ev[j] > ev[i]) {
                double t = ev[i];
                ev[i] = ev[j];
                ev[j] = t;
                for (int k = 0; k < n; k++) {
                    t = v[k * n + i];
                    v[k * n + i] = v[k * n + j];
                    v[k * n + j] = t;
                }
            }
}

static void test_learned(void)
{
    size_t nw = 0;
    float *w = read_weights("learned", &nw);
    TAP_OK(w != NULL, "learned.pelab: the weights read as bytes (%zu floats)", nw);
    if (!w) return;
    char err[512] = "";
    app_view_ctx c = {0};
    app_data d = {0};
    int rc = view_data("learned", "table", "trained", &d, &c, err, sizeof err);
    TAP_OK(rc == 0 && d.ndim == 2, "table data (%s)", err);
    if (rc) return;
    size_t rows = d.shape[0], cols = d.shape[1];
    /* the embedding first: vocab x dim, then the table */
    app_state st;
    app_state_default(&st);
    lmi_model m = {0};
    char path[512];
    app_attn_model_path("learned", path, sizeof path, err, sizeof err);
    rc = lmi_open(&m, path, err, sizeof err);
    TAP_OK(rc == 0 && (size_t)m.info.dim == cols && (size_t)m.info.max_pos == rows,
           "the table is (max_pos %d, dim %d): %zu x %zu", m.info.max_pos, m.info.dim, rows, cols);
    size_t off = (size_t)m.info.vocab * (size_t)m.info.dim, bad = 0;
    int ctx = m.info.ctx;
    lmi_close(&m);
    TAP_OK(off + rows * cols <= nw, "the table lies inside the weights");
    if (off + rows * cols > nw) return;
    const float *tab = w + off;
    for (size_t i = 0; i < rows * cols; i++) bad += at(&d, i) != (double)tab[i];
    TAP_OK(bad == 0, "the exported table equals the checkpoint's, bit for bit (%zu differ)", bad);
    TAP_OK(strstr(d.what, "(position, dim)") != NULL, "the header names the axes: %s", d.what);

    /* rows past the context: their init times prod (1 - lr_t wd) = 0.71997 */
    app_data di = {0};
    rc = view_data("learned", "table", "init", &di, &c, err, sizeof err);
    TAP_OK(rc == 0 && di.shape[0] == rows, "--weights init exports the start (%s)", err);
    double rmin = 1e9, rmax = -1e9, dtrained = 0;
    for (size_t i = (size_t)ctx * cols; rc == 0 && i < rows * cols; i++)
        if (at(&di, i) != 0) {
            double r = at(&d, i) / at(&di, i);
            rmin = fmin(rmin, r), rmax = fmax(rmax, r);
        }
    for (size_t i = 0; rc == 0 && i < (size_t)ctx * cols; i++)
        dtrained = fmax(dtrained, fabs(at(&d, i) - at(&di, i)));
    TAP_OK(rmin > 0.7199 && rmax < 0.7201,
           "rows %d..%zu are their init times 0.71997 (ratios %.5f..%.5f)", ctx, rows - 1, rmin,
           rmax);
    TAP_OK(dtrained > 0.05, "the trained rows moved from their init (max change %.3f)", dtrained);
    app_data_free(&di);

    /* cosine of rows, here */
    app_data dc = {0};
    rc = view_data("learned", "cosine", "trained", &dc, &c, err, sizeof err);
    TAP_OK(rc == 0 && dc.shape[0] == rows && dc.shape[1] == rows, "cosine data (%s)", err);
    double worst = 0;
    for (size_t i = 0; rc == 0 && i < rows; i++)
        for (size_t j = 0; j < rows; j++) {
            double s = 0, a = 0, b = 0;
            for (size_t k = 0; k < cols; k++) {
                s += (double)tab[i * cols + k] * tab[j * cols + k];
                a += (double)tab[i * cols + k] * tab[i * cols + k];
                b += (double)tab[j * cols + k] * tab[j * cols + k];
            }
            worst = fmax(worst, fabs(at(&dc, i * rows + j) - s / sqrt(a * b)));
        }
    TAP_OK(rc == 0 && worst < 1e-6, "cosine similarity of every row pair (max error %.2g)", worst);
    app_data_free(&dc);

    /* PCA: the covariance of rows 0..ctx-1 by Jacobi */
    app_data dp = {0};
    rc = view_data("learned", "pca", "trained", &dp, &c, err, sizeof err);
    int k = rc == 0 ? (int)dp.shape[1] : 0;
    TAP_OK(rc == 0 && dp.shape[0] == rows && k >= 3, "pca data, %d components (%s)", k, err);
    int n = (int)cols;
    double *mean = calloc(cols, sizeof *mean), *cov = calloc(cols * cols, sizeof *cov);
    double *ev = calloc(cols, sizeof *ev), *vec = calloc(cols * cols, sizeof *vec);
    for (int i = 0; i < ctx; i++)
        for (int a = 0; a < n; a++) mean[a] += tab[(size_t)i * cols + a] / (double)ctx;
    for (int i = 0; i < ctx; i++)
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                cov[a * n + b] += (tab[(size_t)i * cols + a] - mean[a]) *
                                  (tab[(size_t)i * cols + b] - mean[b]) / (ctx - 1);
    double total = 0;
    for (int a = 0; a < n; a++) total += cov[a * n + a];
    jacobi(cov, n, ev, vec);
    double serr = 0, verr = 0;
    for (int q = 0; q < k && rc == 0; q++) {
        /* the share in the header ("variance shares 0.8142 ...") to 4 decimals */
        const char *sh = strstr(dp.what, "variance shares");
        double share = NAN;
        if (sh) {
            sh += strlen("variance shares");
            for (int j = 0; j <= q; j++) share = strtod(sh, (char **)&sh);
        }
        serr = fmax(serr, fabs(share - ev[q] / total));
        /* the scores against (x - mean) . v_q, up to the sign, every row */
        double sg = 0;
        for (size_t i = 0; i < rows; i++) {
            double s = 0;
            for (int a = 0; a < n; a++) s += (tab[i * cols + (size_t)a] - mean[a]) * vec[a * n + q];
            if (i == 0) sg = at(&dp, i * (size_t)k + (size_t)q) * s < 0 ? -1 : 1;
            verr = fmax(verr, fabs(at(&dp, i * (size_t)k + (size_t)q) - sg * s));
        }
    }
    TAP_OK(serr < 6e-5, "variance shares of the first %d components (max error %.2g)", k, serr);
    TAP_OK(verr < 1e-5, "scores of every row on them, trained and never trained (max error %.2g)",
           verr);
    TAP_OK(ev[0] / total > 0.5,
           "the first component holds most of the trained rows' variance "
           "(%.3f): position 0..%d is nearly a line",
           ev[0] / total, ctx - 1);
    free(mean), free(cov), free(ev), free(vec);
    app_data_free(&dp);
    app_data_free(&d);
    app_view_ctx_free(&c);
    free(w);
}

static void test_t5(void)
{
    size_t nw = 0;
    float *w = read_weights("t5", &nw);
    TAP_OK(w != NULL, "t5.pelab: the weights read as bytes (%zu floats)", nw);
    if (!w) return;
    char err[512] = "", path[512];
    app_attn_model_path("t5", path, sizeof path, err, sizeof err);
    lmi_model m = {0};
    int rc = lmi_open(&m, path, err, sizeof err);
    size_t off = rc == 0 ? (size_t)m.info.vocab * (size_t)m.info.dim : 0;
    int H = m.info.heads, layers = m.info.layers, ctx = m.info.ctx;
    lmi_close(&m);
    app_view_ctx c = {0};
    app_data d = {0};
    rc = rc ? rc : view_data("t5", "all", "trained", &d, &c, err, sizeof err);
    TAP_OK(rc == 0 && d.ndim == 3 && d.shape[0] == 1 && (int)d.shape[1] == H,
           "T5 data (1, %d heads, distances) (%s)", H, err);
    if (rc) {
        free(w);
        return;
    }
    /* the bucket of j - i (causal, 32 buckets, max_distance = ctx), written out here */
    const int nb = 32, maxd = ctx, R = (int)d.shape[2] - 1;
    size_t bad = 0;
    for (int h = 0; h < H; h++)
        for (int i = 0; i <= R; i++) {
            int n = R - i; /* distance i - j >= 0 for j - i = -R + i */
            int exact = nb / 2, b;
            if (n < exact)
                b = n;
            else {
                b = exact +
                    (int)(log((double)n / exact) / log((double)maxd / exact) * (nb - exact));
                if (b > nb - 1) b = nb - 1;
            }
            bad += at(&d, (size_t)h * (R + 1) + (size_t)i) != (double)w[off + (size_t)h * nb + b];
        }
    TAP_OK(bad == 0,
           "every head's bias at every distance 0..%d is the checkpoint's bucket value "
           "(%zu differ); one table for all %d layers",
           R, bad, layers);
    TAP_OK(strstr(d.what, "(layers, heads, distance)") != NULL, "the header names the axes: %s",
           d.what);
    app_data_free(&d);
    app_view_ctx_free(&c);
    free(w);
}

/* ALiBi and RoPE: the values the model uses beside the defaults */
static void test_lines(void)
{
    char err[512] = "";
    app_view_ctx c = {0};
    app_data d = {0};
    int rc = view_data("alibi", "all", "trained", &d, &c, err, sizeof err);
    TAP_OK(rc == 0 && d.ndim == 3 && d.shape[2] == 2, "alibi data (%s)", err);
    double worst = 0;
    int H = rc == 0 ? (int)d.shape[1] : 0;
    for (int h = 0; h < H; h++) /* the paper's slopes 2^(-8 (h+1) / H) for a power of two */
        worst = fmax(worst, fabs(at(&d, (size_t)h * 2 + 1) - pow(2, -8.0 * (h + 1) / H)) +
                                fabs(at(&d, (size_t)h * 2) - at(&d, (size_t)h * 2 + 1)));
    TAP_OK(rc == 0 && worst < 1e-12, "alibi.pelab keeps the paper's slopes for %d heads (%.2g)", H,
           worst);
    app_data_free(&d);
    rc = view_data("rope", "all", "trained", &d, &c, err, sizeof err);
    TAP_OK(rc == 0 && d.ndim == 3, "rope data (%s)", err);
    int np = rc == 0 ? (int)d.shape[1] : 0;
    worst = 0;
    for (int k = 0; k < np; k++)
        worst = fmax(worst, fabs(at(&d, (size_t)k * 2) - pow(10000, -2.0 * k / (2 * np))));
    TAP_OK(rc == 0 && np == 8 && worst < 1e-15,
           "rope.pelab: theta_k = 10000^(-2k/16), %d pairs (%.2g)", np, worst);
    app_data_free(&d);
    rc = view_data("nope", "all", "trained", &d, &c, err, sizeof err);
    TAP_OK(rc < 0 && strstr(err, "--model nope") && strstr(err, "no position parameters"),
           "nope: refused with one line naming the option: %s", err);
    app_view_ctx_free(&c);
}

/* Where users met the init (issue 23, point 2): heatmap --pe learned, decay's learned curve and
 * the t5 view now show the shipped models' trained values; --weights init the seeded start. */
static int state_data(const char *const *opts, app_data *d, app_view_ctx *c, char *err,
                      size_t errlen)
{
    app_state st;
    app_state_default(&st);
    for (int i = 0; opts[i]; i += 2)
        if (app_option_set(&st, app_option_find(opts[i]), opts[i + 1], err, errlen) < 0) return -1;
    return app_view_at((size_t)st.view)->data(c, &st, d, err, errlen);
}

static void test_trained_views(void)
{
    size_t nw = 0, nt = 0;
    float *w = read_weights("learned", &nw), *w5 = read_weights("t5", &nt);
    char err[512] = "";
    /* the vocabulary's rows come first: 299 x 64 in both shipped checkpoints */
    app_view_ctx c = {0};
    app_data d = {0};
    const char *hm[] = {"view", "heatmap", "pe", "learned", "len", "300", NULL};
    int rc = state_data(hm, &d, &c, err, sizeof err);
    size_t off = 299 * 64, bad = 0, nan_rows = 0;
    TAP_OK(rc == 0 && d.shape[0] == 300 && d.shape[1] == 64 && w,
           "heatmap --pe learned: (300, 64), the model's width (%s)", err);
    for (size_t i = 0; rc == 0 && w && i < 300; i++) {
        int all_nan = 1;
        for (size_t j = 0; j < 64; j++) {
            double v = at(&d, i * 64 + j);
            if (i < 256)
                bad += v != (double)w[off + i * 64 + j];
            else
                all_nan &= isnan(v);
        }
        nan_rows += i >= 256 && all_nan;
    }
    TAP_OK(rc == 0 && bad == 0 && nan_rows == 44,
           "its rows 0..255 are the checkpoint's table (%zu differ), rows 256..299 have no vector "
           "(%zu NaN rows)",
           bad, nan_rows);
    TAP_OK(strstr(d.what, "trained") != NULL, "the export says trained: %s", d.what);
    app_data_free(&d);
    app_view_ctx_free(&c);

    /* decay's learned curve: row p0 against every row of the trained table */
    app_view_ctx c2 = {0};
    const char *dc[] = {"view", "decay", "curves", "learned", "pos", "20", NULL};
    rc = state_data(dc, &d, &c2, err, sizeof err);
    double worst = 0;
    /* (1 + curves, L): the positions, then the curve */
    size_t n = rc == 0 && d.ndim == 2 && d.shape[0] == 2 ? d.shape[1] : 0;
    for (size_t i = 0; w && i < n && i < 256; i++) {
        double s = 0, s0 = 0;
        for (size_t k = 0; k < 64; k++) {
            s += (double)w[off + 20 * 64 + k] * w[off + i * 64 + k];
            s0 += (double)w[off + 20 * 64 + k] * w[off + 20 * 64 + k];
        }
        worst = fmax(worst, fabs(at(&d, n + i) - s / s0));
    }
    TAP_OK(rc == 0 && n == 256 && worst < 1e-6,
           "decay's learned curve at p0 20 is PE(20).PE(p)/|PE(20)|^2 of the trained table "
           "(max error %.2g; %s)",
           worst, err);
    app_data_free(&d);
    app_view_ctx_free(&c2);

    /* the t5 view: head 2's bias at each distance is the trained bucket value */
    app_view_ctx c3 = {0};
    const char *t5[] = {"view", "t5", "head", "2", NULL};
    rc = state_data(t5, &d, &c3, err, sizeof err);
    bad = 0;
    size_t rows = rc == 0 ? d.shape[0] : 0;
    for (size_t i = 0; w5 && i < rows; i++) {
        double rel = at(&d, i * 3), bk = at(&d, i * 3 + 1), v = at(&d, i * 3 + 2);
        if (rel > 0) {
            bad += !(isinf(v) && v < 0); /* causal: masked */
            continue;
        }
        bad += v != (double)w5[off + 2 * 32 + (size_t)bk];
    }
    TAP_OK(rc == 0 && rows > 0 && bad == 0,
           "t5 view, head 2: %zu distances, each bias the checkpoint's value of its bucket (%zu "
           "differ; %s)",
           rows, bad, err);
    TAP_OK(rc == 0 && strstr(d.what, "trained"), "the export says trained: %s", d.what);
    app_data_free(&d);
    const char *t5i[] = {"view", "t5", "head", "2", "weights", "init", NULL};
    rc = state_data(t5i, &d, &c3, err, sizeof err);
    TAP_OK(rc == 0 && strstr(d.what, "seeded init"), "--weights init: the seeded values (%s)",
           rc ? err : d.what);
    app_data_free(&d);
    app_view_ctx_free(&c3);
    free(w);
    free(w5);
}

/* A real checkpoint through the same op (the hf architecture): its rope_theta and head width
 * read from config.json here. ../shared/realmodels missing is a failure, not a skip. */
static void test_real(void)
{
    const char *src = getenv("PELAB_SRC");
    char dir[1024], cfg[1100], err[512] = "";
    snprintf(dir, sizeof dir, "%s/../shared/realmodels/stories260K-hf-derived", src ? src : ".");
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    FILE *f = fopen(cfg, "rb");
    char text[8192] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = '\0';
    const char *th = strstr(text, "\"rope_theta\""), *hs = strstr(text, "\"hidden_size\"");
    const char *nh = strstr(text, "\"num_attention_heads\"");
    TAP_OK(th && hs && nh, "%s: rope_theta, hidden_size and num_attention_heads", cfg);
    if (!th || !hs || !nh) return;
    double base = strtod(strchr(th, ':') + 1, NULL);
    int hd = atoi(strchr(hs, ':') + 1) / atoi(strchr(nh, ':') + 1);
    app_view_ctx c = {0};
    app_data d = {0};
    int rc = view_data(dir, "all", "trained", &d, &c, err, sizeof err);
    double worst = 0;
    int np = rc == 0 ? (int)d.shape[1] : 0;
    for (int k = 0; k < np; k++)
        worst = fmax(worst, fabs(at(&d, (size_t)k * 2) - pow(base, -2.0 * k / hd)));
    TAP_OK(rc == 0 && np == hd / 2 && worst < 1e-12,
           "stories260K (hf): %d rotary pairs of base %g (max error %.2g; %s)", np, base, worst,
           err);
    app_data_free(&d);
    app_view_ctx_free(&c);
}

int main(void)
{
    test_real();
    test_learned();
    test_trained_views();
    test_t5();
    test_lines();
    return tap_done();
}
