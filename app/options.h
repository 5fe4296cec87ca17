/* options.h: every figure parameter, once. `pelab export --base 500000`, the explorer's
 * `:base 500000` and the `e` (print the equivalent command) key all go through this table, so
 * names, ranges and messages are the same everywhere. */
#ifndef PELAB_APP_OPTIONS_H
#define PELAB_APP_OPTIONS_H

#include <stddef.h>

#include "state.h"

typedef enum {
    APP_OPT_INT,    /* int field at off, in [lo, hi] */
    APP_OPT_DOUBLE, /* double field at off, in [lo, hi] (lo excluded when lo_open) */
    APP_OPT_CHOICE, /* int field at off, index into names */
    APP_OPT_CUSTOM, /* set/get functions */
} app_opt_kind;

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
    /* APP_OPT_CUSTOM: completion candidates (NULL-terminated) written into out (max n). */
    size_t (*choices)(const char **out, size_t n);
} app_option;

/* Apply one option by name ("--" not included). 0 or -1 with a message. */
int app_option_set(app_state *st, const app_option *o, const char *value, char *err, size_t errlen);
/* Current value of o as text. */
void app_option_get(const app_state *st, const app_option *o, char *buf, size_t n);
/* Completion candidates for o's value (NULL-terminated names for choices), count written. */
size_t app_option_choices(const app_option *o, const char **out, size_t n);

size_t app_option_count(void);
const app_option *app_option_at(size_t i);
/* By name or alias (exact); NULL when none. */
const app_option *app_option_find(const char *name);
/* Closest option name (for "did you mean"). */
const char *app_option_suggest(const char *name);

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
