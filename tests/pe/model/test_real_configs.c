/* test_real_configs: the config.json files of released models in tests/config/real (SOURCES
 * names each one's origin) read by pe_hf_config, and checked against this file's own
 * computation of transformers' rope utilities (modeling_rope_utils.py, the v5 layout:
 * _compute_default/linear/dynamic/yarn/longrope/llama3/proportional_rope_parameters and
 * standardize_rope_params' reading of rope_theta, partial_rotary_factor and
 * original_max_position_embeddings): every inverse frequency, the rotary dimension, the
 * attention factor, L0 and the target context. Refusals are checked by their message. Then GGUF
 * headers written here for the llama, qwen2 and gemma architectures give the numbers of the
 * equivalent config.json, and bad headers each fail with one line. */
#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_load.h"
#include "gguf_meta.h"
#include "hf_config.h"
#include "tap.h"

#define TEST_PI 3.14159265358979323846

static char real_dir[1024];

/* ---- the test's own transformers ---------------------------------------------------------- */

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
    return v && !cJSON_IsNull(v) ? v : NULL;
}

static double num(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = get(o, k);
    return v && cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* Model-class defaults transformers' config classes supply (Gemma3TextConfig), per file. */
typedef struct class_dflt {
    int heads, head_dim, max_pos;
    double theta, local_theta;
} class_dflt;

typedef struct hf_out {
    int npairs; /* length of HF's inv_freq (proportional: the nonzero ones) */
    double inv[512];
    double attn;
    int l0;
} hf_out;

/* transformers' reading of one layer kind ("" = the only one). Returns 0, or -1 when the
 * config has no such kind. */
static int hf_rope(const cJSON *root, const char *kind, const class_dflt *cd, hf_out *out)
{
    const cJSON *c = root;
    if (!get(c, "num_attention_heads") && !get(c, "hidden_size") && !get(c, "head_dim") &&
        get(c, "text_config"))
        c = get(c, "text_config");
    double heads = num(c, "num_attention_heads", cd ? cd->heads : 0);
    double head_dim = num(c, "head_dim", 0);
    if (head_dim == 0) head_dim = cd ? cd->head_dim : floor(num(c, "hidden_size", 0) / heads);
    /* DeepseekV3Config: self.head_dim = qk_rope_head_dim */
    if (get(c, "qk_rope_head_dim")) head_dim = num(c, "qk_rope_head_dim", 0);
    if (strcmp(kind, "full_attention") == 0 && get(c, "global_head_dim"))
        head_dim = num(c, "global_head_dim", 0); /* Gemma 4 passes head_dim_key */
    double max_pos = num(c, "max_position_embeddings", cd ? cd->max_pos : 0);

    const cJSON *rp = get(c, "rope_scaling");
    if (!rp) rp = get(c, "rope_parameters");
    cJSON *synth = NULL;
    int nested = rp && rp->child && cJSON_IsObject(rp->child);
    if (nested) {
        rp = get(rp, kind);
        if (!rp) return -1;
    } else if (strcmp(kind, "sliding_attention") == 0) {
        /* Gemma 3 (v4 layout): the local layers are default RoPE at rope_local_base_freq */
        double local = num(c, "rope_local_base_freq", cd ? cd->local_theta : 0);
        if (local == 0) return -1;
        synth = cJSON_CreateObject();
        cJSON_AddStringToObject(synth, "rope_type", "default");
        cJSON_AddNumberToObject(synth, "rope_theta", local);
        rp = synth;
    }
    /* standardize_rope_params: the dict's own rope_theta and partial_rotary_factor first */
    double top_theta = num(c, "rope_theta", num(c, "rotary_emb_base", cd ? cd->theta : 10000));
    double theta = num(rp, "rope_theta", top_theta);
    double prf = num(rp, "partial_rotary_factor",
                     num(c, "partial_rotary_factor", num(c, "rotary_pct", 1.0)));
    const char *type = "default";
    if (get(rp, "rope_type"))
        type = get(rp, "rope_type")->valuestring;
    else if (get(rp, "type"))
        type = get(rp, "type")->valuestring;
    if (strcmp(type, "mrope") == 0) type = "default"; /* Qwen2-VL: rope_type default + sections */
    if (strcmp(type, "su") == 0) type = "longrope";
    int dim = (int)(head_dim * prf);
    double l0 = num(rp, "original_max_position_embeddings",
                    num(c, "original_max_position_embeddings", max_pos));
    double factor = num(rp, "factor", 1.0);
    out->attn = 1.0;
    out->npairs = dim / 2;
    out->l0 = (int)max_pos;

    if (strcmp(type, "proportional") == 0) {
        /* rope_angles = int(p * head_dim // 2) of base^(-2i/head_dim), the rest 0, / factor */
        int angles = (int)floor(prf * head_dim / 2);
        for (int i = 0; i < angles; i++)
            out->inv[i] = 1.0 / pow(theta, 2.0 * i / head_dim) / factor;
        out->npairs = angles;
        cJSON_Delete(synth);
        return 0;
    }
    for (int i = 0; i < dim / 2; i++) out->inv[i] = 1.0 / pow(theta, 2.0 * i / dim);
    if (strcmp(type, "linear") == 0) {
        for (int i = 0; i < dim / 2; i++) out->inv[i] /= factor;
    } else if (strcmp(type, "dynamic") == 0) {
        /* evaluated at seq_len = factor x max_position_embeddings, where the factor applies */
        double seq = factor * max_pos;
        double base = theta * pow(factor * seq / max_pos - (factor - 1), dim / (dim - 2.0));
        for (int i = 0; i < dim / 2; i++) out->inv[i] = 1.0 / pow(base, 2.0 * i / dim);
    } else if (strcmp(type, "yarn") == 0) {
        if (!get(rp, "factor")) factor = max_pos / l0;
        double ms = num(rp, "mscale", 0), msa = num(rp, "mscale_all_dim", 0);
#define GET_MSCALE(s, m) ((s) <= 1 ? 1.0 : 0.1 * (m)*log(s) + 1.0)
        out->attn = get(rp, "attention_factor") ? num(rp, "attention_factor", 1)
                    : (ms && msa)               ? GET_MSCALE(factor, ms) / GET_MSCALE(factor, msa)
                                                : GET_MSCALE(factor, 1);
        double bf = num(rp, "beta_fast", 0), bs = num(rp, "beta_slow", 0);
        if (bf == 0) bf = 32;
        if (bs == 0) bs = 1;
        const cJSON *tr = get(rp, "truncate");
        int truncate = tr ? cJSON_IsTrue(tr) : 1;
#define CORR(rot) (dim * log(l0 / ((rot)*2 * TEST_PI)) / (2 * log(theta)))
        double low = CORR(bf), high = CORR(bs);
        if (truncate) {
            low = floor(low);
            high = ceil(high);
        }
        if (low < 0) low = 0;
        if (high > dim - 1) high = dim - 1;
        if (low == high) high += 0.001;
        for (int i = 0; i < dim / 2; i++) {
            double ramp = (i - low) / (high - low);
            ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
            double extra = 1 - ramp; /* inv_freq_extrapolation_factor */
            double pos = pow(theta, 2.0 * i / dim);
            out->inv[i] = 1.0 / (factor * pos) * (1 - extra) + 1.0 / pos * extra;
        }
        out->l0 = (int)l0;
    } else if (strcmp(type, "llama3") == 0) {
        double lo = num(rp, "low_freq_factor", 1), hi = num(rp, "high_freq_factor", 4);
        double lo_wl = l0 / lo, hi_wl = l0 / hi;
        for (int i = 0; i < dim / 2; i++) {
            double f = out->inv[i], wl = 2 * TEST_PI / f;
            double v = wl > lo_wl ? f / factor : f;
            if (!(wl < hi_wl) && !(wl > lo_wl)) {
                double smooth = (l0 / wl - lo) / (hi - lo);
                v = (1 - smooth) * v / factor + smooth * v;
            }
            out->inv[i] = v;
        }
        out->l0 = (int)l0;
    } else if (strcmp(type, "longrope") == 0) {
        int have_orig = get(rp, "original_max_position_embeddings") ||
                        get(c, "original_max_position_embeddings");
        if (have_orig) factor = max_pos / l0;
        out->attn = factor <= 1 ? 1.0 : sqrt(1 + log(factor) / log(l0));
        const cJSON *ext = get(rp, max_pos > l0 ? "long_factor" : "short_factor");
        for (int i = 0; i < dim / 2; i++)
            out->inv[i] =
                1.0 / (cJSON_GetArrayItem(ext, i)->valuedouble * pow(theta, 2.0 * i / dim));
        out->l0 = (int)l0;
    }
    cJSON_Delete(synth);
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = '\0';
    fclose(f);
    return b;
}

/* ---- the corpus ---------------------------------------------------------------------------- */

typedef struct kind_expect {
    const char *kind; /* layer kind name in pelab ("all" for a single kind) */
    int pairs, l0;
    double target, theta;
} kind_expect;

typedef struct real {
    const char *file;
    const char *refused;    /* substring of the refusal, or NULL */
    const char *unmodelled; /* substring of the warning list, or NULL for none */
    const class_dflt *cd;
    kind_expect k[2];
} real;

static const class_dflt gemma3 = {8, 256, 131072, 1e6, 1e4};

static const real corpus[] = {
    {"llama-2-7b-hf", NULL, NULL, NULL, {{"all", 64, 4096, 4096, 1e4}}},
    {"llama-3.1-8b", NULL, NULL, NULL, {{"all", 64, 8192, 131072, 5e5}}},
    {"llama-3.1-405b", NULL, NULL, NULL, {{"all", 64, 8192, 131072, 5e5}}},
    {"llama-3.2-1b", NULL, NULL, NULL, {{"all", 32, 8192, 131072, 5e5}}},
    {"llama-3.2-3b", NULL, NULL, NULL, {{"all", 64, 8192, 131072, 5e5}}},
    {"llama-4-scout-17b-16e",
     NULL,
     "no_rope_layers, attn_temperature_tuning",
     NULL,
     {{"all", 64, 8192, 10485760, 5e5}}},
    {"mistral-7b-v0.1", NULL, NULL, NULL, {{"all", 64, 32768, 32768, 1e4}}},
    {"mistral-7b-instruct-v0.3", NULL, NULL, NULL, {{"all", 64, 32768, 32768, 1e6}}},
    {"mixtral-8x7b-v0.1", NULL, NULL, NULL, {{"all", 64, 32768, 32768, 1e6}}},
    {"qwen2-7b", NULL, NULL, NULL, {{"all", 64, 131072, 131072, 1e6}}},
    {"qwen2.5-3b", NULL, NULL, NULL, {{"all", 64, 32768, 32768, 1e6}}},
    {"qwen2.5-7b-instruct", NULL, NULL, NULL, {{"all", 64, 32768, 32768, 1e6}}},
    {"qwen3-8b", NULL, NULL, NULL, {{"all", 64, 40960, 40960, 1e6}}},
    {"qwen3-30b-a3b", NULL, NULL, NULL, {{"all", 64, 40960, 40960, 1e6}}},
    {"qwen3-30b-a3b-yarn", NULL, NULL, NULL, {{"all", 64, 32768, 131072, 1e6}}},
    {"qwen3.5-0.8b", NULL, "mrope_section", NULL, {{"all", 32, 262144, 262144, 1e7}}},
    {"phi-2", NULL, NULL, NULL, {{"all", 16, 2048, 2048, 1e4}}},
    {"phi-3.5-mini-instruct", NULL, NULL, NULL, {{"all", 48, 4096, 131072, 1e4}}},
    {"phi-4-mini-instruct", NULL, NULL, NULL, {{"all", 48, 4096, 131072, 1e4}}},
    {"gemma-2-9b", NULL, NULL, NULL, {{"all", 128, 8192, 8192, 1e4}}},
    {"gemma-3-1b-it",
     NULL,
     NULL,
     &gemma3,
     {{"full_attention", 128, 32768, 32768, 1e6}, {"sliding_attention", 128, 32768, 32768, 1e4}}},
    {"gemma-3-4b-it",
     NULL,
     NULL,
     &gemma3,
     {{"full_attention", 128, 16384, 131072, 1e6},
      {"sliding_attention", 128, 131072, 131072, 1e4}}},
    {"gemma-3-27b-it",
     NULL,
     NULL,
     &gemma3,
     {{"full_attention", 64, 16384, 131072, 1e6}, {"sliding_attention", 64, 131072, 131072, 1e4}}},
    {"functiongemma-270m-v5",
     NULL,
     NULL,
     &gemma3,
     {{"full_attention", 128, 32768, 32768, 1e6}, {"sliding_attention", 128, 32768, 32768, 1e4}}},
    {"gemma-4-text",
     NULL,
     NULL,
     NULL,
     {{"full_attention", 64, 131072, 131072, 1e6},
      {"sliding_attention", 128, 131072, 131072, 1e4}}},
    {"deepseek-v2-lite", NULL, "softmax mscale", NULL, {{"all", 32, 4096, 163840, 1e4}}},
    {"deepseek-v3", NULL, "softmax mscale", NULL, {{"all", 32, 4096, 163840, 1e4}}},
    {"kimi-k2-instruct", NULL, "softmax mscale", NULL, {{"all", 32, 4096, 131072, 5e4}}},
    {"gpt-oss-20b", NULL, NULL, NULL, {{"all", 32, 4096, 131072, 1.5e5}}},
    {"olmo-2-1124-7b-instruct", NULL, NULL, NULL, {{"all", 64, 4096, 4096, 5e5}}},
    {"smollm2-1.7b-instruct", NULL, NULL, NULL, {{"all", 32, 8192, 8192, 1.3e5}}},
    {"smollm3-3b", NULL, "no_rope_layers", NULL, {{"all", 64, 65536, 65536, 5e6}}},
    {"stablelm-2-1_6b", NULL, NULL, NULL, {{"all", 8, 4096, 4096, 1e4}}},
    {"stablelm-3b-4e1t", NULL, NULL, NULL, {{"all", 10, 4096, 4096, 1e4}}},
    {"gpt-neox-20b", NULL, NULL, NULL, {{"all", 12, 2048, 2048, 1e4}}},
    {"granite-3.3-8b-instruct", NULL, NULL, NULL, {{"all", 64, 131072, 131072, 1e7}}},
    {"falcon3-7b-instruct", NULL, NULL, NULL, {{"all", 128, 32768, 32768, 1000042}}},
    {"chatglm3-6b",
     "model_type 'chatglm': ChatGLM's remote code rotates half of each head",
     NULL,
     NULL,
     {{0}}},
    {"yarn-llama-2-13b-64k", NULL, NULL, NULL, {{"all", 64, 4096, 65536, 1e4}}},
    {"chinese-llama-2-13b-16k", NULL, NULL, NULL, {{"all", 64, 4096, 16384, 1e4}}},
    {"llama-2-13b-64k-dynamic", NULL, NULL, NULL, {{"all", 64, 4096, 40960, 1e4}}},
    {"qwen2-vl-7b-instruct", NULL, "mrope_section", NULL, {{"all", 64, 32768, 32768, 1e6}}},
};

static void check_kind(const char *file, const cJSON *root, const real *r, pe_hf_config *m,
                       const kind_expect *e)
{
    char err[320] = "";
    if (!TAP_OK(pe_hf_config_select(m, e->kind, err, sizeof err) == PE_OK, "%s: layer kind %s (%s)",
                file, e->kind, err))
        return;
    int pairs = pe_rope_rotary_dim(&m->params) / 2;
    TAP_OK(pairs == e->pairs, "%s %s: %d rotary pairs (want %d)", file, e->kind, pairs, e->pairs);
    TAP_OK(m->original_ctx == e->l0 && m->target_ctx == e->target,
           "%s %s: L0 %d, target %g (want %d, %g)", file, e->kind, m->original_ctx, m->target_ctx,
           e->l0, e->target);
    TAP_OK(m->params.base == e->theta, "%s %s: base %g (want %g)", file, e->kind, m->params.base,
           e->theta);

    hf_out hf;
    memset(&hf, 0, sizeof hf);
    const char *hkind = strcmp(e->kind, "all") == 0 ? "" : e->kind;
    if (!TAP_OK(hf_rope(root, hkind, r->cd, &hf) == 0, "%s %s: the test's transformers reads it",
                file, e->kind))
        return;
    TAP_OK(hf.npairs == pairs, "%s %s: transformers' inv_freq has %d rotated pairs, pelab %d", file,
           e->kind, hf.npairs, pairs);
    double inv[512], attn = 0;
    int rc = pe_rope_inv_freq(&m->params, inv, &attn, err, sizeof err);
    int worst = -1;
    double worst_rel = 0;
    for (int k = 0; rc == PE_OK && k < pairs && k < hf.npairs; k++) {
        double rel = fabs(inv[k] - hf.inv[k]) / hf.inv[k];
        if (!(rel <= worst_rel)) {
            worst_rel = rel;
            worst = k;
        }
    }
    TAP_OK(rc == PE_OK && worst_rel <= 1e-12,
           "%s %s: every inverse frequency matches transformers' (worst pair %d, rel %.2g)", file,
           e->kind, worst, worst_rel);
    TAP_CLOSE(attn, hf.attn, 1e-12, 0, "attention factor");
    if (m->params.scaling.type != PE_SCALING_NONE && m->params.scaling.type != PE_SCALING_LINEAR)
        TAP_OK(m->params.scaling.original_ctx == hf.l0, "%s %s: pe's L0 %d is transformers' %d",
               file, e->kind, m->params.scaling.original_ctx, hf.l0);
}

static void test_corpus(void)
{
    int n = 0;
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
        const real *r = &corpus[i];
        char path[1400], err[320] = "";
        snprintf(path, sizeof path, "%s/%s.json", real_dir, r->file);
        pe_hf_config m;
        memset(&m, 0, sizeof m);
        int rc = pe_hf_config_load(path, &m, err, sizeof err);
        n++;
        if (r->refused) {
            TAP_OK(rc == PE_EINVAL && strstr(err, r->refused) && !strchr(err, '\n'),
                   "%s: refused in one line: %s", r->file, err);
            continue;
        }
        if (!TAP_OK(rc == PE_OK, "%s loads (%s)", r->file, err)) continue;
        TAP_OK(r->unmodelled ? strstr(m.unmodelled, r->unmodelled) != NULL : m.unmodelled[0] == 0,
               "%s: read but not modelled: '%s'", r->file, m.unmodelled);
        int kinds = r->k[1].kind ? 2 : 1;
        TAP_OK(m.n_layer_types == kinds, "%s: %d layer kinds (want %d)", r->file, m.n_layer_types,
               kinds);
        if (kinds == 2)
            TAP_OK(strcmp(m.layer_types[m.layer_type].name, "full_attention") == 0,
                   "%s: the full-attention kind is shown first", r->file);
        char *text = slurp(path);
        cJSON *root = text ? cJSON_Parse(text) : NULL;
        for (int k = 0; k < kinds && root; k++) check_kind(r->file, root, r, &m, &r->k[k]);
        cJSON_Delete(root);
        free(text);
    }
    TAP_OK(n >= 25, "%d released configs in the corpus", n);

    /* SOURCES names each file's origin: one line "FILE | URL | verbatim..." or "... | abridged..."
     * per corpus file; at least 25 are the published files whole */
    char path[1400];
    snprintf(path, sizeof path, "%s/SOURCES", real_dir);
    char *src = slurp(path);
    int full = 0, abridged = 0, unnamed = 0, named[sizeof corpus / sizeof corpus[0]] = {0};
    for (char *ln = src; ln && *ln;) {
        char *nl = strchr(ln, '\n');
        if (nl) *nl = '\0';
        char *bar = ln[0] != '#' ? strstr(ln, " | ") : NULL;
        char *bar2 = bar ? strstr(bar + 3, " | ") : NULL;
        if (bar && bar2) {
            size_t i = 0;
            for (; i < sizeof corpus / sizeof corpus[0]; i++) {
                size_t k = strlen(corpus[i].file);
                if ((size_t)(bar - ln) == k + 5 && strncmp(ln, corpus[i].file, k) == 0 &&
                    strncmp(ln + k, ".json", 5) == 0)
                    break;
            }
            int url = strncmp(bar + 3, "https://", 8) == 0;
            if (i < sizeof corpus / sizeof corpus[0] && url)
                named[i]++;
            else
                unnamed++;
            full += strncmp(bar2 + 3, "verbatim", 8) == 0;
            abridged += strncmp(bar2 + 3, "abridged", 8) == 0;
        }
        ln = nl ? nl + 1 : NULL;
    }
    int missing = 0;
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) missing += named[i] != 1;
    TAP_OK(
        src && missing == 0 && unnamed == 0,
        "SOURCES names each of the %zu files once, with its URL (%d missing, %d lines of no file)",
        sizeof corpus / sizeof corpus[0], missing, unnamed);
    TAP_OK(full >= 25 && full + abridged == n,
           "%d of the %d files are the published files whole, %d abridged", full, n, abridged);
    free(src);
}

/* The numbers issue 25 quotes, read off the corpus directly. */
static void test_quoted(void)
{
    char path[1400], err[320] = "";
    pe_hf_config m;
    snprintf(path, sizeof path, "%s/mistral-7b-v0.1.json", real_dir);
    if (TAP_OK(pe_hf_config_load(path, &m, err, sizeof err) == PE_OK, "mistral again")) {
        double inv[64];
        pe_rope_inv_freq(&m.params, inv, NULL, err, sizeof err);
        int never = 0;
        for (int k = 0; k < 64; k++) never += 2 * TEST_PI / inv[k] > m.original_ctx;
        TAP_OK(never == 4, "Mistral: %d of 64 pairs never turn once in L0 = 32768 (4)", never);
    }
    /* Kimi-K2's equal betas: a one-pair ramp, as HF's linear_ramp_factor adds 0.001 */
    snprintf(path, sizeof path, "%s/kimi-k2-instruct.json", real_dir);
    if (TAP_OK(pe_hf_config_load(path, &m, err, sizeof err) == PE_OK, "kimi again")) {
        double lo = 0, hi = 0;
        pe_rope_yarn_range(&m.params, &lo, &hi);
        TAP_OK(m.params.scaling.beta_fast == 1 && m.params.scaling.beta_slow == 1 && lo + 1 == hi,
               "Kimi-K2: betas 1 and 1 give the ramp %g..%g", lo, hi);
    }
    /* Llama 4 Scout's equal llama3 factors: two bands only */
    snprintf(path, sizeof path, "%s/llama-4-scout-17b-16e.json", real_dir);
    if (TAP_OK(pe_hf_config_load(path, &m, err, sizeof err) == PE_OK, "scout again")) {
        int blend = 0;
        for (int k = 0; k < 64; k++) blend += pe_rope_band(&m.params, k) == PE_BAND_BLEND;
        TAP_OK(blend == 0 && m.max_position == 10485760,
               "Scout: 10485760 positions, no blended band with equal factors (%d)", blend);
    }
    /* v5 precedence: rope_parameters' rope_theta over the top-level one */
    const char *v5 = "{\"num_attention_heads\": 8, \"head_dim\": 64, \"rope_theta\": 10000, "
                     "\"max_position_embeddings\": 4096, \"rope_parameters\": {\"rope_type\": "
                     "\"default\", \"rope_theta\": 500000}}";
    TAP_OK(pe_hf_config_parse(v5, "v5.json", &m, err, sizeof err) == PE_OK &&
               m.params.base == 500000,
           "rope_parameters' rope_theta wins over the top-level one (base %g)", m.params.base);
    TAP_OK(pe_hf_config_select(&m, "sliding_attention", err, sizeof err) == PE_EINVAL &&
               strstr(err, "--layer-type sliding_attention: v5 has the layer types all"),
           "an unknown layer kind names the ones there are: %s", err);
}

/* ---- GGUF ------------------------------------------------------------------------------- */

typedef struct buf {
    unsigned char *b;
    size_t n, cap;
} buf;

static void put(buf *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 64;
        w->b = realloc(w->b, w->cap);
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static void put_u32(buf *w, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put(w, b, 4);
}
static void put_u64(buf *w, uint64_t v)
{
    put_u32(w, (uint32_t)v);
    put_u32(w, (uint32_t)(v >> 32));
}
static void put_str(buf *w, const char *s)
{
    put_u64(w, strlen(s));
    put(w, s, strlen(s));
}
static void kv_str(buf *w, const char *k, const char *v)
{
    put_str(w, k);
    put_u32(w, 8);
    put_str(w, v);
}
static void kv_u32(buf *w, const char *k, uint32_t v)
{
    put_str(w, k);
    put_u32(w, 4);
    put_u32(w, v);
}
static void kv_f32(buf *w, const char *k, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    put_str(w, k);
    put_u32(w, 6);
    put_u32(w, u);
}

/* A header as llama.cpp's converter writes one: magic, version, counts, metadata (with a
 * tokenizer array in the middle, as real files have), tensor infos. */
typedef struct gguf_model {
    const char *arch, *name;
    uint32_t ctx, emb, heads, kv, key_len, rot_dim;
    float base;
    const char *scaling;
    float factor;
    uint32_t orig;
    float attn;         /* rope.scaling.attn_factor; 0 = absent */
    int longrope_lists; /* rope_factors_long/short tensors, as llama.cpp writes Phi-3's */
} gguf_model;

static buf write_gguf(const gguf_model *g, uint32_t version)
{
    buf w = {0};
    char k[128];
    uint64_t n_kv = 0;
    put(&w, "GGUF", 4);
    put_u32(&w, version);
    put_u64(&w, g->longrope_lists ? 3 : 1); /* tensors */
    size_t at = w.n;
    put_u64(&w, 0); /* metadata count, patched below */
    kv_str(&w, "general.architecture", g->arch), n_kv++;
    kv_str(&w, "general.name", g->name), n_kv++;
#define KEY(s) (snprintf(k, sizeof k, "%s." s, g->arch), k)
    kv_u32(&w, KEY("context_length"), g->ctx), n_kv++;
    kv_u32(&w, KEY("embedding_length"), g->emb), n_kv++;
    kv_u32(&w, KEY("attention.head_count"), g->heads), n_kv++;
    kv_u32(&w, KEY("attention.head_count_kv"), g->kv), n_kv++;
    if (g->key_len) kv_u32(&w, KEY("attention.key_length"), g->key_len), n_kv++;
    if (g->rot_dim) kv_u32(&w, KEY("rope.dimension_count"), g->rot_dim), n_kv++;
    if (g->base > 0) kv_f32(&w, KEY("rope.freq_base"), g->base), n_kv++;
    /* tokenizer.ggml.tokens: an array of strings pelab skips */
    put_str(&w, "tokenizer.ggml.tokens");
    put_u32(&w, 9);
    put_u32(&w, 8);
    put_u64(&w, 3);
    put_str(&w, "<s>");
    put_str(&w, "</s>");
    put_str(&w, "hello");
    n_kv++;
    put_str(&w, "tokenizer.ggml.scores"); /* and an array of floats */
    put_u32(&w, 9);
    put_u32(&w, 6);
    put_u64(&w, 3);
    put_u64(&w, 0);
    put_u32(&w, 0);
    n_kv++;
    if (g->scaling) {
        kv_str(&w, KEY("rope.scaling.type"), g->scaling), n_kv++;
        kv_f32(&w, KEY("rope.scaling.factor"), g->factor), n_kv++;
    }
    if (g->orig) kv_u32(&w, KEY("rope.scaling.original_context_length"), g->orig), n_kv++;
    if (g->attn > 0) kv_f32(&w, KEY("rope.scaling.attn_factor"), g->attn), n_kv++;
    for (int i = 0; i < 8; i++) w.b[at + (size_t)i] = (unsigned char)(n_kv >> (8 * i));
    put_str(&w, "token_embd.weight");
    put_u32(&w, 2);
    put_u64(&w, g->emb);
    put_u64(&w, 3);
    put_u32(&w, 0);
    put_u64(&w, 0);
    for (int i = 0; g->longrope_lists && i < 2; i++) { /* (rot_dim / 2) floats each */
        put_str(&w, i ? "rope_factors_short.weight" : "rope_factors_long.weight");
        put_u32(&w, 1);
        put_u64(&w, g->rot_dim / 2);
        put_u32(&w, 0);
        put_u64(&w, 64 * (uint64_t)(i + 1));
    }
    return w;
}

static void same_numbers(const char *what, pe_hf_config *a, pe_hf_config *b)
{
    double ia[512], ib[512], aa = 0, ab = 0;
    char err[256] = "";
    int na = pe_rope_rotary_dim(&a->params) / 2, nb = pe_rope_rotary_dim(&b->params) / 2;
    int ok = na == nb && pe_rope_inv_freq(&a->params, ia, &aa, err, sizeof err) == PE_OK &&
             pe_rope_inv_freq(&b->params, ib, &ab, err, sizeof err) == PE_OK;
    double worst = 0;
    for (int k = 0; ok && k < na; k++) worst = fmax(worst, fabs(ia[k] - ib[k]) / ia[k]);
    /* the header stores the base as a float32 */
    TAP_OK(ok && worst < 1e-6 && fabs(aa - ab) < 1e-6,
           "%s: GGUF and config.json give the same %d frequencies (worst rel %.2g) and attention",
           what, na, worst);
    TAP_OK(a->original_ctx == b->original_ctx && a->target_ctx == b->target_ctx &&
               a->num_heads == b->num_heads && a->num_kv_heads == b->num_kv_heads &&
               a->params.scaling.type == b->params.scaling.type &&
               a->n_layer_types == b->n_layer_types,
           "%s: same L0 %d/%d, target %g/%g, heads, scaling and layer kinds", what, a->original_ctx,
           b->original_ctx, a->target_ctx, b->target_ctx);
}

static void test_gguf(void)
{
    static const struct {
        gguf_model g;
        const char *config; /* the equivalent config.json in the corpus */
    } eq[] = {
        {{"llama", "Llama 2 7B", 4096, 4096, 32, 32, 0, 128, 10000.0f, NULL, 0, 0, 0, 0},
         "llama-2-7b-hf"},
        {{"qwen2", "Qwen2 7B", 131072, 3584, 28, 4, 0, 128, 1000000.0f, NULL, 0, 0, 0, 0},
         "qwen2-7b"},
        {{"gemma2", "Gemma 2 9B", 8192, 3584, 16, 8, 256, 256, 10000.0f, NULL, 0, 0, 0, 0},
         "gemma-2-9b"},
        {{"gemma3", "Gemma 3 4B", 131072, 2560, 8, 4, 256, 256, 1000000.0f, "linear", 8.0f, 0, 0,
          0},
         "gemma-3-4b-it"},
        {{"qwen3moe", "Qwen3 30B A3B", 40960, 2048, 32, 4, 128, 128, 1000000.0f, "yarn", 4.0f,
          32768, 0, 0},
         "qwen3-30b-a3b-yarn"},
        {{"phi2", "Phi 2", 2048, 2560, 32, 32, 0, 32, 10000.0f, NULL, 0, 0, 0, 0}, "phi-2"},
    };
    char dir[160];
    tap_tmp_path(dir, sizeof dir, "pelab-gguf-XXXXXX");
    if (!TAP_OK(mkdtemp(dir) != NULL, "temporary directory")) return;
    for (size_t i = 0; i < sizeof eq / sizeof eq[0]; i++) {
        for (uint32_t version = 2; version <= 3; version++) {
            buf w = write_gguf(&eq[i].g, version);
            char path[1400], err[320] = "";
            snprintf(path, sizeof path, "%s/%s-v%u.gguf", dir, eq[i].g.arch, version);
            FILE *f = fopen(path, "wb");
            fwrite(w.b, 1, w.n, f);
            fclose(f);
            pe_hf_config a, b;
            int rc = pe_config_load(path, &a, err, sizeof err);
            if (TAP_OK(rc == PE_OK, "%s v%u: --config reads the GGUF header (%s)", eq[i].g.arch,
                       version, err)) {
                snprintf(path, sizeof path, "%s/%s.json", real_dir, eq[i].config);
                if (TAP_OK(pe_hf_config_load(path, &b, err, sizeof err) == PE_OK, "%s", err))
                    same_numbers(eq[i].g.arch, &a, &b);
                TAP_OK(strcmp(a.model_type, eq[i].g.arch) == 0 && strcmp(a.name, eq[i].g.name) == 0,
                       "%s: model type and name from the header ('%s')", eq[i].g.arch, a.name);
            }
            /* every truncation fails with one line, none crashes */
            int all = 1;
            for (size_t cut = 0; cut < w.n && all; cut++) {
                pe_hf_config t;
                err[0] = '\0';
                all =
                    pe_gguf_parse_config(w.b, cut, "cut.gguf", &t, err, sizeof err) == PE_EINVAL &&
                    err[0] && !strchr(err, '\n');
                if (!all) tap_diag("cut at %zu: '%s'", cut, err);
            }
            TAP_OK(all, "%s v%u: each of the %zu truncations is refused in one line", eq[i].g.arch,
                   version, w.n);
            snprintf(path, sizeof path, "%s/%s-v%u.gguf", dir, eq[i].g.arch, version);
            unlink(path);
            free(w.b);
        }
    }
    rmdir(dir);

    /* Phi-3 as llama.cpp converts it (LongRoPE): the factor lists are tensors, the magnitude
     * attn_factor, and no scaling type; a header alone cannot give the lists, so the frequencies
     * are the base's and both are named, never applied silently */
    {
        gguf_model g = {"phi3", "Phi 3 Mini 128K", 131072, 3072, 32,   32,      0,
                        96,     10000.0f,          NULL,   0,    4096, 1.1902f, 1};
        buf w = write_gguf(&g, 3);
        pe_hf_config t;
        char err[320] = "";
        int rc = pe_gguf_parse_config(w.b, w.n, "phi3.gguf", &t, err, sizeof err);
        TAP_OK(rc == PE_OK && t.params.scaling.type == PE_SCALING_NONE &&
                   strstr(t.unmodelled, "rope_factors_long/short tensors") &&
                   strstr(t.unmodelled, "rope.scaling.attn_factor") &&
                   !strstr(t.unmodelled, "rope_freqs"),
               "GGUF Phi-3 (LongRoPE lists as tensors): the base's frequencies, the lists and the "
               "magnitude named (%s; %s)",
               t.unmodelled, err);
        free(w.b);
    }
    /* llama.cpp's attn_factor is not transformers' attention_factor: named, not applied */
    {
        gguf_model g = eq[4].g;
        g.attn = 0.5f;
        buf w = write_gguf(&g, 3);
        pe_hf_config t;
        char err[320] = "";
        double inv[64], attn = 0;
        int rc = pe_gguf_parse_config(w.b, w.n, "attn.gguf", &t, err, sizeof err);
        if (rc == PE_OK) pe_rope_inv_freq(&t.params, inv, &attn, err, sizeof err);
        TAP_OK(rc == PE_OK && strstr(t.unmodelled, "rope.scaling.attn_factor") &&
                   fabs(attn - (0.1 * log(4.0) + 1)) < 1e-12,
               "GGUF attn_factor 0.5: named (%s), the attention factor stays 0.1 ln 4 + 1 (%g)",
               t.unmodelled, attn);
        free(w.b);
    }

    /* bad headers */
    buf w = write_gguf(&eq[0].g, 3);
    pe_hf_config t;
    char err[320];
    struct {
        size_t at;
        unsigned char byte;
        const char *want;
    } bad[] = {
        {4, 1, "GGUF version 1; pelab reads versions 2 and 3"},
        {0, 'X', "not a GGUF file"},
        {23, 0x7f, "metadata count"},               /* high byte of the metadata count */
        {15, 0x7f, "tensor count"},                 /* high byte of the tensor count */
        {24 + 8 + 20, 77, "unknown value type 77"}, /* general.architecture's type */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned char *c = malloc(w.n);
        memcpy(c, w.b, w.n);
        c[bad[i].at] = bad[i].byte;
        err[0] = '\0';
        int rc = pe_gguf_parse_config(c, w.n, "bad.gguf", &t, err, sizeof err);
        TAP_OK(rc == PE_EINVAL && strstr(err, bad[i].want) && strncmp(err, "bad.gguf: ", 10) == 0,
               "bad header (%s): %s", bad[i].want, err);
        free(c);
    }
    free(w.b);
    /* an array of arrays, and a string array whose count cannot fit */
    buf v = {0};
    put(&v, "GGUF", 4);
    put_u32(&v, 3);
    put_u64(&v, 0);
    put_u64(&v, 1);
    put_str(&v, "x.nested");
    put_u32(&v, 9);
    put_u32(&v, 9);
    put_u64(&v, 1);
    TAP_OK(pe_gguf_parse_config(v.b, v.n, "n.gguf", &t, err, sizeof err) == PE_EINVAL &&
               strstr(err, "an array of arrays"),
           "nested arrays refused: %s", err);
    v.n -= 12;
    put_u32(&v, 8);
    put_u64(&v, UINT64_C(1) << 60);
    TAP_OK(pe_gguf_parse_config(v.b, v.n, "n.gguf", &t, err, sizeof err) == PE_EINVAL &&
               strstr(err, "strings do not fit"),
           "a huge string array refused without a walk: %s", err);
    free(v.b);
}

int main(void)
{
    const char *src = getenv("PELAB_SRC");
    snprintf(real_dir, sizeof real_dir, "%s/tests/config/real", src && *src ? src : ".");
    test_corpus();
    test_quoted();
    test_gguf();
    return tap_done();
}
