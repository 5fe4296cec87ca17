/* test_lm_dynamic: a config's own rope_scaling {"type": "dynamic"} grows with the sequence as
 * transformers' dynamic rope update does, against ref.h's double forward with the base the test
 * computes itself from HF's formula (_compute_dynamic_ntk_parameters):
 *   base(L) = theta * (factor * L / L0 - (factor - 1)) ^ (d / (d - 2)) for L > L0, else theta,
 * L = the largest position + 1 of the forward, L0 = max_position_embeddings, d = head_dim.
 * The model is stories260K-hf-derived (real trained weights, head_dim 8) with its config
 * rewritten: L0 8, factor 4.
 * - one forward of N tokens: every position under base(N) (HF model(input_ids));
 * - token by token (HF generate with a KV cache): token t rotated under base(max(t + 1, L0)),
 *   earlier keys kept as they were rotated;
 * - at or below L0: the trained base exactly (the old code used base(factor x L0) from token 0);
 * - after a long sequence a short one returns to the trained base (HF's reset);
 * - the model interface (the views): the rows and logits of one forward over the tokens held.
 * ../shared/realmodels missing is a failure, not a skip. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lm.h"
#include "lmi.h"
#include "pe.h"
#include "ref.h"
#include "tap.h"
#include "writer.h"

enum { N = 14, L0 = 8, V = 512, HD = 8 };
static const double FACTOR = 4.0, THETA = 10000.0;

static char shared_dir[4096], tmp_dir[4096];

/* HF's dynamic NTK base at sequence length len (the formula above, in double). */
static double dyn_base(int len)
{
    if (len <= L0) return THETA;
    return THETA * pow(FACTOR * len / L0 - (FACTOR - 1.0), (double)HD / (HD - 2.0));
}

static double max_diff_fd(const float *a, const double *b, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= m)) m = d; /* NaN wins */
    }
    return m;
}

/* stories260K-hf-derived with max_position_embeddings L0 and rope_scaling key (rope_scaling or
 * rope_parameters spelling) dynamic, factor FACTOR; the safetensors linked. */
static int write_dynamic(const char *dir, int new_spelling)
{
    char src[4200], p[4400];
    mkdir(dir, 0700);
    snprintf(src, sizeof src, "%s/stories260K-hf-derived/config.json", shared_dir);
    cJSON *cfg = ref_read_json(src);
    if (!cfg) return -1;
    cJSON_ReplaceItemInObject(cfg, "max_position_embeddings", cJSON_CreateNumber(L0));
    cJSON *rs = cJSON_CreateObject();
    cJSON_AddStringToObject(rs, new_spelling ? "rope_type" : "type", "dynamic");
    cJSON_AddNumberToObject(rs, "factor", FACTOR);
    cJSON_ReplaceItemInObject(cfg, "rope_scaling", rs);
    char *txt = cJSON_Print(cfg);
    snprintf(p, sizeof p, "%s/config.json", dir);
    int rc = wr_text(p, txt);
    free(txt);
    cJSON_Delete(cfg);
    snprintf(src, sizeof src, "%s/stories260K-hf-derived/model.safetensors", shared_dir);
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    unlink(p);
    return rc || symlink(src, p) ? -1 : 0;
}

static const int ids[N] = {1, 403, 407, 261, 378, 390, 261, 422, 344, 273, 306, 418, 352, 347};

/* ref.h over ids[0..n) with base(t) for token t's rotation; logits (n, V) of every position. */
static int ref_run(const char *dir, int n, const double *base, double *logits, ref_model *keep)
{
    ref_model r;
    if (ref_load_hf(&r, dir) != 0) return -1;
    ref_begin(&r, n);
    for (int t = 0; t < n; t++) {
        r.base = base[t];
        ref_step(&r, ids[t], logits + (size_t)t * V);
    }
    if (keep)
        *keep = r;
    else
        ref_free(&r);
    return 0;
}

static void test_lm_level(const char *dir, const char *label)
{
    char err[512] = "";
    lm_model *m = NULL;
    if (!TAP_OK(lm_open(dir, &m, err, sizeof err) == PE_OK &&
                    m->c.rope.scaling.type == PE_SCALING_DYNAMIC && m->c.seq_len == L0,
                "%s: opens with dynamic NTK, L0 %d (%s)", label, L0, err)) {
        lm_close(m);
        return;
    }
    float *lg = malloc((size_t)N * V * sizeof *lg);
    double *rl = malloc((size_t)N * V * sizeof *rl), base[N];
    lm_session s;
    if (!TAP_OK(lm_session_init(&s, m, N, 1, err, sizeof err) == PE_OK, "session (%s)", err))
        goto out;
    /* one forward of N tokens: every position under base(N) */
    for (int t = 0; t < N; t++) base[t] = dyn_base(N);
    int rc = lm_forward(&s, ids, N, lg, err, sizeof err);
    ref_run(dir, N, base, rl, NULL);
    double d = rc == PE_OK ? max_diff_fd(lg, rl, N * V) : INFINITY;
    TAP_OK(d <= 1e-4, "%s: one forward of %d tokens = ref.h with every token at base(%d) = %.6g "
                      "(max %.3g)",
           label, N, N, dyn_base(N), d);
    /* the old fixed base (factor x L0) differs: the test can tell */
    for (int t = 0; t < N; t++) base[t] = dyn_base((int)(FACTOR * L0));
    ref_run(dir, N, base, rl, NULL);
    TAP_OK(max_diff_fd(lg, rl, N * V) > 1e-3, "%s: and not the fixed base(%d) of before", label,
           (int)(FACTOR * L0));
    /* token by token, as HF generate with its cache */
    lm_session_reset(&s);
    rc = PE_OK;
    for (int t = 0; t < N && rc == PE_OK; t++)
        rc = lm_forward(&s, ids + t, 1, lg + (size_t)t * V, err, sizeof err);
    for (int t = 0; t < N; t++) base[t] = dyn_base(t + 1);
    ref_run(dir, N, base, rl, NULL);
    d = rc == PE_OK ? max_diff_fd(lg, rl, N * V) : INFINITY;
    TAP_OK(d <= 1e-4,
           "%s: token by token, token t is rotated under base(max(t + 1, %d)), cached keys kept "
           "(max %.3g)",
           label, L0, d);
    /* a short sequence after the long one: HF resets to the trained frequencies */
    lm_session_reset(&s);
    rc = lm_forward(&s, ids, 5, lg, err, sizeof err);
    for (int t = 0; t < 5; t++) base[t] = THETA;
    ref_run(dir, 5, base, rl, NULL);
    d = rc == PE_OK ? max_diff_fd(lg, rl, 5 * V) : INFINITY;
    TAP_OK(d <= 1e-4 && s.rope.scaling.seq_len == 0,
           "%s: then 5 tokens (< L0) run at the trained base %g (max %.3g)", label, THETA, d);
    /* preset for a window (eval): lm_session_dynamic(N) before feeding in blocks */
    lm_session_reset(&s);
    rc = lm_session_dynamic(&s, N, err, sizeof err);
    for (int i = 0; i < N && rc >= 0; i += 4)
        rc = lm_forward(&s, ids + i, N - i < 4 ? N - i : 4, lg + (size_t)i * V, err, sizeof err);
    for (int t = 0; t < N; t++) base[t] = dyn_base(N);
    ref_run(dir, N, base, rl, NULL);
    d = rc >= 0 ? max_diff_fd(lg, rl, N * V) : INFINITY;
    TAP_OK(d <= 1e-4, "%s: lm_session_dynamic(%d) then blocks of 4 = one forward (max %.3g)",
           label, N, d);
    lm_session_free(&s);
out:
    free(lg);
    free(rl);
    lm_close(m);
}

/* Through lmi (the attention views): after k steps the rows and logits are those of one forward
 * over the k tokens, for every k; an offset moves the base with the largest position. */
static void test_lmi(const char *dir)
{
    char err[512] = "";
    lmi_model m;
    if (!TAP_OK(lmi_open(&m, dir, err, sizeof err) == PE_OK, "lmi_open (%s)", err)) return;
    lmi_session s = {0};
    if (!TAP_OK(lmi_session_init(&s, &m, 64, err, sizeof err) == PE_OK, "lmi session (%s)", err)) {
        lmi_close(&m);
        return;
    }
    double *rl = malloc((size_t)N * V * sizeof *rl), base[N], rr[N], wr = 0, wl = 0;
    float row[N];
    const float *lg = NULL;
    int rc = PE_OK;
    for (int k = 1; k <= N && rc == PE_OK; k++) {
        rc = lmi_step(&s, ids[k - 1], &lg, err, sizeof err);
        for (int t = 0; t < k; t++) base[t] = dyn_base(k);
        ref_model r;
        if (rc != PE_OK || ref_run(dir, k, base, rl, &r) != 0) break;
        wl = fmax(wl, max_diff_fd(lg, rl + (size_t)(k - 1) * V, V));
        for (int l = 0; l < r.L; l++)
            for (int h = 0; h < r.H; h++)
                for (int t = 0; t < k; t++) {
                    lmi_attn_row(&s, l, h, t, row, NULL, NULL, err, sizeof err);
                    ref_attn_row(&r, l, h, t, rr);
                    wr = fmax(wr, max_diff_fd(row, rr, t + 1));
                }
        ref_free(&r);
    }
    TAP_OK(rc == PE_OK && wl <= 1e-4 && wr <= 1e-5,
           "lmi: after each of %d steps, logits (%.3g) and every row (%.3g) = one forward at "
           "base(k) (%s)",
           N, wl, wr, err);
    /* offset 20: the largest position + 1 is 20 + N, the base follows it (ref.h has no
     * offset: a plain session at offset 20 with the dynamic length set by hand) */
    rc = lmi_set_offset(&s, 20, err, sizeof err);
    lm_session ls;
    if (TAP_OK(rc == PE_OK && lm_session_init(&ls, lm_of_lmi(&m), N, 1, err, sizeof err) == PE_OK,
               "offset 20 (%s)", err)) {
        ls.offset = 20;
        pe_params p = ls.rope;
        p.scaling.seq_len = 20 + N;
        lm_session_set_rope(&ls, &p, err, sizeof err);
        lm_forward(&ls, ids, N, NULL, err, sizeof err);
        TAP_OK(memcmp(s.logits, ls.logits, V * sizeof *s.logits) == 0,
               "lmi offset 20: the logits of a session at base(%d) = %.6g exactly", 20 + N,
               dyn_base(20 + N));
        lm_session_free(&ls);
    }
    /* back to offset 0 and the scaling as trained: base(N) again */
    pe_rope_scaling none = {.type = PE_SCALING_NONE};
    rc = lmi_set_offset(&s, 0, err, sizeof err);
    if (rc == PE_OK) rc = lmi_set_rope_scaling(&s, &none, err, sizeof err);
    for (int t = 0; t < N; t++) base[t] = dyn_base(N);
    ref_run(dir, N, base, rl, NULL);
    TAP_OK(rc == PE_OK && max_diff_fd(s.logits, rl + (size_t)(N - 1) * V, V) <= 1e-4,
           "lmi: offset 0 and --scaling none (as trained) give base(%d) again (%s)", N, err);
    free(rl);
    lmi_session_free(&s);
    lmi_close(&m);
}

int main(void)
{
    const char *src = getenv("PELAB_SRC");
    snprintf(shared_dir, sizeof shared_dir, "%s/../shared/realmodels", src ? src : ".");
    struct stat st;
    if (!TAP_OK(stat(shared_dir, &st) == 0 && S_ISDIR(st.st_mode), "../shared/realmodels (%s)",
                shared_dir))
        return tap_done();
    snprintf(tmp_dir, sizeof tmp_dir, "%s/pelab-lmdyn-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp_dir)) return TAP_OK(0, "temp dir"), tap_done();
    char d1[4200], d2[4200];
    snprintf(d1, sizeof d1, "%s/dyn-type", tmp_dir);
    snprintf(d2, sizeof d2, "%s/dyn-rope-type", tmp_dir);
    TAP_OK(write_dynamic(d1, 0) == 0 && write_dynamic(d2, 1) == 0,
           "wrote two folders: rope_scaling {\"type\"|\"rope_type\": \"dynamic\", factor %g}",
           FACTOR);
    test_lm_level(d1, "\"type\"");
    test_lm_level(d2, "\"rope_type\"");
    test_lmi(d1);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0) tap_diag("could not remove %s", tmp_dir);
    return tap_done();
}
