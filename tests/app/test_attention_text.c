/* test_attention_text.c: the compare view with two tokenizers, and the e key's command, with a
 * real model (issue 22).
 *   - compare of pelab's shipped word-level rope model (left) and stories260K.bin with tok512.bin
 *     (right, subword pieces): at every left step the right panel shows the token covering the
 *     same text. The expected right token is found here from the two tokenizers' spans (the right
 *     token holding the last byte the left token covers, else the last one starting before it);
 *     the export's right rows up to it equal ref.h's double forward over the right's tokens, rows
 *     past it are NaN; the subtitle and the status line of a step say that the two step by text.
 *     Two models with one tokenizer keep stepping by index.
 *   - the e key's command (app_export_command) of an attention view with --orig-ctx 4096 given
 *     (the default's value) names it, and the command's options, set on a fresh state, give the
 *     same numbers; without --orig-ctx (L0 = the model's 512) they differ.
 * ../shared/realmodels missing is a failure, not a skip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../pe/realmodel/ref.h"
#include "attn.h"
#include "input.h"
#include "lmi.h"
#include "options.h"
#include "raster.h"
#include "tap.h"
#include "views.h"

static char shared[4096];

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
    st.head = -1;
    return st;
}

/* Whether a text item of the view's scene for st contains needle. */
static int scene_says(const app_state *st, const char *needle)
{
    app_view_ctx vc = {0};
    scene s;
    scene_init(&s, 1, 1, 0);
    char err[512];
    int found = 0;
    scene_target t = raster_target(1400, 800, raster_font_px(1400, 800, 1));
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
                "the shipped rope model cuts the text into %d tokens, stories260K into %d (%s)",
                nl, nr, err))
        goto out;
    ref_model r;
    if (!TAP_OK(ref_load_llama2c(&r, model) == 0, "the test's own reader of stories260K"))
        goto out;
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
    TAP_OK(scene_says(&st, "stepped by text"), "the subtitle says the panels step by text");
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
               !scene_says(&sc, "stepped by text"),
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
    TAP_OK(strstr(cmd, " --orig-ctx 4096") != NULL, "the e command names --orig-ctx 4096: %s",
           cmd);
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
    const char *src = getenv("PELAB_SRC");
    snprintf(shared, sizeof shared, "%s/../shared/realmodels", src ? src : ".");
    struct stat sb;
    if (!TAP_OK(stat(shared, &sb) == 0 && S_ISDIR(sb.st_mode),
                "../shared/realmodels beside the source tree (%s)", shared))
        return tap_done();
    test_compare_by_text();
    test_e_orig_ctx();
    return tap_done();
}
