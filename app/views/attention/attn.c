/* attn.c: one model run over a prompt for the attention views, its rows computed on demand
 * from the session's cached q and k (see attn.h). */
#include "attn.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assets.h"
#include "ids.h"
#include "textclean.h"
#include "options.h"
#include "views.h"

const char *const app_attn_model_names[] = {"nope", "learned", "sinusoidal", "alibi",
                                            "rope", "t5",      NULL};
#define N_BUILTIN 6 /* the names above */

/* Index of a built-in model name (a scheme with a shipped checkpoint), -1 for anything else. */
static int builtin(const char *name)
{
    for (int i = 0; name && i < N_BUILTIN; i++)
        if (strcmp(name, app_attn_model_names[i]) == 0) return i;
    return -1;
}

/* ---- the state and its options (the option table's rows of this module)
 * ------------------------------------------------ */

static int set_model(app_state *st, const char *v, char *err, size_t errlen)
{
    if (app_attn_check_name("model", v, err, errlen) < 0) return -1;
    if (strlen(v) >= sizeof st->attn.model_name) {
        snprintf(err, errlen, "--model: the path is longer than %zu bytes",
                 sizeof st->attn.model_name - 1);
        return -1;
    }
    snprintf(st->attn.model_name, sizeof st->attn.model_name, "%s", v);
    return 0;
}
static void get_model(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->attn.model_name);
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
        st->attn.compare[0] = '\0';
        return 0;
    }
    if (app_attn_check_name("compare", v, err, errlen) < 0) return -1;
    if (strlen(v) >= sizeof st->attn.compare) {
        snprintf(err, errlen, "--compare: the path is longer than %zu bytes",
                 sizeof st->attn.compare - 1);
        return -1;
    }
    snprintf(st->attn.compare, sizeof st->attn.compare, "%s", v);
    return 0;
}
static void get_compare(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->attn.compare[0] ? st->attn.compare : "none");
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
        st->attn.preset[0] = '\0';
        st->attn.prompt[0] = '\0';
        return 0;
    }
    char text[64];
    if (strlen(v) >= sizeof st->attn.preset) {
        snprintf(err, errlen, "--preset '%s': names are at most %zu bytes", v,
                 sizeof st->attn.preset - 1);
        return -1;
    }
    if (app_attn_preset_text(v, text, sizeof text, err, errlen) < 0) return -1;
    snprintf(st->attn.preset, sizeof st->attn.preset, "%s", v);
    st->attn.prompt[0] = '\0';
    return 0;
}
static void get_preset(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->attn.preset[0] ? st->attn.preset : "none");
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
    /* what the tokenizer, the figures and the terminal get: bytes that are not UTF-8 as U+FFFD,
     * control characters other than line breaks as \xNN */
    size_t n = strlen(v);
    if (!text_is_clean(v, n, TEXT_KEEP_LINES)) {
        char clean[sizeof st->attn.prompt];
        size_t need = text_clean(clean, sizeof clean, v, n, TEXT_KEEP_LINES);
        if (need >= sizeof clean) {
            snprintf(err, errlen, "--prompt: %zu bytes once made valid UTF-8, allowed at most %zu",
                     need, sizeof clean - 1);
            return -1;
        }
        return set_text("prompt", st->attn.prompt, sizeof st->attn.prompt, clean, err, errlen);
    }
    return set_text("prompt", st->attn.prompt, sizeof st->attn.prompt, v, err, errlen);
}
static void get_prompt(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->attn.prompt);
}

/* --ids 1,2,3: token ids given instead of a prompt (a real model needs no tokenizer then). The
 * list is checked here for its form (app_ids_parse, measures.h); the ids against the vocabulary
 * when the model runs. */
static int set_ids(app_state *st, const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "none") == 0 || !*v) {
        st->attn.ids[0] = '\0';
        return 0;
    }
    int n = 0;
    if (app_ids_parse("ids", v, 0, NULL, NULL, &n, err, errlen) < 0) return -1;
    return set_text("ids", st->attn.ids, sizeof st->attn.ids, v, err, errlen);
}
static void get_ids(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->attn.ids[0] ? st->attn.ids : "none");
}

static int set_tokenizer(app_state *st, const char *v, char *err, size_t errlen)
{
    return set_text("tokenizer", st->attn.tokenizer, sizeof st->attn.tokenizer,
                    strcmp(v, "none") == 0 ? "" : v, err, errlen);
}
static void get_tokenizer(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->attn.tokenizer[0] ? st->attn.tokenizer : "none");
}
static int set_compare_tokenizer(app_state *st, const char *v, char *err, size_t errlen)
{
    return set_text("compare-tokenizer", st->attn.compare_tokenizer,
                    sizeof st->attn.compare_tokenizer, strcmp(v, "none") == 0 ? "" : v, err,
                    errlen);
}
static void get_compare_tokenizer(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->attn.compare_tokenizer[0] ? st->attn.compare_tokenizer : "none");
}

static int set_data(app_state *st, const char *v, char *err, size_t errlen)
{
    return set_text("data", st->attn.data_path, sizeof st->attn.data_path, v, err, errlen);
}
static void get_data(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s", st->attn.data_path);
}

static int set_rope_base(app_state *st, const char *v, char *err, size_t errlen)
{
    double x;
    if (app_parse_double("rope-base", v, 0, 1e12, 0, &x, err, errlen) < 0) return -1;
    if (x > 0 && x <= 1) {
        snprintf(err, errlen, "--rope-base %s: the frequency base must be > 1 (or 0 = trained)", v);
        return -1;
    }
    st->attn.rope_base = x;
    return 0;
}
static void get_rope_base(const app_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%.10g", st->attn.rope_base);
}
/* The same checks on the number itself: the b/B keys and the window's slider set the base as a
 * number (options are numbers), not through "%.10g" and back; and the slider's knob reads it. */
static double get_rope_base_num(const app_state *st)
{
    return st->attn.rope_base;
}
static int set_rope_base_num(app_state *st, double x, char *err, size_t errlen)
{
    if (!isfinite(x) || x < 0 || x > 1e12) {
        snprintf(err, errlen, "--rope-base %.10g: out of range (allowed 0..1e+12)", x);
        return -1;
    }
    if (x > 0 && x <= 1) {
        snprintf(err, errlen, "--rope-base %.10g: the frequency base must be > 1 (or 0 = trained)",
                 x);
        return -1;
    }
    st->attn.rope_base = x;
    return 0;
}

/* A position experiment applies when a model of its scheme is shown: --model, or --compare in
 * the compare view; a checkpoint path may be any scheme, so it keeps both. */
static int shows_scheme(const app_state *st, const char *pe)
{
    int a = builtin(st->attn.model_name), b = builtin(st->attn.compare), k = builtin(pe);
    int compare =
        strcmp(app_view_at((size_t)st->view)->name, "compare") == 0 && st->attn.compare[0];
    return a == k || a < 0 || (compare && (b == k || b < 0));
}
/* the step slider's knob for "the last token": the right end (the context, 64 tokens) */
static double last_step(const app_state *st)
{
    (void)st;
    return 63;
}
static int rope_shown(const app_state *st)
{
    return shows_scheme(st, "rope");
}
static int alibi_shown(const app_state *st)
{
    return shows_scheme(st, "alibi");
}

/* The status line and sliders show --tokenizer and --ids only where they mean something: set,
 * or a checkpoint path given (a real model may need a tokenizer); pelab's own named models
 * never do. */
static int tokenizer_shown(const app_state *st)
{
    return st->attn.tokenizer[0] || builtin(st->attn.model_name) < 0;
}
static int compare_tokenizer_shown(const app_state *st)
{
    return st->attn.compare_tokenizer[0] || (st->attn.compare[0] && builtin(st->attn.compare) < 0);
}
static int ids_shown(const app_state *st)
{
    return st->attn.ids[0] != '\0';
}

static const char *const scale_names[] = {"linear", "log", "nofirst", NULL};
static const char *const onoff_names[] = {"off", "on", NULL};

/* The rows the attention, compare and extrapolation views add to the option table, in the order
 * `pelab export` writes them (a preset before the prompt that wins over it). */
const app_option app_attn_options[] = {
    {APP_CHO("attn-scale", NULL, "attention colours: linear|log|nofirst", attn.attn_scale,
             scale_names),
     .label = "colours", .keys = "n", .step = APP_STEP_NEXT},
    {APP_INT("shift", NULL, "shift every position by k, 0..16777216", attn.shift, 0, PE_MAX_LEN),
     .keys = "><", .step = APP_STEP_ADD, .by = 10, .step_help = "+10 / -10", APP_LIN(0, 192)},
    {APP_CUS("model", NULL,
             "attention views' model: nope|learned|sinusoidal|alibi|rope|t5, a .pelab file, a "
             "llama2.c .bin or a Hugging Face folder",
             set_model, get_model, choices_model),
     .keys = "mM", .step = APP_STEP_NEXT, .files = "pelab"},
    {APP_CUS("compare", NULL, "compare view's second model: none or a model like --model",
             set_compare, get_compare, choices_compare),
     .keys = "wW", .step = APP_STEP_NEXT, .files = "pelab"},
    {APP_CUS("preset", NULL, "prompt from assets/prompts/NAME.txt, or none", set_preset, get_preset,
             NULL)},
    {APP_CUS("data", NULL,
             "extrapolation: `pelab eval --extrapolate -o FILE.csv` tables, FILE or FILE,FILE,... "
             "in one figure (default: the shipped models' measurement)",
             set_data, get_data, NULL),
     .files = "csv"},
    {APP_CUS("prompt", NULL, "prompt text (words and . , ! ? ; : \" ( ); wins over --preset)",
             set_prompt, get_prompt, NULL)},
    {APP_CUS("ids", NULL,
             "token ids 1,2,3 run instead of the prompt (a real model needs no tokenizer then), "
             "or none",
             set_ids, get_ids, NULL),
     .applies = ids_shown},
    {APP_CUS("tokenizer", NULL,
             "a real model's tokenizer (tokenizer.json, tokenizer.model, tokenizer.bin) instead "
             "of the one beside --model, or none",
             set_tokenizer, get_tokenizer, NULL),
     .files = "", .applies = tokenizer_shown},
    {APP_CUS("compare-tokenizer", NULL, "the same for --compare, or none", set_compare_tokenizer,
             get_compare_tokenizer, NULL),
     .files = "", .applies = compare_tokenizer_shown},
    {APP_INT("step", NULL, "token shown, 0..tokens-1 (-1 = the last)", attn.step, -1, 65535),
     .at_lo = "last", .slider = {APP_SLIDER_LINEAR, 0, 63, APP_ROUND_AUTO, NULL, last_step}},
    {APP_INT("layer", NULL, "model layer, 0..layers-1", attn.layer, 0, APP_ATTN_MAX_LAYER),
     APP_LIN(0, 2)},
    {APP_CUS("rope-base", NULL, "rope model's frequency base, > 1 (0 = the trained one)",
             set_rope_base, get_rope_base, NULL),
     .get_num = get_rope_base_num, .set_num = set_rope_base_num, .lo = 0, .at_lo = "trained",
     .applies = rope_shown, APP_LOG(10, 1e7)},
    {APP_DBL("alibi-scale", NULL, "alibi model's slopes times this, 0..1000 (1 = trained)",
             attn.alibi_scale, 0, 1000, 0),
     .applies = alibi_shown, APP_LOG(0.05, 20)},
    {APP_INT("generate", "gen", "tokens generated past the prompt, 0..4096", attn.generate, 0,
             APP_ATTN_MAX_GENERATE),
     .label = "gen"},
    {APP_DBL("temperature", NULL, "generation: 0 = greedy, else sample at this, 0..10",
             attn.temperature, 0, 10, 0),
     .label = "T", .at_lo = "greedy", APP_LIN(0, 2)},
    {APP_INT("gen-seed", NULL, "generation: sampler seed, 0..2147483647", attn.gen_seed, 0,
             2147483647)},
    {APP_CHO("split", NULL, "attention: scores split into content and position parts: off|on",
             attn.split, onoff_names),
     .keys = "x", .step = APP_STEP_NEXT},
    {APP_DBL("play-speed", NULL, "attention autoplay: tokens per second, (0, 60]", attn.play_speed,
             0, 60, 1),
     .label = "speed", .keys = "][", .step = APP_STEP_X2},
    {.name = NULL},
};

/* ---- names ------------------------------------------------------------------------------ */

/* A checkpoint path rather than a built-in name: it has a '/', ends in .pelab, or is not a
 * built-in name but exists ("." is a folder, and says so, rather than an unknown model). */
static int is_path(const char *name)
{
    size_t l = strlen(name);
    return strchr(name, '/') || (l > 6 && strcmp(name + l - 6, ".pelab") == 0) ||
           (builtin(name) < 0 && access(name, F_OK) == 0);
}

static int is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

int app_attn_check_name(const char *opt, const char *name, char *err, size_t errlen)
{
    if (is_path(name) || builtin(name) >= 0) return 0;
    const char *s = pe_closest(name, app_attn_model_names, N_BUILTIN);
    snprintf(err, errlen,
             "--%s '%s': unknown model%s%s%s (allowed nope|learned|sinusoidal|alibi|rope|t5, or a "
             "checkpoint path)",
             opt, name, s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
    return -1;
}

int app_attn_model_path(const char *name, char *path, size_t n, char *err, size_t errlen)
{
    if (is_path(name)) {
        struct stat sb;
        if (stat(name, &sb) != 0) {
            snprintf(err, errlen, "--model %s: %s", name, strerror(errno));
            return -1;
        }
        /* a folder is a Hugging Face model (config.json inside); the loaders say what else */
        char cfg[1100];
        snprintf(cfg, sizeof cfg, "%s/config.json", name);
        if (S_ISDIR(sb.st_mode) && !is_file(cfg)) {
            snprintf(err, errlen,
                     "--model %s: a folder without config.json (a Hugging Face model folder has "
                     "config.json and model.safetensors)",
                     name);
            return -1;
        }
        snprintf(path, n, "%s", name);
        return 0;
    }
    if (builtin(name) < 0) return app_attn_check_name("model", name, err, errlen);
    char dir[1024];
    if (app_asset_path("models", dir, sizeof dir, err, errlen) < 0) return -1;
    snprintf(path, n, "%s/%s.pelab", dir, name);
    if (is_file(path)) return 0;
    /* a versioned name (rope-v2.pelab): the first in byte order, so the choice is stable */
    DIR *d = opendir(dir);
    char best[256] = "";
    size_t nl = strlen(name);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            const char *f = e->d_name;
            size_t fl = strlen(f);
            if (strncmp(f, name, nl) == 0 && (f[nl] == '-' || f[nl] == '_') && fl > 6 &&
                strcmp(f + fl - 6, ".pelab") == 0 && (!best[0] || strcmp(f, best) < 0))
                snprintf(best, sizeof best, "%s", f);
        }
        closedir(d);
    }
    if (best[0]) {
        snprintf(path, n, "%s/%s", dir, best);
        return 0;
    }
    snprintf(err, errlen,
             "--model %s: no checkpoint %s/%s.pelab; train it with `pelab train --pe %s -o "
             "%s/%s.pelab` (assets/models/README.md)",
             name, dir, name, name, dir, name);
    return -1;
}

/* The presets in assets/prompts as "a, b, c" (for messages). */
static void preset_list(char *buf, size_t n)
{
    char dir[1024], err[256];
    buf[0] = '\0';
    if (app_asset_path("prompts", dir, sizeof dir, err, sizeof err) < 0) return;
    DIR *d = opendir(dir);
    if (!d) return;
    char names[64][64];
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d)) && k < 64) {
        size_t l = strlen(e->d_name);
        if (l > 4 && l < 64 && strcmp(e->d_name + l - 4, ".txt") == 0) {
            memcpy(names[k], e->d_name, l - 4);
            names[k++][l - 4] = '\0';
        }
    }
    closedir(d);
    /* byte order, so the message does not depend on the directory's order */
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char t[64];
            memcpy(t, names[j], sizeof t);
            memcpy(names[j], names[j - 1], sizeof t);
            memcpy(names[j - 1], t, sizeof t);
        }
    size_t u = 0;
    for (int i = 0; i < k && u < n; i++)
        u += (size_t)snprintf(buf + u, n - u, "%s%s", i ? ", " : "", names[i]);
}

int app_attn_preset_text(const char *name, char *buf, size_t n, char *err, size_t errlen)
{
    for (const char *c = name; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '-' || *c == '_')) {
            snprintf(err, errlen,
                     "--preset '%s': a preset is a name (letters, digits, - and _), see "
                     "assets/prompts",
                     name);
            return -1;
        }
    char path[1200], dir[1024];
    if (app_asset_path("prompts", dir, sizeof dir, err, errlen) < 0) return -1;
    snprintf(path, sizeof path, "%s/%s.txt", dir, name);
    FILE *fp = *name ? fopen(path, "rb") : NULL;
    if (!fp) {
        char list[512];
        preset_list(list, sizeof list);
        snprintf(err, errlen, "--preset '%s': no %s (presets: %s)", name, path,
                 list[0] ? list : "none found");
        return -1;
    }
    size_t got = fread(buf, 1, n - 1, fp);
    buf[got] = '\0';
    fclose(fp);
    while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\r' || buf[got - 1] == ' '))
        buf[--got] = '\0';
    return 0;
}

int app_attn_text(const app_state *st, char *buf, size_t n, char *err, size_t errlen)
{
    if (st->attn.prompt[0]) {
        snprintf(buf, n, "%s", st->attn.prompt);
        return 0;
    }
    if (st->attn.preset[0]) return app_attn_preset_text(st->attn.preset, buf, n, err, errlen);
    buf[0] = '\0';
    return 0;
}

/* ---- splitting the text ----------------------------------------------------------------- */

/* The model's tokens of text as the view shows them: the bytes each covers as typed (an unknown
 * word keeps its spelling, not <unk>; a word longer than 24 bytes is cut with "~"), "¶" for a
 * token of line breaks. Returns the number of tokens in the text (at most cap are written) or
 * -1 with why in err. */
static int split_text(const lmi_model *m, const char *text, app_attn_token *tok, int cap, char *err,
                      size_t errlen)
{
    lmi_token *tk = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *tk);
    if (!tk) {
        snprintf(err, errlen, "out of memory for %d tokens", cap);
        return -1;
    }
    char why[256];
    int n = lmi_tokenize(m, text, strlen(text), tk, cap, why, sizeof why);
    if (n < 0) {
        snprintf(err, errlen, "the prompt: %s", why);
        free(tk);
        return -1;
    }
    for (int i = 0; i < n && i < cap; i++) {
        app_attn_token *t = &tok[i];
        memset(t, 0, sizeof *t);
        t->id = tk[i].id;
        t->unknown = (tk[i].flags & LMI_TOK_UNKNOWN) != 0;
        t->start = tk[i].start;
        t->end = tk[i].end;
        const char *b = text + tk[i].start;
        int l = tk[i].end - tk[i].start;
        if (l > 0 && (*b == '\n' || *b == '\r'))
            snprintf(t->word, sizeof t->word, "\xc2\xb6"); /* pilcrow */
        else if (l > 24)
            snprintf(t->word, sizeof t->word, "%.23s~", b);
        else
            snprintf(t->word, sizeof t->word, "%.*s", l < 39 ? l : 39, b);
    }
    free(tk);
    return n;
}

/* --ids: the tokens of an id list (every id checked against the vocabulary); their words are
 * the vocabulary's (retext). Returns the number of ids or -1. */
static int ids_tokens(const lmi_model *m, const char *list, app_attn_token *tok, int cap, char *err,
                      size_t errlen)
{
    int *ids = NULL, n = 0;
    if (app_ids_parse("ids", list, m->info.vocab, m->info.name, &ids, &n, err, errlen) < 0)
        return -1;
    for (int i = 0; i < n && i < cap; i++) {
        memset(&tok[i], 0, sizeof tok[i]);
        tok[i].id = ids[i];
        tok[i].start = tok[i].end = -1;
        lmi_token_text(m, ids[i], tok[i].word, sizeof tok[i].word);
    }
    free(ids);
    return n;
}

/* One token's display text as a word of the strip: control characters escaped, bytes that are
 * not UTF-8 as U+FFFD, a token of line breaks as a pilcrow, long texts cut with "~" at a
 * character boundary. */
static void word_of(char *w, size_t cap, const char *text)
{
    if (text[0] == '\n' || text[0] == '\r') {
        snprintf(w, cap, "\xc2\xb6");
        return;
    }
    char clean[256];
    size_t need = text_clean(clean, sizeof clean, text, strlen(text), 0);
    size_t l = strlen(clean);
    if (need > 24 || l > 24) {
        /* cut at 23 bytes without splitting a character */
        size_t k = 23;
        while (k > 0 && ((unsigned char)clean[k] & 0xC0) == 0x80) k--;
        snprintf(w, cap, "%.*s~", (int)k, clean);
    } else {
        snprintf(w, cap, "%s", clean);
    }
}

/* Real models: every token shown as its vocabulary text (lmi_display: readable pieces, byte
 * tokens joined into the characters they form) rather than the bytes typed, so a strip shows
 * how the tokenizer cut the text; BOS shows as "<s>". Tiny models keep the words as typed. */
static void retext(app_attn *a, int n)
{
    if (n <= 0 || !lmi_has_display(&a->m)) return;
    int *ids = malloc((size_t)n * sizeof *ids);
    const char **texts = malloc((size_t)n * sizeof *texts);
    char *pool = NULL, why[128];
    if (ids && texts) {
        for (int i = 0; i < n; i++) ids[i] = a->tok[i].id;
        if (lmi_display(&a->m, ids, n, texts, &pool, why, sizeof why) == 0)
            for (int i = 0; i < n; i++) word_of(a->tok[i].word, sizeof a->tok[i].word, texts[i]);
    }
    free(pool);
    free(ids);
    free(texts);
}

/* Do a's and b's prompts carry spans, cut differently? */
static int cut_differently(const app_attn *a, const app_attn *b)
{
    for (int i = 0; i < a->n_prompt; i++)
        if (a->tok[i].start < 0) return 0;
    for (int i = 0; i < b->n_prompt; i++)
        if (b->tok[i].start < 0) return 0;
    if (a->n_prompt != b->n_prompt) return 1;
    for (int i = 0; i < a->n_prompt; i++)
        if (a->tok[i].start != b->tok[i].start || a->tok[i].end != b->tok[i].end) return 1;
    return 0;
}

int app_attn_align(const app_attn *a, int step, const app_attn *b, int *by_text)
{
    int text = a->n > 0 && b->n > 0 && cut_differently(a, b), k = step;
    if (by_text) *by_text = text;
    if (text && step < a->n_prompt) {
        int e = a->tok[step].end;
        k = 0;
        for (int i = 0; i < b->n_prompt; i++)
            if (b->tok[i].start < e) k = i;
    } else if (text) {
        k = b->n_prompt + (step - a->n_prompt);
    }
    return k < 0 ? 0 : k >= b->n ? b->n - 1 : k;
}

void app_attn_vocab_text(const app_attn *a, int id, char *buf, size_t n)
{
    const char *text = NULL;
    char *pool = NULL, why[128];
    if (lmi_has_display(&a->m) && lmi_display(&a->m, &id, 1, &text, &pool, why, sizeof why) == 0)
        word_of(buf, n, text);
    else
        lmi_token_text(&a->m, id, buf, n);
    free(pool);
}

/* ---- the rows, computed on demand ------------------------------------------------------- */

/* The rows of one layer asked for so far: rows 0..filled[h]-1 of head h are computed. */
typedef struct app_attn_rows {
    int layer;   /* the layer held; -1 = none */
    float *w;    /* (heads, cap, cap) weights, NaN past the diagonal */
    float *con;  /* the same layout, content parts; NULL without a split */
    float *pos;  /* the same layout, position parts; NULL without a split */
    int *filled; /* (heads) */
} app_attn_rows;

size_t app_attn_store_bytes(const lmi_info *in, int cap)
{
    size_t c = (size_t)(cap > 0 ? cap : 0), H = (size_t)(in->heads > 0 ? in->heads : 0);
    size_t kinds = in->caps & LMI_CAN_SPLIT ? 3 : 1;
    size_t rows = kinds * H * c * c * sizeof(float) + H * sizeof(int);
    size_t steps = c * (sizeof(app_attn_token) + APP_ATTN_TOPK * (sizeof(int) + sizeof(float)) +
                        sizeof(float) + sizeof(int));
    return rows + steps;
}

static void rows_free(app_attn_rows *r)
{
    if (!r) return;
    free(r->w);
    free(r->con);
    free(r->pos);
    free(r->filled);
    free(r);
}

static app_attn_rows *rows_new(int heads, int cap, int split)
{
    app_attn_rows *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    size_t n = (size_t)heads * (size_t)cap * (size_t)cap;
    r->layer = -1;
    r->w = malloc(n * sizeof *r->w);
    r->filled = calloc((size_t)heads, sizeof *r->filled);
    if (split) {
        r->con = malloc(n * sizeof *r->con);
        r->pos = malloc(n * sizeof *r->pos);
    }
    if (!r->w || !r->filled || (split && (!r->con || !r->pos))) {
        rows_free(r);
        return NULL;
    }
    return r;
}

/* Rows 0..upto of (layer, head) computed from the session's cached q and k (a cache of another
 * layer is dropped first). 0, or -1 when the row cannot be had. */
static int rows_fill(const app_attn *a, int layer, int head, int upto)
{
    app_attn_rows *r = a->rows;
    if (!r) return -1;
    if (r->layer != layer) {
        for (int h = 0; h < a->heads; h++) r->filled[h] = 0;
        r->layer = layer;
    }
    size_t cap = (size_t)a->cap, at = (size_t)head * cap * cap;
    char ignore[8];
    for (int t = r->filled[head]; t <= upto; t++) {
        size_t o = at + (size_t)t * cap;
        float *w = r->w + o, *c = r->con ? r->con + o : NULL, *p = r->pos ? r->pos + o : NULL;
        if (lmi_attn_row(&a->s, layer, head, t, w, c, p, ignore, sizeof ignore) < 0) return -1;
        for (size_t j = (size_t)t + 1; j < cap; j++) {
            w[j] = NAN; /* the future */
            if (c) c[j] = p[j] = NAN;
        }
        r->filled[head] = t + 1;
    }
    return 0;
}

/* ---- the run ---------------------------------------------------------------------------- */

static void run_free(app_attn *a)
{
    lmi_session_free(&a->s);
    lmi_session_free(&a->ref);
    rows_free(a->rows);
    a->rows = NULL;
    pe_mem_release(a->held);
    a->held = 0;
    free(a->tok);
    free(a->top_id);
    free(a->top_p);
    free(a->next_p);
    free(a->next_rank);
    a->next_p = NULL;
    a->next_rank = NULL;
    a->tok = NULL;
    a->top_id = NULL;
    a->top_p = NULL;
    a->valid = 0;
    a->n = a->n_run = a->n_prompt = a->n_text = 0;
}

static void model_close(app_attn *a)
{
    lmi_close(&a->m);
    free(a->trained_slopes);
    free(a->slopes);
    a->trained_slopes = a->slopes = NULL;
    a->pe = NULL;
}

static int load(app_attn *a, const char *name, const char *tok, char *err, size_t errlen);

int app_attn_check_model(const char *name, char *err, size_t errlen)
{
    app_attn a;
    memset(&a, 0, sizeof a);
    int rc = load(&a, name, "", err, errlen);
    app_attn_free(&a);
    return rc;
}

void app_attn_free(app_attn *a)
{
    run_free(a);
    model_close(a);
    memset(a, 0, sizeof *a);
}

static int load(app_attn *a, const char *name, const char *tok, char *err, size_t errlen)
{
    char path[1024];
    if (app_attn_model_path(name, path, sizeof path, err, errlen) < 0) return -1;
    if (a->loaded && strcmp(path, a->path) == 0 && strcmp(tok, a->tok_path) == 0) return 0;
    run_free(a);
    model_close(a);
    a->loaded = 0;
    a->failed = 0;
    char why[512];
    if (lmi_open(&a->m, path, why, sizeof why) < 0) {
        /* the loader's message starts with the path: say it once */
        size_t pl = strlen(path);
        const char *w = strncmp(why, path, pl) == 0 && why[pl] == ':' ? why + pl + 2 : why;
        if (strcmp(name, path) == 0)
            snprintf(err, errlen, "--model %.200s: %.300s", name, w);
        else
            snprintf(err, errlen, "--model %.100s (%.200s): %.200s", name, path, w);
        return -1;
    }
    if (*tok && lmi_set_tokenizer(&a->m, tok, why, sizeof why) < 0) {
        lmi_close(&a->m);
        if (strncmp(why, "--tokenizer", 11) == 0)
            snprintf(err, errlen, "%.500s", why);
        else
            snprintf(err, errlen, "--tokenizer: %.500s", why);
        return -1;
    }
    const lmi_info *in = &a->m.info;
    snprintf(a->path, sizeof a->path, "%s", path);
    snprintf(a->tok_path, sizeof a->tok_path, "%s", tok);
    a->loaded = 1;
    a->pe = in->pe_name;
    if (lmi_has_display(&a->m))
        snprintf(a->label, sizeof a->label, "%.40s, %.15s", in->name, in->pe_name);
    else
        snprintf(a->label, sizeof a->label, "%s", in->pe_name);
    a->caps = in->caps;
    a->layers = in->layers;
    a->heads = in->heads;
    a->trained_base = in->rope_base;
    if (in->caps & LMI_CAN_ALIBI_SCALE) {
        size_t b = (size_t)a->heads * sizeof(double);
        a->trained_slopes = malloc(b);
        a->slopes = malloc(b);
        if (!a->trained_slopes || !a->slopes) {
            model_close(a);
            a->loaded = 0;
            snprintf(err, errlen, "--model %.200s: out of memory", name);
            return -1;
        }
        memcpy(a->trained_slopes, in->alibi_slopes, b);
    }
    /* the run holds the training context, fewer tokens if one layer's rows would be too big */
    int cap = in->ctx;
    while (cap > 8 && app_attn_store_bytes(in, cap) > APP_ATTN_MAX_BYTES) cap = cap * 7 / 8;
    a->cap = cap;
    return 0;
}

/* Say why a step failed, in the user's terms. */
static void step_error(const app_attn *a, int t, const char *why, char *err, size_t errlen)
{
    int offset = a->s.offset, max_pos = a->m.info.max_pos;
    if (max_pos > 0 && offset + t >= max_pos) {
        int most = max_pos - a->n_prompt;
        snprintf(err, errlen,
                 "--shift %d: token %d would sit at position %d, past the %s table's %d "
                 "rows (allowed shift 0..%d for %d tokens)",
                 offset, t, offset + t, a->pe, max_pos, most > 0 ? most : 0, a->n_prompt);
        return;
    }
    snprintf(err, errlen, "step %d: %s", t, why);
}

/* Feed token tok as step t (t == a->n_run), keep its numbers, and compare with the reference. */
static int feed(app_attn *a, int t, char *err, size_t errlen)
{
    char why[512];
    const float *logits;
    int V = a->m.info.vocab;
    if (t > 0) {
        /* how the previous step rated this token (its logits are still in the session) */
        const float *lg = a->s.logits;
        float mx = lg[0], want = lg[a->tok[t].id];
        for (int v = 1; v < V; v++) mx = fmaxf(mx, lg[v]);
        double z = 0;
        int rank = 0;
        for (int v = 0; v < V; v++) {
            z += exp((double)(lg[v] - mx));
            rank += lg[v] > want || (lg[v] == want && v < a->tok[t].id);
        }
        a->next_p[t - 1] = (float)(exp((double)(want - mx)) / z);
        a->next_rank[t - 1] = rank;
    }
    a->next_rank[t] = -1;
    a->next_p[t] = NAN;
    if (lmi_step(&a->s, a->tok[t].id, &logits, why, sizeof why) < 0) {
        step_error(a, t, why, err, errlen);
        return -1;
    }
    lmi_topk(logits, V, APP_ATTN_TOPK, a->top_id + (size_t)t * APP_ATTN_TOPK,
             a->top_p + (size_t)t * APP_ATTN_TOPK);
    if (a->ref.m) {
        if (lmi_step(&a->ref, a->tok[t].id, NULL, why, sizeof why) < 0) {
            snprintf(err, errlen, "step %d (unshifted reference): %s", t, why);
            return -1;
        }
        float *x = malloc(2 * (size_t)(t + 1) * sizeof *x), *y = x ? x + t + 1 : NULL;
        if (!x) {
            snprintf(err, errlen, "step %d: out of memory", t);
            return -1;
        }
        for (int l = 0; l < a->layers; l++)
            for (int h = 0; h < a->heads; h++) {
                if (lmi_attn_row(&a->s, l, h, t, x, NULL, NULL, why, sizeof why) < 0 ||
                    lmi_attn_row(&a->ref, l, h, t, y, NULL, NULL, why, sizeof why) < 0) {
                    snprintf(err, errlen, "step %d: %s", t, why);
                    free(x);
                    return -1;
                }
                for (int j = 0; j <= t; j++)
                    a->shift_diff = fmax(a->shift_diff, fabs((double)x[j] - (double)y[j]));
            }
        free(x);
    }
    a->n_run = t + 1;
    return 0;
}

/* Generate until want tokens are made past the prompt or the context is full. */
static int generate(app_attn *a, int want, char *err, size_t errlen)
{
    while (a->n_run - a->n_prompt < want && a->n_run < a->cap) {
        int t = a->n_run;
        int id = lmi_sample(a->s.logits, a->m.info.vocab, a->key.temperature, &a->rng);
        app_attn_token *tk = &a->tok[t];
        memset(tk, 0, sizeof *tk);
        tk->id = id;
        tk->generated = 1;
        tk->start = tk->end = -1;
        if (id == a->m.info.eos)
            snprintf(tk->word, sizeof tk->word, "\xc2\xb6");
        else
            lmi_token_text(&a->m, id, tk->word, sizeof tk->word);
        if (feed(a, t, err, errlen) < 0) return -1;
    }
    return 0;
}

static void make_key(app_attn_key *k, const app_state *st, const char *name, const char *tok)
{
    memset(k, 0, sizeof *k);
    snprintf(k->model, sizeof k->model, "%s", name);
    snprintf(k->prompt, sizeof k->prompt, "%s", st->attn.prompt);
    snprintf(k->ids, sizeof k->ids, "%s", st->attn.ids);
    snprintf(k->tokenizer, sizeof k->tokenizer, "%s", tok);
    snprintf(k->preset, sizeof k->preset, "%s", st->attn.prompt[0] ? "" : st->attn.preset);
    k->shift = st->attn.shift;
    k->rope_base = st->attn.rope_base;
    k->alibi_scale = st->attn.alibi_scale;
    k->scaling = (int)st->p.scaling.type;
    k->factor = k->scaling ? st->p.scaling.factor : 0;
    k->orig_ctx = k->scaling && st->orig_ctx_set ? st->p.scaling.original_ctx : 0;
    k->temperature = st->attn.temperature > 0 ? st->attn.temperature : 0;
    k->gen_seed = st->attn.gen_seed;
}

/* The experiments of st on session s (before any token: nothing to replay yet). */
static int experiments_on(app_attn *a, lmi_session *s, const app_state *st, char *why,
                          size_t whylen)
{
    if ((a->caps & LMI_CAN_ROPE_BASE) && st->attn.rope_base > 0 &&
        lmi_set_rope_base(s, st->attn.rope_base, why, whylen) < 0)
        return -1;
    if ((a->caps & LMI_CAN_ALIBI_SCALE) && st->attn.alibi_scale != 1 &&
        lmi_set_alibi_scale(s, st->attn.alibi_scale, why, whylen) < 0)
        return -2;
    /* --scaling/--factor: the figure options' RoPE scaling (its YaRN betas, llama3 bands) over
     * L0 = --orig-ctx when it was given, else the model's own trained context; dynamic NTK
     * follows the tokens held (lmi_set_rope_scaling), so --seq-len does not apply here */
    a->scaled = 0;
    if ((a->caps & LMI_CAN_ROPE_SCALING) && st->p.scaling.type != PE_SCALING_NONE) {
        pe_rope_scaling sc = st->p.scaling;
        sc.original_ctx = a->key.orig_ctx;
        if (lmi_set_rope_scaling(s, &sc, why, whylen) < 0) return -3;
        a->scaled = 1;
    }
    return 0;
}

/* Allocate the arrays and run the prompt under the key's settings. */
static int run(app_attn *a, const app_state *st, char *err, size_t errlen)
{
    char *text = malloc(sizeof st->attn.prompt + 4096);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = app_attn_text(st, text, sizeof st->attn.prompt + 4096, err, errlen);
    if (rc == 0 && !st->attn.ids[0] && !text[strspn(text, " \t\r\n")]) {
        snprintf(err, errlen,
                 "the prompt is empty: give one with --prompt TEXT (:prompt once upon a time in "
                 "the explorer) or --preset NAME");
        rc = -1;
    }
    size_t cap = (size_t)a->cap;
    a->split = (a->caps & LMI_CAN_SPLIT) != 0;
    if (rc == 0) {
        size_t bytes = app_attn_store_bytes(&a->m.info, a->cap);
        char why[512];
        if (pe_mem_reserve_hint(bytes, "the attention rows of one layer",
                                "a model with fewer heads or a shorter context needs less", why,
                                sizeof why) < 0) {
            snprintf(err, errlen, "--model %.100s: %.400s", a->key.model, why);
            rc = -1;
        } else {
            a->held = bytes;
        }
    }
    if (rc == 0) {
        a->tok = calloc(cap, sizeof *a->tok);
        a->rows = rows_new(a->heads, a->cap, a->split);
        a->top_id = calloc(cap * APP_ATTN_TOPK, sizeof *a->top_id);
        a->top_p = calloc(cap * APP_ATTN_TOPK, sizeof *a->top_p);
        a->next_p = calloc(cap, sizeof *a->next_p);
        a->next_rank = calloc(cap, sizeof *a->next_rank);
        if (!a->tok || !a->rows || !a->top_id || !a->top_p || !a->next_p || !a->next_rank) {
            snprintf(err, errlen, "out of memory for a run of %zu tokens", cap);
            rc = -1;
        }
    }
    if (rc == 0) {
        if (!a->split)
            snprintf(a->split_msg, sizeof a->split_msg, "%s mixes position into q and k", a->pe);
        else
            a->split_msg[0] = '\0';
        a->n_text = st->attn.ids[0] ? ids_tokens(&a->m, st->attn.ids, a->tok, a->cap, err, errlen)
                                    : split_text(&a->m, text, a->tok, a->cap, err, errlen);
        if (a->n_text < 0) rc = -1;
        a->n_prompt = a->n_text < a->cap ? a->n_text : a->cap;
        a->n_unknown = 0;
        for (int i = 0; i < a->n_prompt; i++) a->n_unknown += a->tok[i].unknown;
    }
    free(text);
    char why[512];
    if (rc == 0 && lmi_session_init(&a->s, &a->m, a->cap, why, sizeof why) < 0) {
        snprintf(err, errlen, "session: %.400s", why);
        rc = -1;
    }
    /* the experiments, applied before any token (nothing to replay yet) */
    a->base = a->trained_base;
    if (a->slopes) memcpy(a->slopes, a->trained_slopes, (size_t)a->heads * sizeof *a->slopes);
    if (rc == 0) {
        int e = experiments_on(a, &a->s, st, why, sizeof why);
        if (e == -1)
            snprintf(err, errlen, "--rope-base %g: %.400s", st->attn.rope_base, why);
        else if (e == -2)
            snprintf(err, errlen, "--alibi-scale %g: %.400s", st->attn.alibi_scale, why);
        else if (e == -3)
            snprintf(err, errlen, "%.500s", why);
        if (e) rc = -1;
        if (a->caps & LMI_CAN_ROPE_BASE) a->base = a->s.rope_base;
        if (a->slopes && a->s.alibi_slopes)
            memcpy(a->slopes, a->s.alibi_slopes, (size_t)a->heads * sizeof *a->slopes);
    }
    if (rc == 0 && st->attn.shift > 0) {
        if (lmi_set_offset(&a->s, st->attn.shift, why, sizeof why) < 0) {
            snprintf(err, errlen, "--shift %d: %.400s", st->attn.shift, why);
            rc = -1;
        }
        /* the reference: the same model and settings at shift 0 */
        if (rc == 0 && lmi_session_init(&a->ref, &a->m, a->cap, why, sizeof why) < 0) {
            snprintf(err, errlen, "session: %.400s", why);
            rc = -1;
        }
        if (rc == 0 && experiments_on(a, &a->ref, st, why, sizeof why) < 0) {
            snprintf(err, errlen, "reference session: %.400s", why);
            rc = -1;
        }
    }
    a->shift_diff = st->attn.shift > 0 ? 0 : -1;
    pe_rng_seed(&a->rng, (uint64_t)st->attn.gen_seed);
    a->n_run = 0;
    for (int t = 0; rc == 0 && t < a->n_prompt; t++) rc = feed(a, t, err, errlen);
    return rc;
}

static void make_notice(app_attn *a)
{
    size_t u = 0;
    a->notice[0] = '\0';
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (u < sizeof a->notice) {                                                                \
            int w_ = snprintf(a->notice + u, sizeof a->notice - u, __VA_ARGS__);                   \
            if (w_ > 0) u += (size_t)w_;                                                           \
        }                                                                                          \
    } while (0)
    if (a->n_text > a->cap)
        ADD("the prompt has %d tokens but the model's context is %d: pelab stops at token %d "
            "(no sliding window). ",
            a->n_text, a->cap, a->cap);
    else if (a->n > a->n_prompt && a->n == a->cap)
        ADD("the context is full (%d tokens): generation stops here. ", a->cap);
    if (a->n_prompt > 0 && a->n_unknown == a->n_prompt)
        ADD("no word of the prompt is in the vocabulary: the model sees only <unk>. ");
    else if (a->n_unknown > 0)
        ADD("%d word%s outside the vocabulary (in [brackets]): the model sees <unk>. ",
            a->n_unknown, a->n_unknown > 1 ? "s" : "");
    while (u > 0 && u <= sizeof a->notice && a->notice[u - 1] == ' ') a->notice[--u] = '\0';
#undef ADD
}

int app_attn_update(app_attn *a, const app_state *st, const char *name, char *err, size_t errlen)
{
    if (!name || !*name) {
        snprintf(err, errlen,
                 "no model: name one with --model (nope|learned|sinusoidal|alibi|"
                 "rope|t5)");
        return -1;
    }
    const char *tok = name == st->attn.compare ? st->attn.compare_tokenizer : st->attn.tokenizer;
    if (load(a, name, tok, err, errlen) < 0) return -1;
    app_attn_key k;
    make_key(&k, st, name, tok);
    if (a->failed && memcmp(&k, &a->key, sizeof k) == 0) {
        snprintf(err, errlen, "%s", a->fail_msg);
        return -1;
    }
    if (!a->valid || memcmp(&k, &a->key, sizeof k) != 0) {
        run_free(a);
        a->key = k;
        a->failed = 0;
        if (run(a, st, a->fail_msg, sizeof a->fail_msg) < 0) {
            run_free(a);
            a->failed = 1;
            snprintf(err, errlen, "%s", a->fail_msg);
            return -1;
        }
        a->valid = 1;
    }
    int want = st->attn.generate > 0 ? st->attn.generate : 0;
    if (a->n_run - a->n_prompt < want && a->n_run < a->cap) {
        if (generate(a, want, err, errlen) < 0) {
            /* keep what was made: the run is still consistent up to n_run */
            a->n = a->n_run;
            retext(a, a->n_run);
            make_notice(a);
            return -1;
        }
    }
    int made = a->n_run - a->n_prompt;
    a->n = a->n_prompt + (want < made ? want : made);
    retext(a, a->n_run);
    make_notice(a);
    return 0;
}

/* ---- reading the run -------------------------------------------------------------------- */

int app_attn_step(const app_attn *a, const app_state *st)
{
    if (a->n <= 0) return 0;
    if (st->attn.step < 0 || st->attn.step >= a->n) return a->n - 1;
    return st->attn.step;
}

static int in_range(const app_attn *a, int step, int layer, int head)
{
    return a->valid && step >= 0 && step < a->n && layer >= 0 && layer < a->layers && head >= 0 &&
           head < a->heads;
}

static size_t row_at(const app_attn *a, int step, int head)
{
    return ((size_t)head * (size_t)a->cap + (size_t)step) * (size_t)a->cap;
}

const float *app_attn_row(const app_attn *a, int step, int layer, int head)
{
    if (!in_range(a, step, layer, head) || rows_fill(a, layer, head, step) < 0) return NULL;
    return a->rows->w + row_at(a, step, head);
}

const float *app_attn_content(const app_attn *a, int step, int layer, int head)
{
    if (!a->split || !in_range(a, step, layer, head) || rows_fill(a, layer, head, step) < 0)
        return NULL;
    return a->rows->con + row_at(a, step, head);
}

const float *app_attn_position(const app_attn *a, int step, int layer, int head)
{
    if (!a->split || !in_range(a, step, layer, head) || rows_fill(a, layer, head, step) < 0)
        return NULL;
    return a->rows->pos + row_at(a, step, head);
}

const float *app_attn_matrix(const app_attn *a, int layer, int head)
{
    if (!a->valid || a->n < 1 || !in_range(a, a->n - 1, layer, head) ||
        rows_fill(a, layer, head, a->n - 1) < 0)
        return NULL;
    return a->rows->w + row_at(a, 0, head);
}

int app_attn_more(const app_attn *a, const app_state *st, char *msg, size_t msglen)
{
    if (a->n >= a->cap) {
        snprintf(msg, msglen,
                 "the context is full (%d tokens): pelab stops here rather than slide a window",
                 a->cap);
        return -1;
    }
    return (st->attn.generate > 0 ? st->attn.generate : 0) + 1;
}

/* ---- the views' cache ------------------------------------------------------------------- */

typedef struct attn_pair {
    app_attn a[2];
} attn_pair;

static void pair_free(void *p)
{
    attn_pair *q = p;
    if (!q) return;
    app_attn_free(&q->a[0]);
    app_attn_free(&q->a[1]);
    free(q);
}

app_attn *app_attn_of(app_view_ctx *c, int which)
{
    if (!c->priv) {
        c->priv = calloc(1, sizeof(attn_pair));
        if (!c->priv) return NULL;
        c->priv_free = pair_free;
    }
    if (c->priv_free != pair_free) return NULL; /* another view's data: never reinterpret it */
    return &((attn_pair *)c->priv)->a[which ? 1 : 0];
}

const app_attn *app_attn_peek(const app_view_ctx *c, int which)
{
    if (!c->priv || c->priv_free != pair_free) return NULL;
    const app_attn *a = &((const attn_pair *)c->priv)->a[which ? 1 : 0];
    return a->valid ? a : NULL;
}

int app_attn_kv_group(const app_attn *a, int head)
{
    const lmi_info *in = &a->m.info;
    if (!a->loaded || in->kv_heads <= 0 || in->kv_heads >= in->heads || head < 0 ||
        head >= in->heads)
        return -1;
    return head / (in->heads / in->kv_heads);
}

void app_attn_kv_groups_text(const app_attn *a, char *buf, size_t n)
{
    const lmi_info *in = &a->m.info;
    buf[0] = '\0';
    if (app_attn_kv_group(a, 0) < 0) return;
    int per = in->heads / in->kv_heads;
    size_t u = (size_t)snprintf(buf, n, "; grouped-query attention, %d kv heads:", in->kv_heads);
    for (int g = 0; g < in->kv_heads && u < n; g++) {
        int w = snprintf(buf + u, n - u, "%s heads %d-%d kv %d", g ? "," : "", g * per,
                         g * per + per - 1, g);
        if (w > 0) u += (size_t)w;
    }
}
