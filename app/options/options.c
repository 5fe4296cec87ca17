/* options.c: the one table of figure parameters (see options.h). */
#include "options.h"
#include "textclean.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "config_load.h"
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
            /* an open low end in words: "(0..3.14159]" inside the parentheses read as a typo */
            if (lo_open)
                snprintf(err, errlen, "--%s %s: out of range (allowed above %g, up to %g)", opt, v,
                         lo, hi);
            else
                snprintf(err, errlen, "--%s %s: out of range (allowed %g..%g)", opt, v, lo, hi);
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
        if (pe_encoding_find(v)) { /* an encoding is chosen with --pe, and shown by the views */
            snprintf(err, errlen,
                     "view '%s': unknown view; '%s' is an encoding: --pe %s (with --view heatmap, "
                     "similarity or decay; see `pelab list`)",
                     v, v, v);
            return -1;
        }
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

/* --head is a number: -1 is "all" (every head as small multiples), so the `a` key and a
 * ':head' step add to it as to any number; the text reads and writes the word "all" */
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
static double get_head_num(const app_state *st)
{
    return st->head;
}
static int set_head_num(app_state *st, double v, char *err, size_t errlen)
{
    if (!(v == floor(v) && v >= -1 && v <= PE_MAX_HEADS - 1)) { /* the text's words */
        snprintf(err, errlen, "--head '%.10g': must be 'all' or a head number 0..heads-1", v);
        return -1;
    }
    st->head = (int)v;
    return 0;
}

/* The process's memory budget (pe_mem_*), in MiB: not part of a figure, so it lives in pe/ and
 * not in the state; the option table is where every front end reads its options. */
static int set_max_memory(app_state *st, const char *v, char *err, size_t errlen)
{
    (void)st;
    long mib;
    if (app_parse_int("max-memory", v, 64, 1L << 20, &mib, err, errlen) < 0) return -1;
    pe_mem_set_budget((size_t)mib << 20);
    return 0;
}

static void get_max_memory(const app_state *st, char *buf, size_t n)
{
    (void)st;
    snprintf(buf, n, "%zu", pe_mem_budget() >> 20);
}

/* ---- the table --------------------------------------------------------------------------- */

static const char *const layout_names[] = {"interleaved", "concat", NULL};
static const char *const freq_names[] = {"paper", "fairseq", NULL};
static const char *const pairing_names[] = {"interleaved", "half", NULL};
static const char *const scaling_names[] = {"none", "linear", "ntk",      "dynamic",
                                            "yarn", "llama3", "longrope", NULL};
static const char *const alibi_names[] = {"causal", "symmetric", NULL};
static const char *const t5_names[] = {"causal", "bidirectional", NULL};
static const char *const theme_names[] = {"light", "dark", NULL};
static const char *const xpos_zeta_names[] = {"full", "rotary", NULL};
static const char *const onoff_names[] = {"off", "on", NULL};
static const char *const csv_names[] = {"wide", "long", NULL};
static const char *const svg_text_names[] = {"text", "paths", NULL};
static const char *const scale_names[] = {"per-head", "shared", "window", NULL};

/* the keys' custom steps and the sliders' moving ranges */

/* a: all heads (-1), then each head enlarged in turn, round again: +1 / -1 on the number */
static double step_head(const app_state *st, int dir)
{
    int h = st->head + (dir > 0 ? 1 : -1);
    if (h >= st->p.heads) h = -1;
    if (h < -1) h = st->p.heads - 1;
    return h;
}
/* fewer heads than the enlarged one: show them all */
static void clamp_head(app_state *st)
{
    if (st->head >= st->p.heads) st->head = -1;
}
/* gentler / steeper: 1 - r shrinks / grows by 1.5, starting from the paper's ratio */
static double paper_ratio(const app_state *st)
{
    return pow(2, -8.0 / st->p.heads);
}
static double step_slope(const app_state *st, int dir)
{
    double r = st->p.slope_ratio > 0 ? st->p.slope_ratio : paper_ratio(st);
    r = dir > 0 ? 1 - (1 - r) / 1.5 : 1 - (1 - r) * 1.5;
    return fmin(0.999, fmax(0.01, r));
}
static double last_pos(const app_state *st)
{
    return st->p.len - 1 > 1 ? st->p.len - 1 : 1;
}
static double target_auto(const app_state *st)
{
    return st->p.scaling.factor * st->p.scaling.original_ctx;
}

/* The author's title and subtitle: "" removes them, and unset (the view's own) reads as
 * "(the view's)" so the export command leaves it out. */
static const char view_own[] = "(the view's)";
static int set_author_text(const char *name, char *dst, size_t cap, int *is_set, const char *v,
                           char *err, size_t errlen)
{
    size_t len = strlen(v);
    if (len >= cap) {
        snprintf(err, errlen, "--%s: %zu bytes, allowed at most %zu", name, len, cap - 1);
        return -1;
    }
    memcpy(dst, v, len + 1);
    *is_set = strcmp(v, view_own) != 0;
    return 0;
}
static int set_title(app_state *st, const char *v, char *err, size_t errlen)
{
    return set_author_text("title", st->title, sizeof st->title, &st->title_set, v, err, errlen);
}
static void get_title(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->title_set ? st->title : view_own);
}
static int set_subtitle(app_state *st, const char *v, char *err, size_t errlen)
{
    return set_author_text("subtitle", st->subtitle, sizeof st->subtitle, &st->subtitle_set, v, err,
                           errlen);
}
static void get_subtitle(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->subtitle_set ? st->subtitle : view_own);
}

/* quiet: no line about what the file has but pelab does not model (the e command rebuilding
 * the config's starting point while the screen is drawn) */
static int config_apply(app_state *st, const char *path, int quiet, char *err, size_t errlen)
{
    pe_hf_config mc;
    if (pe_config_load(path, &mc, err, errlen) < 0) return -1;
    /* the layer kind asked for (Gemma 3/4: sliding_attention), else the full-attention one */
    if (st->layer_type[0] && pe_hf_config_select(&mc, st->layer_type, err, errlen) < 0) return -1;
    if (strlen(path) >= sizeof st->config_path) {
        snprintf(err, errlen, "--config: the path is %zu bytes; at most %zu", strlen(path),
                 sizeof st->config_path - 1);
        return -1;
    }
    int len = st->p.len;
    st->p = mc.params;
    /* the figure's L stays what the user asked for unless they asked nothing: a model's
     * 131072-position context is a setting of the extension views, not a heatmap height */
    st->p.len = len;
    /* the model's own target context when it is not factor x L0 (Llama 3.1: 131072, not
     * 8 x 8192); otherwise left to follow --factor */
    double auto_target = st->p.scaling.factor * (double)st->p.scaling.original_ctx;
    st->target_len = mc.target_ctx != auto_target ? mc.target_ctx : 0;
    st->enc = pe_encoding_find("rope");
    snprintf(st->config_path, sizeof st->config_path, "%s", path);
    snprintf(st->model_layer, sizeof st->model_layer, "%s", mc.layer_types[mc.layer_type].name);
    st->model_kinds = mc.n_layer_types;
    /* one line naming what was read but is not part of pelab's model, so nothing differs
     * silently (before any screen is drawn) */
    if (mc.unmodelled[0] && !quiet)
        fprintf(stderr, "pelab: %s: read but not modelled: %s\n", path, mc.unmodelled);
    return 0;
}

int app_config_apply(app_state *st, const char *path, char *err, size_t errlen)
{
    return config_apply(st, path, 0, err, errlen);
}

/* --layer-type: which layer kind of a --config model the RoPE views show. On the command line
 * it is read before the config is applied (cli.c); later (the ':' line) it re-reads the file. */
static int set_layer_type(app_state *st, const char *v, char *err, size_t errlen)
{
    size_t len = strlen(v);
    if (len == 0 || len >= sizeof st->layer_type ||
        strspn(v, "abcdefghijklmnopqrstuvwxyz_") != len) {
        snprintf(err, errlen,
                 "--layer-type %.40s: a layer kind such as full_attention or sliding_attention "
                 "(lowercase letters and _, at most %zu)",
                 v, sizeof st->layer_type - 1);
        return -1;
    }
    if (st->config_path[0] && strcmp(v, st->model_layer) != 0) {
        app_state next = *st;
        memcpy(next.layer_type, v, len + 1);
        if (app_config_apply(&next, st->config_path, err, errlen) < 0) return -1;
        *st = next;
        return 0;
    }
    memcpy(st->layer_type, v, len + 1);
    return 0;
}
static void get_layer_type(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->model_layer[0] ? st->model_layer : st->layer_type);
}
/* shown only for a model with more than one kind of layer */
static int layer_type_applies(const app_state *st)
{
    return st->model_kinds > 1;
}

/* ---- how rows read in a figure's subtitle (app_sub) --------------------------------------- */

/* A view that draws --pe's encoding (heatmap, similarity, wavelength) depends on an encoding's
 * parameters only while that encoding is drawn; a view that draws its own scheme (rope, the
 * extension views) lists only what acts on it. */
static int draws_pe(const app_state *st)
{
    return app_view_uses(app_view_at((size_t)st->view), "pe");
}
/* The encoding whose parameters the figure reads: the view's own choice from --pe (wavelength
 * draws the sinusoid's frequencies for any table encoding, app_view.drawn), else --pe's. */
static const pe_encoding *drawn_enc(const app_state *st)
{
    const app_view *v = app_view_at((size_t)st->view);
    return v->drawn ? v->drawn(st) : st->enc;
}
static int rotary_drawn(const app_state *st)
{
    const pe_encoding *e = drawn_enc(st);
    return !draws_pe(st) || (e && (e->acts & PE_ACTS_QK));
}
static int sinusoid_drawn(const app_state *st)
{
    const pe_encoding *e = drawn_enc(st);
    return !draws_pe(st) || (e && strcmp(e->name, "sinusoidal") == 0);
}
static int base_drawn(const app_state *st)
{
    return sinusoid_drawn(st) || rotary_drawn(st);
}
static int learned_drawn(const app_state *st)
{
    const pe_encoding *e = drawn_enc(st);
    return !draws_pe(st) || (e && strcmp(e->name, "learned") == 0);
}
static const char *const layout_words[] = {"interleaved", "concat", NULL};
static const char *const freq_words[] = {"", "fairseq freqs", NULL};
static const char *const pairing_words[] = {"interleaved pairs", "half-split pairs", NULL};
static const char *const scaling_words[] = {"",     "linear", "NTK",      "dynamic NTK",
                                            "YaRN", "llama3", "longrope", NULL};
/* a view that shows --scale and draws the window marks names them itself (alibi leaves the row
 * out of its subtitle); the others read window as per head */
static const char *const scale_words[] = {"colour: per head", "colour: shared scale (all heads)",
                                          "colour: per head", NULL};
static const char *const alibi_words[] = {"causal",
                                          "symmetric \xe2\x88\x92"
                                          "m|i\xe2\x88\x92"
                                          "j|",
                                          NULL};
/* the rotated share of d, and p-RoPE (a --config model's frequencies over all d dims) */
static void rotary_words(const app_state *st, char *buf, size_t n)
{
    char f[48] = "";
    if (st->p.rotary_frac < 1) fig_num(st->p.rotary_frac, 3, f, sizeof f);
    snprintf(buf, n, "%s%s%s", f[0] ? "rotary " : "", f,
             f[0] && st->p.rope_proportional ? "  " : "");
    if (st->p.rope_proportional) {
        size_t u = strlen(buf);
        snprintf(buf + u, n - u, "p-RoPE (\xce\xb8 over all %d dims)", st->p.dim);
    }
}
static void slope_words(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->p.slope_ratio > 0 ? "slopes r^(h+1)" : "the paper's slopes");
}
static void layer_words(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s layers", st->model_layer);
}

/* The scaling knobs act only with the methods that read them (pe/rope_scaling.c, as HF's rope
 * utilities): in a view that draws the --scaling method (rope, xpos, decay, frequencies) a knob
 * of another method, or any of them with scaling none, changes nothing and is left out of the
 * status line and the sliders (issue 27: f and L0 showed with scaling none). A view that draws
 * every method at once (extension, resolution) does not use --scaling, and every knob acts. */
#define SC(t) (1u << PE_SCALING_##t)
static int scaling_reads(const app_state *st, unsigned methods)
{
    const app_view *v = app_view_at((size_t)st->view);
    return rotary_drawn(st) &&
           (!app_view_uses(v, "scaling") || ((methods >> st->p.scaling.type) & 1u));
}
static int factor_applies(const app_state *st)
{
    return scaling_reads(st, ~SC(NONE));
}
/* L0: the ramps and the dynamic length; a view with a target context marks it in any case */
static int orig_ctx_applies(const app_state *st)
{
    return app_view_uses(app_view_at((size_t)st->view), "target-len") ||
           scaling_reads(st, SC(DYNAMIC) | SC(YARN) | SC(LLAMA3) | SC(LONGROPE));
}
static int seq_len_applies(const app_state *st)
{
    return scaling_reads(st, SC(DYNAMIC) | SC(LONGROPE));
}
static int yarn_applies(const app_state *st)
{
    return scaling_reads(st, SC(YARN));
}
static int llama3_applies(const app_state *st)
{
    return scaling_reads(st, SC(LLAMA3));
}
/* derived by YaRN and LongRoPE; an override given acts with any method */
static int attn_factor_applies(const app_state *st)
{
    return st->p.scaling.attention_factor > 0 || scaling_reads(st, SC(YARN) | SC(LONGROPE));
}
static int target_applies(const app_state *st)
{
    return factor_applies(st);
}
#undef SC

/* Where m sits when --pos is auto: the view's own choice (the RoPE view's m = 3), else the decay
 * view's p0 = L/2; the status line and the slider say the number the figure uses. */
static double pos_auto(const app_state *st)
{
    const app_view *v = app_view_at((size_t)st->view);
    return v->pos_auto ? v->pos_auto(st) : app_state_p0(st);
}

static int set_font(app_state *st, const char *v, char *err, size_t errlen)
{
    if (raster_font_check(v, err, errlen) < 0) return -1;
    int unused = 0;
    return set_author_text("font", st->font, sizeof st->font, &unused, v, err, errlen);
}
static void get_font(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->font);
}

#define OFF(f) offsetof(app_state, f)

/* The figure's own rows (the fields app_state has itself), in three groups of the list in
 * option_groups.h: the modules' groups sit between them in the order the rows were always
 * listed. Each is ended by a row with name NULL. */
const app_option app_figure_rows[] = {
    {APP_CUS("pe", NULL, "encoding (see pelab list)", set_pe, get_pe, choices_pe), .keys = "mM",
     .step = APP_STEP_NEXT},
    {APP_CUS("view", NULL, "view (see pelab list)", set_view, get_view, choices_view),
     .everywhere = 1},
    {APP_INT("dim", "d", "dimension d, 1..65536 (even for pairs)", p.dim, 1, PE_MAX_DIM),
     .label = "d", .keys = "dD", .step = APP_STEP_X2,
     .slider = {APP_SLIDER_LOG, 2, 1024, APP_ROUND_EVEN, NULL, NULL}, .sub = {.label = "d"}},
    {APP_INT("len", "L", "positions L, 1..16777216", p.len, 1, PE_MAX_LEN), .label = "L",
     .keys = "][", .step = APP_STEP_X2, APP_LOG(8, 4096),
     .sub = {.label = "L", .format = APP_SUBF_LEN}},
    {APP_DBL("base", "b", "frequency base, > 1 (10000)", p.base, 1, INFINITY, 1), .keys = "bB",
     .step = APP_STEP_X2, .slider = {APP_SLIDER_LOG, 2, 1e7, APP_ROUND_SIG3, NULL, NULL},
     .sub = {.label = "base", .when = base_drawn}},
    {APP_CHO("layout", NULL, "sinusoid layout: interleaved|concat", p.layout, layout_names),
     .keys = "o", .step = APP_STEP_NEXT, .sub = {.words = layout_words, .when = sinusoid_drawn}},
    {APP_CHO("freq", NULL, "sinusoid frequencies: paper|fairseq", p.freq, freq_names),
     .sub = {.words = freq_words, .when = sinusoid_drawn}},
    {APP_CHO("pairing", NULL, "RoPE pairs: interleaved|half", p.pairing, pairing_names),
     .keys = "p", .step = APP_STEP_NEXT, .applies = rotary_drawn, .sub = {.words = pairing_words}},
    {APP_DBL("rotary-frac", NULL, "RoPE rotated fraction of d, (0,1]", p.rotary_frac, 0, 1, 1),
     .label = "rotary", .applies = rotary_drawn, .sub = {.text = rotary_words}},
    {APP_CHO("scaling", NULL,
             "RoPE scaling: none|linear|ntk|dynamic|yarn|llama3|longrope (--config)",
             p.scaling.type, scaling_names),
     .applies = rotary_drawn, .sub = {.words = scaling_words}},
    {APP_DBL("factor", "f", "RoPE scaling factor, >= 1", p.scaling.factor, 1, 1e6, 0), .label = "f",
     APP_LOG(1, 64), .applies = factor_applies, .sub = {.label = "f", .digits = 3}},
    {APP_INT("orig-ctx", NULL, "original context L0 for scaling, 1..16777216",
             p.scaling.original_ctx, 1, PE_MAX_LEN),
     .label = "L0", APP_LOG(256, 131072), .applies = orig_ctx_applies,
     .sub = {.label = APP_L0, .format = APP_SUBF_LEN}},
    {APP_INT("seq-len", NULL, "dynamic NTK / longrope sequence length, 0..16777216 (0 = not given)",
             p.scaling.seq_len, 0, 16777216),
     .at_lo = "auto", .applies = seq_len_applies},
    {APP_DBL("beta-fast", NULL, "YaRN beta_fast, > 0 (32)", p.scaling.beta_fast, 0, 1e6, 1),
     .applies = yarn_applies},
    {APP_DBL("beta-slow", NULL, "YaRN beta_slow, > 0 (1)", p.scaling.beta_slow, 0, 1e6, 1),
     .applies = yarn_applies},
    {APP_CHO("yarn-truncate", NULL, "YaRN: floor/ceil the ramp ends (HF truncate): off|on (on)",
             p.scaling.yarn_truncate, onoff_names),
     .applies = yarn_applies},
    {APP_DBL("mscale", NULL,
             "YaRN mscale, with --mscale-all-dim sets the attention factor (0 = unset)",
             p.scaling.mscale, 0, 1e6, 0),
     .at_lo = "unset", .applies = yarn_applies},
    {APP_DBL("mscale-all-dim", NULL, "YaRN mscale_all_dim, with --mscale (0 = unset)",
             p.scaling.mscale_all_dim, 0, 1e6, 0),
     .at_lo = "unset", .applies = yarn_applies},
    {APP_DBL("low-freq-factor", NULL, "llama3 low_freq_factor, > 0 (1)", p.scaling.low_freq_factor,
             0, 1e6, 1),
     .applies = llama3_applies},
    {APP_DBL("high-freq-factor", NULL, "llama3 high_freq_factor, > 0 (4)",
             p.scaling.high_freq_factor, 0, 1e6, 1),
     .applies = llama3_applies},
    {APP_DBL("attn-factor", NULL, "scaling attention factor override, >= 0 (0 = derived)",
             p.scaling.attention_factor, 0, 1e6, 0),
     .at_lo = "derived", .applies = attn_factor_applies},
    {APP_INT("heads", "h", "heads, 1..1024", p.heads, 1, PE_MAX_HEADS), .keys = "><",
     .step = APP_STEP_ADD, .clamp = clamp_head, APP_LIN(1, 32), .sub = {.label = "heads"}},
    {APP_CUS("head", NULL, "head to enlarge: all|0..heads-1", set_head, get_head, NULL), .lo = -1,
     .hi = PE_MAX_HEADS - 1, .at_lo = "all", .get_num = get_head_num, .set_num = set_head_num,
     .keys = "a", .step = APP_STEP_CUSTOM, .step_num = step_head,
     .step_help = "all heads, or the next one enlarged"},
    {APP_CHO("alibi", NULL, "ALiBi bias: causal|symmetric", p.alibi_symmetric, alibi_names),
     .sub = {.words = alibi_words}},
    {APP_DBL("slope-ratio", NULL, "ALiBi slope ratio r (m_h = r^(h+1)), 0 = the paper's, < 1",
             p.slope_ratio, 0, 0.999999, 0),
     .label = "slope", .at_lo = "paper", .keys = "rR", .step = APP_STEP_CUSTOM,
     .step_num = step_slope, .step_help = "gentler / steeper",
     .slider = {APP_SLIDER_LINEAR, 0.05, 0.99, APP_ROUND_AUTO, NULL, paper_ratio},
     .sub = {.text = slope_words}},
    {APP_CHO("scale", NULL,
             "ALiBi/T5 head colour scale: per-head|shared|window (ALiBi: exp(bias) on 0..1)",
             scale_shared, scale_names),
     .sub = {.words = scale_words}},
    {APP_INT("buckets", NULL, "T5 buckets, 2..1024", p.t5_buckets, 2, 1024),
     .sub = {.label = "buckets"}},
    {APP_INT("max-distance", NULL, "T5 max distance, 2..16777216", p.t5_max_distance, 2,
             PE_MAX_LEN),
     .sub = {.label = "max_distance"}},
    {APP_CHO("t5", NULL, "T5 buckets: causal|bidirectional", p.t5_bidirectional, t5_names),
     .sub = {.words = t5_names}},
    {APP_DBL("xpos-scale", NULL, "xPos scale base, > 0 (512)", p.xpos_scale_base, 0, 1e9, 1)},
    {APP_CHO("xpos-zeta", NULL,
             "xPos zeta_k over: full (head dim d, torchscale) | rotary (rotary dim, lucidrains)",
             p.xpos_zeta_rotary, xpos_zeta_names)},
    {APP_DBL("std", NULL, "learned table init std, > 0 (0.02)", p.learned_std, 0, 1e3, 1)},
    {APP_INT("seed", NULL, "random seed, 0..2147483647", p.seed, 0, 2147483647),
     .sub = {.label = "seed", .format = APP_SUBF_ID, .when = learned_drawn}},
    {APP_CUS("max-memory", NULL, "memory budget of the process in MiB, 64..1048576 (2048)",
             set_max_memory, get_max_memory, NULL),
     .everywhere = 1},
    {APP_INT("pos", "m",
             "RoPE query position m / decay reference p0 (-1 = auto: 3 in rope, L/2 in decay)", pos,
             -1, PE_MAX_LEN),
     .label = "m", .at_lo = "auto", .auto_value = pos_auto,
     .slider = {APP_SLIDER_LINEAR, 0, 255, APP_ROUND_AUTO, last_pos, pos_auto}},
    {APP_INT("pos-k", "n", "RoPE key position n", pos_k, 0, PE_MAX_LEN), .label = "n",
     .slider = {APP_SLIDER_LINEAR, 0, 255, APP_ROUND_AUTO, last_pos, NULL}},
    {.name = NULL},
};

const app_option app_frame_rows[] = {
    {APP_CUS("cmap", NULL, "colormap: auto or a name from pelab list", set_cmap, get_cmap,
             choices_cmap),
     .keys = "C", .step = APP_STEP_NEXT},
    {APP_CHO("theme", NULL, "theme: light|dark", dark, theme_names), .keys = "t",
     .step = APP_STEP_NEXT, .everywhere = 1},
    {APP_DBL("target-len", NULL, "target context for extension views (0 = factor * L0)", target_len,
             0, 1e9, 0),
     .label = "target", .at_lo = "auto", .auto_value = target_auto, .applies = target_applies,
     .slider = {APP_SLIDER_LOG, 256, 1048576, APP_ROUND_AUTO, NULL, target_auto},
     .sub = {.label = "T", .format = APP_SUBF_LEN}},
    {APP_CUS("layer-type", NULL,
             "--config model's layer kind the RoPE views show: full_attention (default), "
             "sliding_attention, ...",
             set_layer_type, get_layer_type, NULL),
     .label = "layers", .applies = layer_type_applies, .sub = {.text = layer_words}},
    {.name = NULL},
};

/* the author's controls (exports and the explorer's `s`) */
const app_option app_author_rows[] = {
    {APP_CUS("title", NULL, "figure title over the view's (\"\" removes it)", set_title, get_title,
             NULL),
     .everywhere = 1},
    {APP_CUS("subtitle", NULL, "figure subtitle over the view's (\"\" removes it)", set_subtitle,
             get_subtitle, NULL),
     .everywhere = 1},
    {APP_DBL("font-size", NULL, "figure text in points at --dpi, 0 = scaled to the figure, 0..200",
             font_pt, 0, 200, 0),
     .at_lo = "auto", .everywhere = 1},
    {APP_CUS("font", NULL, "figure font: a fontconfig family (default DejaVu Sans)", set_font,
             get_font, NULL),
     .everywhere = 1},
    {APP_CHO("csv-layout", NULL,
             "CSV: wide (the table, numpy.loadtxt) | long (a row per value with named index "
             "columns, pandas.read_csv(f, comment='#'))",
             csv_long, csv_names),
     .everywhere = 1},
    {APP_CHO("svg-text", NULL,
             "SVG text: text (<text> elements: editable, searchable) | paths (glyph outlines)",
             svg_paths, svg_text_names),
     .everywhere = 1},
    {.name = NULL},
};

/* ---- the groups (option_groups.h) --------------------------------------------------------- */

#define APP_GROUP_ROWS(rows)                       extern const app_option rows[];
#define APP_GROUP_DECL(name, type, defaults, rows) extern const app_option rows[];
APP_OPTION_GROUPS(APP_GROUP_ROWS, APP_GROUP_DECL)
#undef APP_GROUP_ROWS
#undef APP_GROUP_DECL

static const app_option_group groups[] = {
#define APP_GROUP_ROWS(rows) {"", rows, 0, 0},
#define APP_GROUP_ENTRY(name, type, defaults, rows)                                                \
    {#name, rows, offsetof(app_state, name), sizeof(type)},
    APP_OPTION_GROUPS(APP_GROUP_ROWS, APP_GROUP_ENTRY)
#undef APP_GROUP_ROWS
#undef APP_GROUP_ENTRY
};

size_t app_option_group_count(void)
{
    return sizeof groups / sizeof groups[0];
}

const app_option_group *app_option_group_at(size_t i)
{
    return i < app_option_group_count() ? &groups[i] : NULL;
}

static size_t group_rows(const app_option_group *g)
{
    size_t n = 0;
    while (g->rows[n].name) n++;
    return n;
}

size_t app_option_count(void)
{
    size_t n = 0;
    for (size_t k = 0; k < app_option_group_count(); k++) n += group_rows(&groups[k]);
    return n;
}

const app_option *app_option_at(size_t i)
{
    for (size_t k = 0; k < app_option_group_count(); k++) {
        size_t n = group_rows(&groups[k]);
        if (i < n) return &groups[k].rows[i];
        i -= n;
    }
    return NULL;
}

const app_option *app_option_find(const char *name)
{
    for (size_t i = 0; i < app_option_count(); i++) {
        const app_option *o = app_option_at(i);
        if (strcmp(o->name, name) == 0) return o;
        if (o->alias && strcmp(o->alias, name) == 0) return o;
    }
    return NULL;
}

const char *app_option_suggest(const char *name)
{
    const char *names[APP_MAX_OPTIONS];
    size_t n = 0;
    for (size_t i = 0; i < app_option_count() && n < APP_MAX_OPTIONS; i++)
        names[n++] = app_option_at(i)->name;
    return pe_closest(name, names, n);
}

static size_t count_names(const char *const *names)
{
    size_t n = 0;
    while (names[n]) n++;
    return n;
}

static int option_set_raw(app_state *st, const app_option *o, const char *value, char *err,
                          size_t errlen);

/* A long value (a 100 kB --pe) filled the message before its reason, which was cut off (issue
 * 28): the message is made in a buffer large enough for it, then the value in it is shortened
 * to its first bytes and its length, so the reason always shows. */
int app_option_set(app_state *st, const app_option *o, const char *value, char *err, size_t errlen)
{
    size_t vl = value ? strlen(value) : 0;
    if (vl <= 80 || !err || !errlen) return option_set_raw(st, o, value, err, errlen);
    size_t big = vl + 2048;
    char *full = malloc(big);
    if (!full) return option_set_raw(st, o, value, err, errlen);
    full[0] = '\0';
    int rc = option_set_raw(st, o, value, full, big);
    if (rc < 0) {
        const char *at = strstr(full, value);
        if (at)
            snprintf(err, errlen, "%.*s%.40s... (%zu bytes)%s", (int)(at - full), full, value, vl,
                     at + vl);
        else
            snprintf(err, errlen, "%s", full);
    }
    free(full);
    return rc;
}

static int option_set_raw(app_state *st, const app_option *o, const char *value, char *err,
                          size_t errlen)
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
        if (o->off == OFF(p.scaling.original_ctx)) st->orig_ctx_set = 1;
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

/* ---- options are numbers ------------------------------------------------------------------ */

int app_option_numeric(const app_option *o)
{
    return o->kind == APP_OPT_INT || o->kind == APP_OPT_DOUBLE ||
           (o->kind == APP_OPT_CUSTOM && o->get_num && o->set_num);
}

int app_option_get_num(const app_state *st, const app_option *o, double *v)
{
    const char *base = (const char *)st + o->off;
    switch (o->kind) {
    case APP_OPT_INT:
        *v = o->off == OFF(p.seed) ? (double)st->p.seed : (double)*(const int *)base;
        return 0;
    case APP_OPT_DOUBLE:
        *v = *(const double *)base;
        return 0;
    case APP_OPT_CUSTOM:
        if (!o->get_num) return -1;
        *v = o->get_num(st);
        return 0;
    case APP_OPT_CHOICE:
        break;
    }
    return -1;
}

int app_option_set_num(app_state *st, const app_option *o, double v, char *err, size_t errlen)
{
    char *base = (char *)st + o->off;
    switch (o->kind) {
    case APP_OPT_INT: {
        /* the checks and words of app_parse_int, on the number itself */
        long lo = (long)o->lo, hi = (long)o->hi;
        if (!isfinite(v) || v != floor(v)) {
            snprintf(err, errlen, "--%s %.10g: not a whole number (allowed %ld..%ld)", o->name, v,
                     lo, hi);
            return -1;
        }
        if (v < (double)lo || v > (double)hi) {
            snprintf(err, errlen, "--%s %.0f: out of range (allowed %ld..%ld)", o->name, v, lo, hi);
            return -1;
        }
        /* a slider's or a key's new L0 counts as given; its own number changes nothing */
        if (o->off == OFF(p.scaling.original_ctx) && *(int *)base != (int)v) st->orig_ctx_set = 1;
        if (o->off == OFF(p.seed))
            st->p.seed = (uint64_t)v;
        else
            *(int *)base = (int)v;
        return 0;
    }
    case APP_OPT_DOUBLE:
        /* the checks and words of app_parse_double */
        if (!isfinite(v)) {
            snprintf(err, errlen, "--%s %g: must be a finite number", o->name, v);
            return -1;
        }
        if ((o->lo_open ? v <= o->lo : v < o->lo) || v > o->hi) {
            if (isinf(o->hi))
                snprintf(err, errlen, "--%s %.10g: out of range (allowed %s %g)", o->name, v,
                         o->lo_open ? ">" : ">=", o->lo);
            else if (o->lo_open)
                snprintf(err, errlen, "--%s %.10g: out of range (allowed above %g, up to %g)",
                         o->name, v, o->lo, o->hi);
            else
                snprintf(err, errlen, "--%s %.10g: out of range (allowed %g..%g)", o->name, v,
                         o->lo, o->hi);
            return -1;
        }
        *(double *)base = v;
        return 0;
    case APP_OPT_CUSTOM:
        if (o->set_num) return o->set_num(st, v, err, errlen);
        break;
    case APP_OPT_CHOICE:
        break;
    }
    snprintf(err, errlen, "--%s: not a number", o->name);
    return -1;
}

int app_option_add(app_state *st, const app_option *o, double dv, char *err, size_t errlen)
{
    double v;
    if (app_option_get_num(st, o, &v) < 0) {
        snprintf(err, errlen, "--%s: not a number", o->name);
        return -1;
    }
    return app_option_set_num(st, o, v + dv, err, errlen);
}

int app_option_multiply(app_state *st, const app_option *o, double f, char *err, size_t errlen)
{
    double v;
    if (app_option_get_num(st, o, &v) < 0) {
        snprintf(err, errlen, "--%s: not a number", o->name);
        return -1;
    }
    return app_option_set_num(st, o, v * f, err, errlen);
}

int app_option_apply_value(app_state *st, const app_option *o, double v, int keep_in_range,
                           char *msg, size_t n)
{
    app_state trial = *st;
    if (app_option_set_num(&trial, o, v, msg, n) < 0) return -1;
    if (keep_in_range && o->clamp) o->clamp(&trial);
    if (app_state_validate(&trial, msg, n) < 0) return -1;
    *st = trial;
    char cur[128];
    app_option_show(st, o, cur, sizeof cur);
    snprintf(msg, n, "%s = %s", o->name, cur);
    return 0;
}

double app_round_sig(double v, int digits)
{
    if (v == 0 || !isfinite(v)) return v;
    int e = (int)floor(log10(fabs(v))) - (digits - 1);
    double p = pow(10, abs(e));
    double r = e >= 0 ? round(v / p) * p : round(v * p) / p;
    return isfinite(r) ? r : v;
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

/* ---- what the surfaces make of an option ------------------------------------------------ */

void app_option_show(const app_state *st, const app_option *o, char *buf, size_t n)
{
    char v[1100];
    app_option_get(st, o, v, sizeof v);
    char *end;
    double x = strtod(v, &end);
    if (o->at_lo && end != v && *end == '\0' && x == o->lo) {
        /* an automatic value the view computes reads as the number it draws, then why: the
         * RoPE view's "m=3 (auto)", where "m=auto" beside a title saying m = 3 left a class
         * guessing (issue 27) */
        double a = o->auto_value ? o->auto_value(st) : NAN;
        if (isfinite(a) && a == floor(a) && fabs(a) < 1e15)
            snprintf(buf, n, "%.0f (%s)", a, o->at_lo);
        else if (isfinite(a))
            snprintf(buf, n, "%.3g (%s)", a, o->at_lo);
        else
            snprintf(buf, n, "%s", o->at_lo);
        return;
    }
    /* a typed text stays short and reads as one value */
    int text = strchr(v, ' ') != NULL || !v[0];
    size_t len = strlen(v);
    snprintf(buf, n, "%s%.*s%s%s", text ? "\"" : "", 40, v, len > 40 ? "..." : "",
             text ? "\"" : "");
}

const char *app_option_step_help(const app_option *o)
{
    int two = o->keys && o->keys[0] && o->keys[1];
    if (o->step_help) return o->step_help;
    switch (o->step) {
    case APP_STEP_X2:
        return "x2 / /2";
    case APP_STEP_ADD:
        return "+1 / -1";
    case APP_STEP_NEXT:
        return two ? "next / previous" : "next";
    case APP_STEP_CUSTOM:
        return "step";
    case APP_STEP_NONE:
        break;
    }
    return "";
}

int app_option_apply(app_state *st, const char *name, const char *value, char *msg, size_t n)
{
    char line[1200];
    snprintf(line, sizeof line, "%s %s", name, value);
    if (app_option_command(st, line, msg, n) < 0) return -1;
    const app_option *o = app_option_find(name);
    char cur[128];
    app_option_show(st, o, cur, sizeof cur);
    snprintf(msg, n, "%s = %s", o->name, cur);
    return 0;
}

int app_option_apply_num(app_state *st, const char *name, double v, char *msg, size_t n)
{
    const app_option *o = app_option_find(name);
    if (o && app_option_numeric(o)) return app_option_apply_value(st, o, v, 0, msg, n);
    /* no way back through text ("%.10g" and parsed again): an option set as a number says how
     * (get_num and set_num) */
    snprintf(msg, n, "--%s: not a number", o ? o->name : name);
    return -1;
}

/* NEXT: the choices after (or before) the current one, the first the whole state accepts. */
static int step_next(app_state *st, const app_option *o, int dir, char *msg, size_t n)
{
    if (o->kind == APP_OPT_CHOICE) {
        /* a choice is the index its int field holds: the next index the whole state accepts,
         * with no name written and looked up on the way */
        int nc = (int)count_names(o->names), i;
        memcpy(&i, (const char *)st + o->off, sizeof i);
        for (int k = 1; k <= nc; k++) {
            int j = ((i + (dir > 0 ? k : -k)) % nc + nc) % nc;
            app_state trial = *st;
            memcpy((char *)&trial + o->off, &j, sizeof j);
            if (app_state_validate(&trial, msg, n) < 0) continue;
            *st = trial;
            snprintf(msg, n, "%s = %s", o->name, o->names[j]);
            return 0;
        }
        return -1;
    }
    /* a value that is a name or a path (an encoding, a colormap, a model): by its name */
    const char *ch[APP_MAX_OPTIONS];
    size_t nc = app_option_choices(o, ch, APP_MAX_OPTIONS), i = 0;
    char cur[1100];
    app_option_get(st, o, cur, sizeof cur);
    while (i < nc && strcmp(ch[i], cur) != 0) i++;
    if (i == nc) i = dir > 0 ? nc - 1 : 0; /* not a choice (a path): start from an end */
    for (size_t k = 1; k <= nc; k++) {
        size_t j = (i + (dir > 0 ? k : nc * 2 - k)) % nc;
        if (app_option_apply(st, o->name, ch[j], msg, n) == 0) return 0;
    }
    return -1;
}

int app_option_step(app_state *st, const app_option *o, int dir, char *msg, size_t n)
{
    if (o->step == APP_STEP_NEXT) return step_next(st, o, dir, msg, n);
    if (o->step == APP_STEP_CUSTOM && o->step_num)
        return app_option_apply_value(st, o, o->step_num(st, dir), 1, msg, n);
    double v;
    if ((o->step != APP_STEP_X2 && o->step != APP_STEP_ADD) || app_option_get_num(st, o, &v) < 0) {
        snprintf(msg, n, "%s has no key", o->name);
        return -1;
    }
    double by = o->by > 0 ? o->by : 1;
    v = o->step == APP_STEP_X2 ? (dir > 0 ? v * 2 : v / 2) : v + dir * by;
    if (o->kind == APP_OPT_INT) v = dir > 0 ? ceil(v) : floor(v);
    if (v > o->hi) v = o->hi;
    if (o->lo_open ? v <= o->lo : v < o->lo) {
        if (o->lo_open) {
            char val[128];
            app_option_show(st, o, val, sizeof val);
            snprintf(msg, n, "%s = %s: the smallest a step reaches", o->name, val);
            return -1;
        }
        v = o->lo;
    }
    /* what the status line shows (%.10g) is then what the state holds */
    return app_option_apply_value(st, o, app_round_sig(v, 10), 1, msg, n);
}

/* ---- whole-state validation -------------------------------------------------------------- */

int app_state_validate(const app_state *st, char *err, size_t errlen)
{
    const app_view *v = app_view_at((size_t)st->view);
    /* --pe's encoding is checked only for a view that draws it: the rope view with d = 7 must
     * say "even for RoPE" (its own check below), not "even for sinusoidal", the --pe default
     * it never shows */
    int uses_pe = !v || !v->options || app_view_uses(v, "pe");
    /* the values only: whether a whole table fits is the view's business (most draw a sample
     * at their resolution) and the memory budget's when one is built, so a 10M-position
     * context loads (issue 25) */
    if (uses_pe && st->enc && pe_validate_values(st->enc, &st->p, err, errlen) < 0) return -1;
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

/* Quote a value for a POSIX shell when it needs it. A control character, a C1 control or a byte
 * that is not UTF-8 goes out as $'\xNN' (bash, zsh, ksh and POSIX.1-2024 sh read it back as the
 * byte), so the command means the same when pasted and no escape reaches the terminal that shows
 * it (issue 28: --title $'X\e]2;PWNED\a' set the terminal's title through the e overlay and the
 * commands printed on exit). */
static void shell_word(const char *v, char *out, size_t n)
{
    int plain = *v != '\0';
    for (const char *c = v; *c; c++)
        if (!(isalnum((unsigned char)*c) || strchr("-_.,/+:=", *c))) plain = 0;
    if (plain) {
        snprintf(out, n, "%s", v);
        return;
    }
    size_t k = 0, len = strlen(v);
    if (k + 1 < n) out[k++] = '\'';
    for (size_t i = 0; i < len && k + 16 < n;) {
        const unsigned char *u = (const unsigned char *)v + i;
        int ul = *u < 0x80 ? 1 : text_utf8_len(u, len - i);
        int raw = *u < 0x20 || *u == 0x7f || ul <= 0 || (ul == 2 && u[0] == 0xc2 && u[1] < 0xa0);
        if (raw) {
            int bytes = ul > 0 ? ul : 1;
            memcpy(out + k, "'$'", 3);
            k += 3;
            for (int b = 0; b < bytes; b++) k += (size_t)snprintf(out + k, n - k, "\\x%02x", u[b]);
            out[k++] = '\'';
            out[k++] = '\'';
            i += (size_t)bytes;
        } else if (*u == '\'') {
            memcpy(out + k, "'\\''", 4);
            k += 4;
            i++;
        } else {
            memcpy(out + k, u, (size_t)ul);
            k += (size_t)ul;
            i += (size_t)ul;
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
    /* parameters from --config FILE: the file goes first and the options are those that differ
     * from what it sets (the command reads it before them, cli.c), so the LongRoPE lists and
     * everything else no option spells come back, and nothing the file set is contradicted */
    int layer_given = 0;
    if (st->config_path[0]) {
        app_state cfg = def;
        memcpy(cfg.layer_type, st->layer_type, sizeof cfg.layer_type);
        char e[256];
        if (config_apply(&cfg, st->config_path, 1, e, sizeof e) == 0) def = cfg;
        layer_given = st->layer_type[0] != '\0';
        shell_word(st->config_path, word, sizeof word);
        w = snprintf(buf + used, n - used, " --config %s", word);
        if (w < 0 || (size_t)w >= n - used) return;
        used += (size_t)w;
    }
    for (size_t i = 0; i < app_option_count(); i++) {
        const app_option *o = app_option_at(i);
        if (o->set == set_view) continue; /* the view is the command's first word */
        app_option_get(st, o, val, sizeof val);
        app_option_get(&def, o, dval, sizeof dval);
        /* a given --orig-ctx counts even at the default's value: the attention views scale over
         * it rather than the model's own context only when it was given (orig_ctx_set); so does
         * the layer kind of a config, which picks what the file gives */
        int given = (o->off == OFF(p.scaling.original_ctx) && st->orig_ctx_set) ||
                    (o->set == set_layer_type && layer_given);
        if (strcmp(val, dval) == 0 && !given) continue;
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
