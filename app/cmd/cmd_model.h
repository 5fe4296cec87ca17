/* cmd_model.h: what the model commands lend others: saving a checkpoint, as `pelab train` does
 * (cmd_model.c; tests save with it). --ids is read by app_ids_parse (measures.h). */
#ifndef PELAB_APP_CMD_MODEL_H
#define PELAB_APP_CMD_MODEL_H

#include <stdio.h>

/* `pelab eval`'s rows (cmd_model.c): the built-in models' and, with --model M --text FILE, a
 * real checkpoint's (cmd_eval_lm.c), in one table and one parse. */
enum {
    APP_EVAL_EXTRA = 256, /* both */
    APP_EVAL_THREADS,
    APP_EVAL_TOKENS, /* the built-in models */
    APP_EVAL_BIN,
    APP_EVAL_STORY,
    APP_EVAL_MODEL, /* a real checkpoint */
    APP_EVAL_TOK,
    APP_EVAL_TEXT,
    APP_EVAL_CTX,
    APP_EVAL_SCALING,
    APP_EVAL_FACTOR,
    APP_EVAL_ORIG,
    APP_EVAL_WINDOWS,
    APP_EVAL_FORCE, /* both */
    APP_EVAL_HELP,
};
/* "--tokens" for a row's code. */
const char *app_eval_row_name(int code);
/* `pelab eval --model M --text FILE` over its parsed rows (cmd_eval_lm.c); argv is recorded in
 * the CSV's header. Returns the exit status. */
struct app_cli_args;
int app_eval_lm_run(const struct app_cli_args *args, int argc, char **argv);

typedef struct model model;
/* Save a checkpoint through the output module (render/outfile.c): a unique temporary renamed
 * into place, a link's target replaced, a device written directly. Returns 0 or -1 with
 * "-o PATH: <reason>" in err. */
int app_model_save(model *m, const char *path, char *err, size_t errlen);

/* train's parsers and checks, lent to pelab race (cmd_race.c): the same messages, "pelab CMD:
 * --OPT VALUE: expected ..." on stderr and -1 on a bad value. */
#include <stdint.h>
int app_model_parse_int(const char *cmd, const char *opt, const char *s, long lo, long hi,
                        int *out);
int app_model_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out);
int app_model_parse_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                           double *out);
/* The story grammar's folder: given, or the shipped assets/story. -1 after a message. */
int app_model_story_dir(const char *given, char *buf, size_t n);
/* An existing file at path must start with one of magic's '|'-separated beginnings. */
int app_model_check_contents(const char *cmd, const char *path, const char *magic,
                             const char *what);
/* s with control characters written out, for standard output. */
const char *app_model_shown(const char *s, char *buf, size_t n);

#endif
