/* test_attention_scaling.c: --scaling at inference in the attention views (issue 22), for a real
 * RoPE model and pelab's own rope model, against computations written here:
 *   - dynamic NTK grows with the sequence as transformers' dynamic rope does: the base of n
 *     tokens is base * (f n / L0 - (f - 1))^(d / (d - 2)) once n > L0 and the trained one at or
 *     below L0 (the formula is typed here from HF's _compute_dynamic_ntk_parameters, not taken
 *     from pe/). Dynamic NTK is then exactly a RoPE base, so the rows equal the test's own
 *     double forward (tests/pe/realmodel/ref.h) run at that base, after every step;
 *   - --orig-ctx is L0 when given; without it L0 is the model's trained context (512 for
 *     stories260K, where a short prompt is below L0 and the rows stay the trained ones);
 *   - the shipped rope model (no reference forward here): the view's rows under dynamic NTK equal
 *     its rows under --rope-base at the base computed here, and differ from the trained rows.
 * ../shared/realmodels missing is a failure, not a skip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../pe/realmodel/ref.h"
#include "attn.h"
#include "lmi.h"
#include "options.h"
#include "tap.h"
#include "views.h"

/* HF: base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2)),
 * seq_len = max(seq_len, max_position_embeddings) */
static double dyn_base(double base, double f, int n, int l0, int rd)
{
    double len = n > l0 ? n : l0;
    return base * pow(f * len / l0 - (f - 1), (double)rd / (rd - 2));
}

/* the largest |a - b| over the rows of every layer and head of the first n tokens */
static double rows_diff_ref(const lmi_session *s, ref_model *r, const int *ids, int n)
{
    free(r->kc); /* ref_begin allocates the caches anew each call */
    free(r->vc);
    free(r->qc);
    r->kc = r->vc = r->qc = NULL;
    ref_begin(r, n);
    double *lg = malloc((size_t)r->V * sizeof *lg), *p = malloc((size_t)n * sizeof *p);
    float *w = malloc((size_t)n * sizeof *w);
    for (int t = 0; t < n; t++) ref_step(r, ids[t], lg);
    double worst = 0;
    char err[256];
    for (int l = 0; l < r->L; l++)
        for (int h = 0; h < r->H; h++)
            for (int t = 0; t < n; t++) {
                ref_attn_row(r, l, h, t, p);
                if (lmi_attn_row(s, l, h, t, w, NULL, NULL, err, sizeof err) < 0) {
                    tap_diag("%s", err);
                    worst = 1;
                    continue;
                }
                for (int j = 0; j <= t; j++) worst = fmax(worst, fabs(w[j] - p[j]));
            }
    free(lg);
    free(p);
    free(w);
    return worst;
}

static void test_real(const char *shared)
{
    char model[4200];
    snprintf(model, sizeof model, "%s/stories260K/stories260K.bin", shared);
    lmi_model m;
    char err[512];
    ref_model r;
    if (!TAP_OK(lmi_open(&m, model, err, sizeof err) == 0 && ref_load_llama2c(&r, model) == 0,
                "stories260K.bin opens (%s)", err))
        return;
    int ids[] = {1, 403, 407, 261, 378, 390, 261, 422, 344, 273, 306, 418, 352, 347};
    int n = (int)(sizeof ids / sizeof ids[0]), rd = m.info.rot_dim, l0 = 4;
    double base = m.info.rope_base;
    lmi_session s = {0};
    pe_rope_scaling sc = {.type = PE_SCALING_DYNAMIC, .factor = 2, .original_ctx = l0};
    TAP_OK(lmi_session_init(&s, &m, 64, err, sizeof err) == 0 &&
               lmi_set_rope_scaling(&s, &sc, err, sizeof err) == 0,
           "dynamic x2 over L0 = 4 is accepted (%s)", err);
    double worst = 0, worst_base = 0;
    for (int t = 0; t < n; t++) {
        if (lmi_step(&s, ids[t], NULL, err, sizeof err) < 0) {
            TAP_OK(0, "step %d: %s", t, err);
            break;
        }
        r.base = dyn_base(base, 2, t + 1, l0, rd);
        worst = fmax(worst, rows_diff_ref(&s, &r, ids, t + 1));
        /* the session says where it stands: seq_len = tokens held past L0, else 0 */
        if (s.scaling.seq_len != (t + 1 > l0 ? t + 1 : 0)) worst_base = 1;
    }
    TAP_OK(worst <= 1e-5 && worst_base == 0,
           "stepped token by token, every row of every step = ref.h at base(n) = %.6g for n = "
           "%d (%.2g)",
           dyn_base(base, 2, n, l0, rd), n, worst);
    /* back below L0: a reset and a short sequence are at the trained base again */
    lmi_session_reset(&s);
    for (int t = 0; t < 3; t++) lmi_step(&s, ids[t], NULL, err, sizeof err);
    r.base = base;
    double back = rows_diff_ref(&s, &r, ids, 3);
    TAP_OK(back <= 1e-5, "after a reset, 3 tokens (<= L0) are at the trained base (%.2g)", back);
    /* an offset moves the largest position: seq_len = offset + len */
    for (int t = 3; t < 6; t++) lmi_step(&s, ids[t], NULL, err, sizeof err);
    int off_ok = lmi_set_offset(&s, 10, err, sizeof err) == 0;
    TAP_OK(off_ok && s.scaling.seq_len == 16,
           "--shift 10 with 6 tokens: dynamic NTK at seq_len 16 (%d)", s.scaling.seq_len);
    lmi_session_free(&s);

    /* through the view: --orig-ctx 4 is L0; without it L0 is the model's 512 */
    app_state st;
    app_state_default(&st);
    st.view = app_view_find("attention");
    snprintf(st.attn.model_name, sizeof st.attn.model_name, "%.500s", model);
    st.attn.preset[0] = '\0';
    size_t u = 0;
    for (int i = 0; i < n; i++)
        u +=
            (size_t)snprintf(st.attn.ids + u, sizeof st.attn.ids - u, "%s%d", i ? "," : "", ids[i]);
    const app_option *so = app_option_find("scaling"), *fo = app_option_find("factor"),
                     *oo = app_option_find("orig-ctx");
    TAP_OK(so && fo && oo && app_option_set(&st, so, "dynamic", err, sizeof err) == 0 &&
               app_option_set(&st, fo, "2", err, sizeof err) == 0,
           "--scaling dynamic --factor 2 (%s)", err);
    app_attn a;
    memset(&a, 0, sizeof a);
    r.base = base;
    int up = app_attn_update(&a, &st, st.attn.model_name, err, sizeof err) == 0;
    TAP_OK(up && a.s.scaling.original_ctx == 512 && rows_diff_ref(&a.s, &r, ids, n) <= 1e-5,
           "without --orig-ctx: L0 = 512, %d tokens keep the trained rows (L0 %d) %s", n,
           a.s.scaling.original_ctx, err);
    TAP_OK(app_option_set(&st, oo, "4", err, sizeof err) == 0 && st.orig_ctx_set,
           "--orig-ctx 4 is recorded as given");
    r.base = dyn_base(base, 2, n, 4, rd);
    up = app_attn_update(&a, &st, st.attn.model_name, err, sizeof err) == 0;
    TAP_OK(up && a.s.scaling.original_ctx == 4 && rows_diff_ref(&a.s, &r, ids, n) <= 1e-5,
           "--orig-ctx 4: the view's rows = ref.h at base %.6g (L0 %d) %s", r.base,
           a.s.scaling.original_ctx, err);
    app_attn_free(&a);
    ref_free(&r);
    lmi_close(&m);
}

/* The largest |difference| of two runs' rows over every layer, head and token. */
static double runs_diff(const app_attn *x, const app_attn *y)
{
    double worst = x->n == y->n ? 0 : 1;
    for (int l = 0; l < x->layers; l++)
        for (int h = 0; h < x->heads; h++)
            for (int t = 0; worst < 1 && t < x->n; t++) {
                const float *a = app_attn_row(x, t, l, h);
                float keep[512];
                memcpy(keep, a, sizeof(float) * (size_t)(t + 1));
                const float *b = app_attn_row(y, t, l, h);
                for (int j = 0; j <= t; j++) worst = fmax(worst, fabs(keep[j] - b[j]));
            }
    return worst;
}

static void test_shipped(void)
{
    char err[512], path[1200];
    if (!TAP_OK(app_attn_model_path("rope", path, sizeof path, err, sizeof err) == 0,
                "the shipped rope model (%s)", err))
        return;
    app_state st;
    app_state_default(&st);
    st.view = app_view_find("attention");
    snprintf(st.attn.prompt, sizeof st.attn.prompt,
             "once upon a time there was a little girl who liked to play in the park with her dog");
    st.attn.preset[0] = '\0';
    app_attn plain, dyn, based;
    memset(&plain, 0, sizeof plain);
    memset(&dyn, 0, sizeof dyn);
    memset(&based, 0, sizeof based);
    if (!TAP_OK(app_attn_update(&plain, &st, "rope", err, sizeof err) == 0, "rope runs (%s)", err))
        return;
    int n = plain.n, l0 = 6, rd = plain.m.info.rot_dim;
    TAP_OK(plain.caps & LMI_CAN_ROPE_SCALING, "the shipped rope model can rescale RoPE");
    app_option_set(&st, app_option_find("scaling"), "dynamic", err, sizeof err);
    app_option_set(&st, app_option_find("factor"), "3", err, sizeof err);
    app_option_set(&st, app_option_find("orig-ctx"), "6", err, sizeof err);
    int ok = app_attn_update(&dyn, &st, "rope", err, sizeof err) == 0;
    double want = dyn_base(plain.m.info.rope_base, 3, n, l0, rd);
    app_state sb = st;
    sb.p.scaling.type = PE_SCALING_NONE;
    sb.attn.rope_base = want;
    ok = ok && app_attn_update(&based, &sb, "rope", err, sizeof err) == 0;
    double d = ok ? runs_diff(&dyn, &based) : 1, moved = ok ? runs_diff(&dyn, &plain) : 0;
    TAP_OK(ok && d <= 1e-6 && moved > 1e-3,
           "rope, %d tokens, dynamic x3 over --orig-ctx 6 = --rope-base %.6g (%.2g; %.2g from the "
           "trained rows) %s",
           n, want, d, moved, err);
    /* linear over the same L0 is not the trained model either, and YaRN reads L0 */
    app_attn y8, y64;
    memset(&y8, 0, sizeof y8);
    memset(&y64, 0, sizeof y64);
    app_option_set(&st, app_option_find("scaling"), "yarn", err, sizeof err);
    app_option_set(&st, app_option_find("orig-ctx"), "8", err, sizeof err);
    ok = app_attn_update(&y8, &st, "rope", err, sizeof err) == 0;
    app_option_set(&st, app_option_find("orig-ctx"), "64", err, sizeof err);
    ok = ok && app_attn_update(&y64, &st, "rope", err, sizeof err) == 0;
    TAP_OK(ok && y8.s.scaling.original_ctx == 8 && y64.s.scaling.original_ctx == 64 &&
               runs_diff(&y8, &y64) > 1e-4,
           "yarn x3: --orig-ctx 8 and 64 reach the model and move its rows %s", err);
    app_attn_free(&y8);
    app_attn_free(&y64);
    app_attn_free(&plain);
    app_attn_free(&dyn);
    app_attn_free(&based);
}

int main(void)
{
    const char *src = getenv("PELAB_SRC");
    char shared[4096];
    snprintf(shared, sizeof shared, "%s/../shared/realmodels", src ? src : ".");
    struct stat sb;
    if (!TAP_OK(stat(shared, &sb) == 0 && S_ISDIR(sb.st_mode), "../shared/realmodels (%s)", shared))
        return tap_done();
    test_real(shared);
    test_shipped();
    return tap_done();
}
