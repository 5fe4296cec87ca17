/* main.c: pelab's subcommands. Each is a function taking (argc, argv) with argv[0] the command,
 * returning the exit status: 0 fine, 1 runtime error, 2 usage error. */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_model.h"
#include "colormap.h"
#include "frontend.h"
#include "export.h"
#include "lesson.h"
#include "views.h"

int app_cmd_bench(int argc, char **argv);

static int cmd_list(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "pelab list: takes no arguments\n");
        return 2;
    }
    /* one name column for the three tables: the longest name of any, plus two spaces */
    size_t w = 0;
    for (size_t i = 0; i < pe_encoding_count(); i++)
        if (strlen(pe_encoding_at(i)->name) > w) w = strlen(pe_encoding_at(i)->name);
    for (size_t i = 0; i < app_view_count(); i++)
        if (strlen(app_view_at(i)->name) > w) w = strlen(app_view_at(i)->name);
    for (size_t i = 0; i < cmap_count(); i++)
        if (strlen(cmap_at(i)->name) > w) w = strlen(cmap_at(i)->name);
    int nw = (int)w + 2;
    printf("encodings (--pe NAME):\n");
    for (size_t i = 0; i < pe_encoding_count(); i++) {
        const pe_encoding *e = pe_encoding_at(i);
        char acts[64] = "";
        if (e->acts & PE_ACTS_INPUT) strcat(acts, "input ");
        if (e->acts & PE_ACTS_LOGITS) strcat(acts, "logits ");
        if (e->acts & PE_ACTS_QK) strcat(acts, "q,k ");
        if (!e->acts) strcat(acts, "nothing ");
        acts[strlen(acts) - 1] = '\0';
        printf("  %-*s%-12s%s\n", nw, e->name, acts, e->description);
    }
    printf("\nviews (pelab export VIEW):\n");
    for (size_t i = 0; i < app_view_count(); i++)
        printf("  %-*s%s\n", nw, app_view_at(i)->name, app_view_at(i)->description);
    printf("\ncolormaps (--cmap NAME):\n");
    for (size_t i = 0; i < cmap_count(); i++)
        printf("  %-*s%-12s%s\n", nw, cmap_at(i)->name,
               cmap_at(i)->cyclic      ? "cyclic"
               : cmap_at(i)->diverging ? "diverging"
                                       : "sequential",
               cmap_at(i)->description);
    return 0;
}

static void usage(FILE *fp)
{
    fprintf(fp,
            "pelab %s: a position-embedding lab\n"
            "usage:\n"
            "  pelab [options]                 the terminal explorer (keys: ? inside)\n"
            "  pelab gui [options]             the same explorer in a window\n"
            "  pelab export VIEW [options] -o FILE   a figure (.png .svg .pdf) or its numbers "
            "(.csv .npy)\n"
            "  pelab train --pe NAME -o FILE   train the built-in model with one position scheme\n"
            "  pelab eval [--extrapolate] MODEL...   held-out loss, and loss past the training "
            "length\n"
            "  pelab bench                     speed figures for this machine\n"
            "  pelab list                      encodings, views and colormaps\n"
            "  pelab lesson NAME|FILE          a guided lesson (--list, --check FILE, --handout "
            "F.pdf)\n"
            "  pelab help | --help, pelab version | --version\n"
            "`pelab export --help` lists every figure option.\n",
            PELAB_VERSION_STRING);
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C"); /* numbers are read and written with '.' whatever the locale */
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (!cmd || cmd[0] == '-') {
        if (cmd && (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)) {
            usage(stdout);
            return 0;
        }
        if (cmd && strcmp(cmd, "--version") == 0) {
            printf("pelab %s\n", PELAB_VERSION_STRING);
            return 0;
        }
        return app_cmd_explore(argc, argv, 0);
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"export", app_cmd_export}, {"train", app_cmd_train}, {"eval", app_cmd_eval},
        {"bench", app_cmd_bench},   {"list", cmd_list},       {"lesson", app_cmd_lesson},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(cmd, cmds[i].name) == 0) return cmds[i].fn(argc - 1, argv + 1);
    if (strcmp(cmd, "gui") == 0) {
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--lesson") == 0) return app_cmd_lesson_gui(argc - 1, argv + 1);
        return app_cmd_explore(argc - 1, argv + 1, 1);
    }
    if (strcmp(cmd, "tui") == 0) return app_cmd_explore(argc - 1, argv + 1, 0);
    if (strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "version") == 0) {
        printf("pelab %s\n", PELAB_VERSION_STRING);
        return 0;
    }
    const char *names[] = {"export", "train", "eval", "bench",  "list",
                           "lesson", "gui",   "help", "version"};
    const char *sug = pe_closest(cmd, names, sizeof names / sizeof names[0]);
    fprintf(stderr, "pelab: unknown command '%s'%s%s%s (pelab --help lists them)\n", cmd,
            sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
    return 2;
}
