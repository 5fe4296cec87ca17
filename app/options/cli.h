/* cli.h: argument parsing shared by the subcommands: every figure option from the option table
 * as a long option, plus a few per-command extras. */
#ifndef PELAB_APP_CLI_H
#define PELAB_APP_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "pelab_build.h"
#include "state.h"

#define PELAB_VERSION_STRING PELAB_VERSION

/* A command's own option: long name and the code it is reported with ('o' also gets -o).
 * "help" and the switches (flag set) take no argument; every other extra takes one. The
 * commands make theirs from their option rows (commands.h: app_command_parse). */
typedef struct app_cli_extra {
    const char *name;
    int code;
    int flag;        /* a switch: no value */
    char short_name; /* also -<short_name> (reported as code); 0: none */
} app_cli_extra;

#define APP_CLI_MAX_ARGS 64

typedef struct app_cli_args {
    int n;
    int code[APP_CLI_MAX_ARGS]; /* extras in command-line order */
    const char *val[APP_CLI_MAX_ARGS];
    int n_positional;
    const char *positional[APP_CLI_MAX_ARGS];
    int n_figure;        /* figure options applied to the state */
    const char *unknown; /* after a failure: the unknown option as written ("--nosuch"), or NULL */
    const char *suggest; /* and the closest name the command takes ("base"), or NULL */
} app_cli_args;

/* Parse argv[1..argc) (argv[0] is the command name): figure options are applied to st in order
 * (st NULL: the command takes none), extras are returned in args. An extra named "config" is
 * applied here, before every figure option wherever it stands (the caller has nothing to do for
 * it). Returns 0 or -1 with a message (unknown option with a suggestion, a missing value, a bad
 * value, a bad config). */
int app_cli_parse(app_state *st, int argc, char **argv, const app_cli_extra *extra, size_t n_extra,
                  app_cli_args *args, char *err, size_t errlen);
/* Print the figure options, one per line, with their help. */
void app_cli_print_options(FILE *fp);
/* Remember "pelab <argv...>" in st->command (the provenance written into exported files). */
void app_cli_record_command(app_state *st, int argc, char **argv, const char *cmd);
/* Apply a Hugging Face config.json to st (RoPE base, dims, heads, scaling). */
int app_cli_apply_config(app_state *st, const char *path, char *err, size_t errlen);

#endif
