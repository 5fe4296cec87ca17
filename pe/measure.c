/* measure.c: sinks, attention by distance, Jensen-Shannon divergence, rotary pair norms, massive
 * dimensions and principal components (definitions and papers in measure.h). */
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pe_internal.h"

double pe_sink_alpha(const float *a, size_t ld, size_t t_len)
{
    if (t_len == 0) return 0.0;
    double s = 0.0;
    for (size_t t = 0; t < t_len; t++) s += (double)a[t * ld];
    return s / (double)t_len;
}

double pe_sink_share(const double *alpha, size_t n, double eps)
{
    if (n == 0) return 0.0;
    size_t above = 0;
    for (size_t i = 0; i < n; i++) above += alpha[i] > eps;
    return (double)above / (double)n;
}

void pe_attn_distance_add_row(const float *row, size_t t, double *dist_sum, double *dist_cnt,
                              double *recv_sum, double *recv_cnt)
{
    for (size_t j = 0; j <= t; j++) {
        double w = (double)row[j];
        if (dist_sum) dist_sum[t - j] += w;
        if (dist_cnt) dist_cnt[t - j] += 1.0;
        if (recv_sum) recv_sum[j] += w;
        if (recv_cnt) recv_cnt[j] += 1.0;
    }
}

void pe_attn_distance_add(const float *a, size_t ld, size_t t_len, double *dist_sum,
                          double *dist_cnt, double *recv_sum, double *recv_cnt)
{
    for (size_t t = 0; t < t_len; t++)
        pe_attn_distance_add_row(a + t * ld, t, dist_sum, dist_cnt, recv_sum, recv_cnt);
}

/* p ln(p / m) with 0 log 0 = 0. */
static double kl_term(double p, double m)
{
    return p > 0.0 && m > 0.0 ? p * log(p / m) : 0.0;
}

double pe_jsd(const float *p, const float *q, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double a = p[i] > 0.0f ? (double)p[i] : 0.0, b = q[i] > 0.0f ? (double)q[i] : 0.0;
        double m = 0.5 * (a + b);
        s += 0.5 * kl_term(a, m) + 0.5 * kl_term(b, m);
    }
    /* rounding can leave a tiny negative or a value a hair over ln 2 */
    const double ln2 = 0.69314718055994530942;
    return s < 0.0 ? 0.0 : s > ln2 ? ln2 : s;
}

double pe_jsd_rows(const float *a1, size_t ld1, const float *a2, size_t ld2, size_t t_len)
{
    if (t_len == 0) return 0.0;
    double s = 0.0;
    for (size_t t = 0; t < t_len; t++) s += pe_jsd(a1 + t * ld1, a2 + t * ld2, t + 1);
    return s / (double)t_len;
}

void pe_pair_norms(const float *x, int rot_dim, pe_pairing pairing, double *out)
{
    int half = rot_dim / 2;
    for (int k = 0; k < half; k++) {
        int i0 = pairing == PE_PAIRING_HALF ? k : 2 * k;
        int i1 = pairing == PE_PAIRING_HALF ? k + half : 2 * k + 1;
        out[k] = hypot((double)x[i0], (double)x[i1]);
    }
}

int pe_massive_dims(const float *x, size_t ld, size_t t_len, int head_dim, double lambda, double *m,
                    unsigned char *massive)
{
    double mean = 0.0;
    for (int d = 0; d < head_dim; d++) {
        double s = 0.0;
        for (size_t t = 0; t < t_len; t++) {
            double v = (double)x[t * ld + (size_t)d];
            s += v * v;
        }
        m[d] = sqrt(s);
        mean += m[d];
    }
    mean /= head_dim > 0 ? head_dim : 1;
    int n = 0;
    for (int d = 0; d < head_dim; d++) {
        massive[d] = m[d] > lambda * mean;
        n += massive[d];
    }
    return n;
}

/* Orthonormalise the k columns of v (cols x k, column c at v[i * k + c]) by modified
 * Gram-Schmidt; a column that vanishes is replaced by a unit vector orthogonal to the others. */
static void orthonormalise(double *v, size_t cols, int k)
{
    for (int c = 0; c < k; c++) {
        for (int pass = 0; pass < 2; pass++) /* twice is enough (Kahan) */
            for (int b = 0; b < c; b++) {
                double d = 0.0;
                for (size_t i = 0; i < cols; i++) d += v[i * k + c] * v[i * k + b];
                for (size_t i = 0; i < cols; i++) v[i * k + c] -= d * v[i * k + b];
            }
        double n = 0.0;
        for (size_t i = 0; i < cols; i++) n += v[i * k + c] * v[i * k + c];
        n = sqrt(n);
        if (n < 1e-300) { /* restart this column on a basis vector and orthogonalise again */
            for (size_t i = 0; i < cols; i++) v[i * k + c] = i == (size_t)c % cols;
            c--;
            continue;
        }
        for (size_t i = 0; i < cols; i++) v[i * k + c] /= n;
    }
}

/* Eigen-decomposition of the small symmetric k x k matrix a by cyclic Jacobi: a's diagonal
 * becomes the eigenvalues, w (k x k, row-major, column c = eigenvector c) the vectors. */
static void jacobi_small(double *a, double *w, int k)
{
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) w[i * k + j] = i == j;
    for (int sweep = 0; sweep < 64; sweep++) {
        double off = 0.0;
        for (int i = 0; i < k; i++)
            for (int j = i + 1; j < k; j++) off += a[i * k + j] * a[i * k + j];
        if (off < 1e-30) break;
        for (int p = 0; p < k; p++)
            for (int q = p + 1; q < k; q++) {
                double apq = a[p * k + q];
                if (fabs(apq) < 1e-300) continue;
                double theta = (a[q * k + q] - a[p * k + p]) / (2.0 * apq);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int r = 0; r < k; r++) { /* A <- A J */
                    double arp = a[r * k + p], arq = a[r * k + q];
                    a[r * k + p] = c * arp - s * arq;
                    a[r * k + q] = s * arp + c * arq;
                }
                for (int r = 0; r < k; r++) { /* A <- J^T A */
                    double apr = a[p * k + r], aqr = a[q * k + r];
                    a[p * k + r] = c * apr - s * aqr;
                    a[q * k + r] = s * apr + c * aqr;
                }
                for (int r = 0; r < k; r++) {
                    double wrp = w[r * k + p], wrq = w[r * k + q];
                    w[r * k + p] = c * wrp - s * wrq;
                    w[r * k + q] = s * wrp + c * wrq;
                }
            }
    }
}

#define PCA_MAX_K 16

int pe_pca(const pe_matrix *table, size_t rows, int k, double *scores, double *var, double *share,
           char *err, size_t errlen)
{
    size_t cols = table->cols;
    if (rows > table->rows) rows = table->rows;
    if (k < 1 || k > PCA_MAX_K || (size_t)k > cols || rows < 2) {
        return pe_fail(err, errlen, PE_EINVAL,
                       "principal components: %d components of a %zu x %zu table: need 1..%d "
                       "components, at most the columns, and at least 2 rows",
                       k, rows, cols, PCA_MAX_K);
    }
    /* The eigen-solver works on k + a few extra columns: the Ritz values of a slightly larger
     * subspace converge faster and the k-th one is not held back by the (k+1)-th. */
    int kk = k + 4 < (int)cols ? k + 4 : (int)cols;
    size_t bytes = (cols * cols + 2 * cols * (size_t)kk + cols) * sizeof(double);
    int rc = pe_mem_reserve(bytes, "principal components", err, errlen);
    if (rc) return rc;
    double *cov = calloc(cols * cols, sizeof *cov);
    double *v = malloc(cols * (size_t)kk * sizeof *v);
    double *cv = malloc(cols * (size_t)kk * sizeof *cv);
    double *mean = calloc(cols, sizeof *mean);
    if (!cov || !v || !cv || !mean) {
        free(cov), free(v), free(cv), free(mean);
        pe_mem_release(bytes);
        return pe_fail(err, errlen, PE_ENOMEM, "principal components: out of memory");
    }
    for (size_t r = 0; r < rows; r++) {
        const float *x = pe_matrix_row(table, r);
        for (size_t i = 0; i < cols; i++) mean[i] += (double)x[i];
    }
    for (size_t i = 0; i < cols; i++) mean[i] /= (double)rows;
    double total = 0.0;
    double *xc = cv; /* scratch for one centred row (cols <= cols * kk) */
    for (size_t r = 0; r < rows; r++) {
        const float *x = pe_matrix_row(table, r);
        for (size_t i = 0; i < cols; i++) xc[i] = (double)x[i] - mean[i];
        for (size_t i = 0; i < cols; i++) {
            double xi = xc[i];
            if (xi == 0.0) continue;
            double *ci = cov + i * cols;
            for (size_t j = i; j < cols; j++) ci[j] += xi * xc[j];
        }
    }
    for (size_t i = 0; i < cols; i++) {
        for (size_t j = i; j < cols; j++) {
            cov[i * cols + j] /= (double)(rows - 1);
            cov[j * cols + i] = cov[i * cols + j];
        }
        total += cov[i * cols + i];
    }
    /* a fixed, deterministic start: a hash of (i, c) in -1..1 */
    for (size_t i = 0; i < cols; i++)
        for (int c = 0; c < kk; c++) {
            uint64_t h =
                (uint64_t)(i * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(c + 1) * 0xBF58476D1CE4E5B9ull);
            h ^= h >> 31;
            h *= 0x94D049BB133111EBull;
            h ^= h >> 29;
            v[i * (size_t)kk + (size_t)c] = (double)(h >> 11) / 4503599627370496.0 - 1.0;
        }
    orthonormalise(v, cols, kk);
    double w[(PCA_MAX_K + 4) * (PCA_MAX_K + 4)];
    double prev[PCA_MAX_K + 4] = {0};
    for (int it = 0; it < 3000; it++) {
        /* cv = cov v */
        for (size_t i = 0; i < cols; i++) {
            const double *ci = cov + i * cols;
            for (int c = 0; c < kk; c++) {
                double s = 0.0;
                for (size_t j = 0; j < cols; j++) s += ci[j] * v[j * (size_t)kk + (size_t)c];
                cv[i * (size_t)kk + (size_t)c] = s;
            }
        }
        /* Rayleigh-Ritz: the projected matrix v^T cov v, its eigenvectors rotate cv */
        double am[(PCA_MAX_K + 4) * (PCA_MAX_K + 4)];
        for (int p = 0; p < kk; p++)
            for (int q = 0; q < kk; q++) {
                double s = 0.0;
                for (size_t i = 0; i < cols; i++)
                    s += v[i * (size_t)kk + (size_t)p] * cv[i * (size_t)kk + (size_t)q];
                am[p * kk + q] = s;
            }
        for (int p = 0; p < kk; p++) /* symmetrise what rounding left */
            for (int q = p + 1; q < kk; q++)
                am[p * kk + q] = am[q * kk + p] = 0.5 * (am[p * kk + q] + am[q * kk + p]);
        jacobi_small(am, w, kk);
        /* order by eigenvalue, descending */
        int order[PCA_MAX_K + 4];
        for (int c = 0; c < kk; c++) order[c] = c;
        for (int c = 1; c < kk; c++)
            for (int b = c;
                 b > 0 && am[order[b] * kk + order[b]] > am[order[b - 1] * kk + order[b - 1]];
                 b--) {
                int t = order[b];
                order[b] = order[b - 1];
                order[b - 1] = t;
            }
        double change = 0.0;
        for (int c = 0; c < kk; c++) {
            double ev = am[order[c] * kk + order[c]];
            if (c < k) change = fmax(change, fabs(ev - prev[c]) / fmax(fabs(ev), 1e-300));
            prev[c] = ev;
        }
        /* v <- cv w (ordered), then orthonormalise */
        for (size_t i = 0; i < cols; i++) {
            double row[PCA_MAX_K + 4];
            for (int c = 0; c < kk; c++) {
                double s = 0.0;
                for (int b = 0; b < kk; b++)
                    s += cv[i * (size_t)kk + (size_t)b] * w[b * kk + order[c]];
                row[c] = s;
            }
            memcpy(v + i * (size_t)kk, row, (size_t)kk * sizeof *row);
        }
        orthonormalise(v, cols, kk);
        if (it > 8 && change < 1e-13) break;
    }
    for (int c = 0; c < k; c++) {
        /* the sign: the largest-magnitude loading positive */
        size_t best = 0;
        for (size_t i = 1; i < cols; i++)
            if (fabs(v[i * (size_t)kk + (size_t)c]) > fabs(v[best * (size_t)kk + (size_t)c]))
                best = i;
        double sgn = v[best * (size_t)kk + (size_t)c] < 0 ? -1.0 : 1.0;
        double s2 = 0.0;
        for (size_t r = 0; r < rows; r++) {
            const float *x = pe_matrix_row(table, r);
            double s = 0.0;
            for (size_t i = 0; i < cols; i++)
                s += ((double)x[i] - mean[i]) * v[i * (size_t)kk + (size_t)c];
            scores[r * (size_t)k + (size_t)c] = sgn * s;
            s2 += s * s;
        }
        var[c] = s2 / (double)(rows - 1);
        if (share) share[c] = total > 0.0 ? var[c] / total : 0.0;
    }
    free(cov), free(v), free(cv), free(mean);
    pe_mem_release(bytes);
    return PE_OK;
}
