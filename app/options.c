/* options.c: the one table of figure parameters (see options.h). */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "colormap.h"
#include "raster.h"
#include "views.h"

/* ---- strict number parsing --------------------------------------------------------------- */

static int is_blank(const char *v)
{
    while (*v && isspace((unsigned char)*v)) v++;
    return *v == '\0';
}

int app_parse_int(const char *opt, const char *v, long lo, long hi, long *out, char *err,
                  size_t errlen)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (is_blank(v) || *end != '\0') {
        snprintf(err, errlen, "--%s '%s': not a whole number (allowed %ld..%ld)", opt, v, lo, hi);
        return -1;
    }
    if (errno == ERANGE || x < lo || x > hi) {
        snprintf(err, errlen, "--%s %s: out of range (allowed %ld..%ld)", opt, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

int app_parse_double(const char *opt, const char *v, double lo, double hi, int lo_open, double *out,
                     char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (is_blank(v) || *end != '\0') {
        snprintf(err, errlen, "--%s '%s': not a number", opt, v);
        return -1;
    }
    if (!isfinite(x)) {
        snprintf(err, errlen, "--%s %s: must be a finite number", opt, v);
        return -1;
    }
    if ((lo_open ? x <= lo : x < lo) || x > hi) {
        if (isinf(hi))
            snprintf(err, errlen, "--%s %s: out of range (allowed %s %g)", opt, v,
                     lo_open ? ">" : ">=", lo);
        else
            snprintf(err, errlen, "--%s %s: out of range (allowed %s%g..%g%s)", opt, v,
                     lo_open ? "(" : "", lo, hi, lo_open ? "]" : "");
        return -1;
    }
    *out = x;
    return 0;
}

/* ---- custom options ---------------------------------------------------------------------- */

static int set_pe(app_state *st, const char *v, char *err, size_t errlen)
{
    const pe_encoding *e = pe_encoding_find(v);
    if (!e) {
        const char *s = pe_encoding_suggest(v);
        snprintf(err, errlen, "--pe '%s': unknown encoding%s%s%s (see `pelab list`)", v,
                 s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
        return -1;
    }
    st->enc = e;
    return 0;
}
static void get_pe(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->enc ? st->enc->name : "none");
}
static size_t choices_pe(const char **out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < pe_encoding_count() && k < n; i++) out[k++] = pe_encoding_at(i)->name;
    return k;
}

static int set_view(app_state *st, const char *v, char *err, size_t errlen)
{
    int i = app_view_find(v);
    if (i < 0) {
        const char *s = app_view_suggest(v);
        snprintf(err, errlen, "view '%s': unknown view%s%s%s (see `pelab list`)", v,
                 s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
        return -1;
    }
    st->view = i;
    return 0;
}
static void get_view(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", app_view_at((size_t)st->view)->name);
}
static size_t choices_view(const char **out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < app_view_count() && k < n; i++) out[k++] = app_view_at(i)->name;
    return k;
}

static int set_cmap(app_state *st, const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "auto") == 0) {
        st->map = NULL;
        return 0;
    }
    const cmap *m = cmap_find(v);
    if (!m) {
        const char *names[32];
        size_t k = 0;
        for (size_t i = 0; i < cmap_count() && k < 32; i++) names[k++] = cmap_at(i)->name;
        const char *s = pe_closest(v, names, k);
        snprintf(err, errlen, "--cmap '%s': unknown colormap%s%s%s (see `pelab list`)", v,
                 s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
        return -1;
    }
    st->map = m;
    return 0;
}
static void get_cmap(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->map ? st->map->name : "auto");
}
static size_t choices_cmap(const char **out, size_t n)
{
    size_t k = 0;
    if (k < n) out[k++] = "auto";
    for (size_t i = 0; i < cmap_count() && k < n; i++) out[k++] = cmap_at(i)->name;
    return k;
}

static int set_head(app_state *st, const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "all") == 0) {
        st->head = -1;
        return 0;
    }
    long h;
    if (app_parse_int("head", v, 0, PE_MAX_HEADS - 1, &h, err, errlen) < 0) {
        snprintf(err, errlen, "--head '%s': must be 'all' or a head number 0..heads-1", v);
        return -1;
    }
    st->head = (int)h;
    return 0;
}
static void get_head(const app_state *st, char *buf, size_t n)
{
    if (st->head < 0)
        snprintf(buf, n, "all");
    else
        snprintf(buf, n, "%d", st->head);
}

static const char *const curve_names[APP_CURVE_COUNT + 1] = {
    "sinusoidal", "learned", "binary", "rope", "rope-random", "rope-bound", "alibi", "xpos", NULL};

static int set_curves(app_state *st, const char *v, char *err, size_t errlen)
{
    unsigned bits = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    if (strcmp(buf, "all") == 0) {
        st->curves = (1u << APP_CURVE_COUNT) - 1;
        return 0;
    }
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < APP_CURVE_COUNT; i++)
            if (strcmp(tok, curve_names[i]) == 0) found = i;
        if (found < 0) {
            const char *s = pe_closest(tok, curve_names, APP_CURVE_COUNT);
            snprintf(err, errlen,
                     "--curves '%s': unknown curve; did you mean '%s'? (allowed: all, or a comma "
                     "list of sinusoidal,learned,binary,rope,rope-random,rope-bound,alibi,xpos)",
                     tok, s ? s : "rope");
            return -1;
        }
        bits |= 1u << found;
    }
    if (!bits) {
        snprintf(err, errlen, "--curves '%s': name at least one curve", v);
        return -1;
    }
    st->curves = bits;
    return 0;
}
static void get_curves(const app_state *st, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < APP_CURVE_COUNT; i++) {
        if (!(st->curves & (1u << i))) continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? "," : "", curve_names[i]);
        if (w < 0 || (size_t)w >= n - used) break;
        used += (size_t)w;
    }
}
static size_t choices_curves(const char **out, size_t n)
{
    size_t k = 0;
    if (k < n) out[k++] = "all";
    for (int i = 0; i < APP_CURVE_COUNT && k < n; i++) out[k++] = curve_names[i];
    return k;
}

/* ---- the attention views' options ---------------------------------------------------- */

static int set_model(app_state *st, const char *v, char *err, size_t errlen)
{
    if (app_attn_check_name("model", v, err, errlen) < 0) return -1;
    if (strlen(v) >= sizeof st->model_name) {
        snprintf(err, errlen, "--model: the path is longer than %zu bytes",
                 sizeof st->model_name - 1);
        return -1;
    }
    snprintf(st->model_name, sizeof st->model_name, "%s", v);
    return 0;
}
static void get_model(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->model_name);
}
static size_t choices_model(const char **out, size_t n)
{
    size_t k = 0;
    for (; app_attn_model_names[k] && k < n; k++) out[k] = app_attn_model_names[k];
    return k;
}

static int set_compare(app_state *st, const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "none") == 0 || !*v) {
        st->compare[0] = '\0';
        return 0;
    }
    if (app_attn_check_name("compare", v, err, errlen) < 0) return -1;
    if (strlen(v) >= sizeof st->compare) {
        snprintf(err, errlen, "--compare: the path is longer than %zu bytes",
                 sizeof st->compare - 1);
        return -1;
    }
    snprintf(st->compare, sizeof st->compare, "%s", v);
    return 0;
}
static void get_compare(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->compare[0] ? st->compare : "none");
}
static size_t choices_compare(const char **out, size_t n)
{
    size_t k = 0;
    if (k < n) out[k++] = "none";
    for (size_t i = 0; app_attn_model_names[i] && k < n; i++) out[k++] = app_attn_model_names[i];
    return k;
}

/* A preset replaces the typed prompt (the later of the two wins on the ':' line); the table
 * lists preset before prompt, so a command line carrying both ends with the prompt. */
static int set_preset(app_state *st, const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "none") == 0 || !*v) {
        st->preset[0] = '\0';
        st->prompt[0] = '\0';
        return 0;
    }
    char text[64];
    if (strlen(v) >= sizeof st->preset) {
        snprintf(err, errlen, "--preset '%s': names are at most %zu bytes", v,
                 sizeof st->preset - 1);
        return -1;
    }
    if (app_attn_preset_text(v, text, sizeof text, err, errlen) < 0) return -1;
    snprintf(st->preset, sizeof st->preset, "%s", v);
    st->prompt[0] = '\0';
    return 0;
}
static void get_preset(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->preset[0] ? st->preset : "none");
}

/* A text option into a fixed buffer: too long is refused, never cut. */
static int set_text(const char *name, char *dst, size_t cap, const char *v, char *err,
                    size_t errlen)
{
    if (strlen(v) >= cap) {
        snprintf(err, errlen, "--%s: %zu bytes, allowed at most %zu", name, strlen(v), cap - 1);
        return -1;
    }
    snprintf(dst, cap, "%s", v);
    return 0;
}

static int set_prompt(app_state *st, const char *v, char *err, size_t errlen)
{
    return set_text("prompt", st->prompt, sizeof st->prompt, v, err, errlen);
}
static void get_prompt(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->prompt);
}

static int set_data(app_state *st, const char *v, char *err, size_t errlen)
{
    return set_text("data", st->data_path, sizeof st->data_path, v, err, errlen);
}
static void get_data(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->data_path);
}

/* The author's title and subtitle: "" removes them, and unset (the view's own) reads as
 * "(the view's)" so the export command leaves it out. */
static const char view_own[] = "(the view's)";
static int set_title(app_state *st, const char *v, char *err, size_t errlen)
{
    if (set_text("title", st->title, sizeof st->title, v, err, errlen) < 0) return -1;
    st->title_set = strcmp(v, view_own) != 0;
    return 0;
}
static void get_title(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->title_set ? st->title : view_own);
}
static int set_subtitle(app_state *st, const char *v, char *err, size_t errlen)
{
    if (set_text("subtitle", st->subtitle, sizeof st->subtitle, v, err, errlen) < 0) return -1;
    st->subtitle_set = strcmp(v, view_own) != 0;
    return 0;
}
static void get_subtitle(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->subtitle_set ? st->subtitle : view_own);
}

static int set_font(app_state *st, const char *v, char *err, size_t errlen)
{
    if (raster_font_check(v, err, errlen) < 0) return -1;
    return set_text("font", st->font, sizeof st->font, v, err, errlen);
}
static void get_font(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->font);
}

static int set_rope_base(app_state *st, const char *v, char *err, size_t errlen)
{
    double x;
    if (app_parse_double("rope-base", v, 0, 1e12, 0, &x, err, errlen) < 0) return -1;
    if (x > 0 && x <= 1) {
        snprintf(err, errlen, "--rope-base %s: the frequency base must be > 1 (or 0 = trained)", v);
        return -1;
    }
    st->rope_base = x;
    return 0;
}
static void get_rope_base(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%.10g", st->rope_base);
}

/* ---- the table --------------------------------------------------------------------------- */

static const char *const layout_names[] = {"interleaved", "concat", NULL};
static const char *const freq_names[] = {"paper", "fairseq", NULL};
static const char *const pairing_names[] = {"interleaved", "half", NULL};
static const char *const scaling_names[] = {"none", "linear", "ntk", "dynamic",
                                            "yarn", "llama3", NULL};
static const char *const alibi_names[] = {"causal", "symmetric", NULL};
static const char *const t5_names[] = {"causal", "bidirectional", NULL};
static const char *const sim_names[] = {"dot", "cosine", NULL};
static const char *const theme_names[] = {"light", "dark", NULL};
static const char *const scale_names[] = {"linear", "log", "nofirst", NULL};
static const char *const onoff_names[] = {"off", "on", NULL};
static const char *const csv_names[] = {"wide", "long", NULL};

#define OFF(f) offsetof(app_state, f)
#define INT_OPT(n, a, h, f, l, u)                                                                  \
    {                                                                                              \
        n, a, h, APP_OPT_INT, OFF(f), l, u, 0, NULL, NULL, NULL, NULL                              \
    }
#define DBL_OPT(n, a, h, f, l, u, open)                                                            \
    {                                                                                              \
        n, a, h, APP_OPT_DOUBLE, OFF(f), l, u, open, NULL, NULL, NULL, NULL                        \
    }
#define CHO_OPT(n, a, h, f, names)                                                                 \
    {                                                                                              \
        n, a, h, APP_OPT_CHOICE, OFF(f), 0, 0, 0, names, NULL, NULL, NULL                          \
    }
#define CUS_OPT(n, a, h, s, g, c)                                                                  \
    {                                                                                              \
        n, a, h, APP_OPT_CUSTOM, 0, 0, 0, 0, NULL, s, g, c                                         \
    }

static const app_option options[] = {
    CUS_OPT("pe", NULL, "encoding (see pelab list)", set_pe, get_pe, choices_pe),
    CUS_OPT("view", NULL, "view (see pelab list)", set_view, get_view, choices_view),
    INT_OPT("dim", "d", "dimension d, 1..65536 (even for pairs)", p.dim, 1, PE_MAX_DIM),
    INT_OPT("len", "L", "positions L, 1..1048576", p.len, 1, PE_MAX_LEN),
    DBL_OPT("base", "b", "frequency base, > 1 (10000)", p.base, 1, INFINITY, 1),
    CHO_OPT("layout", NULL, "sinusoid layout: interleaved|concat", p.layout, layout_names),
    CHO_OPT("freq", NULL, "sinusoid frequencies: paper|fairseq", p.freq, freq_names),
    CHO_OPT("pairing", NULL, "RoPE pairs: interleaved|half", p.pairing, pairing_names),
    DBL_OPT("rotary-frac", NULL, "RoPE rotated fraction of d, (0,1]", p.rotary_frac, 0, 1, 1),
    CHO_OPT("scaling", NULL, "RoPE scaling: none|linear|ntk|dynamic|yarn|llama3", p.scaling.type,
            scaling_names),
    DBL_OPT("factor", "f", "RoPE scaling factor, >= 1", p.scaling.factor, 1, 1e6, 0),
    INT_OPT("orig-ctx", NULL, "original context L0 for scaling, 1..1048576", p.scaling.original_ctx,
            1, PE_MAX_LEN),
    INT_OPT("seq-len", NULL,
            "dynamic NTK sequence length, 0..16777216 (0 = not given: L0; extension views: target)",
            p.scaling.seq_len, 0, 16777216),
    DBL_OPT("beta-fast", NULL, "YaRN beta_fast, > 0 (32)", p.scaling.beta_fast, 0, 1e6, 1),
    DBL_OPT("beta-slow", NULL, "YaRN beta_slow, > 0 (1)", p.scaling.beta_slow, 0, 1e6, 1),
    CHO_OPT("yarn-truncate", NULL, "YaRN: floor/ceil the ramp ends (HF truncate): off|on (on)",
            p.scaling.yarn_truncate, onoff_names),
    DBL_OPT("mscale", NULL,
            "YaRN mscale, with --mscale-all-dim sets the attention factor (0 = unset)",
            p.scaling.mscale, 0, 1e6, 0),
    DBL_OPT("mscale-all-dim", NULL, "YaRN mscale_all_dim, with --mscale (0 = unset)",
            p.scaling.mscale_all_dim, 0, 1e6, 0),
    DBL_OPT("low-freq-factor", NULL, "llama3 low_freq_factor, > 0 (1)", p.scaling.low_freq_factor,
            0, 1e6, 1),
    DBL_OPT("high-freq-factor", NULL, "llama3 high_freq_factor, > 0 (4)",
            p.scaling.high_freq_factor, 0, 1e6, 1),
    DBL_OPT("attn-factor", NULL, "scaling attention factor override, >= 0 (0 = derived)",
            p.scaling.attention_factor, 0, 1e6, 0),
    INT_OPT("heads", "h", "heads, 1..1024", p.heads, 1, PE_MAX_HEADS),
    CUS_OPT("head", NULL, "head to enlarge: all|0..heads-1", set_head, get_head, NULL),
    DBL_OPT("slope-ratio", NULL, "ALiBi slope ratio r (m_h = r^(h+1)), 0 = the paper's, < 1",
            p.slope_ratio, 0, 0.999999, 0),
    CHO_OPT("alibi", NULL, "ALiBi bias: causal|symmetric", p.alibi_symmetric, alibi_names),
    INT_OPT("buckets", NULL, "T5 buckets, 2..1024", p.t5_buckets, 2, 1024),
    INT_OPT("max-distance", NULL, "T5 max distance, 2..1048576", p.t5_max_distance, 2, PE_MAX_LEN),
    CHO_OPT("t5", NULL, "T5 buckets: causal|bidirectional", p.t5_bidirectional, t5_names),
    DBL_OPT("xpos-scale", NULL, "xPos scale base, > 0 (512)", p.xpos_scale_base, 0, 1e9, 1),
    DBL_OPT("std", NULL, "learned table init std, > 0 (0.02)", p.learned_std, 0, 1e3, 1),
    INT_OPT("seed", NULL, "random seed, 0..2147483647", p.seed, 0, 2147483647),
    INT_OPT("pos", "m", "RoPE query position m / decay reference p0 (-1 = L/2)", pos, -1,
            PE_MAX_LEN),
    INT_OPT("pos-k", "n", "RoPE key position n", pos_k, 0, PE_MAX_LEN),
    CHO_OPT("similarity", NULL, "similarity: dot|cosine", cosine, sim_names),
    CUS_OPT("curves", NULL,
            "decay curves: all or sinusoidal,learned,binary,rope,rope-random,rope-bound,alibi,xpos",
            set_curves, get_curves, choices_curves),
    CUS_OPT("cmap", NULL, "colormap: auto or a name from pelab list", set_cmap, get_cmap,
            choices_cmap),
    CHO_OPT("theme", NULL, "theme: light|dark", dark, theme_names),
    DBL_OPT("target-len", NULL, "target context for extension views (0 = factor * L0)", target_len,
            0, 1e9, 0),
    DBL_OPT("min-angle", NULL, "resolution probe threshold in radians, (0, 3.14159]", min_angle, 0,
            3.14159266, 1),
    INT_OPT("probe-d", NULL, "resolution probe distance D, 1..1048576", probe_d, 1, PE_MAX_LEN),
    CHO_OPT("attn-scale", NULL, "attention colours: linear|log|nofirst", attn_scale, scale_names),
    INT_OPT("shift", NULL, "shift every position by k, 0..1048576", shift, 0, PE_MAX_LEN),
    CUS_OPT("model", NULL,
            "attention views' model: nope|learned|sinusoidal|alibi|rope|t5 or a "
            "checkpoint path",
            set_model, get_model, choices_model),
    CUS_OPT("compare", NULL, "compare view's second model: none or a model like --model",
            set_compare, get_compare, choices_compare),
    CUS_OPT("preset", NULL, "prompt from assets/prompts/NAME.txt, or none", set_preset, get_preset,
            NULL),
    CUS_OPT("data", NULL,
            "extrapolation: a `pelab eval --extrapolate -o FILE.csv` table (default: the shipped "
            "models' measurement)",
            set_data, get_data, NULL),
    CUS_OPT("prompt", NULL, "prompt text (words and . , ! ? ; : \" ( ); wins over --preset)",
            set_prompt, get_prompt, NULL),
    INT_OPT("step", NULL, "token shown, 0..tokens-1 (-1 = the last)", step, -1, 65535),
    INT_OPT("layer", NULL, "model layer, 0..layers-1", layer, 0, MODEL_MAX_LAYERS - 1),
    CUS_OPT("rope-base", NULL, "rope model's frequency base, > 1 (0 = the trained one)",
            set_rope_base, get_rope_base, NULL),
    DBL_OPT("alibi-scale", NULL, "alibi model's slopes times this, 0..1000 (1 = trained)",
            alibi_scale, 0, 1000, 0),
    INT_OPT("generate", "gen", "tokens generated past the prompt, 0..4096", generate, 0,
            MODEL_MAX_CTX),
    DBL_OPT("temperature", NULL, "generation: 0 = greedy, else sample at this, 0..10", temperature,
            0, 10, 0),
    INT_OPT("gen-seed", NULL, "generation: sampler seed, 0..2147483647", gen_seed, 0, 2147483647),
    CHO_OPT("split", NULL, "attention: scores split into content and position parts: off|on", split,
            onoff_names),
    DBL_OPT("play-speed", NULL, "attention autoplay: tokens per second, (0, 60]", play_speed, 0, 60,
            1),
    CUS_OPT("title", NULL, "figure title over the view's (\"\" removes it)", set_title, get_title,
            NULL),
    CUS_OPT("subtitle", NULL, "figure subtitle over the view's (\"\" removes it)", set_subtitle,
            get_subtitle, NULL),
    DBL_OPT("font-size", NULL,
            "figure text size in points at --dpi, 0 = scaled to the figure, 0..200", font_pt, 0,
            200, 0),
    CHO_OPT("csv-layout", NULL,
            "CSV: wide (the table, numpy.loadtxt) | long (a row per value with named index "
            "columns, pandas.read_csv(f, comment='#'))",
            csv_long, csv_names),
    CUS_OPT("font", NULL, "figure font: a fontconfig family (default DejaVu Sans)", set_font,
            get_font, NULL),
};

size_t app_option_count(void)
{
    return sizeof options / sizeof options[0];
}

const app_option *app_option_at(size_t i)
{
    return i < app_option_count() ? &options[i] : NULL;
}

const app_option *app_option_find(const char *name)
{
    for (size_t i = 0; i < app_option_count(); i++) {
        if (strcmp(options[i].name, name) == 0) return &options[i];
        if (options[i].alias && strcmp(options[i].alias, name) == 0) return &options[i];
    }
    return NULL;
}

const char *app_option_suggest(const char *name)
{
    const char *names[sizeof options / sizeof options[0]];
    for (size_t i = 0; i < app_option_count(); i++) names[i] = options[i].name;
    return pe_closest(name, names, app_option_count());
}

static size_t count_names(const char *const *names)
{
    size_t n = 0;
    while (names[n]) n++;
    return n;
}

int app_option_set(app_state *st, const app_option *o, const char *value, char *err, size_t errlen)
{
    char *base = (char *)st + o->off;
    switch (o->kind) {
    case APP_OPT_INT: {
        long v;
        if (app_parse_int(o->name, value, (long)o->lo, (long)o->hi, &v, err, errlen) < 0) return -1;
        if (o->off == OFF(p.seed))
            st->p.seed = (uint64_t)v;
        else
            *(int *)base = (int)v;
        return 0;
    }
    case APP_OPT_DOUBLE: {
        double v;
        if (app_parse_double(o->name, value, o->lo, o->hi, o->lo_open, &v, err, errlen) < 0)
            return -1;
        *(double *)base = v;
        return 0;
    }
    case APP_OPT_CHOICE: {
        size_t n = count_names(o->names);
        for (size_t i = 0; i < n; i++) {
            if (strcmp(value, o->names[i]) == 0) {
                *(int *)base = (int)i;
                return 0;
            }
        }
        char allowed[256] = "";
        size_t used = 0;
        for (size_t i = 0; i < n; i++) {
            int w =
                snprintf(allowed + used, sizeof allowed - used, "%s%s", i ? "|" : "", o->names[i]);
            if (w > 0 && (size_t)w < sizeof allowed - used) used += (size_t)w;
        }
        snprintf(err, errlen, "--%s '%s': allowed %s", o->name, value, allowed);
        return -1;
    }
    case APP_OPT_CUSTOM:
        return o->set(st, value, err, errlen);
    }
    return -1;
}

void app_option_get(const app_state *st, const app_option *o, char *buf, size_t n)
{
    const char *base = (const char *)st + o->off;
    switch (o->kind) {
    case APP_OPT_INT:
        if (o->off == OFF(p.seed))
            snprintf(buf, n, "%llu", (unsigned long long)st->p.seed);
        else
            snprintf(buf, n, "%d", *(const int *)base);
        return;
    case APP_OPT_DOUBLE:
        snprintf(buf, n, "%.10g", *(const double *)base);
        return;
    case APP_OPT_CHOICE: {
        int v = *(const int *)base;
        size_t cnt = count_names(o->names);
        snprintf(buf, n, "%s", v >= 0 && (size_t)v < cnt ? o->names[v] : "?");
        return;
    }
    case APP_OPT_CUSTOM:
        o->get(st, buf, n);
        return;
    }
}

size_t app_option_choices(const app_option *o, const char **out, size_t n)
{
    if (o->kind == APP_OPT_CHOICE) {
        size_t k = 0;
        for (; o->names[k] && k < n; k++) out[k] = o->names[k];
        return k;
    }
    if (o->kind == APP_OPT_CUSTOM && o->choices) return o->choices(out, n);
    return 0;
}

/* ---- whole-state validation -------------------------------------------------------------- */

int app_state_validate(const app_state *st, char *err, size_t errlen)
{
    if (st->enc && st->enc->validate && st->enc->validate(&st->p, err, errlen) < 0) return -1;
    if (st->head >= st->p.heads) {
        snprintf(err, errlen, "--head %d: must be below --heads %d (allowed all|0..%d)", st->head,
                 st->p.heads, st->p.heads - 1);
        return -1;
    }
    if (st->pos >= st->p.len) {
        snprintf(err, errlen, "--pos %d: must be below --len %d (allowed -1..%d)", st->pos,
                 st->p.len, st->p.len - 1);
        return -1;
    }
    if (st->pos_k >= st->p.len) {
        snprintf(err, errlen, "--pos-k %d: must be below --len %d (allowed 0..%d)", st->pos_k,
                 st->p.len, st->p.len - 1);
        return -1;
    }
    const app_view *v = app_view_at((size_t)st->view);
    if (v && v->validate && v->validate(st, err, errlen) < 0) return -1;
    return 0;
}

int app_option_command(app_state *st, const char *line, char *err, size_t errlen)
{
    char buf[1200]; /* room for ":prompt" and a whole prompt */
    snprintf(buf, sizeof buf, "%s", line);
    char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    if (s[0] == '-' && s[1] == '-') s += 2;
    char *value = s + strcspn(s, " \t=");
    if (*value) {
        *value++ = '\0';
        while (isspace((unsigned char)*value) || *value == '=') value++;
    }
    char *end = value + strlen(value);
    while (end > value && isspace((unsigned char)end[-1])) *--end = '\0';
    if (!*s) {
        snprintf(err, errlen, "type an option and a value, e.g. ':base 500000' (? lists keys)");
        return -1;
    }
    const app_option *o = app_option_find(s);
    if (!o) {
        const char *sug = app_option_suggest(s);
        snprintf(err, errlen, "':%s': unknown option%s%s%s", s, sug ? "; did you mean '" : "",
                 sug ? sug : "", sug ? "'?" : "");
        return -1;
    }
    if (!*value) {
        char cur[128];
        app_option_get(st, o, cur, sizeof cur);
        snprintf(err, errlen, "%s = %s  (%s)", o->name, cur, o->help);
        return -1;
    }
    app_state trial = *st;
    if (app_option_set(&trial, o, value, err, errlen) < 0) return -1;
    if (app_state_validate(&trial, err, errlen) < 0) return -1;
    *st = trial;
    return 0;
}

/* ---- reproducing a figure ---------------------------------------------------------------- */

/* Quote a value for a POSIX shell when it needs it. */
static void shell_word(const char *v, char *out, size_t n)
{
    int plain = *v != '\0';
    for (const char *c = v; *c; c++)
        if (!(isalnum((unsigned char)*c) || strchr("-_.,/+:=", *c))) plain = 0;
    if (plain) {
        snprintf(out, n, "%s", v);
        return;
    }
    size_t k = 0;
    if (k + 1 < n) out[k++] = '\'';
    for (const char *c = v; *c && k + 5 < n; c++) {
        if (*c == '\'') {
            memcpy(out + k, "'\\''", 4);
            k += 4;
        } else {
            out[k++] = *c;
        }
    }
    if (k + 1 < n) out[k++] = '\'';
    out[k < n ? k : n - 1] = '\0';
}

void app_export_command(const app_state *st, const char *out_path, char *buf, size_t n)
{
    app_state def;
    app_state_default(&def);
    char val[1100], dval[1100], word[4400]; /* a prompt of 1023 bytes, quoted */
    size_t used = 0;
    int w = snprintf(buf, n, "pelab export %s", app_view_at((size_t)st->view)->name);
    if (w < 0 || (size_t)w >= n) return;
    used = (size_t)w;
    for (size_t i = 0; i < app_option_count(); i++) {
        const app_option *o = &options[i];
        if (strcmp(o->name, "view") == 0) continue;
        app_option_get(st, o, val, sizeof val);
        app_option_get(&def, o, dval, sizeof dval);
        if (strcmp(val, dval) == 0) continue;
        shell_word(val, word, sizeof word);
        w = snprintf(buf + used, n - used, " --%s %s", o->name, word);
        if (w < 0 || (size_t)w >= n - used) return;
        used += (size_t)w;
    }
    if (out_path) {
        shell_word(out_path, word, sizeof word);
        snprintf(buf + used, n - used, " -o %s", word);
    }
}
