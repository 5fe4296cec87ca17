/* test_attention_store: the attention views' store (app/views/attention/attn.c) keeps q and k
 * per layer and computes the rows a view shows, so a 12-layer, 12-head model keeps 1024 tokens
 * in the default memory budget, where keeping every (layer, head) row of every step
 * (layers x heads x 3 x tokens^2 floats, what the store did before) capped it near 340.
 *
 * The models are pelab's own transformer with random weights in GPT-2 small's attention shape
 * (12 layers, 12 heads, context 1024; a narrow width, 24, keeps the test quick: the rows' memory
 * does not depend on the width). Each run is checked against an independent model_session over
 * the same tokens: the store's rows, recomputed on demand from the cached q and k, are the
 * step's rows bit for bit; and the memory the run holds is read from pe/mem.c's accounting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn.h"
#include "model/tiny/model.h"
#include "options.h"
#include "tap.h"

enum { L = 12, H = 12, CTX = 1024, KL = 11, KH = 5 };

static char dir[160]; /* $TMPDIR/pelab-test-store-XXXXXX, made in main */

static int make(int pe, const char *path)
{
    const char *w[] = {"<unk>", "<eos>", ".", ",", "the", "cat", "sat", "on", "mat"};
    tok_vocab v = {0};
    char err[256];
    if (tok_vocab_init(&v, w, 9, err, sizeof err)) return -1;
    model_config c;
    model_config_default(&c, pe);
    c.layers = L;
    c.heads = H;
    c.dim = 24;
    c.hidden = 16;
    c.ctx = CTX;
    c.vocab = v.n;
    c.seed = 9;
    model m = {0};
    int rc = model_init(&m, &c, &v, err, sizeof err);
    tok_vocab_free(&v);
    if (rc) return -1;
    pe_rng r;
    pe_rng_seed(&r, 5 + (uint64_t)pe);
    /* larger weights than training would leave: rows far from uniform */
    for (size_t i = 0; i < m.n_params; i++) m.params[i] += (float)(0.5 * pe_rng_normal(&r));
    FILE *f = fopen(path, "wb");
    rc = f ? model_write(&m, f, err, sizeof err) : -1;
    if (f && fclose(f)) rc = -1;
    model_free(&m);
    return rc;
}

static void check(int pe)
{
    const char *name = model_pe_name(pe);
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/%s.pelab", dir, name);
    if (!TAP_OK(make(pe, path) == 0, "%s: a 12-layer, 12-head model of context 1024", name)) return;
    app_state st;
    app_state_default(&st);
    snprintf(st.attn.model_name, sizeof st.attn.model_name, "%s", path);
    /* 1000 one-byte tokens typed, 24 generated: the context is full */
    for (int i = 0; i < 1000; i++) st.attn.prompt[i] = i % 2 ? ',' : '.';
    st.attn.prompt[1000] = '\0';
    st.attn.generate = 100;
    size_t used0 = pe_mem_used();
    app_attn a = {0};
    int rc = app_attn_update(&a, &st, path, err, sizeof err);
    size_t held = pe_mem_used() - used0;
    TAP_OK(rc == 0 && a.cap == CTX && a.n == CTX && a.n_prompt == 1000 && a.tok[CTX - 1].generated,
           "%s: the run keeps all 1024 tokens (cap %d, %d shown)%s%s", name, a.cap, a.n,
           err[0] ? ": " : "", err);
    /* what the store did before: every (layer, head) row of every step, three arrays */
    size_t old = (size_t)L * H * 3 * sizeof(float) * CTX * CTX;
    int old_cap = CTX;
    while (old_cap > 8 && (size_t)old_cap * old_cap > APP_ATTN_MAX_BYTES / (L * H * 3 * 4))
        old_cap = old_cap * 7 / 8;
    TAP_OK(rc == 0 && held <= pe_mem_budget() && held < APP_ATTN_MAX_BYTES + (64u << 20) &&
               old > 8 * APP_ATTN_MAX_BYTES,
           "%s: the run holds %.1f MiB of the %.0f MiB budget (model, session, one layer's "
           "rows); keeping every row would take %.0f MiB and cap the run at %d tokens",
           name, held / 1048576.0, pe_mem_budget() / 1048576.0, old / 1048576.0, old_cap);
    if (rc) {
        app_attn_free(&a);
        return;
    }
    /* an independent session over the same tokens: its rows as each step made them */
    model m = {0};
    model_session s = {0};
    float *keep = malloc((size_t)CTX * CTX * sizeof *keep);
    rc = model_load(path, &m, err, sizeof err);
    if (rc == 0) rc = model_session_init(&s, &m, CTX, err, sizeof err);
    int bad = 0, checked = 0;
    static const int at[] = {0, 1, 511, 999, 1000, 1023};
    size_t k = 0;
    for (int t = 0; rc == 0 && keep && t < CTX; t++) {
        rc = model_session_step(&s, a.tok[t].id, NULL, err, sizeof err);
        if (rc) break;
        memcpy(keep + (size_t)t * CTX, model_session_attn(&s, KL, KH), (t + 1) * sizeof *keep);
        if (k < sizeof at / sizeof at[0] && t == at[k]) {
            k++;
            for (int l = 0; l < L; l++)
                for (int h = 0; h < H; h++) {
                    const float *got = app_attn_row(&a, t, l, h);
                    checked++;
                    bad += !got || memcmp(got, model_session_attn(&s, l, h),
                                          (size_t)(t + 1) * sizeof *got) != 0;
                }
        }
    }
    TAP_OK(rc == 0 && bad == 0 && checked == 6 * L * H,
           "%s: %d rows (every layer and head at tokens 0, 1, 511, 999, 1000, 1023) = the "
           "step's rows, bit for bit (%d differ)%s%s",
           name, checked, bad, rc ? ": " : "", rc ? err : "");
    const float *mat = app_attn_matrix(&a, KL, KH);
    int mbad = !mat, future = 0;
    for (int t = 0; mat && t < CTX; t++) {
        mbad += memcmp(mat + (size_t)t * a.cap, keep + (size_t)t * CTX, (t + 1) * sizeof *mat) != 0;
        for (int j = t + 1; j < CTX; j++) future += !isnan(mat[(size_t)t * a.cap + j]);
    }
    TAP_OK(rc == 0 && mbad == 0 && future == 0,
           "%s: the matrix of layer %d head %d, 1024 x 1024, = the step's rows (%d differ), NaN "
           "above the diagonal (%d not)",
           name, KL, KH, mbad, future);
    if (pe == MODEL_PE_ALIBI) {
        const float *c = app_attn_content(&a, 700, 3, 4), *p = app_attn_position(&a, 700, 3, 4);
        const float *w = app_attn_row(&a, 700, 3, 4);
        double worst = c && p && w ? 0 : 1, sl[16];
        /* the slopes are pe/'s for 12 heads; the position part is -m_h (t - j) */
        pe_alibi_slopes(H, m.cfg.pe.slope_ratio, sl, err, sizeof err);
        for (int j = 0; c && p && w && j <= 700; j++)
            worst = fmax(worst, fabs(p[j] - (-sl[4] * (700 - j))) / (1 + fabs(sl[4] * (700 - j))));
        TAP_OK(worst < 1e-6,
               "alibi: the split at token 700, layer 3 head 4: position = -m_h (t - j) "
               "(%.1e)",
               worst);
    }
    free(keep);
    model_session_free(&s);
    model_free(&m);
    app_attn_free(&a);
    TAP_OK(pe_mem_used() == used0, "%s: everything the run held is given back", name);
    remove(path);
}

int main(void)
{
    tap_tmp_path(dir, sizeof dir, "pelab-test-store-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    /* the shape's numbers for GPT-2 small itself (768 wide, 124M weights, learned positions):
     * its session's q, k and v and one layer's rows beside the weights, in the default budget */
    lmi_info g = {.layers = 12, .heads = 12, .kv_heads = 12, .head_dim = 64, .ctx = 1024};
    size_t rows = app_attn_store_bytes(&g, 1024);
    size_t session = (size_t)3 * 12 * 1024 * 768 * sizeof(float);
    size_t weights = (size_t)124439808 * sizeof(float);
    TAP_OK(rows <= APP_ATTN_MAX_BYTES && rows + session + weights < PE_MEM_DEFAULT,
           "GPT-2 small at 1024 tokens: rows %.0f MiB + session %.0f MiB + weights %.0f MiB "
           "in the %.0f MiB budget",
           rows / 1048576.0, session / 1048576.0, weights / 1048576.0, PE_MEM_DEFAULT / 1048576.0);
    check(MODEL_PE_ROPE);
    check(MODEL_PE_ALIBI);
    rmdir(dir);
    return tap_done();
}
