/* cli_model.h: every command's options gathered from the tables (its rows, commands.h, and the
 * option table, options.h), for the generators of the shell completions (completion.c) and the
 * man page (manpage.c). */
#ifndef PELAB_APP_CLI_MODEL_H
#define PELAB_APP_CLI_MODEL_H

#include <stddef.h>

#include "commands.h"

#define APP_CLI_MAX_OPTS    128
#define APP_CLI_MAX_CHOICES 64

typedef struct app_cli_opt {
    char name[40];
    char short_name; /* 'o' or 0 */
    const char *arg; /* "VALUE", "FILE"...; NULL: a flag */
    char help[320];
    const char *choices[APP_CLI_MAX_CHOICES]; /* the values it takes, when they are names */
    size_t n_choices;
    const char *files; /* its value may be a file with this extension; "" any; "/" a folder */
} app_cli_opt;

typedef struct app_cli_cmd {
    const app_command *cmd;
    app_cli_opt opts[APP_CLI_MAX_OPTS];
    size_t n;
    const char *words[APP_CLI_MAX_CHOICES]; /* what its other words complete to */
    size_t n_words;
    const char *word_files; /* or files with this extension (eval's models) */
    char **lessons;         /* the shipped lessons' names (words and values of "lesson") */
    int n_lessons;
} app_cli_cmd;

/* The options of command c (heap: the struct is large). NULL when out of memory. Free with
 * app_cli_model_free. */
app_cli_cmd *app_cli_model(const app_command *c);
void app_cli_model_free(app_cli_cmd *m);

/* Names that appear in words and values: the model schemes and the presets. */
extern const char *const app_cli_shells[]; /* NULL-terminated: bash zsh fish */

#endif
