/* commands.c: the command table (command_list.h), the one parser every command uses, the usage
 * generated from a command's rows, and pelab's main. Its only knowledge of a command is the
 * entry the command's own file defines. */
#include "commands.h"

#include <string.h>

#include "options.h"
#include "views.h"

#define APP_COMMAND_ENTRY(id) &app_command_##id,
static const app_command *const commands[] = {APP_COMMANDS(APP_COMMAND_ENTRY)};
#undef APP_COMMAND_ENTRY

size_t app_command_count(void)
{
    return sizeof commands / sizeof commands[0];
}

const app_command *app_command_at(size_t i)
{
    return i < app_command_count() ? commands[i] : NULL;
}

const app_command *app_command_find(const char *name)
{
    for (size_t i = 0; i < app_command_count(); i++)
        if (strcmp(commands[i]->name, name) == 0) return commands[i];
    return NULL;
}

const char *app_command_label(const app_command *c, char *buf, size_t n)
{
    snprintf(buf, n, "pelab%s%s", c->name[0] ? " " : "", c->name);
    return buf;
}

size_t app_command_choices(const app_cmd_opt *o, const char **out, size_t n)
{
    if (o->choices_fn) return o->choices_fn(out, n);
    size_t k = 0;
    for (; o->choices && o->choices[k] && k < n; k++) out[k] = o->choices[k];
    return k;
}

#define MAX_ROWS 48

/* A command's rows as the parser's extras; --help is every command's. */
static size_t extras_of(const app_command *c, app_cli_extra *out, size_t max)
{
    size_t n = 0;
    int help = 0;
    for (const app_cmd_opt *o = c->opts; o && o->name && n + 1 < max; o++) {
        out[n++] = (app_cli_extra){o->name, o->code, o->arg == NULL, o->short_name};
        help |= strcmp(o->name, "help") == 0;
    }
    if (!help) out[n++] = (app_cli_extra){"help", '?', 1, 0};
    return n;
}

int app_command_parse(const app_command *c, app_state *st, int argc, char **argv,
                      app_cli_args *args)
{
    app_cli_extra extra[MAX_ROWS];
    size_t n_extra = extras_of(c, extra, MAX_ROWS);
    char err[1024], me[64];
    app_command_label(c, me, sizeof me);
    if (app_cli_parse(c->figure_options ? st : NULL, argc, argv, extra, n_extra, args, err,
                      sizeof err) < 0) {
        if (args->unknown) {
            /* what is allowed: a short list is named in the line; a long one (the figure
             * options) is --help's */
            char allowed[512] = "";
            size_t len = 0, rows = 0;
            for (const app_cmd_opt *o = c->opts; o && o->name; o++) rows++;
            if (!c->figure_options && rows <= 10) {
                for (const app_cmd_opt *o = c->opts; o && o->name && len < sizeof allowed; o++)
                    len += (size_t)snprintf(allowed + len, sizeof allowed - len, "%s--%s%s%s",
                                            len ? ", " : "allowed ", o->name, o->arg ? " " : "",
                                            o->arg ? o->arg : "");
            }
            if (!allowed[0]) snprintf(allowed, sizeof allowed, "%s --help lists them", me);
            fprintf(stderr, "%s: unknown option %s%s%s%s (%s)\n", me, args->unknown,
                    args->suggest ? "; did you mean --" : "", args->suggest ? args->suggest : "",
                    args->suggest ? "?" : "", allowed);
        } else
            fprintf(stderr, "%s: %s\n", me, err);
        return -1;
    }
    for (int i = 0; i < args->n; i++)
        if (args->code[i] == '?') {
            app_command_usage(c, stdout);
            return 1;
        }
    return 0;
}

void app_command_usage(const app_command *c, FILE *fp)
{
    char me[64];
    app_command_label(c, me, sizeof me);
    fprintf(fp, "usage: %s%s%s\n  %s\n", me, c->synopsis[0] ? " " : "", c->synopsis, c->summary);
    int help = 0;
    for (const app_cmd_opt *o = c->opts; o && o->name; o++) {
        char head[64];
        if (o->short_name)
            snprintf(head, sizeof head, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
        else
            snprintf(head, sizeof head, "--%s%s%s", o->name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
        fprintf(fp, "  %-24s %s\n", head, o->help);
        const char *v[64];
        size_t nv = app_command_choices(o, v, 64);
        if (nv) {
            fprintf(fp, "  %-24s values:", "");
            for (size_t k = 0; k < nv; k++) fprintf(fp, " %s", v[k]);
            fputc('\n', fp);
        }
        help |= strcmp(o->name, "help") == 0;
    }
    if (!help) fprintf(fp, "  %-24s %s\n", "-h, --help", "this usage");
    if (c->notes) fprintf(fp, "%s\n", c->notes);
    if (c->figure_options) app_cli_print_options(fp);
}

/* ---- help and version: the table and the build ------------------------------------------- */

static void usage(FILE *fp)
{
    fprintf(fp, "pelab %s: a position-embedding lab\nusage:\n", PELAB_VERSION_STRING);
    for (size_t i = 0; i < app_command_count(); i++) {
        const app_command *c = commands[i];
        char head[96];
        snprintf(head, sizeof head, "pelab%s%s %s", c->name[0] ? " " : "", c->name, c->synopsis);
        fprintf(fp, "  %-40s %s\n", head, c->summary);
    }
    fprintf(fp, "`pelab export --help` lists every figure option; `man pelab` has it all.\n");
}

/* The words of a command that takes none: one usage line for the first. */
static int no_words(const app_command *c, int argc, char **argv)
{
    app_cli_args args;
    int rc = app_command_parse(c, NULL, argc, argv, &args);
    if (rc != 0) return rc > 0 ? 0 : 2;
    if (args.n_positional > 0) {
        fprintf(stderr, "pelab %s: takes no arguments (got '%s')\n", c->name, args.positional[0]);
        return 2;
    }
    return -1;
}

static int cmd_help(int argc, char **argv)
{
    int rc = no_words(&app_command_help, argc, argv);
    if (rc >= 0) return rc;
    usage(stdout);
    return 0;
}

static int cmd_version(int argc, char **argv)
{
    int rc = no_words(&app_command_version, argc, argv);
    if (rc >= 0) return rc;
    printf("pelab %s\n", PELAB_VERSION_STRING);
    return 0;
}

const app_command app_command_help = {
    .name = "help", .synopsis = "", .summary = "this summary (also --help)", .fn = cmd_help};
const app_command app_command_version = {.name = "version",
                                         .synopsis = "",
                                         .summary = "the version (also --version)",
                                         .fn = cmd_version};

int app_main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (!cmd || cmd[0] == '-') {
        if (cmd && (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)) return cmd_help(1, 0);
        if (cmd && strcmp(cmd, "--version") == 0) return cmd_version(1, 0);
        return app_command_explore.fn(argc, argv);
    }
    if (strcmp(cmd, "tui") == 0) return app_command_explore.fn(argc - 1, argv + 1);
    const app_command *c = app_command_find(cmd);
    if (c && c->name[0]) return c->fn(argc - 1, argv + 1); /* `pelab ''` is no command */
    /* a view name starts the explorer on it: `pelab rope` */
    if (app_view_find(cmd) >= 0) return app_command_explore.fn(argc, argv);
    const char *names[sizeof commands / sizeof commands[0]];
    size_t n = 0;
    for (size_t i = 0; i < app_command_count(); i++)
        if (commands[i]->name[0]) names[n++] = commands[i]->name;
    const char *sug = pe_closest(cmd, names, n);
    fprintf(stderr, "pelab: unknown command '%s'%s%s%s (pelab --help lists them)\n", cmd,
            sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
    return 2;
}
