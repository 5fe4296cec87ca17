/* options.h: every figure parameter, once. `pelab export --base 500000`, the explorer's
 * `:base 500000` and the `e` (print the equivalent command) key all go through this table, so
 * names, ranges and messages are the same everywhere. */
#ifndef PELAB_APP_OPTIONS_H
#define PELAB_APP_OPTIONS_H

#include <stddef.h>

#include "state.h"

#define APP_MAX_OPTIONS 128 /* rows in every group together */

typedef enum {
    APP_OPT_INT,    /* int field at off, in [lo, hi] */
    APP_OPT_DOUBLE, /* double field at off, in [lo, hi] (lo excluded when lo_open) */
    APP_OPT_CHOICE, /* int field at off, index into names */
    APP_OPT_CUSTOM, /* set/get functions */
} app_opt_kind;

/* How a key steps an option (the option's `keys`: the first key steps up, the second down). */
typedef enum {
    APP_STEP_NONE = 0, /* no key */
    APP_STEP_X2,       /* x2 / /2, kept inside [lo, hi] */
    APP_STEP_ADD,      /* +by / -by (by 0 = 1), kept inside [lo, hi] */
    APP_STEP_NEXT,     /* the next / previous choice that the state accepts, wrapping round */
    APP_STEP_CUSTOM,   /* step_num gives the new value; step_help says what it does */
} app_step_rule;

typedef enum { APP_SLIDER_NONE = 0, APP_SLIDER_LINEAR, APP_SLIDER_LOG } app_slider_scale;
typedef enum { APP_ROUND_AUTO = 0, APP_ROUND_EVEN, APP_ROUND_SIG3 } app_slider_round;

/* The window's slider for an option (scale NONE: none). Whole numbers for int options, an even
 * number or three significant digits when round says so, else 6 significant digits. */
typedef struct app_slider {
    app_slider_scale scale;
    double lo, hi;
    app_slider_round round;
    double (*hi_fn)(const app_state *st);   /* a range that follows the state (m < L); or NULL */
    double (*auto_fn)(const app_state *st); /* where the knob sits when the value is at_lo */
} app_slider;

/* How a row reads in a figure's subtitle (app_subtitle, views/common.c): the subtitle is the rows
 * the view's figure depends on (app_view.options) that apply as the state stands and say here
 * how they read; nothing (all zero): the row stays out of subtitles. */
typedef enum {
    APP_SUBF_NUM = 0, /* label=number written for people (fig_num: 10,000, 10⁶) */
    APP_SUBF_LEN,     /* label=context length as people write it (4096, 32K, 1M) */
    APP_SUBF_ID,      /* label=the number as it is, no separators (a seed) */
} app_sub_format;

typedef struct app_sub {
    const char *label; /* a number: "d" for "d=128" (the status line's label keeps its ASCII) */
    app_sub_format format;
    int digits; /* significant digits of APP_SUBF_NUM (0: 6) */
    /* a choice: the words value i reads as ("half-split pairs"); "" for nothing (scaling none) */
    const char *const *words;
    /* or the words the state gives ("rotary 0.5"); "" for nothing */
    void (*text)(const app_state *st, char *buf, size_t n);
    /* and only while this holds (a rotary encoding is drawn), beyond the row's applies; NULL:
     * whenever the row applies */
    int (*when)(const app_state *st);
} app_sub;

typedef struct app_option {
    const char *name;  /* long option name: "base" */
    const char *alias; /* short name for the ':' line ("d" for dim), or NULL */
    const char *help;  /* one line, with the allowed values */
    app_opt_kind kind;
    size_t off; /* offset of the field in app_state */
    double lo, hi;
    int lo_open;
    const char *const *names; /* APP_OPT_CHOICE: NULL-terminated names of values 0, 1, ... */
    /* APP_OPT_CUSTOM: parse and apply value; 0, or -1 with "--name value: why; allowed ...". */
    int (*set)(app_state *st, const char *value, char *err, size_t errlen);
    /* APP_OPT_CUSTOM: current value as text. */
    void (*get)(const app_state *st, char *buf, size_t n);
    /* APP_OPT_CUSTOM with a numeric value (or NULL): read and set it as a number; set_num
     * checks like set, 0 or -1 with the same message. */
    double (*get_num)(const app_state *st);
    int (*set_num)(app_state *st, double v, char *err, size_t errlen);
    /* APP_OPT_CUSTOM: completion candidates (NULL-terminated) written into out (max n). */
    size_t (*choices)(const char **out, size_t n);
    /* ---- what the surfaces make of it (status line, keys, sliders, help, man page) ---- */
    const char *label; /* status-line label ("d" for dim); NULL = the name */
    const char *at_lo; /* the value lo means something else and reads as this ("auto") */
    /* The number the figure uses while the value is lo (the RoPE view's m = 3 for --pos auto):
     * the status line and the slider show it before at_lo, "m=3 (auto)"; NULL: at_lo alone. */
    double (*auto_value)(const app_state *st);
    const char *keys; /* the key stepping up, then the one stepping down ("bB"); NULL = none */
    app_step_rule step;
    double by; /* APP_STEP_ADD */
    /* APP_STEP_CUSTOM (of a numeric option): the value one step in dir (+1/-1) from the current
     * one, which the key sets as a number (--head's "all" is the number -1) */
    double (*step_num)(const app_state *st, int dir);
    const char *step_help; /* what a step does, for help ("gentler / steeper"); NULL: the rule's */
    /* after a key stepped this option: bring what depends on it back in range (or NULL) */
    void (*clamp)(app_state *st);
    app_slider slider;
    /* Whether it applies to the figure as the state stands (the rope model's base only while a
     * rope model is shown); NULL: always. A view's status line and sliders leave out the rows
     * that do not apply. */
    int (*applies)(const app_state *st);
    int everywhere;    /* not a figure parameter: its keys work in every view (theme) */
    const char *files; /* completion: the value may be a file with this extension ("csv") */
    app_sub sub;       /* how it reads in a figure's subtitle; all zero: not there */
} app_option;

/* A table row begins with one of these; the surfaces' fields follow in the row itself:
 *   {APP_INT("dim", "d", "dimension d", p.dim, 1, 65536), .keys = "dD", .step = APP_STEP_X2}, */
#define APP_INT(n, a, h, f, l, u)                                                                  \
    .name = n, .alias = a, .help = h, .kind = APP_OPT_INT, .off = offsetof(app_state, f), .lo = l, \
    .hi = u
#define APP_DBL(n, a, h, f, l, u, open)                                                            \
    .name = n, .alias = a, .help = h, .kind = APP_OPT_DOUBLE, .off = offsetof(app_state, f),       \
    .lo = l, .hi = u, .lo_open = open
#define APP_CHO(n, a, h, f, ch)                                                                    \
    .name = n, .alias = a, .help = h, .kind = APP_OPT_CHOICE, .off = offsetof(app_state, f),       \
    .names = ch
#define APP_CUS(n, a, h, s, g, c)                                                                  \
    .name = n, .alias = a, .help = h, .kind = APP_OPT_CUSTOM, .set = s, .get = g, .choices = c
#define APP_LIN(l, u) .slider = {APP_SLIDER_LINEAR, l, u, APP_ROUND_AUTO, NULL, NULL}
#define APP_LOG(l, u) .slider = {APP_SLIDER_LOG, l, u, APP_ROUND_AUTO, NULL, NULL}

/* Apply one option by name ("--" not included). 0 or -1 with a message. */
int app_option_set(app_state *st, const app_option *o, const char *value, char *err, size_t errlen);
/* Current value of o as text. */
void app_option_get(const app_state *st, const app_option *o, char *buf, size_t n);
/* Options are numbers: an int or double option (or a custom one with get_num/set_num) is read
 * and set as a double, so a key step or a slider never prints a value and parses it back.
 * app_option_numeric says whether o is one; get_num returns 0 and the value, or -1 (not a
 * number); set_num checks the value as the text would be checked (whole, in range) and returns
 * 0 or -1 with the message ("--dim 3.5: not a whole number (allowed 1..65536)"); add and
 * multiply step from the current value. Only o changes: the whole state is checked by
 * app_option_apply_value. */
int app_option_numeric(const app_option *o);
/* v rounded to digits significant digits as a number (the double nearest the decimal, as
 * strtod of "%.<digits>g" would give, without the text). */
double app_round_sig(double v, int digits);
int app_option_get_num(const app_state *st, const app_option *o, double *v);
int app_option_set_num(app_state *st, const app_option *o, double v, char *err, size_t errlen);
int app_option_add(app_state *st, const app_option *o, double dv, char *err, size_t errlen);
int app_option_multiply(app_state *st, const app_option *o, double f, char *err, size_t errlen);
/* Set o to v when the whole state then holds (o's clamp first, when keep_in_range); msg gets
 * "name = value" or why not. 0 or -1. */
int app_option_apply_value(app_state *st, const app_option *o, double v, int keep_in_range,
                           char *msg, size_t n);
/* Completion candidates for o's value (NULL-terminated names for choices), count written. */
size_t app_option_choices(const app_option *o, const char **out, size_t n);

/* --config FILE: start st from the file: the rope parameters of its layer kind (st->layer_type,
 * else the full-attention one), L0, the target context when it is not factor x L0, the figure's
 * L kept; names what was read but not modelled in one line on stderr. 0, or -1 with err. */
int app_config_apply(app_state *st, const char *path, char *err, size_t errlen);

/* An option group (option_groups.h): its rows, and where its storage lies in app_state (size 0:
 * its rows address fields the state or an earlier group holds). */
typedef struct app_option_group {
    const char *name;       /* the storage's field in app_state ("decay"); "" for none */
    const app_option *rows; /* ended by a row with name NULL */
    size_t off, size;
} app_option_group;

size_t app_option_group_count(void);
const app_option_group *app_option_group_at(size_t i);

/* Every option: the groups' rows, in the list's order. */
size_t app_option_count(void);
const app_option *app_option_at(size_t i);
/* By name or alias (exact); NULL when none. */
const app_option *app_option_find(const char *name);
/* Closest option name (for "did you mean"). */
const char *app_option_suggest(const char *name);

/* The value as the status line shows it: the text of get, at_lo for the value lo, long text cut
 * and quoted. */
void app_option_show(const app_state *st, const app_option *o, char *buf, size_t n);
/* One key step of o in dir (+1/-1): a number (x2, +by, step_num) set as a number, a choice as
 * its index (--head's "all" is -1); a name or path (--pe, --cmap, a model) steps by text. 0 with
 * "name = value" in msg, or -1 with why not. */
int app_option_step(app_state *st, const app_option *o, int dir, char *msg, size_t n);
/* What a step does, for help: "x2 / /2", "+1 / -1", "next / previous". */
const char *app_option_step_help(const app_option *o);
/* Set option `name` to value through the ':' path; 0 with "name = value" in msg, or -1 with the
 * error there. */
int app_option_apply(app_state *st, const char *name, const char *value, char *msg, size_t n);
/* The same for a number (app_option_apply_value); -1 "--name: not a number" for an option that
 * is not one (no value goes through text on its way to the state). */
int app_option_apply_num(app_state *st, const char *name, double v, char *msg, size_t n);

/* Apply "name value" from the explorer's ':' line (also "name=value"). Returns 0 or -1 with a
 * message. Validates the resulting state as a whole (app_state_validate) and leaves st unchanged
 * when anything is wrong. */
int app_option_command(app_state *st, const char *line, char *err, size_t errlen);

/* Validate the whole state for the current encoding and view (before any work). */
int app_state_validate(const app_state *st, char *err, size_t errlen);

/* The `pelab export` command line that reproduces the current figure (only options that differ
 * from the defaults). */
void app_export_command(const app_state *st, const char *out_path, char *buf, size_t n);

/* Strict number parsing: the whole string, finite, in range. Messages name --opt and value. */
int app_parse_int(const char *opt, const char *v, long lo, long hi, long *out, char *err,
                  size_t errlen);
int app_parse_double(const char *opt, const char *v, double lo, double hi, int lo_open, double *out,
                     char *err, size_t errlen);

#endif
