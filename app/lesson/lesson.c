/* lesson.c: reading and checking lesson files (lesson.h), and their live captions. */
#include "lesson.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "assets.h"
#include "attn.h"
#include "cli.h"
#include "infile.h"
#include "input.h"
#include "options.h"
#include "textclean.h"
#include "views.h"

/* ---- keys -------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    uint32_t key;
} key_names[] = {
    {"Up", UI_KEY_UP},
    {"Down", UI_KEY_DOWN},
    {"Left", UI_KEY_LEFT},
    {"Right", UI_KEY_RIGHT},
    {"PgUp", UI_KEY_PGUP},
    {"PgDn", UI_KEY_PGDN},
    {"Home", UI_KEY_HOME},
    {"End", UI_KEY_END},
    {"Enter", UI_KEY_ENTER},
    {"Esc", UI_KEY_ESC},
    {"Tab", UI_KEY_TAB},
    {"S-Tab", UI_KEY_BTAB},
    {"Backspace", UI_KEY_BACKSPACE},
    {"F11", UI_KEY_F11},
    {"Space", ' '},
};

void lesson_key_name(uint32_t key, char *buf, size_t n)
{
    for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++)
        if (key_names[i].key == key) {
            snprintf(buf, n, "%s", key_names[i].name);
            return;
        }
    snprintf(buf, n, "%c", key > 32 && key < 127 ? (char)key : '?');
}

int lesson_key_parse(const char *name, uint32_t *key)
{
    for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++)
        if (strcasecmp(name, key_names[i].name) == 0) {
            *key = key_names[i].key;
            return 0;
        }
    if (name[0] > 32 && name[0] < 127 && name[1] == '\0') {
        *key = (uint32_t)name[0];
        return 0;
    }
    return -1;
}

/* The presenter's own keys: they move through the lesson, so a hint cannot offer them for the
 * view. */
static const struct {
    uint32_t key;
    const char *what;
} reserved[] = {
    {' ', "next slide"},
    {UI_KEY_PGDN, "next slide"},
    {UI_KEY_PGUP, "previous slide"},
    {UI_KEY_BACKSPACE, "previous slide"},
    {'l', "list the slides"},
    {'r', "reset the slide"},
    {'q', "quit"},
    {'0', "jump to a slide"},
    {'1', "jump to a slide"},
    {'2', "jump to a slide"},
    {'3', "jump to a slide"},
    {'4', "jump to a slide"},
    {'5', "jump to a slide"},
    {'6', "jump to a slide"},
    {'7', "jump to a slide"},
    {'8', "jump to a slide"},
    {'9', "jump to a slide"},
};

int lesson_key_reserved(uint32_t key, const char **what)
{
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (reserved[i].key == key) {
            if (what) *what = reserved[i].what;
            return 1;
        }
    return 0;
}

/* ---- finding lessons --------------------------------------------------------------------- */

static int is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The shipped lessons in the order a course takes them: why position matters, the absolute
 * tables, rotation, biases, then what happens past the training length and how it is extended,
 * and last what the trained models made of their position parameters.
 * Lessons not named here (a user's, dropped into the folder) follow, alphabetically. */
static const char *const teaching_order[] = {
    "why-position", "sinusoids", "rope", "alibi", "extrapolation", "extension", "trained-position"};

static int teaching_rank(const char *name)
{
    int n = (int)(sizeof teaching_order / sizeof teaching_order[0]);
    for (int i = 0; i < n; i++)
        if (strcmp(name, teaching_order[i]) == 0) return i;
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int rx = teaching_rank(x), ry = teaching_rank(y);
    return rx != ry ? rx - ry : strcmp(x, y);
}

int lesson_names(char ***names)
{
    *names = NULL;
    char dir[1024], err[512];
    if (app_asset_path("lessons", dir, sizeof dir, err, sizeof err) < 0) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 7 || strcmp(e->d_name + len - 7, ".lesson") != 0 || e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **v2 = realloc(v, sizeof *v * (size_t)cap);
            if (!v2) break;
            v = v2;
        }
        v[n] = malloc(len - 6);
        if (!v[n]) break;
        memcpy(v[n], e->d_name, len - 7);
        v[n][len - 7] = '\0';
        n++;
    }
    closedir(d);
    if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp_str);
    *names = v;
    return n;
}

void lesson_names_free(char **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

int lesson_resolve(const char *name, char *buf, size_t n, char *err, size_t errlen)
{
    /* a path when it looks like one or names something that exists (a FIFO or a folder is
     * then refused by the reader with what it is); a shipped name otherwise */
    struct stat sb;
    if (strchr(name, '/') || is_file(name) || stat(name, &sb) == 0) {
        snprintf(buf, n, "%s", name);
        return 0;
    }
    char dir[1024];
    if (app_asset_path("lessons", dir, sizeof dir, err, errlen) < 0) return -1;
    size_t len = strlen(name);
    int has_ext = len > 7 && strcmp(name + len - 7, ".lesson") == 0;
    snprintf(buf, n, "%s/%s%s", dir, name, has_ext ? "" : ".lesson");
    if (is_file(buf)) return 0;
    char **names;
    int k = lesson_names(&names);
    char list[512] = "";
    size_t u = 0;
    for (int i = 0; i < k && u < sizeof list; i++)
        u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", i ? ", " : "", names[i]);
    const char *sug = k > 0 ? pe_closest(name, (const char *const *)names, (size_t)k) : NULL;
    snprintf(err, errlen, "lesson '%s': no such lesson or file%s%s%s (shipped: %s)", name,
             sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "",
             k ? list : "none found");
    lesson_names_free(names, k);
    return -1;
}

/* ---- placeholders ------------------------------------------------------------------------ */

/* A view's readout is laid out for the status line ("m 5  n 2  m-n 3  q.k 1.964890": fields
 * two spaces apart, six decimals so the cursor's value can be compared digit by digit). Inside
 * a sentence that reads badly, so {readout} puts it in prose form: "m=5, n=2, m-n=3,
 * q.k=1.9649", every decimal to 4 places like the lessons' other numbers. A field that is not
 * "NAME NUMBER" ("masked (j > i: the future)") is kept as it is. */
static void readout_prose(const char *in, char *out, size_t n)
{
    size_t u = 0;
    out[0] = '\0';
    for (const char *p = in; *p && u + 1 < n;) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *end = strstr(p, "  ");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char field[256], val[64];
        snprintf(field, sizeof field, "%.*s", (int)(len < 255 ? len : 255), p);
        p += len;
        char *sp = strrchr(field, ' ');
        char *num_end = NULL;
        double v = sp ? strtod(sp + 1, &num_end) : 0;
        int numeric = sp && sp[1] && num_end && !*num_end && isfinite(v) && field[0] != '(';
        const char *sep = u == 0 ? "" : field[0] == '(' ? " " : ", ";
        int w;
        if (numeric) {
            *sp = '\0';
            /* written as the figures write numbers: the minus sign, 10,000, 2.4×10⁻⁵ */
            if (strpbrk(sp + 1, ".eE")) {
                if (fabs(v) < 1e-3 && v != 0)
                    fig_num(v, 4, val, sizeof val);
                else
                    fig_fixed(v, 4, 0, val, sizeof val);
            } else {
                fig_num(v, 15, val, sizeof val);
            }
            w = snprintf(out + u, n - u, "%s%s=%s", sep, field, val);
        } else {
            w = snprintf(out + u, n - u, "%s%s", sep, field);
        }
        u += w > 0 ? (size_t)w : 0;
        if (u >= n) u = n - 1;
    }
}

/* Fill one placeholder (name without braces) into out. Returns 0, or -1 with a message when
 * the name is unknown (so --check can report it). */
/* The race's numbers a caption quotes ({race-best}: the scheme with the lowest held-out loss at
 * 4x the trained context and that loss, {race-worst} the highest, {race-speed} tokens/s), on a
 * slide with `do: race` only. race NULL: the slide has no race; race->done 0: it runs (or is
 * only being checked), and they read as pending, never as a made-up number. */
static const char *const race_values[] = {"race-best", "race-worst", "race-speed"};
enum { N_RACE_VALUES = 3 };
static const char race_pending[] = "\u2026";

static int race_placeholder(const char *name, const lesson_race_numbers *race, char *out, size_t n,
                            char *err, size_t errlen)
{
    int k = 0;
    while (k < N_RACE_VALUES && strcmp(name, race_values[k]) != 0) k++;
    if (k == N_RACE_VALUES) return 1;
    if (!race) {
        snprintf(err, errlen, "{%s}: only a slide with 'do: race' has the race's numbers", name);
        return -1;
    }
    const char *v = !race->done ? race_pending
                    : k == 0    ? race->best
                    : k == 1    ? race->worst
                                : race->speed;
    snprintf(out, n, "%s", v);
    return 0;
}

static int placeholder(const char *name, const app_state *st, const char *readout,
                       const lesson_race_numbers *race, char *out, size_t n, char *err,
                       size_t errlen)
{
    int rr = race_placeholder(name, race, out, n, err, errlen);
    if (rr <= 0) return rr;
    if (strcmp(name, "readout") == 0) {
        if (readout && readout[0])
            readout_prose(readout, out, n);
        else
            snprintf(out, n, "(move the cursor to read)");
        return 0;
    }
    /* a value a view answers ({slopes}, {loss rope 64-127}): the slide's view first */
    const app_view *v = app_view_at((size_t)st->view);
    const char *args;
    const app_view_value *val = app_view_value_find(v, name, &args);
    if (val) return val->get(st, args, out, n, err, errlen);
    const app_option *o = app_option_find(name);
    if (o) {
        app_option_get(st, o, out, n);
        return 0;
    }
    /* the suggestion weighs every placeholder name, the lesson's own, the views' values (the
     * slide's view's first) and the options', so a misspelt {distnce} points at {distance}, not
     * at the nearest option {dim}; the list in the message is the same, options aside */
    enum { MAX_VALUES = 64 };
    const app_view_value *vals[MAX_VALUES];
    size_t nv = 0;
    for (size_t i = 0; i <= app_view_count(); i++) {
        const app_view *w = i == 0 ? v : app_view_at(i - 1);
        if (i > 0 && w == v) continue;
        for (const app_view_value *e = w->values; e && e->name && nv < MAX_VALUES; e++) {
            size_t j = 0;
            while (j < nv && strcmp(vals[j]->name, e->name) != 0) j++;
            if (j == nv) vals[nv++] = e;
        }
    }
    const char *names[1 + N_RACE_VALUES + MAX_VALUES + APP_MAX_OPTIONS];
    size_t nn = 0;
    names[nn++] = "readout";
    for (int i = 0; race && i < N_RACE_VALUES; i++) names[nn++] = race_values[i];
    for (size_t i = 0; i < nv; i++) names[nn++] = vals[i]->name;
    for (size_t i = 0; i < app_option_count() && i < APP_MAX_OPTIONS; i++)
        names[nn++] = app_option_at(i)->name;
    const char *sug = pe_closest(name, names, nn);
    char sugbuf[96] = "", list[1024] = "readout";
    for (size_t i = 0; sug && i < nv; i++)
        if (strcmp(sug, vals[i]->name) == 0 && vals[i]->args) {
            snprintf(sugbuf, sizeof sugbuf, "%s %s", sug, vals[i]->args);
            sug = sugbuf;
        }
    for (int i = 0; race && i < N_RACE_VALUES; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), ", %s", race_values[i]);
    for (size_t i = 0, u = strlen(list); i < nv && u < sizeof list; i++)
        u += (size_t)snprintf(list + u, sizeof list - u, ", %s%s%s%s", i + 1 == nv ? "or " : "",
                              vals[i]->name, vals[i]->args ? " " : "",
                              vals[i]->args ? vals[i]->args : "");
    snprintf(err, errlen, "{%s}: unknown placeholder%s%s%s (an option name, %s)", name,
             sug ? "; did you mean {" : "", sug ? sug : "", sug ? "}?" : "", list);
    return -1;
}

/* Expand text into out; returns the number of bad placeholders (first message in err). */
static int expand(const char *text, const app_state *st, const char *readout,
                  const lesson_race_numbers *race, char *out, size_t n, char *err, size_t errlen)
{
    size_t u = 0;
    int bad = 0;
    for (const char *p = text; *p && u + 1 < n;) {
        const char *close = p[0] == '{' ? strchr(p, '}') : NULL;
        if (!close || close - p > 80) {
            out[u++] = *p++;
            continue;
        }
        char name[96], val[512], e[512];
        snprintf(name, sizeof name, "%.*s", (int)(close - p - 1), p + 1);
        if (placeholder(name, st, readout, race, val, sizeof val, e, sizeof e) < 0) {
            if (!bad++) snprintf(err, errlen, "%s", e);
            snprintf(val, sizeof val, "{%s}", name);
        }
        int w = snprintf(out + u, n - u, "%s", val);
        u += w > 0 ? (size_t)w : 0;
        if (u >= n) u = n - 1;
        p = close + 1;
    }
    out[u < n ? u : n - 1] = '\0';
    return bad;
}

void lesson_expand(const lesson_slide *s, const app_state *st, const char *readout, char *out,
                   size_t n)
{
    lesson_expand_race(s, st, readout, NULL, out, n);
}

void lesson_expand_race(const lesson_slide *s, const app_state *st, const char *readout,
                        const lesson_race_numbers *race, char *out, size_t n)
{
    char err[512];
    lesson_race_numbers pending = {0};
    if (s->action == LESSON_DO_RACE && !race) race = &pending;
    expand(s->caption, st, readout, s->action == LESSON_DO_RACE ? race : NULL, out, n, err,
           sizeof err);
}

/* ---- the view line ----------------------------------------------------------------------- */

/* Split like a shell: words separated by blanks, '...' and "..." quote. Returns the count or
 * -1 for an unterminated quote. Words point into buf. */
static int split_words(char *buf, char **words, int max)
{
    int n = 0;
    char *r = buf, *w = buf;
    while (*r) {
        while (*r == ' ' || *r == '\t') r++;
        if (!*r) break;
        if (n == max) return -2;
        words[n++] = w;
        while (*r && *r != ' ' && *r != '\t') {
            if (*r == '\'' || *r == '"') {
                char q = *r++;
                while (*r && *r != q) *w++ = *r++;
                if (!*r) return -1;
                r++;
            } else {
                *w++ = *r++;
            }
        }
        if (*r) r++;
        *w++ = '\0';
    }
    return n;
}

/* A --config path as a lesson writes it: as given, next to the lesson file, or "assets/..." in
 * pelab's assets folder (so shipped lessons work wherever pelab is installed). */
static void config_path(const char *lesson_path, const char *v, char *buf, size_t n)
{
    snprintf(buf, n, "%s", v);
    if (v[0] == '/' || is_file(v)) return;
    const char *slash = strrchr(lesson_path, '/');
    if (slash) {
        snprintf(buf, n, "%.*s/%s", (int)(slash - lesson_path), lesson_path, v);
        if (is_file(buf)) return;
    }
    char err[256];
    if (strncmp(v, "assets/", 7) == 0 && app_asset_path(v + 7, buf, n, err, sizeof err) == 0 &&
        is_file(buf))
        return;
    snprintf(buf, n, "%s", v);
}

static int parse_view(const char *lesson_path, const char *line, app_state *st, char *err,
                      size_t errlen)
{
    char buf[1024], cfg[1024];
    char *words[APP_CLI_MAX_ARGS];
    snprintf(buf, sizeof buf, "%s", line);
    int n = split_words(buf, words + 1, APP_CLI_MAX_ARGS - 2);
    if (n == -1) {
        snprintf(err, errlen, "view: a quote is not closed");
        return -1;
    }
    if (n < 0) {
        snprintf(err, errlen, "view: too many words (at most %d)", APP_CLI_MAX_ARGS - 2);
        return -1;
    }
    if (n == 0) {
        snprintf(err, errlen, "view: name a view and its options, e.g. 'view: rope --dim 8'");
        return -1;
    }
    for (int i = 1; i <= n; i++) {
        if (strcmp(words[i], "--config") == 0 && i < n) {
            config_path(lesson_path, words[i + 1], cfg, sizeof cfg);
            words[++i] = cfg;
        } else if (strncmp(words[i], "-o", 2) == 0 || strncmp(words[i], "--output", 8) == 0) {
            snprintf(err, errlen, "view: %s: a slide has no output file (the handout makes one)",
                     words[i]);
            return -1;
        }
    }
    app_state_default(st);
    if (words[1][0] == '-') {
        snprintf(err, errlen, "view: '%s': the line starts with the view's name (see `pelab list`)",
                 words[1]);
        return -1;
    }
    if (app_option_set(st, app_option_find("view"), words[1], err, errlen) < 0) return -1;
    words[1] = "export";
    app_cli_extra extra[] = {{.name = "config", .code = 'C'}};
    app_cli_args args;
    if (app_cli_parse(st, n, words + 1, extra, 1, &args, err, errlen) < 0) return -1;
    if (args.n_positional > 0) {
        snprintf(err, errlen, "view: unexpected word '%s' (one view, then options)",
                 args.positional[0]);
        return -1;
    }
    if (app_state_validate(st, err, errlen) < 0) return -1;
    /* what would fail only when the slide is shown: a model or a table that is not there */
    char path[1024];
    if (app_view_uses(app_view_at((size_t)st->view), "model")) {
        if (app_attn_model_path(st->attn.model_name, path, sizeof path, err, errlen) < 0) return -1;
        if (st->attn.compare[0] &&
            app_attn_model_path(st->attn.compare, path, sizeof path, err, errlen) < 0) {
            return -1;
        }
    }
    if (st->attn.data_path[0] && !is_file(st->attn.data_path)) {
        /* what it is, not "no such file" for /dev/zero or a folder (infile.h says) */
        if (pe_infile_check(st->attn.data_path, "--data", err, errlen) == PE_OK)
            snprintf(err, errlen, "--data %.400s: no such file", st->attn.data_path);
        return -1;
    }
    snprintf(st->command, sizeof st->command, "pelab export %s", line);
    return 0;
}

/* ---- the lessons' option group (lesson_opts.h, options/option_groups.h) ------------------- */

void app_lesson_opts_default(app_lesson_opts *o)
{
    /* a few seconds on two free cores: the curves have begun to part */
    o->race_steps = 50;
}

const app_option app_lesson_rows[] = {
    {APP_INT("race-steps", NULL,
             "lesson: steps of every scheme in a slide's race (do: race), 1..2000",
             lesson.race_steps, 1, APP_LESSON_RACE_MAX_STEPS)},
    {.name = NULL},
};

/* ---- the file ---------------------------------------------------------------------------- */

/* Problems are collected, then printed sorted by line: a slide's caption is checked when the
 * slide ends, after its try: and do: lines, yet a reader expects the list in file order. */
typedef struct problem_note {
    int line, seq;
    char *msg;
} problem_note;

typedef struct reader {
    const char *path;
    FILE *diag;
    int problems;
    problem_note *notes;
    size_t n_notes, cap_notes;
} reader;

static void problem(reader *r, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void problem(reader *r, int line, const char *fmt, ...)
{
    r->problems++;
    if (!r->diag) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->n_notes == r->cap_notes) {
        size_t cap = r->cap_notes ? 2 * r->cap_notes : 16;
        problem_note *nn = realloc(r->notes, cap * sizeof *nn);
        if (!nn) { /* no room to sort: say it now rather than lose it */
            fprintf(r->diag, "%s:%d: %s\n", r->path, line, msg);
            return;
        }
        r->notes = nn;
        r->cap_notes = cap;
    }
    char *copy = strdup(msg);
    if (!copy) {
        fprintf(r->diag, "%s:%d: %s\n", r->path, line, msg);
        return;
    }
    r->notes[r->n_notes] = (problem_note){line, (int)r->n_notes, copy};
    r->n_notes++;
}

static int note_cmp(const void *a, const void *b)
{
    const problem_note *x = a, *y = b;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Print the collected problems in line order (file-wide ones, line 0, first) and free them. */
static void flush_problems(reader *r)
{
    if (r->n_notes) qsort(r->notes, r->n_notes, sizeof *r->notes, note_cmp);
    for (size_t i = 0; i < r->n_notes; i++) {
        if (r->notes[i].line > 0)
            fprintf(r->diag, "%s:%d: %s\n", r->path, r->notes[i].line, r->notes[i].msg);
        else
            fprintf(r->diag, "%s: %s\n", r->path, r->notes[i].msg);
        free(r->notes[i].msg);
    }
    free(r->notes);
    r->notes = NULL;
    r->n_notes = r->cap_notes = 0;
}

/* Read the whole file, refusing what is not a lesson before parsing: too large, binary (a NUL
 * or invalid UTF-8), empty. Returns the text (malloc) or NULL after reporting. */
static char *read_text(reader *r)
{
    /* infile.h: the type (a FIFO nobody writes, /dev/zero, a folder) and the size are
     * checked before reading */
    char *buf = NULL, why[1200];
    size_t n = 0;
    int rc = pe_infile_read(r->path, "", LESSON_MAX_BYTES, &buf, &n, why, sizeof why);
    if (rc != PE_OK) {
        /* the message starts with the path, which problem() puts first already */
        size_t pl = strlen(r->path);
        const char *m = strncmp(why, r->path, pl) == 0 && why[pl] == ':' ? why + pl + 2 : why;
        if (strstr(m, "refused"))
            problem(r, 1,
                    "the file is larger than %d bytes: not a lesson (a lesson is a short text)",
                    LESSON_MAX_BYTES);
        else
            problem(r, 0, "%s", m);
        return NULL;
    }
    buf[n] = '\0';
    /* a UTF-8 byte order mark (editors on Windows write one) is no part of the text */
    if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
        memmove(buf, buf + 3, n - 2);
        n -= 3;
    }
    int line = 1;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)buf[i];
        /* RFC 3629 as textclean.c has it: no overlong forms, no surrogates, nothing past
         * U+10FFFF; and no noncharacters (U+FFFE, U+FDD0..), which no text may hold */
        int len = c ? text_utf8_len((const unsigned char *)buf + i, n - i) : 0;
        int ok = len > 0 && !text_is_nonchar((const unsigned char *)buf + i, (size_t)len);
        int ctl = c && (c < 0x20 || c == 0x7f) && c != '\n' && c != '\r' && c != '\t';
        if (!ok || ctl) { /* buf is read to say what is wrong, then freed */
            if (ctl)
                problem(r, line, "a control character (0x%02x at offset %zu): a lesson is text", c,
                        i);
            else if (c == 0xef && i + 2 < n && (unsigned char)buf[i + 1] == 0xbf &&
                     ((unsigned char)buf[i + 2] == 0xbe || (unsigned char)buf[i + 2] == 0xbf))
                problem(r, line, "a noncharacter (U+FFF%c at offset %zu): a lesson is text",
                        (unsigned char)buf[i + 2] == 0xbe ? 'E' : 'F', i);
            else if (len > 0)
                problem(r, line, "a noncharacter at offset %zu: a lesson is text", i);
            else {
                /* say which rule of UTF-8 the bytes break, when it is one of the classic ones */
                unsigned c1 = i + 1 < n ? (unsigned char)buf[i + 1] : 0;
                const char *kind =
                    c == 0xc0 || c == 0xc1 || (c == 0xe0 && c1 >= 0x80 && c1 < 0xa0) ||
                            (c == 0xf0 && c1 >= 0x80 && c1 < 0x90)
                        ? "an overlong UTF-8 form"
                    : c == 0xed && c1 >= 0xa0 && c1 <= 0xbf ? "a UTF-16 surrogate (U+D800..U+DFFF)"
                    : (c == 0xf4 && c1 >= 0x90) || (c >= 0xf5 && c <= 0xf7)
                        ? "a code point past U+10FFFF"
                        : "binary data";
                problem(r, line, "%s (byte 0x%02x at offset %zu): a lesson is UTF-8 text", kind, c,
                        i);
            }
            free(buf);
            return NULL;
        }
        if (c == '\n') line++;
        i += (size_t)len;
    }
    int blank = 1;
    for (size_t i = 0; i < n && blank; i++) blank = isspace((unsigned char)buf[i]) != 0;
    if (blank) {
        free(buf);
        problem(r, 1, "empty: a lesson needs a 'lesson: TITLE' line and at least one slide");
        return NULL;
    }
    return buf;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    size_t k = 0;
    while (isspace((unsigned char)s[k])) k++;
    if (k) memmove(s, s + k, n - k + 1);
}

/* Append continuation text to a field (joined with a space); 0 or -1 when it would not fit. */
static int append(char *dst, size_t cap, const char *text)
{
    size_t u = strlen(dst), t = strlen(text);
    if (u + 1 + t + 1 > cap) return -1;
    if (u) dst[u++] = ' ';
    memcpy(dst + u, text, t + 1);
    return 0;
}

static int set_field(reader *r, int line, const char *what, char *dst, size_t cap, const char *v)
{
    if (strlen(v) >= cap) {
        problem(r, line, "%s: %zu bytes, allowed at most %zu", what, strlen(v), cap - 1);
        return -1;
    }
    snprintf(dst, cap, "%s", v);
    return 0;
}

static void parse_try(reader *r, int line, lesson_slide *s, const char *v, lesson_key_fn key_bound)
{
    if (s->n_try == LESSON_MAX_TRY) {
        problem(r, line, "try: at most %d hints a slide", LESSON_MAX_TRY);
        return;
    }
    lesson_try *t = &s->tries[s->n_try];
    memset(t, 0, sizeof *t);
    const char *eq = strstr(v, " = ");
    if (!eq) {
        problem(r, line,
                "try: write 'try: KEYS = what they do' (e.g. 'try: b B = double or "
                "halve the base') or 'try: :option value = what it shows'");
        return;
    }
    /* keys longer than the field would be cut and the last one misread ("'Lef' is not a key
     * name" for ...Left): said as what it is */
    size_t klen = (size_t)(eq - v);
    const char *kv = v;
    while (klen && (*kv == ' ' || *kv == '\t')) kv++, klen--;
    while (klen && (kv[klen - 1] == ' ' || kv[klen - 1] == '\t')) klen--;
    if (klen >= sizeof t->keys) {
        problem(r, line, "try: the keys '%.30s...' are %zu bytes; at most %zu (a few keys)", kv,
                klen, sizeof t->keys - 1);
        return;
    }
    snprintf(t->keys, sizeof t->keys, "%.*s", (int)(eq - v), v);
    trim(t->keys);
    if (set_field(r, line, "try", t->what, sizeof t->what, eq + 3) < 0) return;
    trim(t->what);
    if (!t->keys[0] || !t->what[0]) {
        problem(r, line, "try: both the keys and what they do are needed ('KEYS = what')");
        return;
    }
    if (t->keys[0] == ':') { /* an option to type: checked against this slide's state */
        app_state trial = s->st;
        char err[512];
        if (app_option_command(&trial, t->keys + 1, err, sizeof err) < 0) {
            problem(r, line, "try: %s: %s", t->keys, err);
            return;
        }
        s->n_try++;
        return;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%s", t->keys);
    char *save = NULL;
    int bad = 0;
    for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        uint32_t key;
        const char *what;
        if (strcmp(w, "/") == 0 || strcmp(w, ",") == 0) continue; /* "b / B" reads well */
        if (lesson_key_parse(w, &key) < 0) {
            problem(r, line,
                    "try: '%s' is not a key name (one character, or Up Down Left Right PgUp "
                    "PgDn Home End Enter Esc Tab S-Tab Backspace F11 Space)",
                    w);
            bad = 1;
        } else if (lesson_key_reserved(key, &what)) {
            problem(r, line, "try: key '%s' belongs to the lesson here (%s); name another", w,
                    what);
            bad = 1;
        } else if (key_bound && !key_bound(&s->st, key)) {
            problem(r, line, "try: key '%s' does nothing in the %s view (? lists its keys)", w,
                    app_view_at((size_t)s->st.view)->name);
            bad = 1;
        } else if (t->n_key < 8) {
            t->key[t->n_key++] = key;
        }
    }
    if (!bad) s->n_try++;
}

/* panels: NAME... (names of lower-case letters, digits and '-'; whether the slide shows them
 * is lesson_check_panels' question) */
static void parse_panels(reader *r, int line, lesson_slide *s, const char *v)
{
    if (s->panels_line) {
        problem(r, line, "a second 'panels:' line in slide '%s'", s->title);
        return;
    }
    s->panels_line = line;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    int words = 0;
    for (char *w = strtok_r(buf, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
        words++;
        size_t n = strlen(w), ok = n > 0 && n < sizeof s->panels[0];
        for (size_t i = 0; i < n; i++)
            if (!((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= '0' && w[i] <= '9') || w[i] == '-'))
                ok = 0;
        if (!ok) {
            problem(r, line,
                    "panels: '%s' is not a panel name (lower-case letters, digits and '-', at "
                    "most %zu)",
                    w, sizeof s->panels[0] - 1);
            continue;
        }
        if (s->n_panels == LESSON_MAX_PANELS) {
            problem(r, line, "panels: more than %d names", LESSON_MAX_PANELS);
            return;
        }
        snprintf(s->panels[s->n_panels++], sizeof s->panels[0], "%s", w);
    }
    if (!words) problem(r, line, "panels: name the panels the caption refers to");
}

static void parse_do(reader *r, int line, lesson_slide *s, const char *v)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", v);
    char *words[LESSON_MAX_SWEEP + 3];
    int n = split_words(buf, words, LESSON_MAX_SWEEP + 2);
    const char *vname = app_view_at((size_t)s->st.view)->name;
    /* before "name an action": split_words says -2 for too many words, -1 for an open quote */
    if (n == -2 && strcmp(words[0], "sweep") == 0) {
        problem(r, line, "do: sweep takes at most %d values", LESSON_MAX_SWEEP);
        return;
    }
    if (n == -1) {
        problem(r, line, "do: a quote is not closed ('%s')", v);
        return;
    }
    /* the actions the views name (view order, each once): "spin, play" */
    char acts[256] = "";
    for (size_t i = 0, u = 0; i < app_view_count() && u < sizeof acts; i++) {
        const app_view_action *a = app_view_at(i)->action;
        size_t j = 0;
        while (a && j < i &&
               !(app_view_at(j)->action && strcmp(app_view_at(j)->action->name, a->name) == 0))
            j++;
        if (a && j == i) u += (size_t)snprintf(acts + u, sizeof acts - u, "%s, ", a->name);
    }
    if (n < 1) {
        problem(r, line, "do: name an action: %srace, or sweep OPTION V1 V2 ...", acts);
        return;
    }
    /* race: the lesson's own action (lesson_race.h), whatever the view; its one number is the
     * view line's --race-steps, so a slide's line says everything `r` resets */
    if (strcmp(words[0], "race") == 0) {
        if (n != 1) {
            problem(r, line,
                    "do: race takes no value ('%s'); set its steps on the view line: "
                    "--race-steps N (1..%d)",
                    v, APP_LESSON_RACE_MAX_STEPS);
            return;
        }
        s->action = LESSON_DO_RACE;
        return;
    }
    const app_view_action *act = n == 1 ? app_view_action_find(words[0]) : NULL;
    if (act) {
        const app_view_action *own = app_view_at((size_t)s->st.view)->action;
        if (!own || strcmp(own->name, act->name) != 0) {
            problem(r, line, "do: %s %s; this slide shows %s", act->name, act->what, vname);
            return;
        }
        s->action = LESSON_DO_VIEW;
        return;
    }
    if (strcmp(words[0], "sweep") == 0 && n >= 3) {
        const app_option *o = app_option_find(words[1]);
        if (!o) {
            const char *sug = app_option_suggest(words[1]);
            problem(r, line, "do: sweep '%s': unknown option%s%s%s", words[1],
                    sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
            return;
        }
        snprintf(s->sweep_opt, sizeof s->sweep_opt, "%s", o->name);
        s->n_sweep = 0;
        for (int i = 2; i < n; i++) {
            app_state trial = s->st;
            char err[512], cmd[128];
            snprintf(cmd, sizeof cmd, "%s %s", o->name, words[i]);
            if (strlen(words[i]) >= sizeof s->sweep_val[0] ||
                app_option_command(&trial, cmd, err, sizeof err) < 0) {
                problem(r, line, "do: sweep: %s", strlen(words[i]) >= 32 ? "value too long" : err);
                return;
            }
            /* and the view's own check, which export runs first (a value it refuses passed
             * --check and failed in the presenter, issue 28) */
            const app_view *sv = app_view_at((size_t)trial.view);
            if (sv->validate && sv->validate(&trial, err, sizeof err) < 0) {
                problem(r, line, "do: sweep %s %s: %s", o->name, words[i], err);
                return;
            }
            snprintf(s->sweep_val[s->n_sweep++], sizeof s->sweep_val[0], "%s", words[i]);
        }
        s->action = LESSON_DO_SWEEP;
        return;
    }
    if (n == -2 || (strcmp(words[0], "sweep") == 0 && n > 2)) {
        problem(r, line, "do: sweep takes at most %d values", LESSON_MAX_SWEEP);
        return;
    }
    problem(r, line, "do: '%s': allowed %srace, or sweep OPTION V1 V2 ... (at least one value)", v,
            acts);
}

/* view_ok in lesson_load: 0 no usable view line yet, 1 the view line is good, or after a bad
 * one the state the slide's other lines are checked against */
enum { VIEW_NAME_ONLY = 2, VIEW_UNKNOWN = 3 };

/* Checks that need the whole slide (the caption's placeholders, a caption at all). */
static void finish_slide(reader *r, lesson_slide *s, int view_ok, int caption_line)
{
    if (!s->view_args[0]) problem(r, s->line, "slide '%s' has no 'view:' line", s->title);
    if (!s->caption[0]) {
        problem(r, s->line, "slide '%s' has no caption (add 'caption: a few sentences')", s->title);
        return;
    }
    if (!view_ok) return;
    char out[4096], err[512];
    lesson_race_numbers pending = {0}; /* --check starts no race: its numbers are pending */
    if (expand(s->caption, &s->st, "", s->action == LESSON_DO_RACE ? &pending : NULL, out,
               sizeof out, err, sizeof err) > 0)
        problem(r, caption_line, "caption: %s", err);
    if (view_ok == VIEW_UNKNOWN) return;
    /* the models the slide shows load: a path that exists but is no checkpoint (/dev/zero, a
     * truncated file) passed --check and failed when presented (issue 28) */
    const app_view *v = app_view_at((size_t)s->st.view);
    if (app_view_uses(v, "model") && app_attn_check_model(s->st.attn.model_name, err, sizeof err))
        problem(r, s->line, "view: %s", err);
    if (app_view_uses(v, "compare") && s->st.attn.compare[0] &&
        app_attn_check_model(s->st.attn.compare, err, sizeof err))
        problem(r, s->line, "view: --compare%s", strncmp(err, "--model", 7) ? err : err + 7);
}

int lesson_load(lesson *l, const char *path, lesson_key_fn key_bound, FILE *diag)
{
    memset(l, 0, sizeof *l);
    reader r = {path, diag, 0, NULL, 0, 0};
    snprintf(l->path, sizeof l->path, "%s", path);
    char *text = read_text(&r);
    if (!text) {
        flush_problems(&r);
        return -1;
    }
    l->slides = calloc(LESSON_MAX_SLIDES, sizeof *l->slides);
    if (!l->slides) {
        free(text);
        problem(&r, 0, "out of memory");
        flush_problems(&r);
        return -1;
    }
    lesson_slide *s = NULL;
    char *last = NULL; /* the field a continuation line extends */
    size_t last_cap = 0;
    int view_ok = 0, caption_line = 0, title_line = 0, too_many = 0;
    char *save = NULL;
    int line = 0;
    for (char *p = text; p; p = save) {
        save = strchr(p, '\n');
        if (save) *save++ = '\0';
        line++;
        p[strcspn(p, "\r")] = '\0';
        if (p[0] == '#') continue;
        if (p[0] == ' ' || p[0] == '\t') {
            char v[4096];
            snprintf(v, sizeof v, "%s", p);
            trim(v);
            if (!v[0]) continue;
            if (!last)
                problem(&r, line,
                        "an indented line continues a caption or about; there is none "
                        "above");
            else if (append(last, last_cap, v) < 0)
                problem(&r, line, "the text is longer than %zu bytes", last_cap - 1);
            continue;
        }
        char v[4096];
        snprintf(v, sizeof v, "%s", p);
        trim(v);
        if (!v[0]) {
            last = NULL;
            continue;
        }
        char *colon = strchr(v, ':');
        char *key = v, *val = colon ? colon + 1 : NULL;
        if (colon) *colon = '\0';
        if (val) trim(val);
        static const char *const fields[] = {"lesson",  "about", "slide", "view",
                                             "caption", "try",   "do",    "panels"};
        int f = -1;
        for (int i = 0; colon && i < 8; i++)
            if (strcmp(key, fields[i]) == 0) f = i;
        if (f < 0) {
            const char *sug = pe_closest(key, fields, 8);
            problem(&r, line,
                    "'%s': not a lesson line%s%s%s (lines are 'field: value': lesson, "
                    "about, slide, view, caption, try, do, panels)",
                    colon ? key : v, sug ? "; did you mean '" : "", sug ? sug : "",
                    sug ? ":'?" : "");
            last = NULL;
            continue;
        }
        last = NULL;
        if (f <= 1) {
            if (s) {
                problem(&r, line, "'%s:' belongs before the first slide", fields[f]);
            } else if (f == 0) {
                if (l->title[0]) problem(&r, line, "a second 'lesson:' title (one per file)");
                title_line = line;
                if (set_field(&r, line, "lesson", l->title, sizeof l->title, val) == 0 && !val[0])
                    problem(&r, line, "lesson: the title is empty");
            } else if (set_field(&r, line, "about", l->about, sizeof l->about, val) == 0) {
                last = l->about;
                last_cap = sizeof l->about;
            }
            continue;
        }
        if (f == 2) {
            if (s) finish_slide(&r, s, view_ok, caption_line);
            if (l->n == LESSON_MAX_SLIDES) {
                if (!too_many++) problem(&r, line, "more than %d slides", LESSON_MAX_SLIDES);
                s = NULL;
                continue;
            }
            s = &l->slides[l->n++];
            s->line = line;
            view_ok = 0;
            caption_line = 0;
            app_state_default(&s->st);
            if (set_field(&r, line, "slide", s->title, sizeof s->title, val) == 0 && !val[0])
                problem(&r, line, "slide: the title is empty");
            continue;
        }
        if (!s) {
            if (!too_many) problem(&r, line, "'%s:' before the first 'slide:' line", fields[f]);
            continue;
        }
        char err[512];
        switch (f) {
        case 3:
            if (s->view_args[0]) {
                problem(&r, line, "a second 'view:' line in slide '%s'", s->title);
                break;
            }
            if (set_field(&r, line, "view", s->view_args, sizeof s->view_args, val) < 0) break;
            if (parse_view(path, val, &s->st, err, sizeof err) == 0) {
                view_ok = 1;
                break;
            }
            problem(&r, line, "%s", err);
            /* The slide's other lines are still checked, so one pass reports every problem:
             * against the named view with its defaults when the name is good (a bad option
             * value), else against the default state with no view's keys to check. */
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(val, " \t"), val);
            if (name[0] && name[0] != '-' && parse_view(path, name, &s->st, err, sizeof err) == 0) {
                view_ok = VIEW_NAME_ONLY;
            } else {
                app_state_default(&s->st);
                view_ok = VIEW_UNKNOWN;
            }
            break;
        case 4:
            if (s->caption[0]) {
                problem(&r, line, "a second 'caption:' in slide '%s' (indent to continue one)",
                        s->title);
                break;
            }
            caption_line = line;
            if (set_field(&r, line, "caption", s->caption, sizeof s->caption, val) == 0) {
                last = s->caption;
                last_cap = sizeof s->caption;
            }
            break;
        case 5:
            if (!view_ok) {
                problem(&r, line, "try: needs a valid 'view:' line above it");
                break;
            }
            parse_try(&r, line, s, val, view_ok == VIEW_UNKNOWN ? NULL : key_bound);
            break;
        case 6:
            if (!view_ok) {
                problem(&r, line, "do: needs a valid 'view:' line above it");
                break;
            }
            if (view_ok == VIEW_UNKNOWN) break; /* spin, play, sweep depend on the view */
            if (s->action != LESSON_DO_NONE) {
                problem(&r, line, "one 'do:' action a slide");
                break;
            }
            parse_do(&r, line, s, val);
            break;
        case 7:
            parse_panels(&r, line, s, val);
            break;
        }
    }
    if (s) finish_slide(&r, s, view_ok, caption_line);
    if (!l->title[0] && !title_line)
        problem(&r, 1, "no 'lesson: TITLE' line (the first line of a lesson names it)");
    if (l->n == 0) problem(&r, line, "no slides ('slide: TITLE', then view, caption)");
    free(text);
    flush_problems(&r);
    if (r.problems) {
        lesson_free(l);
        return r.problems;
    }
    return 0;
}

void lesson_free(lesson *l)
{
    free(l->slides);
    l->slides = NULL;
    l->n = 0;
}

void lesson_export_command(const lesson_slide *s, const char *out, char *buf, size_t n)
{
    snprintf(buf, n, "pelab export %s -o %s", s->view_args, out);
}

int lesson_wrap(const scene_target *t, const char *text, double size, double w,
                char (*lines)[LESSON_LINE], int max)
{
    int n = 0;
    const char *p = text;
    while (*p == ' ') p++;
    while (*p && n < max) {
        /* the longest run of whole words that fits; a word wider than the line is cut */
        size_t best = 0, k = 0, len = strlen(p);
        char buf[LESSON_LINE];
        for (;;) {
            size_t next = k;
            while (next < len && p[next] == ' ') next++;
            while (next < len && p[next] != ' ') next++;
            if (next == k || next >= LESSON_LINE) break;
            memcpy(buf, p, next);
            buf[next] = '\0';
            if (scene_text_width(t, buf, size) > w && best > 0) break;
            best = next;
            k = next;
            if (scene_text_width(t, buf, size) > w) break; /* one long word: cut below */
        }
        if (best == 0) best = len < LESSON_LINE - 1 ? len : LESSON_LINE - 1;
        /* a too-wide single word: keep the code points that fit */
        memcpy(buf, p, best);
        buf[best] = '\0';
        while (best > 1 && scene_text_width(t, buf, size) > w) {
            do best--;
            while (best > 1 && ((unsigned char)p[best] & 0xc0) == 0x80);
            buf[best] = '\0';
        }
        memcpy(lines[n], buf, best + 1);
        n++;
        p += best;
        while (*p == ' ') p++;
    }
    return n;
}
