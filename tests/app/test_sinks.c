/* test_sinks.c: the sinks view's numbers (issue 23) against a second computation. The view reads
 * attention rows through the model interface (lmi_attn_row: recomputed from cached q and k);
 * here the six shipped models run through the tiny model's own session and its step's attention
 * of the newest token (model_session_attn), and alpha(l, h) = 1/T sum_t A[t][0] is summed here,
 * over the same held-out presets. The sink share and the table the README quotes come out too. */
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

/* alpha per (layer, head) by the tiny model's own session; returns the layer x head count */
static int reference(const char *name, double *alpha, int cap)
{
    char path[512], err[256];
    if (app_attn_model_path(name, path, sizeof path, err, sizeof err) < 0) return -1;
    model m;
    memset(&m, 0, sizeof m);
    lmi_model lm = {0};
    if (model_load(path, &m, err, sizeof err) < 0 || lmi_open(&lm, path, err, sizeof err) < 0) {
        tap_diag("%s: %s", name, err);
        model_free(&m);
        return -1;
    }
    int L = lm.info.layers, H = lm.info.heads, ctx = lm.info.ctx;
    if (L * H > cap) return -1;
    memset(alpha, 0, sizeof *alpha * (size_t)(L * H));
    int prompts = 0;
    static char text[65536];
    lmi_token tk[4096];
    for (size_t p = 0; p < sizeof presets / sizeof presets[0]; p++) {
        if (app_attn_preset_text(presets[p], text, sizeof text, err, sizeof err) < 0) continue;
        int n = lmi_tokenize(&lm, text, strlen(text), tk, 4096, err, sizeof err);
        if (n > ctx) n = ctx;
        if (n <= 0) continue;
        model_session s;
        memset(&s, 0, sizeof s);
        model_session_init(&s, &m, n, err, sizeof err);
        double *sum = calloc((size_t)(L * H), sizeof *sum);
        for (int t = 0; t < n; t++) {
            model_session_step(&s, tk[t].id, NULL, err, sizeof err);
            for (int l = 0; l < L; l++)
                for (int h = 0; h < H; h++) sum[l * H + h] += model_session_attn(&s, l, h)[0];
        }
        for (int i = 0; i < L * H; i++) alpha[i] += sum[i] / n;
        free(sum);
        model_session_free(&s);
        prompts++;
    }
    for (int i = 0; i < L * H; i++) alpha[i] /= prompts;
    lmi_close(&lm);
    model_free(&m);
    return L * H;
}

int main(void)
{
    const char *models[] = {"nope", "learned", "sinusoidal", "alibi", "rope", "t5"};
    static double single[6][256]; /* each model's single export, for the table across them */
    int shape[6][2] = {{0}};
    for (size_t k = 0; k < 6; k++) {
        app_state st;
        app_state_default(&st);
        char err[512] = "";
        app_option_set(&st, app_option_find("view"), "sinks", err, sizeof err);
        int rc = app_option_set(&st, app_option_find("model"), models[k], err, sizeof err);
        app_view_ctx c = {0};
        app_data d = {0};
        if (rc == 0) rc = app_view_at((size_t)st.view)->data(&c, &st, &d, err, sizeof err);
        TAP_OK(rc == 0 && d.ndim == 2, "%s: sinks data (%s)", models[k], err);
        double ref[256];
        int n = reference(models[k], ref, 256);
        TAP_OK(rc == 0 && n == (int)(d.shape[0] * d.shape[1]), "%s: %d heads measured twice",
               models[k], n);
        double worst = 0;
        int above = 0;
        for (int i = 0; rc == 0 && i < n; i++) {
            worst = fmax(worst, fabs(d.data[i] - ref[i]));
            above += ref[i] > 0.3;
            /* alpha is a mean of attention weights: in [0, 1], and at least the uniform
             * attention's 1/T on average is not required, only the bounds */
        }
        TAP_OK(rc == 0 && worst < 1e-6, "%s: alpha equals the session's own attention (max %.2g)",
               models[k], worst);
        char want[64];
        snprintf(want, sizeof want, "(%d of %d)", above, n);
        TAP_OK(rc == 0 && strstr(d.what, want), "%s: the header's sink share says %s: %s",
               models[k], want, d.what);
        double mean = 0, mx = 0;
        for (int i = 0; i < n; i++) mean += ref[i] / n, mx = fmax(mx, ref[i]);
        tap_diag("| %s | %d of %d | %.3f | %.3f |", models[k], above, n, mean, mx);
        if (rc == 0 && n <= 256) {
            memcpy(single[k], d.data, sizeof(double) * (size_t)n);
            shape[k][0] = (int)d.shape[0], shape[k][1] = (int)d.shape[1];
        }
        app_data_free(&d);
        app_view_ctx_free(&c);
    }
    /* --models shipped: Gu et al.'s Table 3 over the six, (models, layers, heads); each model's
     * slice equals its single export above (NaN past its layers and heads), and the header's
     * count for each equals the alphas above the threshold counted here */
    const double thrs[] = {0.3, 0.13};
    app_view_ctx c = {0}; /* one context: the second threshold reads the cached measurement */
    for (size_t ti = 0; ti < 2; ti++) {
        app_state st;
        app_state_default(&st);
        char err[512] = "", val[32];
        snprintf(val, sizeof val, "%g", thrs[ti]);
        app_option_set(&st, app_option_find("view"), "sinks", err, sizeof err);
        app_option_set(&st, app_option_find("threshold"), val, err, sizeof err);
        int rc = app_option_set(&st, app_option_find("models"), "shipped", err, sizeof err);
        app_data d = {0};
        if (rc == 0) rc = app_view_at((size_t)st.view)->data(&c, &st, &d, err, sizeof err);
        TAP_OK(rc == 0 && d.ndim == 3 && d.shape[0] == 6,
               "--models shipped: (6, layers, heads) (%s)", err);
        for (int k = 0; rc == 0 && d.ndim == 3 && k < 6; k++) {
            int L = shape[k][0], H = shape[k][1], bad = 0, above = 0;
            size_t DL = d.shape[1], DH = d.shape[2];
            for (size_t l = 0; l < DL; l++)
                for (size_t h = 0; h < DH; h++) {
                    double v = d.data[((size_t)k * DL + l) * DH + h];
                    if ((int)l < L && (int)h < H) {
                        bad += v != single[k][l * (size_t)H + h];
                        above += v > thrs[ti];
                    } else
                        bad += !isnan(v);
                }
            TAP_OK(L > 0 && bad == 0, "%s: the table's slice equals its single export (%d differ)",
                   models[k], bad);
            char want[96];
            snprintf(want, sizeof want, " %s %d of %d = %.4f,", models[k], above, L * H,
                     (double)above / (L * H));
            TAP_OK(strstr(d.what, want) != NULL, "%s: at %g the header says '%s'", models[k],
                   thrs[ti], want);
        }
        app_data_free(&d);
    }
    app_view_ctx_free(&c);
    {
        app_state st;
        app_state_default(&st);
        char err[256] = "";
        int rc = app_option_set(&st, app_option_find("models"), "rope,,t5", err, sizeof err);
        TAP_OK(rc != 0 && strstr(err, "--models") && strstr(err, "shipped"),
               "--models rope,,t5 refused: %s", err);
        rc = app_option_set(&st, app_option_find("models"), "rope,nosuch", err, sizeof err);
        TAP_OK(rc != 0 && strstr(err, "models"), "--models rope,nosuch refused: %s", err);
    }
    /* a bad threshold names the option and the range */
    app_state st;
    app_state_default(&st);
    char err[256] = "";
    int rc = app_option_set(&st, app_option_find("threshold"), "1.5", err, sizeof err);
    TAP_OK(rc != 0 && strstr(err, "threshold"), "--threshold 1.5 refused: %s", err);
    return tap_done();
}
