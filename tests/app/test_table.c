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
 *   - T5: each head's bias at every distance is the stored value of the distance's bucket;
 *   - a Hugging Face GPT-2 (a small random folder written here): `pelab export table --model DIR`
 *     through the real binary (argv[1]), its CSV and NPY equal to the wpe read back from the
 *     safetensors bytes, its cosines and PCA to the computations here;
 *   - similarity --pe learned: the trained table's dot products and cosines, NaN past its rows. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "attn.h"
#include "options.h"
#include "pe/realmodel/writer.h"
#include "runproc.h"
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

/* A view's numbers as doubles (malloc'd). */
static double *as_double(const app_data *d)
{
    size_t n = d->shape[0] * (d->ndim > 1 ? d->shape[1] : 1) * (d->ndim > 2 ? d->shape[2] : 1);
    double *v = malloc(sizeof *v * (n ? n : 1));
    for (size_t i = 0; v && i < n; i++) v[i] = at(d, i);
    return v;
}

/* got (rows, rows) against the cosine of every pair of rows of tab, here. */
static void check_cosine(const char *what, const float *tab, size_t rows, size_t cols,
                         const double *got)
{
    double worst = got ? 0 : INFINITY;
    for (size_t i = 0; got && i < rows; i++)
        for (size_t j = 0; j < rows; j++) {
            double s = 0, a = 0, b = 0;
            for (size_t k = 0; k < cols; k++) {
                s += (double)tab[i * cols + k] * tab[j * cols + k];
                a += (double)tab[i * cols + k] * tab[i * cols + k];
                b += (double)tab[j * cols + k] * tab[j * cols + k];
            }
            worst = fmax(worst, fabs(got[i * rows + j] - s / sqrt(a * b)));
        }
    TAP_OK(worst < 1e-6, "%s: cosine similarity of every row pair (max error %.2g)", what, worst);
}

/* got (rows, k) PCA scores and the header's "variance shares" against the covariance of rows
 * 0..reached-1 of tab diagonalised here by Jacobi; every row projected (trained or not). Returns
 * the first component's share. */
static double check_pca(const char *what, const float *tab, size_t rows, size_t cols, int reached,
                        const double *got, int k, const char *header)
{
    int n = (int)cols;
    double *mean = calloc(cols, sizeof *mean), *cov = calloc(cols * cols, sizeof *cov);
    double *ev = calloc(cols, sizeof *ev), *vec = calloc(cols * cols, sizeof *vec);
    for (int i = 0; i < reached; i++)
        for (int a = 0; a < n; a++) mean[a] += tab[(size_t)i * cols + a] / (double)reached;
    for (int i = 0; i < reached; i++)
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                cov[a * n + b] += (tab[(size_t)i * cols + a] - mean[a]) *
                                  (tab[(size_t)i * cols + b] - mean[b]) / (reached - 1);
    double total = 0;
    for (int a = 0; a < n; a++) total += cov[a * n + a];
    jacobi(cov, n, ev, vec);
    double serr = got ? 0 : INFINITY, verr = got ? 0 : INFINITY;
    for (int q = 0; q < k && got; q++) {
        /* the share in the header ("variance shares 0.8142 ...") to 4 decimals */
        const char *sh = strstr(header, "variance shares");
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
            if (i == 0) sg = got[i * (size_t)k + (size_t)q] * s < 0 ? -1 : 1;
            verr = fmax(verr, fabs(got[i * (size_t)k + (size_t)q] - sg * s));
        }
    }
    TAP_OK(serr < 6e-5, "%s: variance shares of the first %d components (max error %.2g)", what, k,
           serr);
    TAP_OK(verr < 1e-5, "%s: scores of every row on them (max error %.2g)", what, verr);
    double first = total > 0 ? ev[0] / total : 0;
    free(mean), free(cov), free(ev), free(vec);
    return first;
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

    /* cosine of rows and the PCA, here */
    app_data dc = {0}, dp = {0};
    rc = view_data("learned", "cosine", "trained", &dc, &c, err, sizeof err);
    TAP_OK(rc == 0 && dc.shape[0] == rows && dc.shape[1] == rows, "cosine data (%s)", err);
    double *cosv = rc == 0 ? as_double(&dc) : NULL;
    check_cosine("learned", tab, rows, cols, cosv);
    rc = view_data("learned", "pca", "trained", &dp, &c, err, sizeof err);
    int k = rc == 0 ? (int)dp.shape[1] : 0;
    TAP_OK(rc == 0 && dp.shape[0] == rows && k >= 3, "pca data, %d components (%s)", k, err);
    double *pcav = rc == 0 ? as_double(&dp) : NULL;
    double first = check_pca("learned", tab, rows, cols, ctx, pcav, k, rc == 0 ? dp.what : "");
    TAP_OK(first > 0.5,
           "the first component holds most of the trained rows' variance "
           "(%.3f): position 0..%d is nearly a line",
           first, ctx - 1);
    free(cosv), free(pcav);
    app_data_free(&dc), app_data_free(&dp);
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

/* ---- a GPT-2's wpe through `pelab export table` ---------------------------------------- */

enum { G_D = 32, G_H = 4, G_L = 2, G_V = 61, G_P = 24 };

/* The tensor name of a safetensors file read back: (count) float32 values, malloc'd. */
static float *st_tensor(const char *path, const char *name, size_t count)
{
    size_t len = 0;
    char *b = test_slurp(path, &len);
    float *out = NULL;
    if (b && len > 8) {
        uint64_t hl = 0;
        for (int i = 7; i >= 0; i--) hl = hl << 8 | (unsigned char)b[i];
        char key[80];
        snprintf(key, sizeof key, "\"%s\"", name);
        char *at = hl < len ? strstr(b + 8, key) : NULL;
        char *off = at ? strstr(at, "\"data_offsets\":[") : NULL;
        if (off) {
            size_t o = strtoull(off + strlen("\"data_offsets\":["), NULL, 10);
            if (8 + hl + o + 4 * count <= len && (out = malloc(4 * count)))
                memcpy(out, b + 8 + hl + o, 4 * count); /* little-endian float32, as here */
        }
    }
    free(b);
    return out;
}

/* An .npy (float32 or float64, 2-D) as doubles; shape into r, c. */
static double *read_npy(const char *path, size_t *r, size_t *c)
{
    size_t len = 0;
    char *b = test_slurp(path, &len);
    double *v = NULL;
    if (b && len > 10 && memcmp(b, "\x93NUMPY", 6) == 0) {
        size_t hl = (unsigned char)b[8] | (size_t)(unsigned char)b[9] << 8;
        int f8 = strstr(b + 10, "'<f8'") != NULL;
        char *sh = strstr(b + 10, "'shape': (");
        if (sh && sscanf(sh, "'shape': (%zu, %zu)", r, c) == 2) {
            size_t n = *r * *c, es = f8 ? 8 : 4;
            if (10 + hl + n * es <= len && (v = malloc(sizeof *v * (n ? n : 1))))
                for (size_t i = 0; i < n; i++) {
                    const char *p = b + 10 + hl + i * es;
                    if (f8) {
                        memcpy(&v[i], p, 8);
                    } else {
                        float f;
                        memcpy(&f, p, 4);
                        v[i] = f;
                    }
                }
        }
    }
    free(b);
    return v;
}

/* A CSV export's numbers (the lines not starting with '#') as doubles, *n of them; its third
 * comment line (what the axes are) into what. */
static double *read_csv(const char *path, size_t *n, char *what, size_t wn)
{
    size_t len = 0;
    char *b = test_slurp(path, &len);
    double *v = b ? malloc(sizeof *v * (len / 2 + 1)) : NULL;
    *n = 0;
    what[0] = '\0';
    int comment = 0;
    for (char *line = b, *next; v && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (line[0] == '#') {
            if (++comment == 3) snprintf(what, wn, "%s", line);
            continue;
        }
        for (char *p = line; *p;) {
            char *end;
            double x = strtod(p, &end);
            if (end == p) break;
            v[(*n)++] = x;
            p = *end == ',' ? end + 1 : end;
        }
    }
    free(b);
    return v;
}

static void test_gpt2(const char *pelab)
{
    const char *tmp = getenv("TMPDIR");
    char dir[1024], model[1100], path[1200], errpath[1200], err[2048] = "";
    snprintf(dir, sizeof dir, "%s/pelab-table-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!TAP_OK(mkdtemp(dir) != NULL, "a temporary folder %s", dir)) return;
    snprintf(model, sizeof model, "%s/gpt2", dir);
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", dir);
    TAP_OK(wr_gpt2(model, "F32", G_D, G_H, G_L, G_V, G_P) == 0,
           "wrote a random GPT-2 folder (d %d, %d positions)", G_D, G_P);
    snprintf(path, sizeof path, "%s/model.safetensors", model);
    float *wpe = st_tensor(path, "wpe.weight", (size_t)G_P * G_D);
    TAP_OK(wpe != NULL, "its wpe.weight read back from the safetensors bytes");
    if (!wpe) return;
    static const char *const files[] = {"t.csv", "t.npy", "c.npy", "p.csv", "p.npy"};
    static const char *const parts[] = {"table", "table", "cosine", "pca", "pca"};
    char out[5][1200];
    int lines = 0;
    for (int i = 0; i < 5; i++) {
        snprintf(out[i], sizeof out[i], "%s/%s", dir, files[i]);
        const char *args[] = {"export", "table", "--model", model, "--part",
                              parts[i], "-o",    out[i],    NULL};
        int st = test_run(pelab, args, NULL, errpath, err, sizeof err, &lines);
        TAP_OK(st == 0, "pelab export table --model DIR --part %s -o %s (%d: %s)", parts[i],
               files[i], st, err);
    }
    /* the table: CSV and NPY, entry for entry */
    size_t n = 0, r = 0, c = 0;
    char what[1024];
    double *tc = read_csv(out[0], &n, what, sizeof what);
    double *tn = read_npy(out[1], &r, &c);
    size_t bad = 0;
    for (size_t i = 0; tc && tn && i < (size_t)G_P * G_D; i++)
        bad += tn[i] != (double)wpe[i] || (float)tc[i] != wpe[i];
    TAP_OK(tc && tn && n == (size_t)G_P * G_D && r == G_P && c == G_D && bad == 0,
           "CSV and NPY: the (%d, %d) wpe of the checkpoint (%zu entries differ)", G_P, G_D, bad);
    TAP_OK(strstr(what, "(position, dim)") && strstr(what, "trained") &&
               !strstr(what, "never trained"),
           "the CSV header names the axes, a trained table every row of which training reached: "
           "%s",
           what);
    /* the cosines (NPY) and the PCA (NPY scores, the CSV header's shares) against here */
    double *cn = read_npy(out[2], &r, &c);
    check_cosine("gpt2", wpe, G_P, G_D, cn && r == G_P && c == G_P ? cn : NULL);
    size_t np = 0;
    double *pc = read_csv(out[3], &np, what, sizeof what);
    double *pn = read_npy(out[4], &r, &c);
    int k = pn && r == G_P ? (int)c : 0;
    TAP_OK(k >= 3 && pc && np == (size_t)G_P * k, "pca: (%d positions, %d components)", G_P, k);
    double worst = 0;
    for (size_t i = 0; k && i < np; i++) worst = fmax(worst, fabs(pc[i] - pn[i]));
    TAP_OK(k && worst < 1e-8, "pca: the CSV and the NPY agree (%.2g)", worst);
    check_pca("gpt2", wpe, G_P, G_D, G_P, k ? pn : NULL, k, what);
    free(tc), free(tn), free(cn), free(pc), free(pn), free(wpe);
    for (int i = 0; i < 5; i++) unlink(out[i]);
    snprintf(path, sizeof path, "%s/config.json", model);
    unlink(path);
    snprintf(path, sizeof path, "%s/model.safetensors", model);
    unlink(path);
    rmdir(model);
    rmdir(dir);
}

/* similarity --pe learned: the trained table's rows, (len, len), NaN past them */
static void test_similarity(void)
{
    size_t nw = 0;
    float *w = read_weights("learned", &nw);
    size_t off = 299 * 64; /* the vocabulary's rows first */
    for (int cosine = 0; cosine < 2; cosine++) {
        char err[512] = "";
        app_view_ctx c = {0};
        app_data d = {0};
        const char *o[] = {"view", "similarity", "pe",         "learned",
                           "len",  "300",        "similarity", cosine ? "cosine" : "dot",
                           NULL};
        int rc = state_data(o, &d, &c, err, sizeof err);
        TAP_OK(rc == 0 && d.ndim == 2 && d.shape[0] == 300 && d.shape[1] == 300 && w,
               "similarity --pe learned --len 300 (%s): (300, 300) (%s)", cosine ? "cosine" : "dot",
               err);
        double worst = 0;
        size_t nan_bad = 0;
        for (size_t i = 0; rc == 0 && w && i < 300; i++)
            for (size_t j = 0; j < 300; j++) {
                double v = at(&d, i * 300 + j);
                if (i >= 256 || j >= 256) {
                    nan_bad += !isnan(v);
                    continue;
                }
                const float *a = w + off + i * 64, *b = w + off + j * 64;
                double s = 0, na = 0, nb = 0;
                for (int k = 0; k < 64; k++)
                    s += (double)a[k] * b[k], na += (double)a[k] * a[k], nb += (double)b[k] * b[k];
                double want = cosine ? s / sqrt(na * nb) : s;
                worst = fmax(worst, fabs(v - want));
            }
        TAP_OK(rc == 0 && worst < 2e-6 && nan_bad == 0,
               "its %s of the checkpoint's rows 0..255 (max error %.2g), NaN past them (%zu not)",
               cosine ? "cosines" : "dot products", worst, nan_bad);
        TAP_OK(rc == 0 && strstr(d.what, "trained"), "the export says trained: %s", d.what);
        app_data_free(&d);
        /* the figure's sample too: build at a size where every position is a cell */
        app_view_ctx_free(&c);
    }
    /* --weights init: the seeded table again, at the --dim asked for */
    char err[512] = "";
    app_view_ctx c = {0};
    app_data d = {0};
    const char *o[] = {"view", "similarity", "pe",      "learned", "len", "32",
                       "dim",  "16",         "weights", "init",    NULL};
    int rc = state_data(o, &d, &c, err, sizeof err);
    TAP_OK(rc == 0 && d.shape[0] == 32 && !strstr(d.what, "trained"),
           "--weights init: the seeded (32, 32) similarity (%s)", rc ? err : d.what);
    app_data_free(&d);
    app_view_ctx_free(&c);
    free(w);
}

int main(int argc, char **argv)
{
    test_real();
    test_learned();
    test_trained_views();
    test_similarity();
    test_t5();
    test_lines();
    if (TAP_OK(argc > 1, "the pelab binary is argv[1]")) test_gpt2(argv[1]);
    return tap_done();
}
