/* cmd_list.c: `pelab list`: the encodings, views and colormaps, from their tables. */
#include <stdio.h>
#include <string.h>

#include "assets.h"
#include "colormap.h"
#include "commands.h"
#include "views.h"

static int cmd_list(int argc, char **argv)
{
    app_cli_args args;
    int prc = app_command_parse(&app_command_list, NULL, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    if (args.n_positional > 0) {
        fprintf(stderr, "pelab list: takes no arguments (got '%s')\n", args.positional[0]);
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
    const char *assets = app_assets_dir();
    printf("\nassets (PELAB_ASSETS): %s\n", assets ? assets : "not found");
    return 0;
}

const app_command app_command_list = {
    .name = "list", .synopsis = "", .summary = "encodings, views and colormaps", .fn = cmd_list};
