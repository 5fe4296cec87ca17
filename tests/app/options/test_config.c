/* test_config: config.json -> pe_params for the shipped configs, the field rules, and every
 * rejected input with its own message. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hf_config.h"
#include "tap.h"

#ifndef CONFIG_TEST_ASSETS
#define CONFIG_TEST_ASSETS "assets/configs"
#endif

static char assets_dir[1024];

static void assets_path(char *out, size_t size, const char *file)
{
    snprintf(out, size, "%s/%s", assets_dir, file);
}

/* ---- the shipped configs ----------------------------------------------------------------- */

typedef struct expect {
    const char *file, *name;
    int dim, heads, kv_heads, len;
    double base, frac;
    pe_scaling_type type;
    const char *type_name;
    double factor;
    int l0;
    int rotary_dim;
} expect;

static const expect shipped[] = {
    {"llama-2-7b.json", "meta-llama/Llama-2-7b-hf", 128, 32, 32, 4096, 1e4, 1.0, PE_SCALING_NONE,
     "none", 1.0, 0, 128},
    {"llama-3.1-8b.json", "meta-llama/Llama-3.1-8B", 128, 32, 8, 131072, 5e5, 1.0,
     PE_SCALING_LLAMA3, "llama3", 8.0, 8192, 128},
    {"mistral-7b-v0.1.json", "mistralai/Mistral-7B-v0.1", 128, 32, 8, 32768, 1e4, 1.0,
     PE_SCALING_NONE, "none", 1.0, 0, 128},
    {"qwen2-7b.json", "Qwen/Qwen2-7B", 128, 28, 4, 131072, 1e6, 1.0, PE_SCALING_NONE, "none", 1.0,
     0, 128},
    {"yarn-llama-2-7b-64k.json", "NousResearch/Yarn-Llama-2-7b-64k", 128, 32, 32, 65536, 1e4, 1.0,
     PE_SCALING_YARN, "yarn", 16.0, 4096, 128},
    {"phi-2.json", "microsoft/phi-2", 80, 32, 32, 2048, 1e4, 0.4, PE_SCALING_NONE, "none", 1.0, 0,
     32},
    {"gpt-neox-20b.json", "EleutherAI/gpt-neox-20b", 96, 64, 64, 2048, 1e4, 0.25, PE_SCALING_NONE,
     "none", 1.0, 0, 24},
    {"phi-3-vision-128k-instruct.json", "microsoft/Phi-3-vision-128k-instruct", 96, 32, 32, 131072,
     1e4, 1.0, PE_SCALING_LONGROPE, "su", 32.0, 4096, 96},
};

static void test_shipped(void)
{
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        const expect *e = &shipped[i];
        char path[1200], err[256] = "";
        assets_path(path, sizeof path, e->file);
        pe_hf_config m;
        int rc = pe_hf_config_load(path, &m, err, sizeof err);
        if (!TAP_OK(rc == PE_OK, "%s loads", e->file)) {
            tap_diag("%s", err);
            continue;
        }
        TAP_OK(strcmp(m.name, e->name) == 0, "%s: name '%s'", e->file, m.name);
        TAP_OK(m.params.dim == e->dim && m.head_dim == e->dim, "%s: head dim %d", e->file,
               m.params.dim);
        TAP_OK(m.params.heads == e->heads && m.num_kv_heads == e->kv_heads, "%s: heads %d / kv %d",
               e->file, m.params.heads, m.num_kv_heads);
        TAP_OK(m.params.len == e->len && m.max_position == e->len, "%s: len %d", e->file,
               m.params.len);
        char name[160];
        snprintf(name, sizeof name, "%s: base", e->file);
        TAP_CLOSE(m.params.base, e->base, 0, 0, name);
        snprintf(name, sizeof name, "%s: rotary fraction", e->file);
        TAP_CLOSE(m.params.rotary_frac, e->frac, 0, 0, name);
        TAP_OK(pe_rope_rotary_dim(&m.params) == e->rotary_dim, "%s: rotary dim %d", e->file,
               pe_rope_rotary_dim(&m.params));
        TAP_OK(m.params.pairing == PE_PAIRING_HALF, "%s: half-split pairs (rotate_half)", e->file);
        TAP_OK(m.params.scaling.type == e->type && strcmp(m.scaling_type, e->type_name) == 0,
               "%s: scaling %s", e->file, m.scaling_type);
        if (e->type != PE_SCALING_NONE) {
            snprintf(name, sizeof name, "%s: scaling factor", e->file);
            TAP_CLOSE(m.params.scaling.factor, e->factor, 0, 0, name);
            TAP_OK(m.params.scaling.original_ctx == e->l0, "%s: L0 %d", e->file,
                   m.params.scaling.original_ctx);
        }
    }
}

/* The numbers pe computes from two shipped configs match pe-reference.md section 5, so the
 * mapping of every field (theta, factor, L0, band factors) reached pe intact. */
static void test_shipped_frequencies(void)
{
    char path[1200], err[256] = "";
    pe_hf_config m;
    double inv[64], attn = 0;

    assets_path(path, sizeof path, "llama-3.1-8b.json");
    if (TAP_OK(pe_hf_config_load(path, &m, err, sizeof err) == PE_OK, "llama-3.1 again")) {
        int kept = 0, blend = 0, interp = 0;
        for (int k = 0; k < 64; k++) {
            pe_band b = pe_rope_band(&m.params, k);
            kept += b == PE_BAND_KEEP;
            blend += b == PE_BAND_BLEND;
            interp += b == PE_BAND_INTERP;
        }
        TAP_OK(kept == 29 && blend == 6 && interp == 29,
               "llama3 bands %d kept %d blended %d "
               "divided (29/6/29)",
               kept, blend, interp);
        TAP_OK(pe_rope_inv_freq(&m.params, inv, &attn, err, sizeof err) == PE_OK, "llama3 freqs");
        TAP_CLOSE(inv[29], 2.1665707635e-03, 1e-9, 0, "llama3 theta'[29]");
        TAP_CLOSE(m.params.scaling.low_freq_factor, 1.0, 0, 0, "llama3 low_freq_factor");
        TAP_CLOSE(m.params.scaling.high_freq_factor, 4.0, 0, 0, "llama3 high_freq_factor");
    }

    assets_path(path, sizeof path, "yarn-llama-2-7b-64k.json");
    if (TAP_OK(pe_hf_config_load(path, &m, err, sizeof err) == PE_OK, "yarn again")) {
        double low = 0, high = 0;
        pe_rope_yarn_range(&m.params, &low, &high);
        TAP_CLOSE(low, 20, 0, 0, "yarn low");
        TAP_CLOSE(high, 46, 0, 0, "yarn high");
        TAP_OK(pe_rope_inv_freq(&m.params, inv, &attn, err, sizeof err) == PE_OK, "yarn freqs");
        TAP_CLOSE(attn, 1.2772588722, 1e-9, 0, "yarn attention factor (derived)");
        TAP_CLOSE(inv[1], 0.86596432336, 1e-9, 0, "yarn theta'[1]");
        TAP_CLOSE(m.params.scaling.beta_fast, 32, 0, 0, "yarn beta_fast default");
        TAP_CLOSE(m.params.scaling.beta_slow, 1, 0, 0, "yarn beta_slow default");
        TAP_CLOSE(m.params.scaling.attention_factor, 0, 0, 0, "yarn attention_factor derived");
    }

    /* LongRoPE (issue 17). References computed in Python from transformers'
     * _compute_longrope_parameters (pe-reference.md section 5): theta_k = 1 / (ext_k
     * 10000^(2k/96)), L0 = original_max_position_embeddings 4096, f = 131072 / 4096 = 32,
     * attention sqrt(1 + ln 32 / ln 4096) = 1.19023807142; the long list at seq_len 131072, the
     * short one at seq_len <= 4096. */
    assets_path(path, sizeof path, "phi-3-vision-128k-instruct.json");
    double th[48];
    if (TAP_OK(pe_hf_config_load(path, &m, err, sizeof err) == PE_OK, "phi-3 longrope (%s)", err)) {
        TAP_OK(m.params.scaling.n_factors == 48 && m.params.scaling.seq_len == 131072,
               "longrope: 48 factors per list, evaluated at seq_len %d", m.params.scaling.seq_len);
        TAP_OK(m.params.scaling.short_factor[47] == 3.049999999999997 &&
                   m.params.scaling.long_factor[0] == 1.0299999713897705,
               "longrope: the lists read to the last digit");
        static const int ks[6] = {0, 1, 12, 24, 35, 47};
        static const double lng[6] = {0.970873813376,    0.786099259764,    0.0271002723335,
                                      0.000333222277884, 1.97994367505e-05, 1.86935259841e-06};
        static const double sht[6] = {0.952380952381, 0.786099224065,    0.0526315789474,
                                      0.005,          0.000515543684523, 3.97222183157e-05};
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) m.params.scaling.seq_len = 4096;
            int rc = pe_rope_inv_freq(&m.params, th, &attn, err, sizeof err);
            int ok = rc == PE_OK;
            for (int i = 0; i < 6 && ok; i++)
                ok = fabs(th[ks[i]] - (pass ? sht : lng)[i]) <= 1e-10 * (pass ? sht : lng)[i];
            TAP_OK(ok, "longrope %s factors at seq_len %d: theta_k at k 0,1,12,24,35,47",
                   pass ? "short" : "long", m.params.scaling.seq_len);
            TAP_CLOSE(attn, 1.19023807142, 1e-10, 0, "longrope attention sqrt(1 + ln f / ln L0)");
        }
    }
}

/* Whatever else lands in assets/configs must load too. */
static void test_every_asset(void)
{
    DIR *d = opendir(assets_dir);
    if (!TAP_OK(d != NULL, "open %s", assets_dir)) return;
    int n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        size_t len = strlen(ent->d_name);
        if (len < 6 || strcmp(ent->d_name + len - 5, ".json") != 0) continue;
        char path[1400], err[256] = "";
        snprintf(path, sizeof path, "%s/%s", assets_dir, ent->d_name);
        pe_hf_config m;
        int rc = pe_hf_config_load(path, &m, err, sizeof err);
        TAP_OK(rc == PE_OK && m.name[0] != '\0', "asset %s loads (%s)", ent->d_name,
               rc == PE_OK ? m.name : err);
        n++;
    }
    closedir(d);
    TAP_OK(n >= 7, "%d configs in assets/configs", n);
}

/* ---- field rules on inline texts --------------------------------------------------------- */

static int parse(const char *json, pe_hf_config *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    return pe_hf_config_parse(json, "inline.json", m, err, errlen);
}

static void test_fields(void)
{
    pe_hf_config m;
    char err[256] = "";

    /* A multimodal wrapper: the language model lives in text_config. */
    int rc = parse("{\"_name_or_path\": \"\", \"model_type\": \"llava\", \"text_config\": "
                   "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"num_attention_heads\": 32,"
                   " \"max_position_embeddings\": 4096, \"rope_theta\": 500000}}",
                   &m, err, sizeof err);
    TAP_OK(rc == PE_OK && m.from_text_config == 1 && m.params.dim == 128 && m.params.base == 5e5 &&
               m.params.len == 4096,
           "text_config: dim %d base %g len %d (%s)", m.params.dim, m.params.base, m.params.len,
           err);
    TAP_OK(strcmp(m.name, "llava") == 0 && strcmp(m.model_type, "llama") == 0,
           "text_config: name '%s' from the wrapper, model_type '%s' from the text model", m.name,
           m.model_type);

    /* head_dim wins over hidden_size / heads (Gemma: 8 heads of 256 in a 3072 model). */
    rc = parse("{\"hidden_size\": 3072, \"num_attention_heads\": 8, \"head_dim\": 256}", &m, err,
               sizeof err);
    TAP_OK(rc == PE_OK && m.params.dim == 256 && m.hidden_size == 3072, "head_dim 256 wins (%d)",
           m.params.dim);
    TAP_OK(m.params.base == 10000 && m.params.rotary_frac == 1 && m.max_position == 0 &&
               m.params.len == 256 && m.num_kv_heads == 8,
           "absent fields: base 1e4, rotary 1, len left at the default, kv = heads");
    rc = parse("{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"head_dim\": null}", &m, err,
               sizeof err);
    TAP_OK(rc == PE_OK && m.params.dim == 128, "head_dim null -> hidden/heads = %d", m.params.dim);
    TAP_OK(strcmp(m.name, "inline") == 0, "name from the source name: '%s'", m.name);

    rc = pe_hf_config_parse("{\"hidden_size\": 64, \"num_attention_heads\": 4}",
                            "dir/my-model.json", &m, err, sizeof err);
    TAP_OK(rc == PE_OK && strcmp(m.name, "my-model") == 0, "name from dir/my-model.json: '%s'",
           m.name);
    rc = pe_hf_config_parse("{\"hidden_size\": 64, \"num_attention_heads\": 4}", NULL, &m, err,
                            sizeof err);
    TAP_OK(rc == PE_OK && strcmp(m.name, "config") == 0, "name without a source: '%s'", m.name);

    /* Aliases: rope_theta beats rotary_emb_base, partial_rotary_factor beats rotary_pct. */
    rc = parse("{\"hidden_size\": 512, \"num_attention_heads\": 4, \"rotary_emb_base\": 20000,"
               " \"rotary_pct\": 0.5}",
               &m, err, sizeof err);
    TAP_OK(rc == PE_OK && m.params.base == 20000 && m.params.rotary_frac == 0.5,
           "NeoX aliases: base %g rotary %g", m.params.base, m.params.rotary_frac);
    rc = parse("{\"hidden_size\": 512, \"num_attention_heads\": 4, \"rotary_emb_base\": 20000,"
               " \"rope_theta\": 30000, \"rotary_pct\": 0.5, \"partial_rotary_factor\": 0.25}",
               &m, err, sizeof err);
    TAP_OK(rc == PE_OK && m.params.base == 30000 && m.params.rotary_frac == 0.25,
           "HF names win over aliases: base %g rotary %g", m.params.base, m.params.rotary_frac);

    /* Scaling types. */
    const char *head = "{\"hidden_size\": 4096, \"num_attention_heads\": 32, "
                       "\"max_position_embeddings\": 2048, \"rope_scaling\": ";
    char json[512];
    snprintf(json, sizeof json, "%s{\"type\": \"linear\", \"factor\": 4}}", head);
    rc = parse(json, &m, err, sizeof err);
    /* issue 25: released linear configs give the extended context as max_position_embeddings */
    TAP_OK(rc == PE_OK && m.params.scaling.type == PE_SCALING_LINEAR &&
               m.params.scaling.factor == 4 && m.params.scaling.original_ctx == 512 &&
               m.target_ctx == 2048,
           "linear: factor %g, L0 = max_position_embeddings / factor %d, target %g",
           m.params.scaling.factor, m.params.scaling.original_ctx, m.target_ctx);
    snprintf(json, sizeof json, "%s{\"rope_type\": \"dynamic\", \"factor\": 2.0}}", head);
    rc = parse(json, &m, err, sizeof err);
    TAP_OK(rc == PE_OK && m.params.scaling.type == PE_SCALING_DYNAMIC &&
               m.params.scaling.original_ctx == 2048 && m.params.scaling.seq_len == 4096,
           "dynamic: L0 %d, evaluated at seq_len %d = factor * L0", m.params.scaling.original_ctx,
           m.params.scaling.seq_len);
    TAP_CLOSE(pe_rope_effective_base(&m.params), 1e4 * pow(3.0, 128.0 / 126.0), 1e-12, 0,
              "dynamic: effective base at 2 L0 = base (2*2-1)^(d/(d-2))");
    snprintf(json, sizeof json, "%s{\"type\": \"ntk\", \"factor\": 4}}", head);
    rc = parse(json, &m, err, sizeof err);
    TAP_OK(rc == PE_OK && m.params.scaling.type == PE_SCALING_NTK && m.params.scaling.factor == 4,
           "ntk: static NTK, factor %g", m.params.scaling.factor);
    TAP_CLOSE(pe_rope_effective_base(&m.params), 1e4 * pow(4.0, 128.0 / 126.0), 1e-12, 0,
              "ntk: effective base = base f^(d/(d-2))");
    snprintf(json, sizeof json, "%s{\"rope_type\": \"default\"}}", head);
    rc = parse(json, &m, err, sizeof err);
    TAP_OK(rc == PE_OK && m.params.scaling.type == PE_SCALING_NONE &&
               strcmp(m.scaling_type, "default") == 0,
           "default: no scaling ('%s')", m.scaling_type);
    snprintf(json, sizeof json,
             "%s{\"type\": \"yarn\", \"factor\": 4, \"beta_fast\": 16, \"beta_slow\": 2, "
             "\"attention_factor\": 1.5}}",
             head);
    rc = parse(json, &m, err, sizeof err);
    TAP_OK(rc == PE_OK && m.params.scaling.original_ctx == 2048 &&
               m.params.scaling.beta_fast == 16 && m.params.scaling.beta_slow == 2 &&
               m.params.scaling.attention_factor == 1.5,
           "yarn: L0 falls back to max_position_embeddings, betas and attention_factor read");
    snprintf(json, sizeof json,
             "%s{\"type\": \"yarn\", \"factor\": 40, \"mscale\": 1.0, \"mscale_all_dim\": 0.5, "
             "\"original_max_position_embeddings\": 4096}}",
             head);
    rc = parse(json, &m, err, sizeof err);
    double attn = 0, th[64];
    pe_rope_inv_freq(&m.params, th, &attn, err, sizeof err);
    TAP_OK(m.params.scaling.mscale == 1.0 && m.params.scaling.mscale_all_dim == 0.5 &&
               m.params.scaling.attention_factor == 0,
           "yarn: mscale and mscale_all_dim read as themselves");
    TAP_CLOSE(attn, (0.1 * log(40) + 1) / (0.05 * log(40) + 1), 1e-12, 0,
              "yarn mscale / mscale_all_dim attention factor");
    TAP_OK(rc == PE_OK && m.params.scaling.original_ctx == 4096, "yarn: L0 from rope_scaling %d",
           m.params.scaling.original_ctx);

    /* Issue 17: "truncate": false keeps YaRN's ramp ends fractional (HF find_correction_range;
     * gpt-oss ships it). The reference was computed in Python from HF's formulas: d 64,
     * base 150000, f 32, L0 4096 -> low 8.0927791155, high 17.398024502, theta'_17 0.00012931870125
     * (truncated: 0.0002279477958, 76% more). */
    const char *oss = "{\"head_dim\": 64, \"num_attention_heads\": 64, \"rope_theta\": 150000, "
                      "\"max_position_embeddings\": 131072, \"rope_scaling\": {\"rope_type\": "
                      "\"yarn\", \"factor\": 32.0, \"beta_fast\": 32.0, \"beta_slow\": 1.0, "
                      "\"original_max_position_embeddings\": 4096, \"truncate\": %s}}";
    snprintf(json, sizeof json, oss, "false");
    rc = parse(json, &m, err, sizeof err);
    double lo = 0, hi = 0;
    pe_rope_yarn_range(&m.params, &lo, &hi);
    pe_rope_inv_freq(&m.params, th, &attn, err, sizeof err);
    TAP_OK(rc == PE_OK && m.params.scaling.yarn_truncate == 0, "yarn truncate false read (%s)",
           err);
    TAP_CLOSE(lo, 8.0927791155, 1e-10, 0, "truncate false: low stays fractional");
    TAP_CLOSE(hi, 17.398024502, 1e-10, 0, "truncate false: high stays fractional");
    TAP_CLOSE(th[17], 0.00012931870125, 1e-10, 0, "truncate false: theta'_17");
    snprintf(json, sizeof json, oss, "true");
    rc = parse(json, &m, err, sizeof err);
    pe_rope_inv_freq(&m.params, th, &attn, err, sizeof err);
    TAP_OK(rc == PE_OK && m.params.scaling.yarn_truncate == 1, "yarn truncate true read");
    TAP_CLOSE(th[17], 0.0002279477958, 1e-10, 0, "truncate true: theta'_17");
    snprintf(json, sizeof json, oss, "\"no\"");
    rc = parse(json, &m, err, sizeof err);
    TAP_OK(rc == PE_EINVAL && strstr(err, "truncate: expected true or false, got a string"),
           "truncate \"no\" refused: %s", err);

    /* Issue 17: llama3 ignores an attention_factor in the file, as HF's
     * _compute_llama3_parameters does (it always returns 1.0). */
    rc = parse("{\"hidden_size\": 4096, \"num_attention_heads\": 32, "
               "\"max_position_embeddings\": 131072, \"rope_theta\": 500000.0, \"rope_scaling\": "
               "{\"rope_type\": \"llama3\", \"factor\": 8.0, \"low_freq_factor\": 1.0, "
               "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192, "
               "\"attention_factor\": 1.5}}",
               &m, err, sizeof err);
    attn = 0;
    pe_rope_inv_freq(&m.params, th, &attn, err, sizeof err);
    TAP_OK(rc == PE_OK && m.params.scaling.attention_factor == 0 && attn == 1.0,
           "llama3: attention_factor in the file ignored, factor %g (%s)", attn, err);

    /* transformers' newer rope_parameters, which also carries rope_theta. */
    rc = parse("{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rope_parameters\": "
               "{\"rope_type\": \"default\", \"rope_theta\": 1000000.0}}",
               &m, err, sizeof err);
    TAP_OK(rc == PE_OK && m.params.base == 1e6 && m.params.scaling.type == PE_SCALING_NONE,
           "rope_parameters: base %g (%s)", m.params.base, err);

    /* Whitespace and a UTF-8 byte-order mark around a valid object. */
    rc = parse("\xEF\xBB\xBF \n{\"hidden_size\": 64, \"num_attention_heads\": 2}\n\n", &m, err,
               sizeof err);
    TAP_OK(rc == PE_OK && m.params.dim == 32, "BOM and surrounding whitespace accepted");
}

/* ---- rejected inputs --------------------------------------------------------------------- */

typedef struct bad_case {
    const char *what, *json, *want; /* want: a substring of the message */
} bad_case;

static const bad_case bad[] = {
    {"truncated JSON", "{\n  \"hidden_size\": 4096,\n  \"num_attention_heads\": 32,\n",
     "inline.json: malformed JSON at line 3, column 29: the text ends before the JSON is complete"},
    {"bad token", "{\n  \"hidden_size\": 40x96,\n  \"num_attention_heads\": 32\n}",
     "inline.json: malformed JSON at line 2, column 20, near 'x96,'"},
    {"trailing garbage", "{\"hidden_size\": 64, \"num_attention_heads\": 2} extra",
     "malformed JSON at line 1, column 47, near 'extra'"},
    {"empty text", "", "inline.json: empty, expected a JSON object"},
    {"whitespace only", " \n\t ", "inline.json: empty, expected a JSON object"},
    {"top-level array", "[1, 2]",
     "inline.json: expected a JSON object at the top level, got an array"},
    {"rope_theta string",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rope_theta\": \"10000\"}",
     "inline.json: rope_theta: expected a number, got a string"},
    {"hidden_size fraction", "{\"hidden_size\": 4096.5, \"num_attention_heads\": 32}",
     "inline.json: hidden_size: expected an integer, got 4096.5"},
    {"heads boolean", "{\"hidden_size\": 4096, \"num_attention_heads\": true}",
     "inline.json: num_attention_heads: expected a number, got a boolean"},
    {"rope_scaling string",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rope_scaling\": \"yarn\"}",
     "inline.json: rope_scaling: expected an object or null, got a string"},
    {"missing heads", "{\"hidden_size\": 4096}",
     "inline.json: num_attention_heads: missing; a config must give the number of attention "
     "heads"},
    {"missing hidden_size", "{\"num_attention_heads\": 32, \"rope_theta\": 10000}",
     "inline.json: hidden_size: missing, and no head_dim either; one of them is required"},
    {"missing in text_config", "{\"text_config\": {\"hidden_size\": 4096}}",
     "inline.json: text_config.num_attention_heads: missing"},
    {"text_config not an object", "{\"text_config\": [1]}",
     "inline.json: text_config: expected an object, got an array"},
    {"unknown type yarnn",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"max_position_embeddings\": 4096, "
     "\"rope_scaling\": {\"type\": \"yarnn\", \"factor\": 4}}",
     "inline.json: rope_scaling.type 'yarnn': unknown rope type; allowed: default, linear, "
     "dynamic, ntk, yarn, llama3, longrope, proportional, mrope; did you mean 'yarn'?"},
    {"unknown rope_type lama3",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rope_scaling\": {\"rope_type\": "
     "\"lama3\", \"factor\": 8}}",
     "rope_scaling.rope_type 'lama3': unknown rope type; allowed: default, linear, dynamic, ntk, "
     "yarn, llama3, longrope, proportional, mrope; did you mean 'llama3'?"},
    {"longrope without factors",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"max_position_embeddings\": 8192, "
     "\"rope_scaling\": {\"type\": \"longrope\", \"factor\": 8}}",
     "rope_scaling.short_factor: missing; rope type 'longrope' needs short_factor and long_factor"},
    {"longrope lists of different lengths",
     "{\"hidden_size\": 32, \"num_attention_heads\": 2, \"max_position_embeddings\": 8192, "
     "\"rope_scaling\": {\"type\": \"longrope\", \"factor\": 8, \"short_factor\": [1, 1], "
     "\"long_factor\": [1]}}",
     "rope_scaling.short_factor has 2 numbers, long_factor 1: they must match"},
    {"longrope factor not a number",
     "{\"hidden_size\": 32, \"num_attention_heads\": 2, \"max_position_embeddings\": 8192, "
     "\"rope_scaling\": {\"type\": \"longrope\", \"factor\": 8, \"short_factor\": [1, \"x\"], "
     "\"long_factor\": [1, 2]}}",
     "rope_scaling.short_factor[1]: expected a number > 0, got a string"},
    {"longrope lists not one per pair",
     "{\"hidden_size\": 32, \"num_attention_heads\": 2, \"max_position_embeddings\": 8192, "
     "\"rope_scaling\": {\"type\": \"longrope\", \"factor\": 8, \"short_factor\": [1, 2], "
     "\"long_factor\": [1, 2]}}",
     "longrope has 2 factors per list, one per rotated pair, so it needs a rotary dimension of 4 "
     "(have 16)"},
    {"a layer type without its factor",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"max_position_embeddings\": 4096, "
     "\"rope_parameters\": "
     "{\"full_attention\": {\"rope_type\": \"linear\"}}}",
     "inline.json: rope_parameters.full_attention.factor: missing; rope type 'linear' needs a "
     "scaling factor"},
    {"chatglm",
     "{\"model_type\": \"chatglm\", \"hidden_size\": 4096, \"num_attention_heads\": 32, "
     "\"kv_channels\": 128, \"seq_length\": 8192}",
     "inline.json: model_type 'chatglm': ChatGLM's remote code rotates half of each head"},
    {"factor 0.5",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"max_position_embeddings\": 4096, "
     "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 0.5}}",
     "inline.json: rope_scaling.factor 0.5: must be >= 1"},
    {"factor missing",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"max_position_embeddings\": 4096, "
     "\"rope_scaling\": {\"type\": \"linear\"}}",
     "inline.json: rope_scaling.factor: missing; rope type 'linear' needs a scaling factor"},
    {"linear without max_position",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rope_scaling\": {\"type\": "
     "\"linear\", \"factor\": 2}}",
     "inline.json: max_position_embeddings: missing; rope type 'linear' takes the original "
     "context length from it"},
    {"llama3 without any context",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, "
     "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8}}",
     "inline.json: max_position_embeddings: missing; rope type 'llama3' takes the original "
     "context length from it"},
    {"llama3 high <= low",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rope_scaling\": {\"rope_type\": "
     "\"llama3\", \"factor\": 8, \"original_max_position_embeddings\": 8192, "
     "\"low_freq_factor\": 4, \"high_freq_factor\": 1}}",
     "rope_scaling.low_freq_factor 4, high_freq_factor 1: need high >= low > 0"},
    {"yarn betas reversed",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"max_position_embeddings\": 4096, "
     "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 8, \"beta_fast\": 1, \"beta_slow\": 32}}",
     "rope_scaling.beta_fast 1, beta_slow 32: need beta_fast >= beta_slow > 0"},
    {"attention_factor 0",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"max_position_embeddings\": 4096, "
     "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 8, \"attention_factor\": 0}}",
     "rope_scaling.attention_factor 0: must be > 0"},
    {"theta 1", "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rope_theta\": 1}",
     "inline.json: rope_theta 1: the frequency base must be > 1"},
    {"rotary_emb_base 0.5",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rotary_emb_base\": 0.5}",
     "inline.json: rotary_emb_base 0.5: the frequency base must be > 1"},
    {"theta overflow",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rope_theta\": 1e999}",
     "inline.json: rope_theta: the number is out of range"},
    {"head_dim odd", "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"head_dim\": 127}",
     "inline.json: head_dim 127: the head dimension must be even and 2..65536"},
    {"hidden/heads odd", "{\"hidden_size\": 96, \"num_attention_heads\": 32}",
     "inline.json: hidden_size / num_attention_heads = 3: the head dimension must be even"},
    {"heads 0", "{\"hidden_size\": 4096, \"num_attention_heads\": 0}",
     "inline.json: num_attention_heads 0: must be 1..1024"},
    {"heads -4", "{\"hidden_size\": 4096, \"num_attention_heads\": -4}",
     "inline.json: num_attention_heads -4: must be 1..1024"},
    {"hidden not divisible", "{\"hidden_size\": 4100, \"num_attention_heads\": 32}",
     "inline.json: hidden_size 4100: not divisible by num_attention_heads 32 (give head_dim)"},
    {"kv heads 5",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"num_key_value_heads\": 5}",
     "inline.json: num_key_value_heads 5: must divide num_attention_heads 32"},
    {"rotary 1.5",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"partial_rotary_factor\": 1.5}",
     "inline.json: partial_rotary_factor 1.5: must be in (0, 1]"},
    {"rotary_pct 0", "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rotary_pct\": 0}",
     "inline.json: rotary_pct 0: must be in (0, 1]"},
    {"rotary too small",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"partial_rotary_factor\": 0.01}",
     "partial_rotary_factor 0.01: rotates fewer than 2 of the 128 head dimensions"},
    {"max_position too large",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"max_position_embeddings\": 16777217}",
     "inline.json: max_position_embeddings 16777217: pelab reads contexts of 1..16777216 "
     "positions"},
    {"control characters in a type",
     "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"rope_scaling\": {\"type\": "
     "\"ya\\nrn\", \"factor\": 2}}",
     "rope_scaling.type 'ya?rn': unknown rope type"},
};

static void test_rejected(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pe_hf_config m;
        char err[320] = "";
        memset(&m, 0, sizeof m);
        snprintf(m.name, sizeof m.name, "untouched");
        int rc = pe_hf_config_parse(bad[i].json, "inline.json", &m, err, sizeof err);
        int ok = rc < 0 && strstr(err, bad[i].want) != NULL && strchr(err, '\n') == NULL;
        TAP_OK(ok, "%s: rejected with its message", bad[i].what);
        if (!ok) tap_diag("rc %d, got \"%s\"\n#   want \"%s\"", rc, err, bad[i].want);
        TAP_OK(strcmp(m.name, "untouched") == 0, "%s: out untouched", bad[i].what);
    }

    /* err may be NULL or tiny; messages are cut, never overflowed. */
    pe_hf_config m;
    TAP_OK(pe_hf_config_parse("{", "x.json", &m, NULL, 0) == PE_EINVAL, "NULL err accepted");
    char tiny[8];
    memset(tiny, 'Z', sizeof tiny);
    TAP_OK(pe_hf_config_parse("{\"num_attention_heads\": 0}", "x.json", &m, tiny, sizeof tiny) ==
                   PE_EINVAL &&
               memchr(tiny, '\0', sizeof tiny) != NULL && strncmp(tiny, "x.json:", 7) == 0,
           "8-byte err holds '%s'", tiny);
    char err[256] = "";
    TAP_OK(pe_hf_config_parse(NULL, "x.json", &m, err, sizeof err) == PE_EINVAL &&
               strstr(err, "no text") != NULL,
           "NULL text: %s", err);
}

/* ---- files ------------------------------------------------------------------------------- */

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

static void expect_load_error(const char *path, const char *want, const char *what)
{
    pe_hf_config m;
    char err[512] = "";
    memset(&m, 0, sizeof m);
    int rc = pe_hf_config_load(path, &m, err, sizeof err);
    /* the file first, or after the option when the file could not be read (pe/infile.h) */
    const char *named = strncmp(err, "--config ", 9) == 0 ? err + 9 : err;
    int ok = rc < 0 && strstr(err, want) != NULL && strncmp(named, path, strlen(path)) == 0 &&
             strchr(err, '\n') == NULL;
    TAP_OK(ok, "%s: rejected, message names the file", what);
    if (!ok) tap_diag("rc %d, got \"%s\", want \"%s\"", rc, err, want);
}

static void test_files(void)
{
    char dir[160];
    tap_tmp_path(dir, sizeof dir, "pelab-config-XXXXXX");
    if (!TAP_OK(mkdtemp(dir) != NULL, "temporary directory")) return;
    char path[256], empty[256], big[256], nul[256], good[256], missing[256];
    snprintf(empty, sizeof empty, "%s/empty.json", dir);
    snprintf(big, sizeof big, "%s/big.json", dir);
    snprintf(nul, sizeof nul, "%s/nul.json", dir);
    snprintf(good, sizeof good, "%s/tiny-rope.json", dir);
    snprintf(missing, sizeof missing, "%s/no-such.json", dir);

    TAP_OK(write_file(empty, "", 0) == 0, "write empty.json");
    expect_load_error(empty, ": empty, expected a JSON object", "empty file");
    expect_load_error(dir, ": is a directory; a regular file is expected", "directory");
    expect_load_error(missing, ": cannot open (No such file or directory)", "nonexistent path");

    /* A valid object padded past the cap with spaces: refused for its size alone. */
    size_t n = PE_HF_CONFIG_MAX_BYTES + 1;
    char *blob = malloc(n);
    if (TAP_OK(blob != NULL, "allocate %zu bytes", n)) {
        memset(blob, ' ', n);
        memcpy(blob, "{\"hidden_size\": 64, \"num_attention_heads\": 2}", 46);
        TAP_OK(write_file(big, blob, n) == 0, "write big.json");
        expect_load_error(big, ": 4194305 bytes; files over 4 MiB are refused", "file over 4 MiB");
        free(blob);
    }
    static const char with_nul[] = "{\"hidden_size\": 64,\0 \"num_attention_heads\": 2}";
    TAP_OK(write_file(nul, with_nul, sizeof with_nul - 1) == 0, "write nul.json");
    expect_load_error(nul, ": NUL byte at offset 19; a config.json is text", "NUL byte");

    static const char tiny[] = "{\"hidden_size\": 64, \"num_attention_heads\": 2, "
                               "\"rope_theta\": \"fast\"}";
    TAP_OK(write_file(good, tiny, sizeof tiny - 1) == 0, "write tiny-rope.json");
    expect_load_error(good, ": rope_theta: expected a number, got a string", "bad field in a file");
    static const char fine[] = "{\"hidden_size\": 64, \"num_attention_heads\": 2}\n";
    TAP_OK(write_file(good, fine, sizeof fine - 1) == 0, "rewrite tiny-rope.json");
    pe_hf_config m;
    char err[256] = "";
    TAP_OK(pe_hf_config_load(good, &m, err, sizeof err) == PE_OK &&
               strcmp(m.name, "tiny-rope") == 0 && m.params.dim == 32,
           "a file without a name is named after itself: '%s' (%s)", m.name, err);
    TAP_OK(pe_hf_config_load("", &m, err, sizeof err) == PE_EINVAL &&
               strstr(err, "no config file given") != NULL,
           "empty path: %s", err);

    /* Files whose size stat cannot tell: read to the end, capped all the same. */
    if (access("/proc/self/status", R_OK) == 0)
        expect_load_error("/proc/self/status", ": malformed JSON at line 1, column 1, near 'Name:",
                          "/proc file with st_size 0 is read");
    if (access("/dev/zero", R_OK) == 0)
        /* issue 28: a device is refused before reading, not read up to the cap */
        expect_load_error("/dev/zero", ": is a character device; a regular file is expected",
                          "an endless device is refused before reading");

    const char *made[] = {empty, big, nul, good};
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) unlink(made[i]);
    snprintf(path, sizeof path, "%s", dir);
    TAP_OK(rmdir(path) == 0, "temporary directory removed");
}

int main(void)
{
    const char *src = getenv("PELAB_SRC");
    if (src && *src)
        snprintf(assets_dir, sizeof assets_dir, "%s/assets/configs", src);
    else
        snprintf(assets_dir, sizeof assets_dir, "%s", CONFIG_TEST_ASSETS);
    test_shipped();
    test_shipped_frequencies();
    test_every_asset();
    test_fields();
    test_rejected();
    test_files();
    return tap_done();
}
