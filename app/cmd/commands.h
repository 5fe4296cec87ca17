/* commands.h: pelab's subcommands in one table. main() dispatches through it, and `pelab --help`,
 * the man page and the shell completions are generated from it and the option table
 * (options.h), so a command or an option added in one place shows up everywhere. */
#ifndef PELAB_APP_COMMANDS_H
#define PELAB_APP_COMMANDS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* One of a command's own options (the figure options come from the option table). */
typedef struct app_cmd_opt {
    const char *name; /* "output" */
    int code;         /* what app_cli_parse reports it as (cli.h); 'o' also gets -o */
    char short_name;  /* 'o', or 0 */
    const char *arg;  /* "FILE"; NULL: a flag */
    const char *help;
    const char *files; /* the value is a file with this extension ("json"), "" any; NULL none */
    const char *const *choices; /* the values it takes (NULL-terminated), or NULL */
} app_cmd_opt;

typedef struct app_command {
    const char *name;                 /* "export"; "" for `pelab` alone (the terminal explorer) */
    const char *synopsis;             /* what follows the name: "VIEW [options] -o FILE" */
    const char *summary;              /* one line */
    int (*fn)(int argc, char **argv); /* argv[0] is the command; returns the exit status */
    int figure_options;               /* takes every option of the option table */
    const char *words;            /* what its other words are: "view", "model file", NULL (none) */
    const app_cmd_opt *opts;      /* its own options, ended by name NULL; or NULL */
    const struct option *getopts; /* or the getopt table it parses with (train, eval) */
    void (*usage)(FILE *fp);      /* its --help text when it has its own (train, eval) */
} app_command;

size_t app_command_count(void);
const app_command *app_command_at(size_t i);
/* By name ("" for the explorer); NULL when none. */
const app_command *app_command_find(const char *name);

/* The command's own options as app_cli_parse's extras (cli.h); returns the count. */
struct app_cli_extra;
size_t app_command_extras(const app_command *c, struct app_cli_extra *out, size_t max);

/* pelab's main: the command in argv[1], or the explorer. Returns the exit status. */
int app_main(int argc, char **argv);

/* `pelab completion bash|zsh|fish` and `pelab manpage` (completion.c, manpage.c). */
int app_cmd_completion(int argc, char **argv);
int app_cmd_manpage(int argc, char **argv);

#endif
