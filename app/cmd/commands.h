/* commands.h: pelab's subcommands. Each command is one file of app/cmd/ holding its entry (an
 * app_command named app_command_<id>), its option rows and its run, plus one X(<id>) line in
 * command_list.h (tmux's cmd-*.c and git's builtin table are the models). Every command parses
 * through one parser over its rows (app_command_parse), and its --help, the man page and the
 * shell completions are generated from the same rows, so what a command accepts, what it
 * documents and what completes are one list. */
#ifndef PELAB_APP_COMMANDS_H
#define PELAB_APP_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

/* One of a command's own options (the figure options come from the option table, options.h). */
typedef struct app_cmd_opt {
    const char *name;  /* "output" */
    int code;          /* what app_command_parse reports it as in args->code */
    char short_name;   /* 'o' for -o, or 0 */
    const char *arg;   /* "FILE"; NULL: a switch, no value */
    const char *help;  /* one line, with the allowed values and the default */
    const char *files; /* the value is a file with this extension ("json"), "" any, "/" a folder,
                        * "lesson" a shipped lesson or a .lesson file; NULL: not a file */
    const char *const *choices; /* the values it takes (NULL-terminated), or NULL */
    /* or the values it takes from a table of the program, written into out (at most n) */
    size_t (*choices_fn)(const char **out, size_t n);
} app_cmd_opt;

typedef struct app_command {
    const char *name;                 /* "export"; "" for `pelab` alone (the terminal explorer) */
    const char *synopsis;             /* what follows the name: "VIEW [options] -o FILE" */
    const char *summary;              /* one line */
    int (*fn)(int argc, char **argv); /* argv[0] is the command; returns the exit status */
    int figure_options;               /* takes every option of the option table */
    const char *words;       /* what its other words are: "view", "model file", "lesson", "shell" */
    const app_cmd_opt *opts; /* its own options, ended by a row with name NULL; NULL: none */
    const char *notes;       /* prose that follows the options in --help and the man page */
} app_command;

/* The table (command_list.h), in the order of `pelab --help`. */
size_t app_command_count(void);
const app_command *app_command_at(size_t i);
/* By name ("" for the explorer); NULL when none. */
const app_command *app_command_find(const char *name);

/* Parse argv[1..argc) of command c over its rows, and over the figure options into st when c
 * takes them (st may be NULL otherwise). Every command takes --help (-h): its usage, generated
 * from the rows, goes to stdout. Returns 0 (parsed: args holds the rows' codes and values in
 * command-line order, and the other words), 1 (--help was answered: exit 0) or -1 (a usage
 * error, printed as one line "pelab CMD: ...": exit 2). */
int app_command_parse(const app_command *c, app_state *st, int argc, char **argv,
                      app_cli_args *args);
/* The usage of c as --help prints it. */
void app_command_usage(const app_command *c, FILE *fp);
/* The values of row o (its choices or choices_fn) into out (at most n); returns the count. */
size_t app_command_choices(const app_cmd_opt *o, const char **out, size_t n);
/* "pelab" or "pelab NAME": how messages name command c. */
const char *app_command_label(const app_command *c, char *buf, size_t n);

/* pelab's main: the command in argv[1], or the explorer. Returns the exit status. */
int app_main(int argc, char **argv);

/* The entries (command_list.h): app_command_<id>. */
#include "command_list.h"
#define APP_COMMAND_DECLARE(id) extern const app_command app_command_##id;
APP_COMMANDS(APP_COMMAND_DECLARE)
#undef APP_COMMAND_DECLARE

/* `pelab export`'s run, which tests drive directly (cmd_export.c). */
int app_cmd_export(int argc, char **argv);
/* `pelab export race ...` (cmd_export_race.c); argv[0] is "race". */
int app_cmd_export_race(int argc, char **argv);

#endif
