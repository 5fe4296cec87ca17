/* explorer.c: keys, the ':' line, the status lines, the help overlay; no terminal, no window. */
#include "explorer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "cli.h"
#include "colormap.h"
#include "export.h"
#include "figure.h"
#include "options.h"
#include "raster.h"

/* ---- helpers ----------------------------------------------------------------------------- */

static void say(app_explorer *x, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(app_explorer *x, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->message, sizeof x->message, fmt, ap);
    va_end(ap);
    x->message_error = error;
}

/* Apply an option by name through the same path as ':name value', so limits and messages are
 * the ones the CLI gives. */
static int apply(app_explorer *x, const char *name, const char *value)
{
    char line[256], err[512];
    snprintf(line, sizeof line, "%s %s", name, value);
    if (app_option_command(&x->st, line, err, sizeof err) < 0) {
        say(x, 1, "%s", err);
        return -1;
    }
    char cur[128];
    app_option_get(&x->st, app_option_find(name), cur, sizeof cur);
    say(x, 0, "%s = %s", name, cur);
    return 0;
}

static void apply_num(app_explorer *x, const char *name, double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.10g", v);
    apply(x, name, buf);
}

/* ---- the attention views (attn.h) -------------------------------------------------------- */

static int attn_view(const app_explorer *x)
{
    return x->st.view == app_view_find("attention") || x->st.view == app_view_find("compare");
}

/* The current view's run of --model (which 0) or --compare (which 1), brought up to date;
 * NULL with the reason in the status line. */
static app_attn *attn_run(app_explorer *x, int which)
{
    char err[512];
    app_attn *a = app_attn_of(&x->ctx[x->st.view], which);
    const char *name = which ? x->st.compare : x->st.model_name;
    if (!a) {
        say(x, 1, "out of memory");
        return NULL;
    }
    if (app_attn_update(a, &x->st, name, err, sizeof err) < 0) {
        say(x, 1, "%s", err);
        return NULL;
    }
    return a;
}

/* Keep step, layer and head inside the model after anything changed (a shorter prompt, a model
 * with fewer layers), so the view never shows an out-of-range error the user did not type. */
static void attn_fix(app_explorer *x)
{
    char err[512];
    app_attn *a = app_attn_of(&x->ctx[x->st.view], 0);
    if (!a || app_attn_update(a, &x->st, x->st.model_name, err, sizeof err) < 0) return;
    int n = a->n;
    if (x->st.view == app_view_find("compare") && x->st.compare[0]) {
        app_attn *b = app_attn_of(&x->ctx[x->st.view], 1);
        if (b && app_attn_update(b, &x->st, x->st.compare, err, sizeof err) == 0 && b->n < n)
            n = b->n;
    }
    if (x->st.step >= n) x->st.step = n - 1;
    if (x->st.layer >= a->layers) x->st.layer = a->layers - 1;
    if (x->st.head >= a->heads) x->st.head = -1;
}

/* Step through the tokens: arg -1/+1, -10/+10, or -100000/+100000 for the first/last. */
static void act_step(app_explorer *x, int arg)
{
    app_attn *a = attn_run(x, 0);
    if (!a) return;
    int cur = app_attn_step(a, &x->st), n = a->n;
    if (arg > 0 && cur >= n - 1) {
        x->st.playing = 0;
        say(x, 0, "the last token: g generates the next one");
        return;
    }
    if (arg < 0 && cur == 0) {
        say(x, 0, "the first token");
        return;
    }
    int s = cur + arg;
    if (s < 0) s = 0;
    if (s > n - 1) s = n - 1;
    x->st.step = s;
    const app_attn_token *tk = &a->tok[s];
    say(x, 0, "step %d of %d: \"%s\"%s%s", s, n - 1, tk->word,
        tk->unknown ? " (not in the vocabulary: <unk>)" : "", tk->generated ? " (generated)" : "");
}

static void act_layer(app_explorer *x, int arg)
{
    app_attn *a = attn_run(x, 0);
    if (!a) return;
    int l = x->st.layer + arg;
    if (l < 0) l = 0;
    if (l >= a->layers) l = a->layers - 1;
    x->st.layer = l;
    say(x, 0, "layer %d of %d", l, a->layers);
}

/* g: one more generated token; G: one fewer. The view then follows the end. */
static void act_generate(app_explorer *x, int arg)
{
    app_attn *a = attn_run(x, 0);
    if (!a) return;
    char msg[256];
    if (arg < 0) {
        if (x->st.generate <= 0 || a->n <= a->n_prompt) {
            say(x, 0, "nothing generated to take back");
            return;
        }
        x->st.generate = a->n - a->n_prompt - 1;
        x->st.step = -1;
        say(x, 0, "%d generated", x->st.generate);
        return;
    }
    int want = app_attn_more(a, &x->st, msg, sizeof msg);
    if (want < 0) {
        say(x, 1, "%s", msg);
        return;
    }
    x->st.generate = want;
    x->st.step = -1;
    a = attn_run(x, 0);
    if (!a) return;
    const app_attn_token *tk = &a->tok[a->n - 1];
    say(x, 0, "generated \"%s\" (%s; %d so far)", tk->word,
        x->st.temperature > 0 ? "sampled" : "greedy", a->n - a->n_prompt);
}

/* The next/previous scheme for --model (which 0) or --compare (which 1); the prompt stays. */
static void cycle_model(app_explorer *x, int which, int dir)
{
    const char *cur = which ? x->st.compare : x->st.model_name;
    int n = MODEL_PE_COUNT, i = model_pe_from_name(cur);
    if (i < 0) i = dir > 0 ? n - 1 : 0;
    for (int k = 1; k <= n; k++) {
        const char *name = app_attn_model_names[(i + (dir > 0 ? k : n * 2 - k)) % n];
        if (apply(x, which ? "compare" : "model", name) == 0) {
            attn_fix(x);
            return;
        }
    }
}

static void act_compare_model(app_explorer *x, int arg)
{
    if (!attn_view(x)) {
        say(x, 1, "w/W pick the second model of the compare view (:view compare)");
        return;
    }
    cycle_model(x, 1, arg);
}

static void act_split(app_explorer *x, int arg)
{
    (void)arg;
    apply(x, "split", x->st.split ? "off" : "on");
}

static void act_scale(app_explorer *x, int arg)
{
    (void)arg;
    static const char *const names[] = {"linear", "log", "nofirst"};
    apply(x, "attn-scale", names[(x->st.attn_scale + 1) % 3]);
}

/* b/B in the attention views: the rope model's base x2 / /2, starting from the trained one. */
static void attn_base(app_explorer *x, int arg)
{
    app_attn *a = attn_run(x, 0);
    if (a && a->pe != MODEL_PE_ROPE && x->st.view == app_view_find("compare") && x->st.compare[0])
        a = attn_run(x, 1);
    if (!a) return;
    if (a->pe != MODEL_PE_ROPE) {
        say(x, 1, "b/B change a rope model's base; this is %s (r/R scale ALiBi slopes)",
            a->m.cfg.pe_name);
        return;
    }
    double b = x->st.rope_base > 0 ? x->st.rope_base : a->trained_base;
    b = arg > 0 ? b * 2 : b / 2;
    if (b <= 1.0001) b = 2;
    if (fabs(b / a->trained_base - 1) < 1e-9) b = 0; /* back at the trained value */
    apply_num(x, "rope-base", b);
}

/* r/R in the attention views: ALiBi slopes gentler (/1.5) / steeper (x1.5). */
static void attn_slope(app_explorer *x, int arg)
{
    app_attn *a = attn_run(x, 0);
    if (a && a->pe != MODEL_PE_ALIBI && x->st.view == app_view_find("compare") && x->st.compare[0])
        a = attn_run(x, 1);
    if (!a) return;
    if (a->pe != MODEL_PE_ALIBI) {
        say(x, 1, "r/R scale an alibi model's slopes; this is %s (b/B change a rope base)",
            a->m.cfg.pe_name);
        return;
    }
    double m = x->st.alibi_scale;
    if (m <= 0) m = arg > 0 ? 0 : 1.0 / 1.5;
    m = arg > 0 ? m / 1.5 : m * 1.5;
    if (m > 1000) m = 1000;
    apply_num(x, "alibi-scale", m);
}

/* ---- actions ----------------------------------------------------------------------------- */

typedef void (*action_fn)(app_explorer *x, int arg);

static void act_quit(app_explorer *x, int arg)
{
    (void)arg;
    x->quit = 1;
}

static void act_view(app_explorer *x, int arg)
{
    int n = (int)app_view_count();
    int v = arg >= 0 ? arg : (x->st.view + (arg == -1 ? 1 : n - 1)) % n;
    if (v >= n) return;
    x->st.view = v;
    x->st.cursor_on = 0;
    say(x, 0, "%s: %s", app_view_at((size_t)v)->name, app_view_at((size_t)v)->description);
}

static void act_base(app_explorer *x, int arg)
{
    if (attn_view(x)) {
        attn_base(x, arg);
        return;
    }
    double b = x->st.p.base;
    b = arg > 0 ? b * 2 : b / 2;
    if (b <= 1.0001) b = 1.0001 < x->st.p.base / 2 ? 1.0001 : 2;
    apply_num(x, "base", arg > 0 || b > 1 ? b : 2);
}

static void act_dim(app_explorer *x, int arg)
{
    int d = x->st.p.dim;
    d = arg > 0 ? d * 2 : d / 2;
    if (d < 2) d = 2;
    apply_num(x, "dim", d);
}

static void act_len(app_explorer *x, int arg)
{
    if (attn_view(x)) { /* autoplay speed */
        double v = x->st.play_speed * (arg > 0 ? 2 : 0.5);
        if (v < 0.25) v = 0.25;
        if (v > 32) v = 32;
        apply_num(x, "play-speed", v);
        return;
    }
    int L = x->st.p.len;
    L = arg > 0 ? L * 2 : L / 2;
    if (L < 2) L = 2;
    apply_num(x, "len", L);
}

static void act_heads(app_explorer *x, int arg)
{
    if (attn_view(x)) { /* shift every position by 10 more / fewer */
        int k = x->st.shift + 10 * arg;
        apply_num(x, "shift", k < 0 ? 0 : k);
        attn_fix(x);
        return;
    }
    int h = x->st.p.heads + arg;
    if (h < 1) h = 1;
    if (x->st.head >= h) x->st.head = h - 1;
    apply_num(x, "heads", h);
}

static void act_head(app_explorer *x, int arg)
{
    (void)arg;
    int nh = x->st.p.heads;
    if (attn_view(x)) { /* the model's heads */
        app_attn *a = attn_run(x, 0);
        if (!a) return;
        nh = a->heads;
    }
    int h = x->st.head + 1;
    if (h >= nh) h = -1;
    if (h < 0)
        apply(x, "head", "all");
    else
        apply_num(x, "head", h);
}

static void act_slope(app_explorer *x, int arg)
{
    if (attn_view(x)) {
        attn_slope(x, arg);
        return;
    }
    double r = x->st.p.slope_ratio;
    if (r <= 0) r = pow(2, -8.0 / x->st.p.heads); /* start from the paper's ratio */
    r = arg > 0 ? 1 - (1 - r) / 1.5 : 1 - (1 - r) * 1.5;
    if (r <= 0.01) r = 0.01;
    if (r > 0.999) r = 0.999;
    apply_num(x, "slope-ratio", r);
}

static void act_toggle(app_explorer *x, int arg)
{
    static const char *const names[] = {"pairing", "layout", "similarity",
                                        "theme",   "alibi",  "freq"};
    const app_option *o = app_option_find(names[arg]);
    const char *ch[8];
    size_t n = app_option_choices(o, ch, 8);
    char cur[64];
    app_option_get(&x->st, o, cur, sizeof cur);
    size_t i = 0;
    while (i < n && strcmp(ch[i], cur) != 0) i++;
    apply(x, names[arg], ch[(i + 1) % n]);
}

static void act_encoding(app_explorer *x, int arg)
{
    if (attn_view(x)) {
        cycle_model(x, 0, arg);
        return;
    }
    size_t n = pe_encoding_count(), i = 0;
    while (i < n && pe_encoding_at(i) != x->st.enc) i++;
    for (size_t step = 1; step <= n; step++) {
        size_t j = (i + (arg > 0 ? step : n * 2 - step)) % n;
        const pe_encoding *e = pe_encoding_at(j);
        app_state trial = x->st;
        trial.enc = e;
        char err[256];
        if (app_state_validate(&trial, err, sizeof err) == 0) {
            x->st.enc = e;
            say(x, 0, "pe = %s: %s", e->name, e->description);
            return;
        }
    }
}

static void act_cmap(app_explorer *x, int arg)
{
    (void)arg;
    size_t n = cmap_count(), i = 0;
    if (x->st.map)
        while (i < n && cmap_at(i) != x->st.map) i++;
    const cmap *next = !x->st.map ? cmap_at(0) : i + 1 < n ? cmap_at(i + 1) : NULL;
    x->st.map = next;
    say(x, 0, "cmap = %s", next ? next->name : "auto (diverging for signed data, viridis else)");
}

static void act_play(app_explorer *x, int arg)
{
    (void)arg;
    if (attn_view(x)) {
        app_attn *a = attn_run(x, 0);
        if (!a) return;
        x->st.playing = !x->st.playing;
        x->st.step_frac = 0;
        if (x->st.playing && app_attn_step(a, &x->st) >= a->n - 1) x->st.step = 0;
        if (x->st.playing)
            say(x, 0, "playing at %g tokens/s (space pauses, ] / [ faster / slower)",
                x->st.play_speed);
        else
            say(x, 0, "paused");
        return;
    }
    x->st.playing = !x->st.playing;
    if (x->st.playing && x->st.view != app_view_find("rope")) x->st.view = app_view_find("rope");
    say(x, 0, x->st.playing ? "playing: m advances (space pauses, arrows step)" : "paused");
}

static void set_cursor(app_explorer *x, int r, int c)
{
    app_view_ctx *vc = &x->ctx[x->st.view];
    if (!vc->has_main) return;
    if (r < 0) r = 0;
    if (c < 0) c = 0;
    if (r >= vc->main_rows) r = vc->main_rows - 1;
    if (c >= vc->main_cols) c = vc->main_cols - 1;
    x->st.cur_r = r;
    x->st.cur_c = c;
    x->st.cursor_on = 1;
}

/* arg: direction 0 up, 1 down, 2 left, 3 right; +4 for a big step */
static void act_move(app_explorer *x, int arg)
{
    int big = arg >= 4;
    int dir = arg & 3;
    if (attn_view(x)) {
        /* left/right: the token step; up/down: the layer */
        if (dir == 2 || dir == 3)
            act_step(x, (dir == 3 ? 1 : -1) * (big ? 10 : 1));
        else
            act_layer(x, dir == 1 ? 1 : -1);
        return;
    }
    if (x->st.view == app_view_find("rope")) {
        /* in the RoPE view the arrows move the positions: left/right m, up/down n */
        int step = big ? 10 : 1;
        x->st.pos_frac = 0;
        int m = x->st.pos < 0 ? 3 : x->st.pos;
        if (dir == 2 || dir == 3) {
            m += dir == 3 ? step : -step;
            if (m < 0) m = 0;
            if (m >= x->st.p.len) m = x->st.p.len - 1;
            x->st.pos = m;
        } else {
            int n = x->st.pos_k + (dir == 0 ? step : -step);
            if (n < 0) n = 0;
            if (n >= x->st.p.len) n = x->st.p.len - 1;
            x->st.pos_k = n;
        }
        say(x, 0, "m = %d, n = %d, m - n = %d", x->st.pos, x->st.pos_k, x->st.pos - x->st.pos_k);
        return;
    }
    app_view_ctx *vc = &x->ctx[x->st.view];
    if (!vc->has_main) {
        say(x, 0, "this view has no cursor");
        return;
    }
    int rs = big ? (vc->main_rows + 15) / 16 : 1;
    int cs = big ? (vc->main_cols + 15) / 16 : 1;
    if (!x->st.cursor_on) {
        set_cursor(x, vc->main_rows / 2, vc->main_cols / 2);
        return;
    }
    int r = x->st.cur_r, c = x->st.cur_c;
    if (dir == 0) r -= rs;
    if (dir == 1) r += rs;
    if (dir == 2) c -= cs;
    if (dir == 3) c += cs;
    set_cursor(x, r, c);
}

static void act_command(app_explorer *x, int arg)
{
    (void)arg;
    x->mode = APP_MODE_COMMAND;
    x->cmd_len = 0;
    x->cmd[0] = '\0';
    say(x, 0, "option value, e.g. base 500000 (Tab completes, Enter applies, Esc cancels)");
}

static void act_help(app_explorer *x, int arg)
{
    (void)arg;
    x->mode = x->mode == APP_MODE_HELP ? APP_MODE_NORMAL : APP_MODE_HELP;
    x->help_scroll = 0;
}

static void act_save(app_explorer *x, int arg)
{
    (void)arg;
    char path[256], err[512];
    app_next_save_name(&x->st, "png", path, sizeof path);
    app_export_opts o = {1200, 750, 96};
    app_state st = x->st;
    app_export_command(&x->st, path, st.command, sizeof st.command);
    if (app_export_file(&st, path, &o, err, sizeof err) != 0)
        say(x, 1, "save failed: %s", err);
    else
        say(x, 0, "saved %s (%dx%d) - the same figure as: %s", path, o.width, o.height, st.command);
}

static void act_print_command(app_explorer *x, int arg)
{
    (void)arg;
    char cmd[1024], path[256];
    app_next_save_name(&x->st, "png", path, sizeof path);
    app_export_command(&x->st, path, cmd, sizeof cmd);
    if (x->n_saved < 8)
        snprintf(x->saved_commands[x->n_saved++], sizeof x->saved_commands[0], "%s", cmd);
    say(x, 0, "%s   (printed again on exit)", cmd);
}

static void act_zoom(app_explorer *x, int arg)
{
    double z = x->st.zoom * (arg > 0 ? 1.15 : 1 / 1.15);
    if (z < 0.5) z = 0.5;
    if (z > 4) z = 4;
    x->st.zoom = z;
    say(x, 0, "zoom %.0f%%", z * 100);
}

static void act_fullscreen(app_explorer *x, int arg)
{
    (void)arg;
    x->want_fullscreen = 1;
}

static void act_reset(app_explorer *x, int arg)
{
    (void)arg;
    if (attn_view(x)) { /* the experiments go back; the model, text and step stay */
        x->st.shift = 0;
        x->st.rope_base = 0;
        x->st.alibi_scale = 1;
        x->st.attn_scale = APP_SCALE_LINEAR;
        x->st.split = 0;
        say(x, 0, "position experiments reset: shift 0, trained base and slopes, linear colours");
        return;
    }
    int view = x->st.view, dark = x->st.dark;
    app_state_default(&x->st);
    x->st.view = view;
    x->st.dark = dark;
    say(x, 0, "parameters reset to the defaults");
}

typedef struct key_binding {
    uint32_t key;
    action_fn fn;
    int arg;
    const char *label; /* NULL: an alias listed with the previous entry */
    const char *what;
} key_binding;

static const key_binding keys[] = {
    {'q', act_quit, 0, "q", "quit"},
    {'1', act_view, 0, "1..9", "switch to view 1..9 (Tab / Shift-Tab: next / previous)"},
    {'2', act_view, 1, NULL, NULL},
    {'3', act_view, 2, NULL, NULL},
    {'4', act_view, 3, NULL, NULL},
    {'5', act_view, 4, NULL, NULL},
    {'6', act_view, 5, NULL, NULL},
    {'7', act_view, 6, NULL, NULL},
    {'8', act_view, 7, NULL, NULL},
    {'9', act_view, 8, NULL, NULL},
    {UI_KEY_TAB, act_view, -1, NULL, NULL},
    {UI_KEY_BTAB, act_view, -2, NULL, NULL},
    {UI_KEY_UP, act_move, 0, "arrows, hjkl",
     "move the cursor (RoPE view: m and n; attention: left/right step through the tokens, "
     "up/down the layer); PgUp/PgDn, HJKL: big steps"},
    {UI_KEY_DOWN, act_move, 1, NULL, NULL},
    {UI_KEY_LEFT, act_move, 2, NULL, NULL},
    {UI_KEY_RIGHT, act_move, 3, NULL, NULL},
    {'k', act_move, 0, NULL, NULL},
    {'j', act_move, 1, NULL, NULL},
    {'h', act_move, 2, NULL, NULL},
    {'l', act_move, 3, NULL, NULL},
    {'K', act_move, 4, NULL, NULL},
    {'J', act_move, 5, NULL, NULL},
    {'H', act_move, 6, NULL, NULL},
    {'L', act_move, 7, NULL, NULL},
    {UI_KEY_PGUP, act_move, 4, NULL, NULL},
    {UI_KEY_PGDN, act_move, 5, NULL, NULL},
    {UI_KEY_HOME, act_step, -100000, "Home / End", "attention: the first / last token"},
    {UI_KEY_END, act_step, 100000, NULL, NULL},
    {' ', act_play, 0, "space",
     "play / pause the RoPE animation (m advances); attention: step through the tokens"},
    {'g', act_generate, 1, "g / G",
     "attention: generate one more token / take the last one back (:temperature, :gen-seed)"},
    {'G', act_generate, -1, NULL, NULL},
    {'x', act_split, 0, "x", "attention: split scores into content and position parts"},
    {'n', act_scale, 0, "n", "attention colours: linear / log / without token 0 (renormalised)"},
    {'w', act_compare_model, 1, "w / W", "compare view: next / previous second model"},
    {'W', act_compare_model, -1, NULL, NULL},
    {'b', act_base, 1, "b / B",
     "frequency base x2 / /2 (exact: :base 500000); attention: the rope model's base"},
    {'B', act_base, -1, NULL, NULL},
    {'d', act_dim, 1, "d / D", "dimension d x2 / /2"},
    {'D', act_dim, -1, NULL, NULL},
    {']', act_len, 1, "] / [", "positions L x2 / /2; attention: autoplay faster / slower"},
    {'[', act_len, -1, NULL, NULL},
    {'>', act_heads, 1, "> / <", "heads +1 / -1; attention: shift every position by +10 / -10"},
    {'<', act_heads, -1, NULL, NULL},
    {'a', act_head, 0, "a", "ALiBi and attention: all heads, or the next head enlarged"},
    {'r', act_slope, 1, "r / R",
     "ALiBi slope ratio: gentler / steeper (:slope-ratio 0 = paper); attention: the alibi "
     "model's slopes /1.5 / x1.5"},
    {'R', act_slope, -1, NULL, NULL},
    {'p', act_toggle, 0, "p", "RoPE pairing: interleaved / half-split"},
    {'o', act_toggle, 1, "o", "sinusoid layout: interleaved / concatenated"},
    {'c', act_toggle, 2, "c", "similarity: dot product / cosine"},
    {'m', act_encoding, 1, "m / M", "next / previous encoding; attention: model (prompt stays)"},
    {'M', act_encoding, -1, NULL, NULL},
    {'C', act_cmap, 0, "C", "next colormap (auto first)"},
    {'t', act_toggle, 3, "t", "light / dark theme"},
    {':', act_command, 0, ":",
     "type an option: :base 500000, :d 128, :pe rope, :prompt once upon a time (Tab completes)"},
    {'s', act_save, 0, "s", "save this view as a PNG (same as pelab export)"},
    {'e', act_print_command, 0, "e", "show the pelab export command for this figure"},
    {'+', act_zoom, 1, "+ / -", "window: scale fonts and lines (projector)"},
    {'-', act_zoom, -1, NULL, NULL},
    {'f', act_fullscreen, 0, "f, F11", "window: fullscreen"},
    {UI_KEY_F11, act_fullscreen, 0, NULL, NULL},
    {'0', act_reset, 0, "0",
     "reset every parameter to its default; attention: the position experiments only"},
    {'?', act_help, 0, "?", "this help (Esc closes)"},
};

size_t app_key_help_count(void)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) n += keys[i].label != NULL;
    return n;
}

const app_key_help *app_key_help_at(size_t i)
{
    static app_key_help h;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (!keys[k].label) continue;
        if (i-- == 0) {
            h.keys = keys[k].label;
            h.what = keys[k].what;
            return &h;
        }
    }
    return NULL;
}

/* ---- the ':' line ------------------------------------------------------------------------ */

static void complete(app_explorer *x)
{
    char *sp = strchr(x->cmd, ' ');
    const char *cands[64];
    size_t n = 0;
    const char *word;
    if (!sp) {
        word = x->cmd;
        for (size_t i = 0; i < app_option_count() && n < 64; i++)
            cands[n++] = app_option_at(i)->name;
    } else {
        *sp = '\0';
        const app_option *o = app_option_find(x->cmd);
        *sp = ' ';
        if (!o) return;
        word = sp + 1;
        n = app_option_choices(o, cands, 64);
        if (n == 0) {
            char cur[128];
            app_option_get(&x->st, o, cur, sizeof cur);
            say(x, 0, "%s = %s  (%s)", o->name, cur, o->help);
            return;
        }
    }
    size_t wl = strlen(word);
    const char *match[64];
    size_t nm = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(cands[i], word, wl) == 0) match[nm++] = cands[i];
    if (nm == 0) {
        say(x, 1, "no completion for '%s'", word);
        return;
    }
    /* extend to the longest common prefix; list the candidates when ambiguous */
    size_t common = strlen(match[0]);
    for (size_t i = 1; i < nm; i++) {
        size_t k = 0;
        while (k < common && match[i][k] == match[0][k]) k++;
        common = k;
    }
    size_t start = (size_t)(word - x->cmd);
    if (start + common < sizeof x->cmd - 2) {
        memcpy(x->cmd + start, match[0], common);
        x->cmd_len = start + common;
        if (nm == 1 && !sp) x->cmd[x->cmd_len++] = ' ';
        x->cmd[x->cmd_len] = '\0';
    }
    if (nm > 1) {
        size_t u = 0;
        x->message[0] = '\0';
        for (size_t i = 0; i < nm && u < sizeof x->message; i++)
            u += (size_t)snprintf(x->message + u, sizeof x->message - u, "%s ", match[i]);
        x->message_error = 0;
    }
}

/* Whether the current view builds with the state a ':' command just set: some values are only
 * found wrong when used (a checkpoint that does not load, a data file). Built off screen into a
 * scratch scene with the view's own cache, so the next frame reuses the work. */
static int command_builds(app_explorer *x, char *err, size_t errlen)
{
    scene s;
    scene_init(&s, 1000, 600, 0xffffff);
    scene_target t = raster_target(1000, 600, raster_font_px(1000, 600, 1));
    int rc = app_view_build(&x->ctx[x->st.view], &x->st, &s, &t, err, errlen);
    scene_free(&s);
    return rc;
}

static int command_key(app_explorer *x, uint32_t key)
{
    if (key == UI_KEY_ESC) {
        x->mode = APP_MODE_NORMAL;
        say(x, 0, "cancelled");
    } else if (key == UI_KEY_ENTER || key == '\n' || key == '\r') {
        x->mode = APP_MODE_NORMAL;
        char err[512];
        if (x->cmd_len == 0) {
            x->message[0] = '\0';
        } else {
            app_state before = x->st;
            if (app_option_command(&x->st, x->cmd, err, sizeof err) < 0) {
                say(x, 1, "%s", err);
            } else if (command_builds(x, err, sizeof err) < 0) {
                /* set, but the view cannot show it (a model file that does not load): keep
                 * what worked and say why, rather than "applied" above an error screen */
                x->st = before;
                say(x, 1, ":%s not applied: %s", x->cmd, err);
            } else {
                say(x, 0, ":%s applied", x->cmd);
                x->st.cursor_on = 0;
                if (attn_view(x)) attn_fix(x);
            }
        }
    } else if (key == UI_KEY_BACKSPACE || key == 127 || key == 8) {
        if (x->cmd_len > 0)
            x->cmd[--x->cmd_len] = '\0';
        else
            x->mode = APP_MODE_NORMAL;
    } else if (key == UI_KEY_TAB) {
        complete(x);
    } else if (key >= 32 && key < 127 && x->cmd_len + 1 < sizeof x->cmd) {
        x->cmd[x->cmd_len++] = (char)key;
        x->cmd[x->cmd_len] = '\0';
    }
    return 1;
}

/* ---- events ------------------------------------------------------------------------------ */

void app_explorer_init(app_explorer *x, const app_state *st, int gui)
{
    memset(x, 0, sizeof *x);
    x->st = *st;
    x->gui = gui;
    x->dirty = 1;
    say(x, 0, "? shows the keys, : takes an option, q quits");
}

void app_explorer_free(app_explorer *x)
{
    for (int i = 0; i < APP_MAX_VIEWS; i++) app_view_ctx_free(&x->ctx[i]);
}

int app_explorer_animating(const app_explorer *x)
{
    return x->st.playing && (x->st.view == app_view_find("rope") || attn_view(x));
}

int app_explorer_tick(app_explorer *x, double dt)
{
    if (!app_explorer_animating(x)) return 0;
    if (attn_view(x)) { /* play_speed tokens a second, whole steps */
        x->st.step_frac += dt * x->st.play_speed;
        int moved = 0;
        while (x->st.step_frac >= 1 && x->st.playing) {
            x->st.step_frac -= 1;
            act_step(x, 1);
            moved = 1;
        }
        return moved;
    }
    /* 4 positions a second: slow enough to follow the fast pairs, smooth in the window */
    double m = (x->st.pos < 0 ? 3 : x->st.pos) + x->st.pos_frac + dt * 4;
    if (m >= x->st.p.len) m = 0;
    x->st.pos = (int)floor(m);
    x->st.pos_frac = x->gui ? m - floor(m) : 0;
    return 1;
}

static int mouse_event(app_explorer *x, const ui_event *ev)
{
    app_view_ctx *vc = &x->ctx[x->st.view];
    if (ev->mouse == UI_MOUSE_WHEEL_UP || ev->mouse == UI_MOUSE_WHEEL_DOWN) {
        if (x->st.view != app_view_find("heatmap") || !vc->has_main) return 0;
        /* zoom the position range around the pointer */
        int L = vc->main_rows;
        int rows = x->st.rows > 0 ? x->st.rows : L;
        double at = fig_y_inv(&vc->main, ev->y);
        int nr = ev->mouse == UI_MOUSE_WHEEL_UP ? rows * 2 / 3 : rows * 3 / 2;
        if (nr < 8) nr = 8;
        if (nr >= L) {
            x->st.row0 = 0;
            x->st.rows = 0;
        } else {
            double frac = (at - (x->st.row0)) / rows;
            int r0 = (int)(at - frac * nr);
            if (r0 < 0) r0 = 0;
            if (r0 + nr > L) r0 = L - nr;
            x->st.row0 = r0;
            x->st.rows = nr;
        }
        say(x, 0, "positions %d..%d (wheel zooms)", x->st.row0,
            x->st.row0 + (x->st.rows ? x->st.rows : L) - 1);
        return 1;
    }
    if (!vc->has_main) return 0;
    const fig_axes *a = &vc->main;
    int inside = ev->x >= a->area.x && ev->x <= a->area.x + a->area.w && ev->y >= a->area.y &&
                 ev->y <= a->area.y + a->area.h;
    if (!inside) return 0;
    if (ev->mouse == UI_MOUSE_MOVE && !x->gui) return 0;
    double dx = fig_x_inv(a, ev->x), dy = fig_y_inv(a, ev->y);
    int c = vc->main_rows == 1 ? (int)floor(dx + 0.5) : (int)floor(dx);
    int r = vc->main_rows == 1 ? 0 : (int)floor(dy);
    set_cursor(x, r, c);
    return 1;
}

int app_explorer_event(app_explorer *x, const ui_event *ev)
{
    switch (ev->type) {
    case UI_EV_QUIT:
        x->quit = 1;
        return 0;
    case UI_EV_RESIZE:
        return 1;
    case UI_EV_TICK:
    case UI_EV_NONE:
        return 0;
    case UI_EV_MOUSE:
        if (x->mode == APP_MODE_HELP && ev->mouse == UI_MOUSE_PRESS) {
            x->mode = APP_MODE_NORMAL;
            return 1;
        }
        return mouse_event(x, ev);
    case UI_EV_KEY:
        break;
    }
    uint32_t key = ev->key;
    if ((ev->mods & UI_MOD_CTRL) && (key == 'c' || key == 'C' || key == 3)) {
        x->quit = 1;
        return 0;
    }
    if (key == 3) { /* Ctrl-C as a raw byte */
        x->quit = 1;
        return 0;
    }
    if (x->mode == APP_MODE_COMMAND) return command_key(x, key);
    if (x->mode == APP_MODE_HELP) {
        if (key == UI_KEY_DOWN || key == 'j')
            x->help_scroll++;
        else if (key == UI_KEY_UP || key == 'k')
            x->help_scroll -= x->help_scroll > 0;
        else if (key == 'q')
            x->quit = 1;
        else
            x->mode = APP_MODE_NORMAL;
        return 1;
    }
    if (key == UI_KEY_ESC) {
        x->st.cursor_on = 0;
        x->message[0] = '\0';
        return 1;
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (keys[i].key == key) {
            keys[i].fn(x, keys[i].arg);
            if (attn_view(x)) attn_fix(x);
            return 1;
        }
    }
    if (key < 0x110000 && key >= 32)
        say(x, 1, "'%c' is not a key here; ? shows the keys", key < 127 ? (char)key : '?');
    else
        say(x, 1, "that key is not bound; ? shows the keys");
    return 1;
}

/* ---- the frame --------------------------------------------------------------------------- */

/* Every parameter in force, on one line. */
/* The attention views' line: the model, the text, the step and the experiments. */
static void status_attn(const app_explorer *x, char *buf, size_t n)
{
    const app_state *st = &x->st;
    const app_attn *a = app_attn_peek(&x->ctx[st->view], 0);
    char head[16], step[32], text[80];
    if (st->head < 0)
        snprintf(head, sizeof head, "all");
    else
        snprintf(head, sizeof head, "%d", st->head);
    if (a)
        snprintf(step, sizeof step, "%d/%d", app_attn_step(a, st), a->n - 1);
    else if (st->step < 0)
        snprintf(step, sizeof step, "last");
    else
        snprintf(step, sizeof step, "%d", st->step);
    if (st->prompt[0])
        snprintf(text, sizeof text, "prompt=\"%.40s%s\"", st->prompt,
                 strlen(st->prompt) > 40 ? "..." : "");
    else
        snprintf(text, sizeof text, "preset=%s", st->preset[0] ? st->preset : "none");
    size_t u = (size_t)snprintf(
        buf, n, "[%d/%zu %s] model=%.60s%s%.60s %s step=%s layer=%d head=%s shift=%d", st->view + 1,
        app_view_count(), app_view_at((size_t)st->view)->name, st->model_name,
        st->view == app_view_find("compare") ? " vs " : "",
        st->view == app_view_find("compare") ? (st->compare[0] ? st->compare : "none") : "", text,
        step, st->layer, head, st->shift);
    if (u < n && st->rope_base > 0)
        u += (size_t)snprintf(buf + u, n - u, " rope-base=%g", st->rope_base);
    if (u < n && st->alibi_scale != 1)
        u += (size_t)snprintf(buf + u, n - u, " alibi-scale=%g", st->alibi_scale);
    if (u < n)
        u += (size_t)snprintf(buf + u, n - u, " colours=%s split=%s gen=%d %s speed=%g/s",
                              st->attn_scale == APP_SCALE_LOG       ? "log"
                              : st->attn_scale == APP_SCALE_NOFIRST ? "nofirst"
                                                                    : "linear",
                              st->split ? "on" : "off", st->generate,
                              st->temperature > 0 ? "sampled" : "greedy", st->play_speed);
    if (u < n && st->generate > 0 && st->temperature > 0)
        snprintf(buf + u, n - u, " T=%g seed=%d", st->temperature, st->gen_seed);
}

static void status_params(const app_explorer *x, char *buf, size_t n)
{
    const app_state *st = &x->st;
    if (attn_view(x)) {
        status_attn(x, buf, n);
        return;
    }
    const pe_params *p = &st->p;
    static const char *const scal[] = {"none", "linear", "ntk",     "dynamic",
                                       "yarn", "llama3", "longrope"};
    char head[16];
    if (st->head < 0)
        snprintf(head, sizeof head, "all");
    else
        snprintf(head, sizeof head, "%d", st->head);
    size_t u = (size_t)snprintf(
        buf, n,
        "[%d/%zu %s] pe=%s d=%d L=%d base=%g layout=%s pairing=%s rotary=%g heads=%d head=%s "
        "slope=%s alibi=%s m=%d n=%d cmap=%s",
        st->view + 1, app_view_count(), app_view_at((size_t)st->view)->name,
        st->enc ? st->enc->name : "none", p->dim, p->len, p->base,
        p->layout == PE_LAYOUT_CONCAT ? "concat" : "interleaved",
        p->pairing == PE_PAIRING_HALF ? "half" : "interleaved", p->rotary_frac, p->heads, head,
        p->slope_ratio > 0 ? "custom" : "paper", p->alibi_symmetric ? "symmetric" : "causal",
        st->pos < 0 ? 3 : st->pos, st->pos_k, st->map ? st->map->name : "auto");
    if (p->scaling.type != PE_SCALING_NONE && u < n)
        u += (size_t)snprintf(buf + u, n - u, " scaling=%s f=%g L0=%d", scal[p->scaling.type],
                              p->scaling.factor, p->scaling.original_ctx);
    if (p->slope_ratio > 0 && u < n) snprintf(buf + u, n - u, " ratio=%g", p->slope_ratio);
}

static void help_overlay(app_explorer *x, scene *s, const scene_target *t, const fig_theme *th)
{
    double lh = t->text_h * (t->cells ? 0.5 : 1.25);
    double w = fmin(t->width - 2 * t->char_w, t->char_w * 96);
    size_t n = app_key_help_count();
    double h = fmin(t->height - lh, (n + 4) * lh + (t->cells ? 0 : lh));
    double x0 = (t->width - w) / 2, y0 = (t->height - h) / 2;
    if (t->cells) {
        x0 = floor(x0);
        y0 = floor(y0 / 2) * 2;
    }
    scene_rect(s, x0, y0, w, h, th->bg, SCENE_FILL);
    scene_rect(s, x0, y0, w, h, th->accent, 0);
    double step = t->cells ? 2 : lh;
    double y = y0 + step * (t->cells ? 0.5 : 0.5);
    scene_text(s, x0 + t->char_w * 2, y, "pelab keys  (Esc or any key closes; j/k scroll)", 1,
               SCENE_LEFT | SCENE_TOP, th->accent, SCENE_BOLD);
    y += step * 1.5;
    int rows_fit = (int)((y0 + h - y) / step) - 1;
    int scroll = x->help_scroll;
    if (scroll > (int)n - rows_fit) scroll = (int)n - rows_fit > 0 ? (int)n - rows_fit : 0;
    x->help_scroll = scroll;
    for (size_t i = (size_t)scroll; i < n && (int)(i - (size_t)scroll) < rows_fit; i++) {
        const app_key_help *k = app_key_help_at(i);
        scene_text(s, x0 + t->char_w * 2, y, k->keys, 1, SCENE_LEFT | SCENE_TOP, th->fg,
                   SCENE_BOLD);
        scene_text(s, x0 + t->char_w * 16, y, k->what, 1, SCENE_LEFT | SCENE_TOP, th->fg, 0);
        y += step;
    }
    scene_text(s, x0 + t->char_w * 2, y0 + h - step * (t->cells ? 1 : 1.1),
               "mouse: click a cell to read it; window: hover, wheel zooms the heatmap", 1,
               SCENE_LEFT | SCENE_TOP, th->muted, 0);
}

/* Break text at spaces into at most max_lines lines no wider than w; returns the count. The
 * pieces point into buf (which is modified). */
static int wrap_lines(const scene_target *t, char *buf, double w, char **lines, int max_lines)
{
    int n = 0;
    char *p = buf;
    while (*p && n < max_lines) {
        lines[n++] = p;
        char *last_space = NULL;
        char *q = p;
        for (;;) {
            char *sp = strchr(q, ' ');
            char save = 0;
            if (sp) {
                save = *sp;
                *sp = '\0';
            }
            int fits = scene_text_width(t, p, 1) <= w;
            if (sp) *sp = save;
            if (!fits) break;
            if (!sp) return n; /* the rest fits */
            last_space = sp;
            q = sp + 1;
        }
        if (!last_space) return n; /* one word longer than the line: let it clip */
        *last_space = '\0';
        p = last_space + 1;
    }
    return n;
}

void app_explorer_frame(app_explorer *x, scene *s, const scene_target *t)
{
    const fig_theme *th = fig_theme_get(x->st.dark);
    /* status at the bottom: the parameters (wrapped over up to three lines, so every one stays
     * visible), then the readout / message / ':' line */
    double line = t->cells ? 2 : t->text_h * 1.25;
    double px = t->cells ? 0 : t->char_w;
    char params[768];
    status_params(x, params, sizeof params);
    char *plines[3];
    int np = wrap_lines(t, params, t->width - 2 * px, plines, 3);
    if (np < 1) np = 1;
    double status_h = (np + 1) * line + (t->cells ? 0 : line * 0.3);
    scene_target vt = *t;
    vt.height = t->height - status_h;
    x->width = t->width;
    x->height = t->height;
    x->view_h = vt.height;
    x->status_y = vt.height;
    int too_small = vt.height < (t->cells ? 16 : 120) || vt.width < (t->cells ? 40 : 240);
    app_view_ctx *vc = &x->ctx[x->st.view];
    char err[512] = "";
    scene_reset(s, t->width, t->height, th->bg);
    if (too_small) {
        vc->has_main = 0;
        /* short first: a tiny terminal clips a centred line from both ends */
        snprintf(x->view_error, sizeof x->view_error, "too small (%.0fx%.0f)", t->width,
                 t->cells ? t->height / 2 : t->height);
    } else if (app_view_build(vc, &x->st, s, &vt, err, sizeof err) < 0) {
        scene_reset(s, t->width, t->height, th->bg);
        vc->has_main = 0;
        snprintf(x->view_error, sizeof x->view_error, "%s", err);
    } else {
        x->view_error[0] = '\0';
    }
    s->width = t->width;
    s->height = t->height;
    if (x->view_error[0]) {
        scene_text(s, t->width / 2, vt.height / 2, x->view_error, 1, SCENE_CENTER | SCENE_MIDDLE,
                   th->accent, SCENE_BOLD);
        scene_text(s, t->width / 2, vt.height / 2 + line,
                   too_small ? "make it larger" : "change a parameter, or ? for keys", 1,
                   SCENE_CENTER | SCENE_MIDDLE, th->muted, 0);
    }
    if (x->mode == APP_MODE_HELP) help_overlay(x, s, t, th);

    double y1 = t->height - (np + 1) * line, y2 = t->height - line;
    scene_rect(s, 0, y1 - (t->cells ? 0 : line * 0.15), t->width, (np + 1) * line + line * 0.15,
               th->grid, SCENE_FILL);
    for (int i = 0; i < np; i++)
        scene_text(s, px, y1 + i * line, plines[i], 1, SCENE_LEFT | SCENE_TOP, th->fg, 0);
    if (x->mode == APP_MODE_COMMAND) {
        char buf[300];
        snprintf(buf, sizeof buf, ":%s_", x->cmd);
        scene_text(s, px, y2, buf, 1, SCENE_LEFT | SCENE_TOP, th->fg, SCENE_BOLD);
        if (x->message[0])
            scene_text(s, t->width - px, y2, x->message, 1, SCENE_RIGHT | SCENE_TOP,
                       x->message_error ? th->accent : th->muted, 0);
    } else {
        const char *info = x->message[0] ? x->message : vc->readout;
        if (x->message[0] && vc->readout[0] && x->st.cursor_on) info = vc->readout;
        int err_line = x->message_error && info == x->message;
        scene_text(s, px, y2, info, 1, SCENE_LEFT | SCENE_TOP, err_line ? th->accent : th->fg,
                   err_line ? SCENE_BOLD : 0);
    }
    x->dirty = 0;
}

/* ---- the command ------------------------------------------------------------------------- */

int app_cmd_explore(int argc, char **argv, int gui)
{
    app_state st;
    app_state_default(&st);
    const char *name = gui ? "pelab gui" : "pelab";
    app_cli_extra extra[] = {{"config", 'C'}, {"frames", 'F'}, {"help", '?'}};
    app_cli_args args;
    char err[512];
    if (app_cli_parse(&st, argc, argv, extra, sizeof extra / sizeof extra[0], &args, err,
                      sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 2;
    }
    long frames = 0;
    for (int i = 0; i < args.n; i++) {
        if (args.code[i] == '?') {
            printf("usage: %s [options]   (keys: ? inside)\n"
                   "  --config FILE    start from a Hugging Face config.json\n"
                   "  --frames N       draw N frames and exit (for tests and benchmarks)\n",
                   name);
            app_cli_print_options(stdout);
            return 0;
        }
        if (args.code[i] == 'F' &&
            app_parse_int("frames", args.val[i], 1, 1000000, &frames, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s\n", name, err);
            return 2;
        }
    }
    if (args.n_positional > 0) {
        int v = app_view_find(args.positional[0]);
        if (v < 0 || args.n_positional > 1) {
            fprintf(stderr, "%s: unexpected argument '%s' (a view name, or options)\n", name,
                    args.positional[v < 0 ? 0 : 1]);
            return 2;
        }
        st.view = v;
    }
    if (app_state_validate(&st, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 2;
    }
    app_explorer *x = calloc(1, sizeof *x);
    if (!x) {
        fprintf(stderr, "%s: out of memory\n", name);
        return 1;
    }
    app_explorer_init(x, &st, gui);
    int rc = gui ? app_run_gui(x, (int)frames) : app_run_tui(x, (int)frames);
    for (int i = 0; i < x->n_saved; i++) printf("%s\n", x->saved_commands[i]);
    app_explorer_free(x);
    free(x);
    return rc;
}
