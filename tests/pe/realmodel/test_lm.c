/* test_lm: real checkpoints against independent computations.
 * - stories260K.bin (llama2.c legacy, real weights): every logit of 200 greedy steps from BOS
 *   against ref.h's double-precision forward, the greedy ids against the Hugging Face copy's
 *   reference ids, attention rows to 1e-5, batched prompt = token by token, 1 thread = 2.
 * - stories260K-hf-derived (safetensors F32, tied): the same ids, its reference logits.
 * - tiny-random-llama-2 (BF16, untied): transformers' logits to 1e-4 and greedy ids; rewritten by
 *   the test as two F32 shards with an index (one unaligned) it gives the same logits.
 * - a random GPT-2 folder the test writes (F32 and F16): logits and attention rows against the
 *   double forward;
 * - a config's own dynamic NTK (stories260K-hf-derived rewritten) against ref.h at the bases of
 *   HF's formula (see test_dynamic);
 * - a config's own longrope (the same weights rewritten): short_factor at or below L0,
 *   long_factor past it, as HF's dynamic rope update (see test_longrope). ../shared/realmodels
 *   missing is a failure, not a skip. */
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

static char shared_dir[4096], tmp_dir[4096];

static int have_shared(void)
{
    const char *src = getenv("PELAB_SRC");
    snprintf(shared_dir, sizeof shared_dir, "%s/../shared/realmodels", src ? src : ".");
    struct stat st;
    return stat(shared_dir, &st) == 0 && S_ISDIR(st.st_mode);
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

static int argmax_d(const double *x, int n)
{
    int b = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[b]) b = i;
    return b;
}

/* reference_greedy_bos.json of the Hugging Face copy */
static cJSON *hf_ref;

static void test_stories_bin(int *ids_out)
{
    char path[4200], err[512] = "";
    snprintf(path, sizeof path, "%s/stories260K/stories260K.bin", shared_dir);
    lm_model *m = NULL;
    if (!TAP_OK(lm_open(path, &m, err, sizeof err) == PE_OK, "stories260K.bin opens (%s)", err))
        return;
    const lm_config *c = &m->c;
    TAP_OK(c->dim == 64 && c->hidden_dim == 172 && c->n_layers == 5 && c->n_heads == 8 &&
               c->n_kv_heads == 4 && c->vocab == 512 && c->seq_len == 512 && c->tied &&
               c->head_dim == 8 && c->rope.pairing == PE_PAIRING_INTERLEAVED,
           "header: dim 64, hidden 172, 5 layers, 8 heads, 4 kv heads, vocab 512, tied");
    TAP_OK(lm_param_count(c) == 260032, "260,032 parameters (%zu)", lm_param_count(c));
    ref_model r;
    if (!TAP_OK(ref_load_llama2c(&r, path) == 0, "the test's own reader")) {
        lm_close(m);
        return;
    }
    enum { STEPS = 200, CTX = 256 };
    ref_begin(&r, CTX);
    lm_session s;
    if (!TAP_OK(lm_session_init(&s, m, CTX, 1, err, sizeof err) == PE_OK, "session (%s)", err)) {
        ref_free(&r);
        lm_close(m);
        return;
    }
    double *rl = malloc(512 * sizeof *rl), worst = 0.0;
    float *steplog = malloc((size_t)(STEPS + 1) * 512 * sizeof *steplog);
    int tok = 1, ids[STEPS + 1], ref_agree = 0, rc = PE_OK;
    ids[0] = 1;
    for (int i = 0; i < STEPS && rc == PE_OK; i++) {
        rc = lm_forward(&s, &tok, 1, NULL, err, sizeof err);
        ref_step(&r, tok, rl);
        double d = max_diff_fd(s.logits, rl, 512);
        if (!(d <= worst)) worst = d;
        memcpy(steplog + (size_t)i * 512, s.logits, 512 * sizeof *steplog);
        tok = lm_argmax(s.logits, 512);
        ref_agree += tok == argmax_d(rl, 512);
        ids[i + 1] = tok;
    }
    TAP_OK(rc == PE_OK, "200 steps run (%s)", err);
    TAP_OK(worst < 1e-4, "every logit of 200 steps within 1e-4 of the double forward (max %.3g)",
           worst);
    TAP_OK(ref_agree == STEPS, "greedy choices equal the double forward's (%d of %d)", ref_agree,
           STEPS);
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(hf_ref, "greedy_ids");
    int same = 0;
    for (int i = 0; i < STEPS; i++) {
        const cJSON *w = cJSON_GetArrayItem(want, i);
        same += w && (int)w->valuedouble == ids[i + 1];
    }
    TAP_OK(same == STEPS, "200 greedy ids equal reference_greedy_bos.json's (%d)", same);
    memcpy(ids_out, ids, sizeof ids);

    /* attention rows: every layer and head at a few tokens */
    double aw = 0.0, *rp = malloc(CTX * sizeof *rp);
    float *lp = malloc(CTX * sizeof *lp);
    int ts[] = {0, 1, 7, 63, 199};
    for (int l = 0; l < 5; l++)
        for (int h = 0; h < 8; h++)
            for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++) {
                lm_attention_row(&s, l, h, ts[k], lp, err, sizeof err);
                ref_attn_row(&r, l, h, ts[k], rp);
                double d = max_diff_fd(lp, rp, ts[k] + 1), sum = 0.0;
                for (int j = 0; j <= ts[k]; j++) sum += lp[j];
                if (!(d <= aw)) aw = d;
                if (fabs(sum - 1.0) > 1e-5) aw = 1.0;
            }
    TAP_OK(aw <= 1e-5, "attention rows (5 layers x 8 heads x 5 tokens) within 1e-5, sum 1 (%.3g)",
           aw);
    TAP_OK(lm_attention_row(&s, 5, 0, 0, lp, err, sizeof err) == PE_EINVAL &&
               lm_attention_row(&s, 0, 0, STEPS, lp, err, sizeof err) == PE_EINVAL,
           "an attention row out of range is refused (%s)", err);

    /* the same 200 tokens as one prompt (chunks of LM_CHUNK), on two threads: the same bits */
    lm_session s2;
    float *batch = malloc((size_t)STEPS * 512 * sizeof *batch);
    if (TAP_OK(lm_session_init(&s2, m, CTX, 2, err, sizeof err) == PE_OK, "second session")) {
        rc = lm_forward(&s2, ids, STEPS, batch, err, sizeof err);
        TAP_OK(rc == PE_OK && memcmp(batch, steplog, (size_t)STEPS * 512 * sizeof *batch) == 0,
               "a 200-token prompt on 2 threads gives token-by-token's logits bit for bit");
        lm_session_reset(&s2);
        int over[CTX + 1];
        for (int i = 0; i <= CTX; i++) over[i] = 1;
        TAP_OK(lm_forward(&s2, over, CTX + 1, NULL, err, sizeof err) == PE_ERANGE,
               "a prompt past --ctx is refused (%s)", err);
        int bad = 512;
        TAP_OK(lm_forward(&s2, &bad, 1, NULL, err, sizeof err) == PE_EINVAL && strstr(err, "512"),
               "a token id past the vocabulary is refused (%s)", err);
        lm_session_free(&s2);
    }
    /* a different RoPE base changes the logits (the live base of the views) */
    pe_params p = c->rope;
    p.base = 500.0;
    lm_session_reset(&s);
    int two[2] = {1, 403};
    float l2[1024];
    TAP_OK(lm_session_set_rope(&s, &p, err, sizeof err) == PE_OK &&
               lm_forward(&s, two, 2, l2, err, sizeof err) == PE_OK &&
               memcmp(l2, steplog, 512 * sizeof *l2) == 0 &&
               memcmp(l2 + 512, steplog + 512, 512 * sizeof *l2) != 0,
           "RoPE base 500: position 0 unchanged, position 1 different");
    free(batch);
    free(lp);
    free(rp);
    free(rl);
    free(steplog);
    lm_session_free(&s);
    ref_free(&r);
    lm_close(m);
}

static void test_stories_hf(const int *bin_ids)
{
    char path[4200], err[512] = "";
    snprintf(path, sizeof path, "%s/stories260K-hf-derived", shared_dir);
    lm_model *m = NULL;
    if (!TAP_OK(lm_open(path, &m, err, sizeof err) == PE_OK, "the Hugging Face folder opens (%s)",
                err))
        return;
    TAP_OK(m->c.rope.pairing == PE_PAIRING_HALF && m->c.tied && m->c.norm_eps == 1e-5 &&
               strcmp(m->c.arch_name, "LlamaForCausalLM") == 0,
           "config: LlamaForCausalLM, rotate_half, tied, eps 1e-5");
    lm_session s;
    if (lm_session_init(&s, m, 256, 0, err, sizeof err) != PE_OK) {
        TAP_OK(0, "session (%s)", err);
        lm_close(m);
        return;
    }
    float *lg = malloc(200 * 512 * sizeof *lg);
    int rc = lm_forward(&s, bin_ids, 200, lg, err, sizeof err);
    int same = 0;
    for (int i = 0; i < 200 && rc == PE_OK; i++)
        same += lm_argmax(lg + i * 512, 512) == bin_ids[i + 1];
    TAP_OK(same == 200, "its greedy ids equal the .bin's (%d of 200)", same);
    const cJSON *byp = cJSON_GetObjectItemCaseSensitive(hf_ref, "logits_by_position");
    double worst = 0.0;
    for (int p = 0; p < 4; p++) {
        char k[8];
        snprintf(k, sizeof k, "%d", p);
        const cJSON *row = cJSON_GetObjectItemCaseSensitive(byp, k);
        for (int v = 0; v < 512; v++) {
            const cJSON *w = cJSON_GetArrayItem(row, v);
            double d = w ? fabs(lg[p * 512 + v] - w->valuedouble) : 1.0;
            if (!(d <= worst)) worst = d;
        }
    }
    TAP_OK(worst < 1e-4, "logits of positions 0..3 equal reference_greedy_bos.json's (max %.3g)",
           worst);
    free(lg);
    lm_session_free(&s);
    lm_close(m);
}

/* transformers' logits and greedy ids for tiny-random-llama-2 (corpus.json) in folder dir. */
static void check_tiny_random(const char *dir, const char *label)
{
    char path[4200], err[512] = "";
    snprintf(path, sizeof path, "%s/tiny-random-llama-2/corpus.json", shared_dir);
    cJSON *corpus = ref_read_json(path);
    lm_model *m = NULL;
    if (!TAP_OK(corpus && lm_open(dir, &m, err, sizeof err) == PE_OK, "%s opens (%s)", label,
                err)) {
        cJSON_Delete(corpus);
        return;
    }
    TAP_OK(!m->c.tied && m->cls != m->tok_emb && m->c.vocab == 3000, "%s: untied head, vocab 3000",
           label);
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(corpus, "model_cases");
    int nc = 0, good_logits = 0, good_ids = 0;
    double worst = 0.0;
    for (const cJSON *cs = cases ? cases->child : NULL; cs; cs = cs->next, nc++) {
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(cs, "input_ids");
        int ids[16], n = 0;
        for (const cJSON *v = in->child; v && n < 8; v = v->next) ids[n++] = (int)v->valuedouble;
        lm_session s;
        if (lm_session_init(&s, m, 64, 1, err, sizeof err) != PE_OK) break;
        lm_forward(&s, ids, n, NULL, err, sizeof err);
        int ok = 1;
        for (const cJSON *v = cJSON_GetObjectItemCaseSensitive(cs, "sampled_logits")->child; v;
             v = v->next) {
            double d = fabs(s.logits[atoi(v->string)] - v->valuedouble);
            if (!(d <= worst)) worst = d;
            if (!(d <= 1e-4)) ok = 0;
        }
        good_logits += ok;
        const cJSON *cont = cJSON_GetObjectItemCaseSensitive(cs, "greedy_continuation");
        int okid = lm_argmax(s.logits, 3000) ==
                   (int)cJSON_GetObjectItemCaseSensitive(cs, "greedy_token")->valuedouble;
        for (const cJSON *v = cont->child; v; v = v->next) {
            int t = lm_argmax(s.logits, 3000);
            if (t != (int)v->valuedouble) okid = 0;
            lm_forward(&s, &t, 1, NULL, err, sizeof err);
        }
        good_ids += okid;
        lm_session_free(&s);
    }
    TAP_OK(nc == 3 && good_logits == 3, "%s: transformers' logits to 1e-4 in 3 cases (max %.3g)",
           label, worst);
    TAP_OK(good_ids == 3, "%s: transformers' greedy token and 4-token continuations (%d of 3)",
           label, good_ids);
    lm_close(m);
    cJSON_Delete(corpus);
}

/* tiny-random-llama-2 rewritten as two F32 shards with an index; the second shard's data starts
 * at an offset that is not a multiple of 4 (the copy path). */
static void test_shards(void)
{
    char src[4200], p[4400];
    snprintf(src, sizeof src, "%s/tiny-random-llama-2/model.safetensors", shared_dir);
    ref_st st;
    if (!TAP_OK(ref_st_open(&st, src) == 0, "read tiny-random-llama-2 for sharding")) return;
    int n = 0;
    wr_tensor t[32];
    float *bufs[32];
    char names[32][128];
    for (const cJSON *it = st.hdr->child; it && n < 32; it = it->next) {
        if (strcmp(it->string, "__metadata__") == 0) continue;
        double *d = ref_st_get(&st, it->string);
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(it, "shape");
        wr_tensor *w = &t[n];
        snprintf(names[n], sizeof names[n], "%s", it->string);
        w->name = names[n];
        w->ndim = cJSON_GetArraySize(sh);
        w->shape[0] = (int64_t)sh->child->valuedouble;
        w->shape[1] = w->ndim == 2 ? (int64_t)sh->child->next->valuedouble : 1;
        size_t cnt = (size_t)(w->shape[0] * w->shape[1]);
        bufs[n] = malloc(cnt * sizeof(float));
        for (size_t i = 0; i < cnt; i++) bufs[n][i] = (float)d[i];
        w->data = bufs[n];
        free(d);
        n++;
    }
    ref_st_close(&st);
    char dir[4300];
    snprintf(dir, sizeof dir, "%s/sharded", tmp_dir);
    mkdir(dir, 0700);
    snprintf(src, sizeof src, "%s/tiny-random-llama-2/config.json", shared_dir);
    cJSON *cfg = ref_read_json(src);
    char *txt = cJSON_Print(cfg);
    snprintf(p, sizeof p, "%s/config.json", dir);
    wr_text(p, txt);
    free(txt);
    cJSON_Delete(cfg);
    int half = n / 2;
    snprintf(p, sizeof p, "%s/model-00001-of-00002.safetensors", dir);
    int ok = wr_safetensors(p, t, half, "F32", 1) == 0;
    snprintf(p, sizeof p, "%s/model-00002-of-00002.safetensors", dir);
    ok &= wr_safetensors(p, t + half, n - half, "F32", 0) == 0;
    cJSON *idx = cJSON_CreateObject(), *wm = cJSON_AddObjectToObject(idx, "weight_map");
    for (int i = 0; i < n; i++)
        cJSON_AddStringToObject(wm, t[i].name,
                                i < half ? "model-00001-of-00002.safetensors"
                                         : "model-00002-of-00002.safetensors");
    txt = cJSON_Print(idx);
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
    ok &= wr_text(p, txt) == 0;
    free(txt);
    cJSON_Delete(idx);
    for (int i = 0; i < n; i++) free(bufs[i]);
    TAP_OK(ok, "wrote two shards and an index");
    /* a file inside the folder names the folder */
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
    check_tiny_random(p, "the sharded F32 copy");
}

/* A folder at dir with config cfg (consumed) and the safetensors of realmodels/src linked. */
static int write_derived(const char *dir, const char *src, cJSON *cfg)
{
    char from[4400], p[4400];
    mkdir(dir, 0700);
    char *txt = cJSON_Print(cfg);
    snprintf(p, sizeof p, "%s/config.json", dir);
    int rc = txt ? wr_text(p, txt) : -1;
    free(txt);
    cJSON_Delete(cfg);
    snprintf(from, sizeof from, "%s/%s/model.safetensors", shared_dir, src);
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    unlink(p);
    return rc || symlink(from, p) ? -1 : 0;
}

/* The config.json of realmodels/src, parsed (NULL when unreadable). */
static cJSON *config_of(const char *src)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s/config.json", shared_dir, src);
    return ref_read_json(p);
}

/* tiny-random-llama-2's weights as a MistralForCausalLM folder (its config.json rewritten, the
 * safetensors linked) with sliding_window w (< 0: null). */
static int write_mistral(const char *dir, int w)
{
    cJSON *cfg = config_of("tiny-random-llama-2");
    if (!cfg) return -1;
    cJSON_ReplaceItemInObject(cfg, "architectures",
                              cJSON_CreateStringArray((const char *[]){"MistralForCausalLM"}, 1));
    cJSON_ReplaceItemInObject(cfg, "model_type", cJSON_CreateString("mistral"));
    cJSON_DeleteItemFromObject(cfg, "sliding_window");
    cJSON_AddItemToObject(cfg, "sliding_window",
                          w < 0 ? cJSON_CreateNull() : cJSON_CreateNumber(w));
    return write_derived(dir, "tiny-random-llama-2", cfg);
}

/* Mistral's sliding window (config sliding_window 4) against ref.h's window: every position's
 * logits and every attention row over 14 tokens; with sliding_window null the model is
 * tiny-random-llama-2 itself (no window). */
static void test_mistral_window(void)
{
    enum { N = 14, W = 4 };
    char dir[4300], err[512] = "";
    snprintf(dir, sizeof dir, "%s/mistral-w4", tmp_dir);
    if (!TAP_OK(write_mistral(dir, W) == 0, "wrote a Mistral folder with sliding_window %d", W))
        return;
    lm_model *m = NULL;
    ref_model r;
    if (!TAP_OK(lm_open(dir, &m, err, sizeof err) == PE_OK && m->c.window == W &&
                    ref_load_hf(&r, dir) == 0,
                "it opens as MistralForCausalLM, window %d (%s)", W, err)) {
        lm_close(m);
        return;
    }
    r.window = W;
    int ids[N] = {1, 450, 2996, 1735, 1701, 2991, 432, 1720, 975, 278, 17, 2000, 5, 999};
    lm_session s;
    float *lg = malloc((size_t)N * 3000 * sizeof *lg), row[N];
    double *rl = malloc(3000 * sizeof *rl), rr[N], wl = 0, wa = 0, off = 0;
    ref_begin(&r, N);
    if (TAP_OK(lm_session_init(&s, m, N, 1, err, sizeof err) == PE_OK &&
                   lm_forward(&s, ids, N, lg, err, sizeof err) == PE_OK,
               "a %d-token prompt runs (%s)", N, err)) {
        for (int t = 0; t < N; t++) {
            ref_step(&r, ids[t], rl);
            wl = fmax(wl, max_diff_fd(lg + (size_t)t * 3000, rl, 3000));
        }
        for (int l = 0; l < r.L; l++)
            for (int h = 0; h < r.H; h++)
                for (int t = 0; t < N; t++) {
                    lm_attention_row(&s, l, h, t, row, err, sizeof err);
                    ref_attn_row(&r, l, h, t, rr);
                    wa = fmax(wa, max_diff_fd(row, rr, t + 1));
                    for (int j = 0; j + W <= t; j++) off = fmax(off, fabs(row[j]));
                }
        lm_session_free(&s);
    }
    TAP_OK(wl <= 1e-4, "every position's logits = ref.h with a window of %d (max %.3g)", W, wl);
    TAP_OK(wa <= 1e-5 && off == 0,
           "attention rows = ref.h's (%.3g); keys %d or more back get exactly 0", wa, W);
    /* the window matters here: without it the last logits differ */
    ref_model r0;
    if (ref_load_hf(&r0, dir) == 0) {
        ref_begin(&r0, N);
        for (int t = 0; t < N; t++) ref_step(&r0, ids[t], rl);
        TAP_OK(max_diff_fd(lg + (size_t)(N - 1) * 3000, rl, 3000) > 1e-3,
               "and they differ from the unwindowed model's");
        ref_free(&r0);
    }
    lm_close(m);
    ref_free(&r);
    m = NULL;
    snprintf(dir, sizeof dir, "%s/mistral-null", tmp_dir);
    TAP_OK(write_mistral(dir, -1) == 0 && lm_open(dir, &m, err, sizeof err) == PE_OK &&
               m->c.window == 0,
           "sliding_window null: no window (%s)", err);
    lm_close(m);
    free(lg);
    free(rl);
}

/* A random GPT-2 folder: D 32, 4 heads, 2 layers, vocab 61, 24 positions. */
enum { G_D = 32, G_H = 4, G_L = 2, G_V = 61, G_P = 24, G_F = 128 };

static int write_gpt2(const char *dir, const char *dtype)
{
    return wr_gpt2(dir, dtype, G_D, G_H, G_L, G_V, G_P);
}

static void test_gpt2(void)
{
    char d32[4300], d16[4300], err[512] = "";
    snprintf(d32, sizeof d32, "%s/gpt2-f32", tmp_dir);
    snprintf(d16, sizeof d16, "%s/gpt2-f16", tmp_dir);
    TAP_OK(write_gpt2(d32, "F32") == 0 && write_gpt2(d16, "F16") == 0,
           "wrote a random GPT-2 folder in F32 and F16");
    lm_model *m = NULL, *m16 = NULL;
    size_t used = pe_mem_used();
    if (!TAP_OK(lm_open(d32, &m, err, sizeof err) == PE_OK, "random GPT-2 opens (%s)", err)) return;
    /* the layers' linears are packed at load and their sources given back: c_attn's pages once
     * for its three views (counted once: the budget holds what the model holds) */
    int packed = 1;
    for (int l = 0; l < m->c.n_layers; l++) {
        const lm_layer *y = &m->layers[l];
        const lm_linear *Ls[] = {&y->q, &y->k, &y->v, &y->o, &y->up, &y->down};
        for (int i = 0; i < 6; i++) packed &= Ls[i]->p != NULL && Ls[i]->w == NULL;
    }
    TAP_OK(packed && pe_mem_used() - used == m->held,
           "GPT-2's linears packed at load, the budget holds the model's %zu bytes (%zu)", m->held,
           pe_mem_used() - used);
    TAP_OK(m->c.arch == LM_ARCH_GPT2 && m->c.tied && m->c.hidden_dim == G_F,
           "GPT-2: tied head, n_inner null = 4 n_embd");
    ref_model r;
    if (!TAP_OK(ref_load_hf(&r, d32) == 0, "the test's own reader of the GPT-2 folder")) {
        lm_close(m);
        return;
    }
    ref_begin(&r, G_P);
    int ids[G_P];
    uint64_t seed = 7;
    for (int i = 0; i < G_P; i++)
        ids[i] = (int)((seed = seed * 6364136223846793005ull + 1) >> 40) % G_V;
    lm_session s;
    lm_session_init(&s, m, G_P, 2, err, sizeof err);
    float *lg = malloc(G_P * G_V * sizeof *lg);
    double rl[G_V], worst = 0.0;
    int rc = lm_forward(&s, ids, G_P, lg, err, sizeof err);
    for (int i = 0; i < G_P; i++) {
        ref_step(&r, ids[i], rl);
        double d = max_diff_fd(lg + i * G_V, rl, G_V);
        if (!(d <= worst)) worst = d;
    }
    TAP_OK(rc == PE_OK && worst < 1e-4,
           "GPT-2 logits of 24 positions within 1e-4 of the double forward (max %.3g)", worst);
    double aw = 0.0, rp[G_P];
    float lp[G_P];
    for (int l = 0; l < G_L; l++)
        for (int h = 0; h < G_H; h++)
            for (int t = 0; t < G_P; t++) {
                lm_attention_row(&s, l, h, t, lp, err, sizeof err);
                ref_attn_row(&r, l, h, t, rp);
                double d = max_diff_fd(lp, rp, t + 1);
                if (!(d <= aw)) aw = d;
            }
    TAP_OK(aw <= 1e-5, "GPT-2 attention rows of every layer, head and token within 1e-5 (%.3g)",
           aw);
    int one = 0;
    TAP_OK(lm_forward(&s, &one, 1, NULL, err, sizeof err) == PE_ERANGE,
           "past the context is refused (%s)", err);
    lm_session_free(&s);
    /* a larger cache than the learned table: position 24 is refused by the table */
    lm_session_init(&s, m, G_P + 4, 1, err, sizeof err);
    int many[G_P + 1] = {0};
    TAP_OK(lm_forward(&s, many, G_P + 1, NULL, err, sizeof err) == PE_ERANGE &&
               strstr(err, "learned positions"),
           "GPT-2 past its learned positions is refused (%s)", err);
    lm_session_free(&s);
    if (TAP_OK(lm_open(d16, &m16, err, sizeof err) == PE_OK, "the F16 copy opens (%s)", err)) {
        lm_session s16;
        float *l16 = malloc(G_P * G_V * sizeof *l16);
        lm_session_init(&s16, m16, G_P, 1, err, sizeof err);
        lm_forward(&s16, ids, G_P, l16, err, sizeof err);
        TAP_OK(memcmp(l16, lg, G_P * G_V * sizeof *lg) == 0,
               "F16 weights (exact values) give the F32 logits bit for bit");
        lm_session_free(&s16);
        free(l16);
        lm_close(m16);
    }
    free(lg);
    ref_free(&r);
    lm_close(m);
    TAP_OK(pe_mem_used() == used,
           "both GPT-2 models' bytes leave the budget when closed (%zu left)",
           pe_mem_used() - used);
}

/* The versioned export ("ak42" version 1) of the same weights, written by the test in the order
 * of llama2.c export.py version1_export, gives the legacy file's logits bit for bit. */
static void test_llama2c_v1(void)
{
    char path[4200], out[4300], err[512] = "";
    snprintf(path, sizeof path, "%s/stories260K/stories260K.bin", shared_dir);
    snprintf(out, sizeof out, "%s/v1.bin", tmp_dir);
    FILE *f = fopen(path, "rb");
    unsigned char *b = malloc(1056540);
    size_t n = f ? fread(b, 1, 1056540, f) : 0;
    if (f) fclose(f);
    if (!TAP_OK(n == 1056540, "read stories260K.bin")) {
        free(b);
        return;
    }
    /* legacy order and sizes in floats: emb, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, norm */
    const size_t sz[] = {32768, 320, 20480, 10240, 10240, 20480, 320, 55040, 55040, 55040, 64};
    size_t at[11], o = 28;
    for (int i = 0; i < 11; i++) at[i] = o, o += 4 * sz[i];
    const int order[] = {1, 6, 10, 0, 2, 3, 4, 5, 7, 8, 9}; /* version1_export's */
    unsigned char hdr[256] = {0};
    uint32_t magic = 0x616b3432;
    int32_t ver = 1;
    memcpy(hdr, &magic, 4);
    memcpy(hdr + 4, &ver, 4);
    memcpy(hdr + 8, b, 28);
    hdr[36] = 1;
    FILE *w = fopen(out, "wb");
    fwrite(hdr, 1, 256, w);
    for (int i = 0; i < 11; i++) fwrite(b + at[order[i]], 4, sz[order[i]], w);
    fclose(w);
    free(b);
    lm_model *a = NULL, *v = NULL;
    int rc = lm_open(path, &a, err, sizeof err);
    if (rc == PE_OK) rc = lm_open(out, &v, err, sizeof err);
    if (TAP_OK(rc == PE_OK && strcmp(v->c.arch_name, "llama2.c v1") == 0,
               "an ak42 version 1 file opens (%s)", err)) {
        lm_session s1, s2;
        int ids[4] = {1, 403, 407, 261};
        float l1[4 * 512], l2[4 * 512];
        lm_session_init(&s1, a, 8, 1, err, sizeof err);
        lm_session_init(&s2, v, 8, 1, err, sizeof err);
        lm_forward(&s1, ids, 4, l1, err, sizeof err);
        lm_forward(&s2, ids, 4, l2, err, sizeof err);
        TAP_OK(memcmp(l1, l2, sizeof l1) == 0, "version 1 gives the legacy file's logits");
        lm_session_free(&s1);
        lm_session_free(&s2);
    }
    lm_close(a);
    lm_close(v);
}

/* Through the model interface (lmi.h): the registry finds both formats; steps, rows, the RoPE
 * base and the offset replay exactly what a fresh lm session computes. */
static void test_lmi(void)
{
    char bin[4200], hf[4200], err[512] = "";
    snprintf(bin, sizeof bin, "%s/stories260K/stories260K.bin", shared_dir);
    snprintf(hf, sizeof hf, "%s/stories260K-hf-derived/", shared_dir);
    lmi_model a, b;
    int rc = lmi_open(&a, bin, err, sizeof err);
    if (!TAP_OK(rc == PE_OK && strcmp(a.info.arch, "llama2c") == 0 && a.info.kv_heads == 4 &&
                    strcmp(a.info.pe_name, "rope") == 0 && a.info.rope_base == 10000.0 &&
                    strcmp(a.info.name, "stories260K.bin") == 0,
                "lmi_open: stories260K.bin is llama2c, rope, 4 kv heads (%s)", err))
        return;
    rc = lmi_open(&b, hf, err, sizeof err);
    TAP_OK(rc == PE_OK && strcmp(b.info.arch, "hf") == 0 &&
               strcmp(b.info.name, "stories260K-hf-derived") == 0 && b.info.bos == 1,
           "lmi_open: the folder is hf, named by the folder (%s)", err);
    int ids[12] = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315};
    lmi_session s = {0};
    lmi_session_init(&s, &a, 16, err, sizeof err);
    const float *lg = NULL;
    for (int i = 0; i < 12; i++) lmi_step(&s, ids[i], &lg, err, sizeof err);
    lm_session ref;
    lm_session_init(&ref, lm_of_lmi(&a), 16, 1, err, sizeof err);
    lm_forward(&ref, ids, 12, NULL, err, sizeof err);
    float w1[16], w2[16];
    int same = 1;
    for (int l = 0; l < 5; l++)
        for (int h = 0; h < 8; h++) {
            lmi_attn_row(&s, l, h, 11, w1, NULL, NULL, err, sizeof err);
            lm_attention_row(&ref, l, h, 11, w2, err, sizeof err);
            same &= memcmp(w1, w2, sizeof w1[0] * 12) == 0;
        }
    TAP_OK(s.len == 12 && lg && memcmp(lg, ref.logits, 512 * sizeof *lg) == 0 && same,
           "12 steps: the logits and every row equal lm_forward's");
    TAP_OK(lmi_attn_row(&s, 0, 0, 3, w1, w2, NULL, err, sizeof err) == LMI_ENOSPLIT,
           "RoPE has no content/position split (%s)", err);
    /* RoPE base 20000: the replay equals a fresh session with that base */
    pe_params p = (lm_of_lmi(&a))->c.rope;
    p.base = 20000.0;
    lm_session_reset(&ref);
    lm_session_set_rope(&ref, &p, err, sizeof err);
    lm_forward(&ref, ids, 12, NULL, err, sizeof err);
    rc = lmi_set_rope_base(&s, 20000.0, err, sizeof err);
    TAP_OK(rc == PE_OK && s.rope_base == 20000.0 &&
               memcmp(s.logits, ref.logits, 512 * sizeof *lg) == 0,
           "set_rope_base replays the tokens under the new base (%s)", err);
    /* offset 100: the same as a fresh session at offset 100 */
    lm_session_reset(&ref);
    ref.offset = 100;
    lm_forward(&ref, ids, 12, NULL, err, sizeof err);
    rc = lmi_set_offset(&s, 100, err, sizeof err);
    TAP_OK(rc == PE_OK && memcmp(s.logits, ref.logits, 512 * sizeof *lg) == 0,
           "set_offset replays at positions 100.. (%s)", err);
    lm_session_reset(&ref);
    ref.offset = 0;
    lm_forward(&ref, ids, 12, NULL, err, sizeof err);
    TAP_OK(memcmp(s.logits, ref.logits, 512 * sizeof *lg) != 0, "and the shift changed the logits");
    lmi_token tk[8];
    TAP_OK(lmi_tokenize(&a, "Once", 4, tk, 4, err, sizeof err) < 0 && strstr(err, "--ids") &&
               strstr(err, "looked for"),
           "no tokenizer beside it: text is refused naming what was looked for (%s)", err);
    char txt[16];
    TAP_OK(lmi_token_text(&a, 403, txt, sizeof txt) > 0 && strcmp(txt, "[403]") == 0,
           "token text without a tokenizer is the id");
    char tp[4300];
    snprintf(tp, sizeof tp, "%s/stories260K/tok512.bin", shared_dir);
    rc = lm_lmi_set_tokenizer(&a, tp, err, sizeof err);
    int nt = rc == PE_OK ? lmi_tokenize(&a, "Once upon", 9, tk, 8, err, sizeof err) : -1;
    /* run.c's encode of "Once upon" with BOS; the spans cover the typed bytes */
    int spans_ok =
        nt >= 2 && tk[0].id == 1 && tk[0].start == 0 && tk[0].end == 0 && tk[nt - 1].end == 9;
    for (int i = 1; i < nt; i++) spans_ok &= tk[i].start == tk[i - 1].end;
    TAP_OK(spans_ok,
           "--tokenizer tok512.bin: \"Once upon\" is BOS + %d tokens whose spans cover "
           "it in order (%s)",
           nt - 1, err);
    TAP_OK(lmi_token_text(&a, 403, txt, sizeof txt) > 0 && strcmp(txt, "[403]") != 0,
           "and token 403 shows its text (\"%s\")", txt);
    lmi_model tiny;
    char tinyp[4300];
    snprintf(tinyp, sizeof tinyp, "%s/assets/models/rope.pelab",
             getenv("PELAB_SRC") ? getenv("PELAB_SRC") : ".");
    if (lmi_open(&tiny, tinyp, err, sizeof err) == PE_OK) {
        TAP_OK(lm_of_lmi(&tiny) == NULL &&
                   lm_lmi_set_tokenizer(&tiny, tp, err, sizeof err) == PE_EINVAL,
               "a shipped model keeps its own vocabulary (%s)", err);
        lmi_close(&tiny);
    }
    lm_session_free(&ref);
    lmi_session_free(&s);
    lmi_close(&a);
    lmi_close(&b);
}

/* ---- dynamic NTK of the config ------------------------------------------------------------
 * A config's own rope_scaling {"type": "dynamic"} grows with the sequence as
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
 */
enum { N = 14, L0 = 8, V = 512, HD = 8 }; /* stories260K-hf-derived, rewritten */
static const double FACTOR = 4.0, THETA = 10000.0;

/* HF's dynamic NTK base at sequence length len (the formula above, in double). */
static double dyn_base(int len)
{
    if (len <= L0) return THETA;
    return THETA * pow(FACTOR * len / L0 - (FACTOR - 1.0), (double)HD / (HD - 2.0));
}

/* stories260K-hf-derived with max_position_embeddings L0 and rope_scaling key (rope_scaling or
 * rope_parameters spelling) dynamic, factor FACTOR; the safetensors linked. */
static int write_dynamic(const char *dir, int new_spelling)
{
    cJSON *cfg = config_of("stories260K-hf-derived");
    if (!cfg) return -1;
    cJSON_ReplaceItemInObject(cfg, "max_position_embeddings", cJSON_CreateNumber(L0));
    cJSON *rs = cJSON_CreateObject();
    cJSON_AddStringToObject(rs, new_spelling ? "rope_type" : "type", "dynamic");
    cJSON_AddNumberToObject(rs, "factor", FACTOR);
    cJSON_ReplaceItemInObject(cfg, "rope_scaling", rs);
    return write_derived(dir, "stories260K-hf-derived", cfg);
}

static const int dyn_ids[N] = {1, 403, 407, 261, 378, 390, 261, 422, 344, 273, 306, 418, 352, 347};

/* ref.h over dyn_ids[0..n) with base(t) for token t's rotation; logits (n, V) of every position. */
static int dyn_ref_run(const char *dir, int n, const double *base, double *logits, ref_model *keep)
{
    ref_model r;
    if (ref_load_hf(&r, dir) != 0) return -1;
    ref_begin(&r, n);
    for (int t = 0; t < n; t++) {
        r.base = base[t];
        ref_step(&r, dyn_ids[t], logits + (size_t)t * V);
    }
    if (keep)
        *keep = r;
    else
        ref_free(&r);
    return 0;
}

static void test_dynamic_lm(const char *dir, const char *label)
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
    int rc = lm_forward(&s, dyn_ids, N, lg, err, sizeof err);
    dyn_ref_run(dir, N, base, rl, NULL);
    double d = rc == PE_OK ? max_diff_fd(lg, rl, N * V) : INFINITY;
    TAP_OK(d <= 1e-4,
           "%s: one forward of %d tokens = ref.h with every token at base(%d) = %.6g "
           "(max %.3g)",
           label, N, N, dyn_base(N), d);
    /* the old fixed base (factor x L0) differs: the test can tell */
    for (int t = 0; t < N; t++) base[t] = dyn_base((int)(FACTOR * L0));
    dyn_ref_run(dir, N, base, rl, NULL);
    TAP_OK(max_diff_fd(lg, rl, N * V) > 1e-3, "%s: and not the fixed base(%d) of before", label,
           (int)(FACTOR * L0));
    /* token by token, as HF generate with its cache */
    lm_session_reset(&s);
    rc = PE_OK;
    for (int t = 0; t < N && rc == PE_OK; t++)
        rc = lm_forward(&s, dyn_ids + t, 1, lg + (size_t)t * V, err, sizeof err);
    for (int t = 0; t < N; t++) base[t] = dyn_base(t + 1);
    dyn_ref_run(dir, N, base, rl, NULL);
    d = rc == PE_OK ? max_diff_fd(lg, rl, N * V) : INFINITY;
    TAP_OK(d <= 1e-4,
           "%s: token by token, token t is rotated under base(max(t + 1, %d)), cached keys kept "
           "(max %.3g)",
           label, L0, d);
    /* a short sequence after the long one: HF resets to the trained frequencies */
    lm_session_reset(&s);
    rc = lm_forward(&s, dyn_ids, 5, lg, err, sizeof err);
    for (int t = 0; t < 5; t++) base[t] = THETA;
    dyn_ref_run(dir, 5, base, rl, NULL);
    d = rc == PE_OK ? max_diff_fd(lg, rl, 5 * V) : INFINITY;
    TAP_OK(d <= 1e-4 && s.rope.scaling.seq_len == 0,
           "%s: then 5 tokens (< L0) run at the trained base %g (max %.3g)", label, THETA, d);
    /* preset for a window (eval): lm_session_dynamic(N) before feeding in blocks */
    lm_session_reset(&s);
    rc = lm_session_dynamic(&s, N, err, sizeof err);
    for (int i = 0; i < N && rc >= 0; i += 4)
        rc =
            lm_forward(&s, dyn_ids + i, N - i < 4 ? N - i : 4, lg + (size_t)i * V, err, sizeof err);
    for (int t = 0; t < N; t++) base[t] = dyn_base(N);
    dyn_ref_run(dir, N, base, rl, NULL);
    d = rc >= 0 ? max_diff_fd(lg, rl, N * V) : INFINITY;
    TAP_OK(d <= 1e-4, "%s: lm_session_dynamic(%d) then blocks of 4 = one forward (max %.3g)", label,
           N, d);
    lm_session_free(&s);
out:
    free(lg);
    free(rl);
    lm_close(m);
}

/* Through lmi (the attention views): after k steps the rows and logits are those of one forward
 * over the k tokens, for every k; an offset moves the base with the largest position. */
static void test_dynamic_lmi(const char *dir)
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
        rc = lmi_step(&s, dyn_ids[k - 1], &lg, err, sizeof err);
        for (int t = 0; t < k; t++) base[t] = dyn_base(k);
        ref_model r;
        if (rc != PE_OK || dyn_ref_run(dir, k, base, rl, &r) != 0) break;
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
        lm_forward(&ls, dyn_ids, N, NULL, err, sizeof err);
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
    dyn_ref_run(dir, N, base, rl, NULL);
    TAP_OK(rc == PE_OK && max_diff_fd(s.logits, rl + (size_t)(N - 1) * V, V) <= 1e-4,
           "lmi: offset 0 and --scaling none (as trained) give base(%d) again (%s)", N, err);
    free(rl);
    lmi_session_free(&s);
    lmi_close(&m);
}

static void test_dynamic(void)
{
    char d1[4200], d2[4200];
    snprintf(d1, sizeof d1, "%s/dyn-type", tmp_dir);
    snprintf(d2, sizeof d2, "%s/dyn-rope-type", tmp_dir);
    TAP_OK(write_dynamic(d1, 0) == 0 && write_dynamic(d2, 1) == 0,
           "wrote two folders: rope_scaling {\"type\"|\"rope_type\": \"dynamic\", factor %g}",
           FACTOR);
    test_dynamic_lm(d1, "\"type\"");
    test_dynamic_lm(d2, "\"rope_type\"");
    test_dynamic_lmi(d1);
}

/* ---- LongRoPE of the config --------------------------------------------------------------
 * A config's own longrope (Phi-3 / Phi-4-mini style: short_factor, long_factor,
 * original_max_position_embeddings L0) switches factor sets by sequence length as
 * transformers' dynamic rope update does (_longrope_frequency_update): a forward whose largest
 * position + 1 is past L0 uses long_factor, any other short_factor (the set at init); the
 * attention factor is the same for both. Against ref.h's double forward with the frequencies
 * the test computes itself from HF's _compute_longrope_parameters:
 *   theta_k = 1 / (ext_k * base^(2k/d)), ext = long_factor if seq_len > L0 else short_factor,
 *   cos and sin times a = attention_factor, else sqrt(1 + ln(f) / ln(L0)), f = max_pos / L0.
 * stories260K-hf-derived (real trained weights, head_dim 8: 4 factors per list; random weights
 * of the same shape attend almost uniformly, so the two sets would hardly differ) rewritten:
 * L0 8, max_position_embeddings 32 (f = 4). */
enum { LR_N = 14, LR_L0 = 8, LR_MAXPOS = 32 };
static const double lr_short[4] = {1.0, 1.25, 1.5, 2.0}, lr_long[4] = {1.0, 3.0, 9.0, 27.0};
static const double LR_ATTN_GIVEN = 1.125;

/* variant 0: rope_scaling {"type": "longrope"} and the top-level original_max_position_embeddings
 * (Phi-3); 1: rope_parameters {"rope_type": "longrope", original_max_position_embeddings,
 * attention_factor} (Transformers v5, Phi-4-mini's explicit factor). */
static int write_longrope(const char *dir, int variant)
{
    cJSON *cfg = config_of("stories260K-hf-derived");
    if (!cfg) return -1;
    cJSON_ReplaceItemInObject(cfg, "max_position_embeddings", cJSON_CreateNumber(LR_MAXPOS));
    cJSON *rs = cJSON_CreateObject();
    cJSON_AddStringToObject(rs, variant ? "rope_type" : "type", "longrope");
    cJSON_AddItemToObject(rs, "short_factor", cJSON_CreateDoubleArray(lr_short, 4));
    cJSON_AddItemToObject(rs, "long_factor", cJSON_CreateDoubleArray(lr_long, 4));
    if (variant) {
        cJSON_AddNumberToObject(rs, "original_max_position_embeddings", LR_L0);
        cJSON_AddNumberToObject(rs, "attention_factor", LR_ATTN_GIVEN);
        cJSON_DeleteItemFromObject(cfg, "rope_scaling");
        cJSON_AddItemToObject(cfg, "rope_parameters", rs);
    } else {
        cJSON_AddNumberToObject(cfg, "original_max_position_embeddings", LR_L0);
        cJSON_ReplaceItemInObject(cfg, "rope_scaling", rs);
    }
    return write_derived(dir, "stories260K-hf-derived", cfg);
}

static double lr_attn(int variant)
{
    return variant ? LR_ATTN_GIVEN
                   : sqrt(1.0 + log((double)LR_MAXPOS / LR_L0) / log((double)LR_L0));
}

/* ref.h over dyn_ids[0..n) with token t rotated under set[t] (0 short, 1 long) and attention
 * factor a; logits (n, V) of every position. */
static int lr_ref_run(const char *dir, int n, const int *set, double a, double *logits,
                      ref_model *keep)
{
    ref_model r;
    if (ref_load_hf(&r, dir) != 0) return -1;
    ref_begin(&r, n);
    r.amp = a;
    for (int t = 0; t < n; t++) {
        r.ext = set[t] ? lr_long : lr_short;
        ref_step(&r, dyn_ids[t], logits + (size_t)t * V);
    }
    if (keep)
        *keep = r;
    else
        ref_free(&r);
    return 0;
}

/* every token under one set */
static void lr_all(int *set, int n, int v)
{
    for (int t = 0; t < n; t++) set[t] = v;
}

static void test_longrope_lm(const char *dir, int variant, const char *label)
{
    char err[512] = "";
    lm_model *m = NULL;
    double a = lr_attn(variant);
    if (!TAP_OK(lm_open(dir, &m, err, sizeof err) == PE_OK &&
                    m->c.rope.scaling.type == PE_SCALING_LONGROPE &&
                    m->c.rope.scaling.original_ctx == LR_L0 && m->c.rope.scaling.n_factors == 4,
                "%s: opens with longrope, L0 %d, 4 factors per list (%s)", label, LR_L0, err)) {
        lm_close(m);
        return;
    }
    float *lg = malloc((size_t)LR_N * V * sizeof *lg);
    double *rl = malloc((size_t)LR_N * V * sizeof *rl), *ro = malloc((size_t)LR_N * V * sizeof *ro);
    int set[LR_N];
    lm_session s;
    if (!TAP_OK(lm_session_init(&s, m, LR_MAXPOS, 1, err, sizeof err) == PE_OK, "session (%s)",
                err))
        goto out;
    TAP_OK(fabs(s.rope_attn - a) <= 1e-12, "%s: attention factor %.10g (HF's %.10g)", label,
           s.rope_attn, a);
    /* one forward of N > L0 tokens: every position with long_factor */
    int rc = lm_forward(&s, dyn_ids, LR_N, lg, err, sizeof err);
    lr_all(set, LR_N, 1);
    lr_ref_run(dir, LR_N, set, a, rl, NULL);
    double d = rc == PE_OK ? max_diff_fd(lg, rl, LR_N * V) : INFINITY;
    TAP_OK(d <= 1e-4, "%s: one forward of %d tokens (> L0 %d) = ref.h with long_factor (max %.3g)",
           label, LR_N, LR_L0, d);
    lr_all(set, LR_N, 0);
    lr_ref_run(dir, LR_N, set, a, ro, NULL);
    double sep = max_diff_fd(lg, ro, LR_N * V);
    TAP_OK(sep > 1e-2, "%s: and not short_factor's (they differ by %.3g: the test can tell)", label,
           sep);
    /* one forward of exactly L0 tokens, then of 5: short_factor (seq_len > L0 is HF's test) */
    int lens[2] = {LR_L0, 5};
    for (int i = 0; i < 2; i++) {
        lm_session_reset(&s);
        rc = lm_forward(&s, dyn_ids, lens[i], lg, err, sizeof err);
        lr_all(set, lens[i], 0);
        lr_ref_run(dir, lens[i], set, a, rl, NULL);
        d = rc == PE_OK ? max_diff_fd(lg, rl, lens[i] * V) : INFINITY;
        TAP_OK(d <= 1e-4 && s.rope.scaling.seq_len <= LR_L0,
               "%s: after the long one, a forward of %d tokens (<= L0) runs with short_factor "
               "(max %.3g)",
               label, lens[i], d);
    }
    /* token by token (HF generate with its cache): token t with long_factor once t + 1 > L0,
     * the keys cached before keep short_factor's rotation */
    lm_session_reset(&s);
    rc = PE_OK;
    for (int t = 0; t < LR_N && rc == PE_OK; t++)
        rc = lm_forward(&s, dyn_ids + t, 1, lg + (size_t)t * V, err, sizeof err);
    for (int t = 0; t < LR_N; t++) set[t] = t + 1 > LR_L0;
    lr_ref_run(dir, LR_N, set, a, rl, NULL);
    d = rc == PE_OK ? max_diff_fd(lg, rl, LR_N * V) : INFINITY;
    TAP_OK(d <= 1e-4,
           "%s: token by token, tokens 0..%d short_factor, %d..%d long_factor, cached keys kept "
           "(max %.3g)",
           label, LR_L0 - 1, LR_L0, LR_N - 1, d);
    /* a prompt of 6 then single tokens: the prompt short, the tokens past L0 long */
    lm_session_reset(&s);
    rc = lm_forward(&s, dyn_ids, 6, lg, err, sizeof err);
    for (int t = 6; t < LR_N && rc == PE_OK; t++)
        rc = lm_forward(&s, dyn_ids + t, 1, lg + (size_t)t * V, err, sizeof err);
    d = rc == PE_OK ? max_diff_fd(lg, rl, LR_N * V) : INFINITY;
    TAP_OK(d <= 1e-4, "%s: a prompt of 6 and 8 single tokens: the same (max %.3g)", label, d);
    /* preset for a window (eval): lm_session_dynamic(N) before feeding in blocks of 4, the first
     * of which alone would be short */
    lm_session_reset(&s);
    rc = lm_session_dynamic(&s, LR_N, err, sizeof err);
    for (int i = 0; i < LR_N && rc >= 0; i += 4)
        rc = lm_forward(&s, dyn_ids + i, LR_N - i < 4 ? LR_N - i : 4, lg + (size_t)i * V, err,
                        sizeof err);
    lr_all(set, LR_N, 1);
    lr_ref_run(dir, LR_N, set, a, rl, NULL);
    d = rc >= 0 ? max_diff_fd(lg, rl, LR_N * V) : INFINITY;
    TAP_OK(d <= 1e-4, "%s: lm_session_dynamic(%d) then blocks of 4 = one forward (max %.3g)", label,
           LR_N, d);
    lm_session_free(&s);
out:
    free(lg);
    free(rl);
    free(ro);
    lm_close(m);
}

/* Through lmi (the attention views): after k steps the rows and logits are those of one forward
 * over the k tokens (short_factor for k <= L0, long_factor for every token past it); an offset
 * moves the set with the largest position; a new sequence starts short again. */
static void test_longrope_lmi(const char *dir)
{
    char err[512] = "";
    lmi_model m;
    double a = lr_attn(0);
    if (!TAP_OK(lmi_open(&m, dir, err, sizeof err) == PE_OK, "lmi_open (%s)", err)) return;
    lmi_session s = {0};
    if (!TAP_OK(lmi_session_init(&s, &m, 64, err, sizeof err) == PE_OK, "lmi session (%s)", err)) {
        lmi_close(&m);
        return;
    }
    double *rl = malloc((size_t)LR_N * V * sizeof *rl), rr[LR_N], wr = 0, wl = 0;
    float row[LR_N];
    int set[LR_N];
    const float *lg = NULL;
    int rc = PE_OK;
    for (int k = 1; k <= LR_N && rc == PE_OK; k++) {
        rc = lmi_step(&s, dyn_ids[k - 1], &lg, err, sizeof err);
        lr_all(set, k, k > LR_L0);
        ref_model r;
        if (rc != PE_OK || lr_ref_run(dir, k, set, a, rl, &r) != 0) break;
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
           "lmi longrope: after each of %d steps, logits (%.3g) and every row (%.3g) = one "
           "forward with the set of k tokens (%s)",
           LR_N, wl, wr, err);
    /* a new sequence of 5: short again */
    lmi_session_reset(&s);
    for (int k = 1; k <= 5 && rc == PE_OK; k++)
        rc = lmi_step(&s, dyn_ids[k - 1], &lg, err, sizeof err);
    lr_all(set, 5, 0);
    lr_ref_run(dir, 5, set, a, rl, NULL);
    TAP_OK(rc == PE_OK && max_diff_fd(lg, rl + 4 * V, V) <= 1e-4,
           "lmi longrope: a new sequence of 5 tokens runs with short_factor again (%s)", err);
    /* offset 4: the largest position + 1 is 9 > L0, every token long (ref.h has no offset: a
     * plain session at offset 4 with the long set chosen by hand) */
    rc = lmi_set_offset(&s, 4, err, sizeof err);
    lm_session ls;
    if (TAP_OK(rc == PE_OK && lm_session_init(&ls, lm_of_lmi(&m), 16, 1, err, sizeof err) == PE_OK,
               "lmi longrope: offset 4 (%s)", err)) {
        ls.offset = 4;
        pe_params p = ls.rope;
        int was_short = p.scaling.seq_len <= LR_L0;
        p.scaling.seq_len = LR_L0 + 1;
        lm_session_set_rope(&ls, &p, err, sizeof err);
        lm_forward(&ls, dyn_ids, 5, NULL, err, sizeof err);
        int same_long = memcmp(s.logits, ls.logits, V * sizeof *s.logits) == 0;
        TAP_OK(was_short && same_long,
               "lmi longrope offset 4, 5 tokens: the logits of a session with long_factor "
               "exactly");
        lm_session_free(&ls);
    }
    /* back to offset 0 and --scaling none (as trained): the 5 tokens short again */
    pe_rope_scaling none = {.type = PE_SCALING_NONE};
    rc = lmi_set_offset(&s, 0, err, sizeof err);
    if (rc == PE_OK) rc = lmi_set_rope_scaling(&s, &none, err, sizeof err);
    TAP_OK(rc == PE_OK && max_diff_fd(s.logits, rl + 4 * V, V) <= 1e-4,
           "lmi longrope: offset 0 and --scaling none (as trained) give short_factor again (%s)",
           err);
    free(rl);
    lmi_session_free(&s);
    lmi_close(&m);
}

static void test_longrope(void)
{
    char d1[4200], d2[4200];
    snprintf(d1, sizeof d1, "%s/longrope-phi3", tmp_dir);
    snprintf(d2, sizeof d2, "%s/longrope-v5", tmp_dir);
    TAP_OK(write_longrope(d1, 0) == 0 && write_longrope(d2, 1) == 0,
           "wrote two folders: longrope with L0 %d at the top level (Phi-3) and in "
           "rope_parameters with attention_factor %g",
           LR_L0, LR_ATTN_GIVEN);
    test_longrope_lm(d1, 0, "Phi-3 style");
    test_longrope_lm(d2, 1, "rope_parameters");
    test_longrope_lmi(d1);
}

static void test_budget(void)
{
    char path[4200], err[512] = "";
    snprintf(path, sizeof path, "%s/stories260K/stories260K.bin", shared_dir);
    size_t old = pe_mem_budget(), used = pe_mem_used();
    pe_mem_set_budget(used + 500000);
    lm_model *m = NULL;
    int rc = lm_open(path, &m, err, sizeof err);
    TAP_OK(rc == PE_ERANGE && m == NULL && strstr(err, "--max-memory") &&
               strstr(err, "needs 1 MiB") && pe_mem_used() == used,
           "a model over the memory budget is refused before loading (%s)", err);
    pe_mem_set_budget(old);
    rc = lm_open(path, &m, err, sizeof err);
    TAP_OK(rc == PE_OK && pe_mem_used() >= used + 1056540, "held in the budget while open");
    /* a freed session's block is kept for the next one (its pages are faulted in already), held
     * in the budget while kept, and taken by a session of the same size */
    size_t open_used = pe_mem_used();
    lm_session s1, s2, s3;
    int ok = lm_session_init(&s1, m, 64, 1, err, sizeof err) == PE_OK;
    const float *b1 = s1.block;
    size_t one = pe_mem_used() - open_used;
    lm_session_free(&s1);
    TAP_OK(ok && pe_mem_used() - open_used == one, "a freed session's block stays held (%zu bytes)",
           one);
    ok = lm_session_init(&s2, m, 64, 1, err, sizeof err) == PE_OK;
    TAP_OK(ok && s2.block == b1 && pe_mem_used() - open_used == s2.held,
           "the next session of that context takes it, and the budget holds its bytes once");
    ok = lm_session_init(&s3, m, 64, 1, err, sizeof err) == PE_OK;
    TAP_OK(ok && s3.block != b1, "a session while it is in use gets its own");
    lm_session_free(&s3);
    lm_session_free(&s2);
    ok = lm_session_init(&s3, m, 32, 1, err, sizeof err) == PE_OK;
    TAP_OK(ok && s3.block != b1 && pe_mem_used() - open_used == s3.held + one,
           "a session of another context gets its own; the kept block stays held");
    lm_session_free(&s3);
    TAP_OK(pe_mem_used() - open_used == one, "one block kept at a time (%zu bytes held)",
           pe_mem_used() - open_used);
    lm_close(m);
    TAP_OK(pe_mem_used() == used, "released when closed");
}

int main(void)
{
    if (!TAP_OK(have_shared(), "../shared/realmodels exists (%s)", shared_dir)) return tap_done();
    snprintf(tmp_dir, sizeof tmp_dir, "%s/pelab-lm-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp_dir)) return TAP_OK(0, "temp dir"), tap_done();
    char p[4200];
    snprintf(p, sizeof p, "%s/stories260K-hf-derived/reference_greedy_bos.json", shared_dir);
    FILE *f = fopen(p, "rb");
    char *txt = malloc(1 << 20);
    size_t n = f ? fread(txt, 1, (1 << 20) - 1, f) : 0;
    if (f) fclose(f);
    txt[n] = 0;
    hf_ref = cJSON_Parse(txt);
    free(txt);
    TAP_OK(hf_ref != NULL, "reference_greedy_bos.json");
    int ids[201];
    memset(ids, 0, sizeof ids);
    test_stories_bin(ids);
    test_stories_hf(ids);
    snprintf(p, sizeof p, "%s/tiny-random-llama-2", shared_dir);
    check_tiny_random(p, "tiny-random-llama-2 (BF16)");
    test_shards();
    test_mistral_window();
    test_gpt2();
    test_llama2c_v1();
    test_lmi();
    test_dynamic();
    test_longrope();
    test_budget();
    cJSON_Delete(hf_ref);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0) tap_diag("could not remove %s", tmp_dir);
    return tap_done();
}
