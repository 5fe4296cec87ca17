/* test_shipped: every model in assets/models loads, was trained on the current story grammar,
 * and reaches its held-out loss bound on a small held-out sample (seconds, not minutes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/model.h"
#include "tap.h"

/* Held-out loss bound at the training length (nats per token). The shipped models measure
 * 0.69..0.74 (assets/models/README.md); an untrained model starts at ln(299) = 5.7 and one that
 * learned only word frequencies stays above 3.5. */
#define LOSS_BOUND  1.0
#define HELD_TOKENS 8193

int main(void)
{
    const char *src = getenv("PELAB_SRC");
    char dir[4096], err[512] = "";
    snprintf(dir, sizeof dir, "%s/assets/story", src ? src : ".");
    model_grammar g;
    if (!TAP_OK(model_grammar_load(&g, dir, err, sizeof err) == 0, "grammar (%s)", err))
        return tap_done();
    int *ids = malloc(HELD_TOKENS * sizeof *ids);
    long total = 0;
    for (int pe = 0; pe < MODEL_PE_COUNT; pe++) {
        const char *name = model_pe_name(pe);
        char path[4200];
        snprintf(path, sizeof path, "%s/assets/models/%s.pelab", src ? src : ".", name);
        struct stat st;
        if (stat(path, &st) == 0) total += (long)st.st_size;
        model m;
        if (!TAP_OK(model_load(path, &m, err, sizeof err) == 0, "%s loads (%s)", path, err))
            continue;
        char want[64];
        snprintf(want, sizeof want, "--pe %s", name);
        TAP_OK(!strcmp(m.cfg.pe_name, name) && strstr(m.cfg.command, want) &&
                   m.cfg.steps_done == m.cfg.steps,
               "%s: scheme, command \"%s\", %d of %d steps", name, m.cfg.command, m.cfg.steps_done,
               m.cfg.steps);
        TAP_OK(m.cfg.grammar_hash == g.hash,
               "%s: trained on the current story grammar (retrain if it changed)", name);
        size_t unk = 0;
        model_corpus(&g, &m.vocab, model_heldout_seed(m.cfg.data_seed), HELD_TOKENS, ids, &unk, err,
                     sizeof err);
        double *s = calloc((size_t)m.cfg.ctx, sizeof *s), *k = calloc((size_t)m.cfg.ctx, 8);
        int rc = model_eval_positions(&m, ids, HELD_TOKENS, m.cfg.ctx, 0, 0, s, k, err, sizeof err);
        double sum = 0, cnt = 0;
        for (int t = 0; t < m.cfg.ctx; t++) sum += s[t], cnt += k[t];
        double loss = sum / cnt;
        TAP_OK(rc == 0 && loss < LOSS_BOUND,
               "%s: held-out loss %.3f < %.1f (%.0f tokens, %zu unknown)", name, loss, LOSS_BOUND,
               cnt, unk);
        TAP_OK(fabs(loss - m.cfg.heldout_loss) < 0.15,
               "%s: close to the recorded %.3f (larger sample)", name, m.cfg.heldout_loss);
        free(s);
        free(k);
        model_free(&m);
    }
    TAP_OK(total > 0 && total <= 16l * 1024 * 1024, "shipped models take %.2f MB (<= 16 MB)",
           total / 1048576.0);
    free(ids);
    model_grammar_free(&g);
    return tap_done();
}
