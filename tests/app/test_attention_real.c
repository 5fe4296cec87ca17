/* test_attention_real.c: the attention views with real checkpoints (issue 22), checked against
 * the tests' own double-precision forward (tests/pe/realmodel/ref.h, which shares no code with
 * pe/model):
 *   - attention view, stories260K.bin (llama2.c) with --tokenizer tok512.bin: what the view
 *     exports (its data: every head of every layer at the last token) equals ref.h's rows to
 *     1e-5; the strip shows the tokenizer's readable pieces ("<s>", " Once"), never "\u2581";
 *   - the Hugging Face folder of the same weights given with --ids (no tokenizer needed) and the
 *     BF16 tiny-random-llama-2 folder: the same check;
 *   - compare view, the llama2.c file against the folder (two real models) and a shipped name
 *     against a real model: both sides of the export equal their independent rows;
 *   - sinks view: alpha(l, h) = mean over t of A[t][0] from ref.h's rows;
 *   - grouped heads (stories260K: 8 heads over 4 kv heads): the head titles, the small multiples
 *     of the window and the terminal, and the export's description name the kv group;
 *   - the CSV exports carry the strip's token texts, quoted by RFC 4180 (a '"' in the prompt),
 *     read back here by a parser of the test's own: long layout columns query_text, key_text;
 *   - refusals in one line: --tokenizer for pelab's own model, an id past the vocabulary, a
 *     folder without config.json, a missing tokenizer names --tokenizer and --ids.
 *   - compare with two tokenizers steps by text; the e key's command names a given --orig-ctx
 *     4096 and reproduces the view's numbers (see the section before main).
 * ../shared/realmodels missing is a failure, not a skip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../pe/realmodel/ref.h"
#include "attn.h"
#include "cellgrid.h"
#include "datafile.h"
#include "input.h"
#include "lmi.h"
#include "raster.h"
#include "options.h"
#include "tap.h"
#include "views.h"

static char shared[4096];

static int have_shared(void)
{
    const char *src = getenv("PELAB_SRC");
    snprintf(shared, sizeof shared, "%s/../shared/realmodels", src ? src : ".");
    struct stat sb;
    return stat(shared, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* dst = src, cut at cap - 1 bytes (the paths here are short) */
static void put(char *dst, size_t cap, const char *src)
{
    size_t l = strlen(src);
    if (l >= cap) l = cap - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

static app_state state_for(const char *view, const char *model)
{
    app_state st;
    app_state_default(&st);
    st.view = app_view_find(view);
    put(st.attn.model_name, sizeof st.attn.model_name, model);
    st.attn.preset[0] = '\0';
    st.head = -1; /* every head */
    return st;
}

/* ref.h's rows for ids: rows[l][h][t][j] (ctx x ctx per head), after feeding every id. */
static double *ref_rows(ref_model *r, const int *ids, int n)
{
    ref_begin(r, n);
    double *lg = malloc((size_t)r->V * sizeof *lg);
    for (int t = 0; t < n; t++) ref_step(r, ids[t], lg);
    free(lg);
    size_t N = (size_t)n;
    double *rows = calloc((size_t)r->L * (size_t)r->H * N * N, sizeof *rows);
    for (int l = 0; l < r->L; l++)
        for (int h = 0; h < r->H; h++)
            for (int t = 0; t < n; t++)
                ref_attn_row(r, l, h, t, rows + (((size_t)l * r->H + h) * N + t) * N);
    return rows;
}

/* The view's export of every layer (head all, last step) against rows: the largest difference,
 * 1 when a shape is wrong or a future cell is not NaN. side: which model of compare's export. */
static double export_diff(app_state *st, const double *rows, int L, int H, int n, int side)
{
    double worst = 0;
    int compare = strcmp(app_view_at((size_t)st->view)->name, "compare") == 0;
    for (int l = 0; l < L; l++) {
        st->attn.layer = l;
        for (int hh = 0; hh < (compare ? H : 1); hh++) {
            if (compare) st->head = hh;
            app_view_ctx vc = {0};
            app_data d = {0};
            char err[512];
            int rc = app_view_at((size_t)st->view)->data(&vc, st, &d, err, sizeof err);
            if (rc < 0) {
                tap_diag("layer %d: %s", l, err);
                app_view_ctx_free(&vc);
                return 1;
            }
            size_t N = (size_t)n;
            if (compare ? d.shape[0] != 2 || d.shape[1] != N
                        : d.ndim != 3 || d.shape[0] != (size_t)H || d.shape[1] != N) {
                tap_diag("layer %d: shape %zu x %zu x %zu", l, d.shape[0], d.shape[1], d.shape[2]);
                worst = 1;
            }
            for (int h = 0; worst < 1 && h < (compare ? 1 : H); h++)
                for (size_t t = 0; t < N; t++)
                    for (size_t j = 0; j < N; j++) {
                        size_t at =
                            compare ? ((size_t)side * N + t) * N + j : ((size_t)h * N + t) * N + j;
                        double got = d.data[at];
                        int rh = compare ? hh : h;
                        double want = rows[(((size_t)l * H + rh) * N + t) * N + j];
                        double e = j <= t ? fabs(got - want) : (isnan(got) ? 0 : 1);
                        if (!(e <= worst)) worst = e;
                    }
            app_data_free(&d);
            app_view_ctx_free(&vc);
        }
    }
    if (compare) st->head = -1;
    st->attn.layer = 0;
    return worst;
}

/* The ids the view ran (its run of the attention view's context). */
static int view_ids(const app_state *st, int *ids, int cap, char *words, size_t wcap)
{
    app_attn a;
    memset(&a, 0, sizeof a);
    char err[512];
    if (app_attn_update(&a, st, st->attn.model_name, err, sizeof err) < 0) {
        tap_diag("%s", err);
        return -1;
    }
    int n = a.n < cap ? a.n : cap;
    size_t u = 0;
    words[0] = '\0';
    for (int i = 0; i < n; i++) {
        ids[i] = a.tok[i].id;
        u += (size_t)snprintf(words + u, u < wcap ? wcap - u : 0, "%s|", a.tok[i].word);
        if (u >= wcap) u = wcap - 1;
    }
    app_attn_free(&a);
    return n;
}

/* Word i of view_ids' "a|b|c|" list (a static copy). */
static const char *words_at(const char *words, int i)
{
    static char w[64];
    const char *p = words;
    for (int k = 0; k < i && p; k++) {
        p = strchr(p, '|');
        if (p) p++;
    }
    size_t l = p ? strcspn(p, "|") : 0;
    snprintf(w, sizeof w, "%.*s", (int)(l < 63 ? l : 63), p ? p : "");
    return w;
}

static int scene_says(const app_state *st, scene_target t, const char *needle);

static void test_stories_bin(void)
{
    char model[4200], tok[4200];
    snprintf(model, sizeof model, "%s/stories260K/stories260K.bin", shared);
    snprintf(tok, sizeof tok, "%s/stories260K/tok512.bin", shared);
    app_state st = state_for("attention", model);
    put(st.attn.tokenizer, sizeof st.attn.tokenizer, tok);
    snprintf(st.attn.prompt, sizeof st.attn.prompt, "Once upon a time, a little girl named Lily");
    int ids[64];
    char words[2048];
    int n = view_ids(&st, ids, 64, words, sizeof words);
    TAP_OK(n > 5 && ids[0] == 1, "stories260K.bin --tokenizer tok512.bin: %d tokens, BOS first", n);
    TAP_OK(strncmp(words, "<s>| Once| upon| a| time|,| a| little|", 38) == 0 &&
               !strstr(words, "\xe2\x96\x81"),
           "the strip shows readable pieces, no \u2581 (%.80s)", words);
    ref_model r;
    if (!TAP_OK(n > 0 && ref_load_llama2c(&r, model) == 0, "the test's own reader")) return;
    double *rows = ref_rows(&r, ids, n);
    double d = export_diff(&st, rows, r.L, r.H, n, 0);
    TAP_OK(d <= 1e-5, "attention export, 5 layers x 8 heads x %d tokens = ref.h's rows (%.2g)", n,
           d);

    /* the Hugging Face folder of the same weights, by ids: no tokenizer needed */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/stories260K-hf-derived", shared);
    app_state sh = state_for("attention", dir);
    size_t u = 0;
    for (int i = 0; i < n; i++)
        u +=
            (size_t)snprintf(sh.attn.ids + u, sizeof sh.attn.ids - u, "%s%d", i ? "," : "", ids[i]);
    double dh = export_diff(&sh, rows, r.L, r.H, n, 0);
    TAP_OK(dh <= 1e-5, "the Hugging Face folder with --ids: the same rows (%.2g)", dh);

    /* compare: the llama2.c file against the folder, two real models */
    app_state sc = state_for("compare", model);
    put(sc.attn.tokenizer, sizeof sc.attn.tokenizer, tok);
    put(sc.attn.compare, sizeof sc.attn.compare, dir);
    put(sc.attn.compare_tokenizer, sizeof sc.attn.compare_tokenizer, tok);
    put(sc.attn.prompt, sizeof sc.attn.prompt, st.attn.prompt);
    double d0 = export_diff(&sc, rows, r.L, r.H, n, 0), d1 = export_diff(&sc, rows, r.L, r.H, n, 1);
    TAP_OK(d0 <= 1e-5 && d1 <= 1e-5,
           "compare stories260K.bin with the folder: both sides = ref.h's rows (%.2g, %.2g)", d0,
           d1);

    /* sinks: alpha(l, h) = mean over t of A[t][0] */
    app_state ss = state_for("sinks", model);
    put(ss.attn.tokenizer, sizeof ss.attn.tokenizer, tok);
    put(ss.attn.prompt, sizeof ss.attn.prompt, st.attn.prompt);
    app_view_ctx vc = {0};
    app_data dd = {0};
    char err[512] = "";
    int rc = app_view_at((size_t)ss.view)->data(&vc, &ss, &dd, err, sizeof err);
    double ds = rc == 0 && dd.shape[0] == (size_t)r.L && dd.shape[1] == (size_t)r.H ? 0 : 1;
    for (int l = 0; ds < 1 && l < r.L; l++)
        for (int h = 0; h < r.H; h++) {
            double a = 0;
            for (int t = 0; t < n; t++) a += rows[(((size_t)l * r.H + h) * n + t) * n];
            ds = fmax(ds, fabs(dd.data[(size_t)l * r.H + h] - a / n));
        }
    TAP_OK(ds <= 1e-5, "sinks: alpha of every head = ref.h's mean attention to token 0 (%.2g) %s",
           ds, err);
    TAP_OK(rc == 0 && strstr(dd.what, "head h reads kv head h / 2 (4 kv heads)"),
           "sinks export names the kv groups (%s)", dd.what);
    TAP_OK(scene_says(&ss, raster_target(1000, 600, raster_font_px(1000, 600, 1)),
                      "head (kv group = head / 2)"),
           "sinks: the head axis says which heads share a kv head");
    app_data_free(&dd);
    app_view_ctx_free(&vc);
    /* --scaling linear --factor 4 through the model interface: positions / 4 in ref.h, and
     * not the unscaled rows */
    st.p.scaling.type = PE_SCALING_LINEAR;
    st.p.scaling.factor = 4;
    ref_model r4;
    if (TAP_OK(ref_load_llama2c(&r4, model) == 0, "the reader again")) {
        r4.pos_div = 4;
        double *rows4 = ref_rows(&r4, ids, n);
        double d4 = export_diff(&st, rows4, r4.L, r4.H, n, 0);
        double moved = export_diff(&st, rows, r.L, r.H, n, 0);
        TAP_OK(d4 <= 1e-5 && moved > 1e-3,
               "--scaling linear --factor 4: the export = ref.h with positions / 4 (%.2g; %.2g "
               "from the trained rows)",
               d4, moved);
        free(rows4);
        ref_free(&r4);
    }
    st.p.scaling.type = PE_SCALING_NONE;
    free(rows);
    ref_free(&r);
}

/* BF16, untied head, a vocabulary of 3000, no tokenizer: by ids. */
static void test_tiny_random(void)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/tiny-random-llama-2", shared);
    int ids[] = {1, 450, 2996, 1735, 1701, 2991, 432, 1720, 975, 278};
    int n = (int)(sizeof ids / sizeof ids[0]);
    app_state st = state_for("attention", dir);
    snprintf(st.attn.ids, sizeof st.attn.ids, "1, 450,2996,1735,1701,2991,432,1720,975,278");
    ref_model r;
    if (!TAP_OK(ref_load_hf(&r, dir) == 0, "tiny-random-llama-2: the test's own reader")) return;
    double *rows = ref_rows(&r, ids, n);
    double d = export_diff(&st, rows, r.L, r.H, n, 0);
    TAP_OK(d <= 1e-5, "tiny-random-llama-2 (BF16) by --ids: the export = ref.h's rows (%.2g)", d);
    TAP_OK(scene_says(&st, raster_target(1000, 600, raster_font_px(1000, 600, 1)),
                      "token ids: 10 tokens"),
           "the subtitle says the text is --ids (not the preset it replaced)");
    free(rows);
    ref_free(&r);
}

/* Whether a text item of the view's scene for st on target t contains needle. */
static int scene_says(const app_state *st, scene_target t, const char *needle)
{
    app_view_ctx vc = {0};
    scene s;
    scene_init(&s, 1, 1, 0);
    char err[512];
    int found = 0;
    if (app_view_build(&vc, st, &s, &t, err, sizeof err) == 0)
        for (size_t i = 0; i < s.n && !found; i++)
            found = s.items[i].kind == SCENE_TEXT && s.items[i].u.text.str &&
                    strstr(s.items[i].u.text.str, needle);
    else
        tap_diag("%s", err);
    scene_free(&s);
    app_view_ctx_free(&vc);
    return found;
}

/* One RFC 4180 record of line (no newline inside fields here): fields into f (cap each), the
 * count returned. */
static int csv_fields(const char *line, char f[][64], int max)
{
    int n = 0;
    const char *p = line;
    while (n < max) {
        size_t u = 0;
        if (*p == '"') {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                if (*p == '"') p++; /* "" is one quote */
                if (u < 63) f[n][u++] = *p;
            }
            if (*p == '"') p++;
        } else {
            for (; *p && *p != ',' && *p != '\n'; p++)
                if (u < 63) f[n][u++] = *p;
        }
        f[n++][u] = '\0';
        if (*p != ',') break;
        p++;
    }
    return n;
}

static void test_labels(void)
{
    char model[4200], tok[4200];
    snprintf(model, sizeof model, "%s/stories260K/stories260K.bin", shared);
    snprintf(tok, sizeof tok, "%s/stories260K/tok512.bin", shared);
    app_state st = state_for("attention", model);
    put(st.attn.tokenizer, sizeof st.attn.tokenizer, tok);
    snprintf(st.attn.prompt, sizeof st.attn.prompt, "Once upon a \"time\", Lily");
    int ids[64];
    char words[2048];
    int n = view_ids(&st, ids, 64, words, sizeof words);
    st.head = 3;
    TAP_OK(scene_says(&st, raster_target(1000, 600, raster_font_px(1000, 600, 1)),
                      "head 3 (kv group 1 of 4)"),
           "window: the title names head 3's kv group (heads 2-3 share kv head 1)");
    TAP_OK(scene_says(&st, raster_target(1000, 600, raster_font_px(1000, 600, 1)), "h5 kv2"),
           "window: the small multiples label h5 with its kv group");
    TAP_OK(scene_says(&st, cellgrid_target(200, 60), "h5 kv2"),
           "terminal 200x60: the small multiples label h5 with its kv group");
    app_view_ctx vc = {0};
    app_data d = {0};
    char err[512] = "";
    int rc = app_view_at((size_t)st.view)->data(&vc, &st, &d, err, sizeof err);
    TAP_OK(rc == 0 && strstr(d.what, "head 3 (kv group 1 of 4)"),
           "export of head 3 names its kv group (%s)", d.what);
    /* the long CSV: header names the axes and their texts; every record 5 fields; texts are the
     * strip's words, a quote included */
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    st.csv_long = 1;
    int wrc = rc == 0 && fp ? app_write_csv(fp, &d, "test", 1) : -1;
    if (fp) fclose(fp);
    int records = 0, bad = 0, header = 0, quote = 0;
    char f[8][64];
    for (char *line = buf; wrc == 0 && line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (line[0] != '#') {
            int k = csv_fields(line, f, 8);
            if (!header) {
                header = k == 5 && strcmp(f[0], "query") == 0 && strcmp(f[1], "key") == 0 &&
                         strcmp(f[2], "query_text") == 0 && strcmp(f[3], "key_text") == 0 &&
                         strcmp(f[4], "value") == 0;
            } else {
                int q = atoi(f[0]), kk = atoi(f[1]);
                char a[64], b[64];
                snprintf(a, sizeof a, "%s", q < n ? words_at(words, q) : "");
                snprintf(b, sizeof b, "%s", kk < n ? words_at(words, kk) : "");
                if (k != 5 || strcmp(f[2], a) != 0 || strcmp(f[3], b) != 0) bad++;
                quote += strchr(f[3], '"') != NULL;
                records++;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    TAP_OK(wrc == 0 && header && records == n * n && !bad && quote > 0,
           "long CSV: header query,key,query_text,key_text,value; %d records of 5 fields carry "
           "the strip's texts (%d wrong, %d with a quote)",
           records, bad, quote);
    free(buf);
    app_data_free(&d);
    app_view_ctx_free(&vc);
    st.head = -1;
    rc = app_view_at((size_t)st.view)->data(&vc, &st, &d, err, sizeof err);
    TAP_OK(rc == 0 && strstr(d.what, "heads 0-1 kv 0, heads 2-3 kv 1") && d.tok_axes == 6u,
           "every head: the description lists the kv groups; query and key carry texts (%s)",
           d.what);
    app_data_free(&d);
    app_view_ctx_free(&vc);
}

static void test_refusals(void)
{
    char model[4200], tok[4200], err[600] = "";
    snprintf(model, sizeof model, "%s/stories260K/stories260K.bin", shared);
    snprintf(tok, sizeof tok, "%s/stories260K/tok512.bin", shared);
    app_attn a;
    memset(&a, 0, sizeof a);

    app_state st = state_for("attention", model);
    snprintf(st.attn.prompt, sizeof st.attn.prompt, "Once");
    TAP_OK(app_attn_update(&a, &st, st.attn.model_name, err, sizeof err) < 0 &&
               strstr(err, "--tokenizer") && strstr(err, "--ids") && !strchr(err, '\n'),
           "no tokenizer beside: one line naming --tokenizer and --ids (%s)", err);
    app_attn_free(&a);

    st = state_for("attention", model);
    snprintf(st.attn.ids, sizeof st.attn.ids, "1,512");
    TAP_OK(app_attn_update(&a, &st, st.attn.model_name, err, sizeof err) < 0 &&
               strstr(err, "--ids") && strstr(err, "512") && strstr(err, "0..511"),
           "an id past the vocabulary (%s)", err);
    app_attn_free(&a);

    const app_option *o = app_option_find("ids");
    TAP_OK(o && app_option_set(&st, o, "1,x", err, sizeof err) < 0 && strstr(err, "--ids"),
           "--ids 1,x is refused as it is set (%s)", err);

    char src[4200];
    snprintf(src, sizeof src, "%s/..", shared); /* a folder without config.json */
    TAP_OK(app_attn_check_name("model", src, err, sizeof err) == 0 &&
               app_attn_model_path(src, model, sizeof model, err, sizeof err) < 0 &&
               strstr(err, "config.json"),
           "a folder without config.json says so (%s)", err);

    st = state_for("attention", "rope");
    put(st.attn.tokenizer, sizeof st.attn.tokenizer, tok);
    snprintf(st.attn.prompt, sizeof st.attn.prompt, "once upon a time");
    TAP_OK(app_attn_update(&a, &st, st.attn.model_name, err, sizeof err) < 0 &&
               strstr(err, "--tokenizer") && strstr(err, "vocabulary of its own"),
           "--tokenizer for pelab's own model is refused (%s)", err);
    app_attn_free(&a);
}

/* ---- compare with two tokenizers; the e key's --orig-ctx ------------------------------
 * - compare of pelab's shipped word-level rope model (left) and stories260K.bin with tok512.bin
 *   (right, subword pieces): at every left step the right panel shows the token covering the
 *   same text. The expected right token is found here from the two tokenizers' spans (the right
 *   token holding the last byte the left token covers, else the last one starting before it);
 *   the export's right rows up to it equal ref.h's double forward over the right's tokens, rows
 *   past it are NaN; the subtitle and the status line of a step say the two step by text. Two
 *   models with one tokenizer keep stepping by index.
 * - the e key's command (app_export_command) of an attention view with --orig-ctx 4096 given
 *   (the default's value) names it, and the command's options, set on a fresh state, give the
 *   same numbers; without --orig-ctx (L0 = the model's 512) they differ. */

static const char *PROMPT = "Once upon a time, there was a little girl named Lily. She loved "
                            "to play outside in the sunshine.";

/* The right token for a left token ending at byte e: the one holding byte e - 1, else the last
 * starting before e; a left token of no bytes (BOS) at the start: the right's first. */
static int expected_right(const lmi_token *r, int nr, int e)
{
    if (e <= 0) return 0;
    for (int i = nr - 1; i >= 0; i--)
        if (r[i].start <= e - 1 && e - 1 < r[i].end) return i;
    int k = 0;
    for (int i = 0; i < nr; i++)
        if (r[i].start < e) k = i;
    return k;
}

static void test_compare_by_text(void)
{
    char model[4200], tok[4200], err[512] = "";
    snprintf(model, sizeof model, "%s/stories260K/stories260K.bin", shared);
    snprintf(tok, sizeof tok, "%s/stories260K/tok512.bin", shared);
    /* the two tokenizations, straight from the model interface */
    char rope_path[1100];
    lmi_model lm = {0}, rm = {0};
    lmi_token lt[64], rt[64];
    int nl = -1, nr = -1;
    if (app_attn_model_path("rope", rope_path, sizeof rope_path, err, sizeof err) == 0 &&
        lmi_open(&lm, rope_path, err, sizeof err) == 0)
        nl = lmi_tokenize(&lm, PROMPT, strlen(PROMPT), lt, 64, err, sizeof err);
    if (lmi_open(&rm, model, err, sizeof err) == 0 &&
        lmi_set_tokenizer(&rm, tok, err, sizeof err) == 0)
        nr = lmi_tokenize(&rm, PROMPT, strlen(PROMPT), rt, 64, err, sizeof err);
    if (!TAP_OK(nl > 5 && nr > nl && nr <= 64,
                "the shipped rope model cuts the text into %d tokens, stories260K into %d (%s)", nl,
                nr, err))
        goto out;
    ref_model r;
    if (!TAP_OK(ref_load_llama2c(&r, model) == 0, "the test's own reader of stories260K")) goto out;
    int ids[64];
    for (int i = 0; i < nr; i++) ids[i] = rt[i].id;
    ref_begin(&r, nr);
    double *lg = malloc((size_t)r.V * sizeof *lg), row[64];
    for (int t = 0; t < nr; t++) ref_step(&r, ids[t], lg);
    free(lg);

    app_state st = state_for("compare", "rope");
    put(st.attn.compare, sizeof st.attn.compare, model);
    put(st.attn.compare_tokenizer, sizeof st.attn.compare_tokenizer, tok);
    snprintf(st.attn.prompt, sizeof st.attn.prompt, "%s", PROMPT);
    st.attn.layer = 1;
    st.head = 3; /* the shipped model has 4 heads and 2 layers */
    int bad_step = -1, bad_what = -1, bad_rows = -1, bad_nan = -1, checked = 0;
    double worst = 0;
    for (int s = 0; s < nl; s++) {
        st.attn.step = s;
        int k = expected_right(rt, nr, lt[s].end);
        app_view_ctx vc = {0};
        app_data d = {0};
        if (app_view_at((size_t)st.view)->data(&vc, &st, &d, err, sizeof err) < 0) {
            tap_diag("step %d: %s", s, err);
            bad_step = s;
            app_view_ctx_free(&vc);
            break;
        }
        char want[64];
        snprintf(want, sizeof want, "tokens %d and %d", s, k);
        size_t n1 = (size_t)(s > k ? s : k) + 1;
        if (!strstr(d.what, want) || d.shape[0] != 2 || d.shape[1] != n1) bad_what = s;
        ref_attn_row(&r, st.attn.layer, st.head, k, row);
        for (size_t i = 0; bad_what < 0 && i < n1; i++)
            for (size_t j = 0; j < n1; j++) {
                double got = d.data[(n1 + i) * n1 + j];
                if ((int)i > k || j > i) {
                    if (!isnan(got)) bad_nan = s;
                } else if ((int)i == k) {
                    worst = fmax(worst, fabs(got - row[j]));
                    checked++;
                } else if (!(got >= 0 && got <= 1)) {
                    bad_rows = s;
                }
            }
        app_data_free(&d);
        app_view_ctx_free(&vc);
    }
    TAP_OK(bad_step < 0 && bad_what < 0,
           "at each of %d left steps the export names the right token covering the same text "
           "(first wrong: %d)",
           nl, bad_what);
    TAP_OK(bad_step < 0 && checked > nl && bad_rows < 0 && bad_nan < 0 && worst <= 1e-5,
           "and the right side's row there = ref.h's row of that token (%d weights, %.2g), NaN "
           "past it",
           checked, worst);
    st.attn.step = 4;
    TAP_OK(
        scene_says(&st, raster_target(1400, 800, raster_font_px(1400, 800, 1)), "stepped by text"),
        "the subtitle says the panels step by text");
    /* the status line of a step (the End key) names the right's token */
    app_view_ctx vc = {0};
    const app_view *v = app_view_at((size_t)st.view);
    char msg[512] = "";
    for (const app_view_key *kk = v->keys; kk && kk->fn; kk++)
        if (kk->key == UI_KEY_END) kk->fn(&vc, &st, kk->arg, msg, sizeof msg);
    char want[96];
    snprintf(want, sizeof want, "token %d \".\" covers the same text",
             expected_right(rt, nr, lt[nl - 1].end));
    TAP_OK(strstr(msg, "step by text") && strstr(msg, want) && strstr(msg, "stories260K.bin"),
           "End: the status line says which right token covers the same text (%s)", msg);
    app_view_ctx_free(&vc);
    /* one tokenizer on both sides: the same index, nothing said */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/stories260K-hf-derived", shared);
    app_state sc = state_for("compare", model);
    put(sc.attn.tokenizer, sizeof sc.attn.tokenizer, tok);
    put(sc.attn.compare, sizeof sc.attn.compare, dir);
    put(sc.attn.compare_tokenizer, sizeof sc.attn.compare_tokenizer, tok);
    snprintf(sc.attn.prompt, sizeof sc.attn.prompt, "%s", PROMPT);
    sc.attn.step = 7;
    app_data d = {0};
    vc = (app_view_ctx){0};
    int rc = v->data(&vc, &sc, &d, err, sizeof err);
    TAP_OK(rc == 0 && d.shape[1] == 8 && !strstr(d.what, "tokenizers differ") &&
               !scene_says(&sc, raster_target(1400, 800, raster_font_px(1400, 800, 1)),
                           "stepped by text"),
           "stories260K.bin and its Hugging Face folder, one tokenizer: step 7 on both (%s)",
           rc ? err : d.what);
    app_data_free(&d);
    app_view_ctx_free(&vc);
    ref_free(&r);
out:
    lmi_close(&lm);
    lmi_close(&rm);
}

/* The numbers of st's view (head all, the last step), or NULL. */
static app_data *data_of(const app_state *st)
{
    static app_data d[2];
    static int which;
    app_data *o = &d[which++ & 1];
    app_data_free(o);
    memset(o, 0, sizeof *o);
    app_view_ctx vc = {0};
    char err[512];
    int rc = app_view_at((size_t)st->view)->data(&vc, st, o, err, sizeof err);
    app_view_ctx_free(&vc);
    if (rc < 0) tap_diag("%s", err);
    return rc < 0 ? NULL : o;
}

static int same_data(const app_data *a, const app_data *b)
{
    if (!a || !b || a->ndim != b->ndim) return 0;
    size_t n = 1;
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] != b->shape[i]) return 0;
        n *= a->shape[i];
    }
    for (size_t i = 0; i < n; i++)
        if (!(a->data[i] == b->data[i] || (isnan(a->data[i]) && isnan(b->data[i])))) return 0;
    return 1;
}

/* Set every "--name value" pair of an export command on st (the values here need no quotes). */
static int apply_command(app_state *st, const char *cmd)
{
    char buf[4096], err[512];
    snprintf(buf, sizeof buf, "%s", cmd);
    char *save = NULL, *w = strtok_r(buf, " ", &save);
    int words = 0;
    while (w) {
        if (strncmp(w, "--", 2) == 0) {
            char *v = strtok_r(NULL, " ", &save);
            const app_option *o = app_option_find(w + 2);
            if (!o || !v || app_option_set(st, o, v, err, sizeof err) < 0) {
                tap_diag("%s %s: %s", w, v ? v : "", o ? err : "no such option");
                return -1;
            }
            words++;
        }
        w = strtok_r(NULL, " ", &save);
    }
    return words;
}

static void test_e_orig_ctx(void)
{
    char model[4200], err[512] = "";
    snprintf(model, sizeof model, "%s/stories260K/stories260K.bin", shared);
    app_state st = state_for("attention", model);
    snprintf(st.attn.ids, sizeof st.attn.ids, "1,403,407,261,378,390,261,422,344,273,306,418");
    const app_option *sc = app_option_find("scaling"), *f = app_option_find("factor"),
                     *o = app_option_find("orig-ctx");
    app_state dflt;
    app_state_default(&dflt);
    int rc = sc && f && o ? app_option_set(&st, sc, "yarn", err, sizeof err) : -1;
    if (rc == 0) rc = app_option_set(&st, f, "4", err, sizeof err);
    if (rc == 0) rc = app_option_set(&st, o, "4096", err, sizeof err);
    if (!TAP_OK(rc == 0 && dflt.p.scaling.original_ctx == 4096,
                "--scaling yarn --factor 4 --orig-ctx 4096 (the default's value) (%s)", err))
        return;
    char cmd[4096];
    app_export_command(&st, NULL, cmd, sizeof cmd);
    TAP_OK(strstr(cmd, " --orig-ctx 4096") != NULL, "the e command names --orig-ctx 4096: %s", cmd);
    app_state back = state_for("attention", model);
    st.attn.layer = back.attn.layer = 1;
    int words = apply_command(&back, cmd);
    back.attn.layer = 1;
    app_data *a = data_of(&st), *b = data_of(&back);
    TAP_OK(words > 3 && same_data(a, b),
           "its %d options, set on a fresh state, give the same numbers (layer 1, every head)",
           words);
    /* the flag matters: L0 = the model's 512 without --orig-ctx, other numbers */
    app_state none = back;
    none.orig_ctx_set = 0;
    app_data *c = data_of(&none);
    b = data_of(&back);
    TAP_OK(c && b && !same_data(b, c), "and without --orig-ctx (L0 = the model's 512) they differ");
    char cmd2[4096];
    app_export_command(&none, NULL, cmd2, sizeof cmd2);
    TAP_OK(!strstr(cmd2, "--orig-ctx"), "a state that never got --orig-ctx prints none: %s", cmd2);
}

int main(void)
{
    if (!have_shared()) {
        TAP_OK(0, "../shared/realmodels beside the source tree (%s)", shared);
        return tap_done();
    }
    test_stories_bin();
    test_tiny_random();
    test_labels();
    test_refusals();
    test_compare_by_text();
    test_e_orig_ctx();
    return tap_done();
}
