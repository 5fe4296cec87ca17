/* measures.c: the prompts of the measure views and their option rows (measures.h). */
#include "measures.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "ids.h"
#include "infile.h"
#include "lm.h"
#include "views.h"

/* The held-out stories measured by default: every preset of assets/prompts (as sinks.c). */
static const char *const mset_presets[] = {"toy", "cake", "friend", "long", "start", "unknown"};
#define N_PRESETS     (sizeof mset_presets / sizeof mset_presets[0])
#define MSET_MAX_TEXT ((size_t)4 << 20) /* --text: at most 4 MiB */
#define MSET_MAX_WIN  256               /* --text: at most this many windows are measured */

void app_fmt(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

void app_mset_free(app_mset *ps)
{
    for (int i = 0; i < ps->n; i++) free(ps->ids[i]);
    free(ps->ids);
    free(ps->len);
    memset(ps, 0, sizeof *ps);
}

int app_mset_model_cap(const lmi_model *m)
{
    int cap = m->info.ctx > 0 ? m->info.ctx : 1;
    if (m->info.max_pos > 0 && m->info.max_pos < cap) cap = m->info.max_pos;
    if (cap > PE_MAX_LEN) cap = PE_MAX_LEN;
    return cap;
}

/* Append a prompt of n ids (copied). */
static int push(app_mset *ps, const int *ids, int n, char *err, size_t errlen)
{
    int **ni = realloc(ps->ids, sizeof *ni * (size_t)(ps->n + 1));
    if (ni) ps->ids = ni;
    int *nl = ni ? realloc(ps->len, sizeof *nl * (size_t)(ps->n + 1)) : NULL;
    if (nl) ps->len = nl;
    int *copy = nl ? malloc(sizeof *copy * (size_t)(n > 0 ? n : 1)) : NULL;
    if (!copy) {
        snprintf(err, errlen, "out of memory for the prompts");
        return -1;
    }
    memcpy(copy, ids, sizeof *copy * (size_t)n);
    ps->ids[ps->n] = copy;
    ps->len[ps->n++] = n;
    ps->tokens += n;
    if (n > ps->longest) ps->longest = n;
    return 0;
}

/* The whole text's ids through m's tokenizer: *out (malloc'd), their count returned; -1 with
 * err. what names the text in messages. */
static int tokenize_all(const lmi_model *m, const char *what, const char *text, int **out,
                        char *err, size_t errlen)
{
    char why[384];
    size_t len = strlen(text);
    int n = lmi_tokenize(m, text, len, NULL, 0, why, sizeof why);
    lmi_token *tk = n > 0 ? malloc(sizeof *tk * (size_t)n) : NULL;
    if (n > 0 && tk) n = lmi_tokenize(m, text, len, tk, n, why, sizeof why);
    if (n < 0) {
        snprintf(err, errlen, "%s: %s", what, why);
        free(tk);
        return -1;
    }
    int *ids = malloc(sizeof *ids * (size_t)(n > 0 ? n : 1));
    if (!ids || (n > 0 && !tk)) {
        free(tk);
        free(ids);
        snprintf(err, errlen, "%s: out of memory for %d tokens", what, n);
        return -1;
    }
    for (int i = 0; i < n; i++) ids[i] = tk[i].id;
    free(tk);
    *out = ids;
    return n;
}

int app_mset_load(app_mset *ps, const lmi_model *m, const app_state *st, int cap, char *err,
                  size_t errlen)
{
    memset(ps, 0, sizeof *ps);
    int mcap = app_mset_model_cap(m);
    if (cap <= 0 || cap > mcap) cap = mcap;
    ps->cap = cap;
    const app_attn_state *a = &st->attn;
    int rc = 0;
    if (a->ids[0]) {
        int *ids = NULL, n = 0;
        if (app_ids_parse("ids", a->ids, m->info.vocab, m->info.name, &ids, &n, err, errlen) < 0)
            return -1;
        rc = push(ps, ids, n < cap ? n : cap, err, errlen);
        free(ids);
        if (rc == 0) {
            app_fmt(ps->desc, sizeof ps->desc, "one prompt of --ids%s",
                    n > cap ? " (cut to the context)" : "");
            app_fmt(ps->brief, sizeof ps->brief, "given ids");
        }
    } else if (a->text_path[0]) {
        char *text = NULL;
        size_t len = 0;
        int irc = pe_infile_read(a->text_path, "--text", MSET_MAX_TEXT, &text, &len, err, errlen);
        if (irc != PE_OK) return -1;
        int *ids = NULL;
        int n = tokenize_all(m, "--text", text, &ids, err, errlen);
        free(text);
        if (n < 0) return -1;
        /* windows of the context, each starting with BOS when the model has one (the tokenizer
         * put one in front of the whole text: it is taken off and put before every window) */
        int bos = m->info.bos, off = n > 0 && bos >= 0 && ids[0] == bos;
        int step = cap - (bos >= 0) > 0 ? cap - (bos >= 0) : 1;
        int *win = malloc(sizeof *win * (size_t)cap);
        if (!win) {
            free(ids);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        int windows = 0;
        for (int s = off; s < n && windows < MSET_MAX_WIN && rc == 0; s += step, windows++) {
            int k = 0;
            if (bos >= 0) win[k++] = bos;
            for (int i = s; i < n && k < cap; i++) win[k++] = ids[i];
            rc = push(ps, win, k, err, errlen);
        }
        free(win);
        free(ids);
        const char *b = strrchr(a->text_path, '/');
        app_fmt(ps->desc, sizeof ps->desc, "--text %.60s: %d window%s of up to %d tokens",
                b ? b + 1 : a->text_path, windows, windows == 1 ? "" : "s", cap);
        app_fmt(ps->brief, sizeof ps->brief, "%.40s", b ? b + 1 : a->text_path);
    } else if (a->prompt[0]) {
        int *ids = NULL;
        int n = tokenize_all(m, "--prompt", a->prompt, &ids, err, errlen);
        if (n < 0) return -1;
        rc = push(ps, ids, n < cap ? n : cap, err, errlen);
        free(ids);
        app_fmt(ps->desc, sizeof ps->desc, "one --prompt%s",
                n > cap ? " (cut to the context)" : "");
        app_fmt(ps->brief, sizeof ps->brief, "one prompt");
    } else {
        char *text = malloc(65536);
        if (!text) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < N_PRESETS && rc == 0; i++) {
            int *ids = NULL;
            if (app_attn_preset_text(mset_presets[i], text, 65536, err, errlen) < 0) {
                rc = -1;
                break;
            }
            char what[64];
            app_fmt(what, sizeof what, "preset %s", mset_presets[i]);
            int n = tokenize_all(m, what, text, &ids, err, errlen);
            if (n < 0) {
                size_t u = strlen(err);
                if (strstr(err, "--ids") == NULL)
                    app_fmt(err + u, errlen - u, " (--ids 1,2,3 measures given token ids)");
                rc = -1;
                break;
            }
            if (n > 0) rc = push(ps, ids, n < cap ? n : cap, err, errlen);
            free(ids);
        }
        free(text);
        app_fmt(ps->desc, sizeof ps->desc,
                "the %zu held-out presets (toy cake friend long start unknown)", N_PRESETS);
        app_fmt(ps->brief, sizeof ps->brief, "%zu held-out stories", N_PRESETS);
    }
    if (rc == 0 && ps->tokens == 0) {
        snprintf(err, errlen, "%s: the text has no tokens to measure",
                 a->ids[0]         ? "--ids"
                 : a->text_path[0] ? "--text"
                                   : "--prompt");
        rc = -1;
    }
    if (rc < 0) app_mset_free(ps);
    return rc;
}

int app_mset_run(const app_mset *ps, int i, const lmi_model *m, lmi_session *s, char *err,
                 size_t errlen)
{
    int n = ps->len[i];
    if (lmi_session_init(s, m, n > 0 ? n : 1, err, errlen) < 0) return -1;
    for (int t = 0; t < n; t++)
        if (lmi_step(s, ps->ids[i][t], NULL, err, errlen) < 0) return -1;
    return 0;
}

void app_mset_key_of(const app_state *st, app_mset_key *k)
{
    memset(k, 0, sizeof *k);
    app_fmt(k->tokenizer, sizeof k->tokenizer, "%s", st->attn.tokenizer);
    app_fmt(k->prompt, sizeof k->prompt, "%s", st->attn.prompt);
    app_fmt(k->text_path, sizeof k->text_path, "%s", st->attn.text_path);
    app_fmt(k->ids, sizeof k->ids, "%s", st->attn.ids);
}

int app_measure_key_of(const app_state *st, app_measure_key *k, char *err, size_t errlen)
{
    memset(k, 0, sizeof *k);
    app_mset_key_of(st, &k->prompts);
    return app_attn_model_path(st->attn.model_name, k->model, sizeof k->model, err, errlen);
}

int app_measure_begin(app_measure *ms, const app_state *st, char *err, size_t errlen)
{
    memset(ms, 0, sizeof *ms);
    if (app_measure_open(st, "model", st->attn.model_name, &ms->m, err, errlen) < 0) return -1;
    if (app_mset_load(&ms->ps, &ms->m, st, 0, err, errlen) < 0) {
        lmi_close(&ms->m);
        return -1;
    }
    return 0;
}

int app_measure_each(app_measure *ms, app_measure_fn fn, void *arg, char *err, size_t errlen)
{
    int rc = 0;
    for (int p = 0; p < ms->ps.n && rc == 0; p++) {
        lmi_session s = {0};
        rc = app_mset_run(&ms->ps, p, &ms->m, &s, err, errlen);
        if (rc == 0) rc = fn(arg, &s, ms->ps.len[p], err, errlen);
        lmi_session_free(&s);
    }
    return rc;
}

void app_measure_end(app_measure *ms)
{
    app_mset_free(&ms->ps);
    lmi_close(&ms->m);
}

void app_measure_about_of(const app_measure *ms, const app_state *st, app_measure_about *a)
{
    a->prompts = ms->ps.n;
    a->tokens = ms->ps.tokens;
    app_measure_name(st->attn.model_name, &ms->m.info, a->name, sizeof a->name);
    app_fmt(a->desc, sizeof a->desc, "%s", ms->ps.desc);
    app_fmt(a->brief, sizeof a->brief, "%s", ms->ps.brief);
}

int app_measure_path(const char *opt, const char *name, char *path, size_t n, char *err,
                     size_t errlen)
{
    char why[768];
    if (app_attn_model_path(name, path, n, why, sizeof why) == 0) return 0;
    /* its messages name --model; these options name themselves */
    snprintf(err, errlen, "--%s %s", opt, strncmp(why, "--model ", 8) == 0 ? why + 8 : why);
    return -1;
}

int app_measure_open(const app_state *st, const char *opt, const char *name, lmi_model *m,
                     char *err, size_t errlen)
{
    char path[1024], why[768];
    if (app_measure_path(opt, name, path, sizeof path, err, errlen) < 0) return -1;
    if (lmi_open(m, path, why, sizeof why) < 0) {
        app_fmt(err, errlen, "--%s %s: %s", opt, name, why);
        return -1;
    }
    /* model-distance's models share one --tokenizer: pelab's own models keep their vocabulary
     * there (and must then cut the prompts as the real one does); asked of one model, a model
     * with its own vocabulary is refused */
    int skip = strcmp(opt, "model") != 0 && !lm_of_lmi(m);
    if (st->attn.tokenizer[0] && !skip &&
        lm_lmi_set_tokenizer(m, st->attn.tokenizer, why, sizeof why) < 0) {
        /* pe_tok_open's messages start with the path; name the option too */
        if (strncmp(why, "--tokenizer", 11) == 0)
            app_fmt(err, errlen, "%s", why);
        else
            app_fmt(err, errlen, "--tokenizer %s", why);
        lmi_close(m);
        return -1;
    }
    return 0;
}

void app_measure_name(const char *name, const lmi_info *in, char *buf, size_t n)
{
    for (int i = 0; app_attn_model_names[i]; i++)
        if (!strcmp(name, app_attn_model_names[i])) {
            app_fmt(buf, n, "%s", name);
            return;
        }
    app_fmt(buf, n, "%s", in->name);
}

void app_layer_curve(scene *s, const scene_target *t, const fig_axes *a, const double *x,
                     const double *y, int n, uint32_t color)
{
    double lw = t->hairline > 0 ? t->hairline : 1;
    fig_curve(s, a, x, y, (size_t)n, color, t->cells ? 0 : lw * 2, 0);
    double ms = t->cells ? 0 : fmax(3 * lw, t->text_h * 0.3);
    for (int l = 0; !t->cells && l < n; l++)
        if (isfinite(y[l]))
            scene_rect(s, fig_x(a, x[l]) - ms / 2, fig_y(a, y[l]) - ms / 2, ms, ms, color,
                       SCENE_FILL);
}

/* ---- the option rows -------------------------------------------------------------------- */

/* A text option into a fixed buffer: too long is refused, never cut. */
static int set_str(const char *name, char *dst, size_t cap, const char *v, char *err, size_t errlen)
{
    if (strlen(v) >= cap) {
        snprintf(err, errlen, "--%s: %zu bytes, allowed at most %zu", name, strlen(v), cap - 1);
        return -1;
    }
    app_fmt(dst, cap, "%s", v);
    return 0;
}

static int set_text_path(app_state *st, const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "none") == 0) v = "";
    return set_str("text", st->attn.text_path, sizeof st->attn.text_path, v, err, errlen);
}
static void get_text_path(const app_state *st, char *buf, size_t n)
{
    app_fmt(buf, n, "%s", st->attn.text_path);
}

static int set_reference(app_state *st, const char *v, char *err, size_t errlen)
{
    if (app_attn_check_name("reference", v, err, errlen) < 0) return -1;
    return set_str("reference", st->attn.reference, sizeof st->attn.reference, v, err, errlen);
}
static void get_reference(const app_state *st, char *buf, size_t n)
{
    app_fmt(buf, n, "%s", st->attn.reference);
}
static size_t choices_models(const char **out, size_t n)
{
    size_t k = 0;
    for (; app_attn_model_names[k] && k < n; k++) out[k] = app_attn_model_names[k];
    return k;
}

int app_measure_set_list(const char *opt, const char *all, char *dst, size_t cap, const char *v,
                         char *err, size_t errlen)
{
    if (strcmp(v, all) == 0 || !*v) {
        dst[0] = '\0';
        return 0;
    }
    /* every name in the list must be a model name or a path */
    char buf[1024];
    if (set_str(opt, buf, cap < sizeof buf ? cap : sizeof buf, v, err, errlen) < 0) return -1;
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save), n++)
        if (app_attn_check_name(opt, tok, err, errlen) < 0) return -1;
    if (n == 0 || v[strlen(v) - 1] == ',' || v[0] == ',' || strstr(v, ",,")) {
        snprintf(err, errlen,
                 "--%s '%.64s': a list of models separated by commas (e.g. rope,alibi), or %s", opt,
                 v, all);
        return -1;
    }
    if (n > APP_MEASURE_MAX_MODELS) {
        snprintf(err, errlen, "--%s: %d models, allowed at most %d", opt, n,
                 APP_MEASURE_MAX_MODELS);
        return -1;
    }
    return set_str(opt, dst, cap, v, err, errlen);
}

static int set_against(app_state *st, const char *v, char *err, size_t errlen)
{
    return app_measure_set_list("against", "shipped", st->attn.against, sizeof st->attn.against, v,
                                err, errlen);
}
static void get_against(const app_state *st, char *buf, size_t n)
{
    app_fmt(buf, n, "%s", st->attn.against[0] ? st->attn.against : "shipped");
}

static const char *const by_names[] = {"distance", "position", NULL};
static const char *const side_names[] = {"q", "k", NULL};
static const char *const onoff[] = {"off", "on", NULL};

const app_option app_measure_options[] = {
    {APP_CUS("text", NULL,
             "measure views: prompts from a text file, cut into windows of the model's context "
             "(none = the held-out presets)",
             set_text_path, get_text_path, NULL),
     .files = "txt"},
    {APP_CHO("per-head", NULL,
             "distance: one curve per head of --layer instead of per layer: off|on", attn.per_head,
             onoff),
     .keys = "a", .step = APP_STEP_NEXT},
    {APP_CHO("by", NULL,
             "distance: mean attention by distance t - j, or received by key position j: "
             "distance|position",
             attn.by_position, by_names),
     .keys = "x", .step = APP_STEP_NEXT},
    {APP_CUS("reference", NULL,
             "model-distance: the model the others are measured against (nope), a model like "
             "--model",
             set_reference, get_reference, choices_models),
     .files = "pelab"},
    {APP_CUS("against", NULL,
             "model-distance: models compared with --reference, comma-separated (shipped = the "
             "other shipped schemes)",
             set_against, get_against, NULL)},
    {APP_DBL("massive", NULL,
             "usage: a dimension is massive when its norm is above this x the mean, (1, 100] (5, "
             "Jin et al. 2025)",
             attn.massive_lambda, 1, 100, 1),
     APP_LOG(1.5, 20)},
    {APP_CHO("side", NULL, "usage: measure the queries or the keys: q|k", attn.qk_side, side_names),
     .keys = "x", .step = APP_STEP_NEXT},
    {.name = NULL},
};
