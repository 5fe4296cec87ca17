/* test_attention_shipped.c: every model shipped in assets/models, loaded by scheme name the way
 * the attention views load it: the attention the view keeps equals a model_session of its own
 * over the same tokens, and every row sums to 1. Skips (77) when assets/models has none. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "model/tiny/model.h"
#include "tap.h"

int main(void)
{
    int found = 0;
    char err[512], path[1200];
    for (int pe = 0; pe < MODEL_PE_COUNT; pe++) {
        const char *name = model_pe_name(pe);
        if (app_attn_model_path(name, path, sizeof path, err, sizeof err) < 0) continue;
        found++;
        app_state st;
        app_state_default(&st);
        snprintf(st.attn.model_name, sizeof st.attn.model_name, "%s", name);
        st.attn.generate = 4;
        app_attn a = {0};
        err[0] = '\0';
        if (!TAP_OK(app_attn_update(&a, &st, name, err, sizeof err) == 0, "%s: runs%s%s", name,
                    err[0] ? ": " : "", err)) {
            app_attn_free(&a);
            continue;
        }
        model m = {0};
        model_session s = {0};
        int rc = model_load(path, &m, err, sizeof err);
        if (rc == 0) rc = model_session_init(&s, &m, a.cap, err, sizeof err);
        double worst = 0, sum_err = 0;
        int steps = a.n < 12 ? a.n : 12;
        for (int t = 0; rc == 0 && t < steps; t++) {
            rc = model_session_step(&s, a.tok[t].id, NULL, err, sizeof err);
            for (int l = 0; rc == 0 && l < a.layers; l++)
                for (int h = 0; h < a.heads; h++) {
                    const float *want = model_session_attn(&s, l, h);
                    const float *got = app_attn_row(&a, t, l, h);
                    double sum = 0;
                    for (int j = 0; j <= t; j++) {
                        worst = fmax(worst, fabs((double)got[j] - want[j]));
                        sum += got[j];
                    }
                    sum_err = fmax(sum_err, fabs(sum - 1));
                }
        }
        TAP_OK(rc == 0 && worst <= 1e-7,
               "%s (%s): the view's attention = model_session_attn over "
               "%d steps (%.1e)",
               name, path, steps, worst);
        TAP_OK(sum_err < 1e-5, "%s: rows sum to 1 (%.1e)", name, sum_err);
        TAP_OK(a.n == a.n_prompt + 4 && a.tok[a.n - 1].generated, "%s: generates 4 tokens", name);
        model_session_free(&s);
        model_free(&m);
        app_attn_free(&a);
    }
    if (!found) {
        printf("1..0 # SKIP no shipped models in assets/models\n");
        return 77;
    }
    return tap_done();
}
