/* cli.c: getopt_long over the option table. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define CODE_BASE 1000

static int parse_pass(app_state *st, int argc, char **argv, const app_cli_extra *extra,
                      size_t n_extra, app_cli_args *args, char *err, size_t errlen)
{
    size_t nopt = st ? app_option_count() : 0;
    struct option *lo = calloc(nopt + n_extra + 1, sizeof *lo);
    if (!lo) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char shortopts[64] = ":";
    for (size_t i = 0; i < nopt; i++)
        lo[i] =
            (struct option){app_option_at(i)->name, required_argument, NULL, CODE_BASE + (int)i};
    for (size_t i = 0; i < n_extra; i++) {
        int help = strcmp(extra[i].name, "help") == 0;
        /* getopt returns '?' for an error, so help gets a code of its own here and is
         * reported to the caller as '?' */
        lo[nopt + i] =
            (struct option){extra[i].name, extra[i].flag || help ? no_argument : required_argument,
                            NULL, help ? 'h' : extra[i].code};
        char sc = extra[i].short_name ? extra[i].short_name : extra[i].code == 'o' ? 'o' : 0;
        if (sc && !help && strlen(shortopts) + 2 < sizeof shortopts) {
            size_t k = strlen(shortopts);
            shortopts[k++] = sc;
            if (!extra[i].flag) shortopts[k++] = ':';
            shortopts[k] = '\0';
        }
        if (help) strcat(shortopts, "h");
    }
    memset(args, 0, sizeof *args);
    int rc = 0;
    optind = 0; /* glibc: a full reset, so tests and the bench may parse more than once */
    opterr = 0;
    for (;;) {
        int idx = -1;
        int c = getopt_long(argc, argv, shortopts, lo, &idx);
        if (c == -1) break;
        /* getopt_long takes any unambiguous prefix of a name ("--head" for --heads); a command
         * accepts exactly the names its rows declare, so a prefix is an unknown option */
        const char *typed = NULL;
        if (idx >= 0 && c != '?' && c != ':') {
            typed = optarg && optind >= 2 && optarg == argv[optind - 1] ? argv[optind - 2]
                                                                        : argv[optind - 1];
            size_t tl = strcspn(typed + 2, "=");
            if (strlen(lo[idx].name) != tl || strncmp(typed + 2, lo[idx].name, tl) != 0) c = '?';
        }
        if (c == '?' || c == ':') {
            const char *bad = typed ? typed : argv[optind - 1];
            if (c == ':') {
                snprintf(err, errlen, "%s needs a value", bad);
            } else {
                const char *name = bad;
                while (*name == '-') name++;
                char base[128];
                snprintf(base, sizeof base, "%s", name);
                base[strcspn(base, "=")] = '\0';
                /* the closest of every name this command takes, its own included */
                const char **names = calloc(nopt + n_extra, sizeof *names);
                const char *sug = NULL;
                if (names) {
                    for (size_t i = 0; i < nopt + n_extra; i++) names[i] = lo[i].name;
                    sug = pe_closest(base, names, nopt + n_extra);
                    free(names);
                }
                snprintf(err, errlen, "%s: unknown option%s%s%s", bad,
                         sug ? "; did you mean --" : "", sug ? sug : "", sug ? "?" : "");
                args->unknown = bad;
                args->suggest = sug;
            }
            rc = -1;
            break;
        }
        if (c == 'h') c = '?';
        for (size_t i = 0; idx < 0 && i < n_extra; i++) /* -x reports its row's code */
            if (extra[i].short_name && c == extra[i].short_name) c = extra[i].code;
        if (c >= CODE_BASE && c < CODE_BASE + (int)nopt) {
            if (app_option_set(st, app_option_at((size_t)(c - CODE_BASE)), optarg, err, errlen) <
                0) {
                rc = -1;
                break;
            }
            args->n_figure++;
            continue;
        }
        if (args->n >= APP_CLI_MAX_ARGS) {
            snprintf(err, errlen, "too many options (at most %d)", APP_CLI_MAX_ARGS);
            rc = -1;
            break;
        }
        args->code[args->n] = c;
        args->val[args->n] = optarg;
        args->n++;
    }
    if (rc == 0)
        for (int i = optind; i < argc && args->n_positional < APP_CLI_MAX_ARGS; i++)
            args->positional[args->n_positional++] = argv[i];
    free(lo);
    return rc;
}

/* A "config" extra sets the starting point and the other options refine it, whatever their
 * order: `--config llama.json --factor 16` and `--factor 16 --config llama.json` mean the same.
 * So a command line with --config is parsed twice: once to find the file, then again over the
 * state the file gives. */
int app_cli_parse(app_state *st, int argc, char **argv, const app_cli_extra *extra, size_t n_extra,
                  app_cli_args *args, char *err, size_t errlen)
{
    if (!st) return parse_pass(NULL, argc, argv, extra, n_extra, args, err, errlen);
    app_state start = *st;
    if (parse_pass(st, argc, argv, extra, n_extra, args, err, errlen) < 0) return -1;
    int config_code = 0;
    for (size_t i = 0; i < n_extra; i++)
        if (strcmp(extra[i].name, "config") == 0) config_code = extra[i].code;
    const char *config = NULL;
    for (int i = 0; config_code && i < args->n; i++)
        if (args->code[i] == config_code) config = args->val[i]; /* the last one wins */
    if (!config) {
        if (st->layer_type[0] && !st->config_path[0]) {
            snprintf(err, errlen,
                     "--layer-type %s: layer types come from a model; give --config FILE too",
                     st->layer_type);
            return -1;
        }
        return 0;
    }
    char layer[sizeof st->layer_type];
    memcpy(layer, st->layer_type, sizeof layer); /* asked for anywhere on the line */
    *st = start;
    memcpy(st->layer_type, layer, sizeof layer);
    if (app_cli_apply_config(st, config, err, errlen) < 0) return -1;
    return parse_pass(st, argc, argv, extra, n_extra, args, err, errlen);
}

void app_cli_print_options(FILE *fp)
{
    fprintf(fp, "figure options (the explorer's ':' line takes the same names):\n");
    for (size_t i = 0; i < app_option_count(); i++) {
        const app_option *o = app_option_at(i);
        char name[48];
        snprintf(name, sizeof name, "--%s%s%s", o->name, o->alias ? ", :" : "",
                 o->alias ? o->alias : "");
        fprintf(fp, "  %-24s %s\n", name, o->help);
    }
}

void app_cli_record_command(app_state *st, int argc, char **argv, const char *cmd)
{
    size_t used = (size_t)snprintf(st->command, sizeof st->command, "pelab %s", cmd);
    for (int i = 1; i < argc && used < sizeof st->command; i++)
        used += (size_t)snprintf(st->command + used, sizeof st->command - used, " %s", argv[i]);
}

int app_cli_apply_config(app_state *st, const char *path, char *err, size_t errlen)
{
    return app_config_apply(st, path, err, errlen);
}
