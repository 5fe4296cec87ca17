/* cmd_explore.c: `pelab [options]` and `pelab gui [options]`, the explorer's command, beside
 * the other commands: it parses like them and hands the state to a front end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "frontend.h"
#include "options.h"
#include "tui.h"

int app_cmd_explore(int argc, char **argv, int gui)
{
    app_state st;
    app_state_default(&st);
    const char *name = gui ? "pelab gui" : "pelab";
    app_cli_extra extra[16]; /* its own options are the command table's (commands.c) */
    size_t n_extra = app_command_extras(app_command_find(gui ? "gui" : ""), extra, 16);
    app_cli_args args;
    char err[512];
    if (app_cli_parse(&st, argc, argv, extra, n_extra, &args, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 2;
    }
    long frames = 0;
    for (int i = 0; i < args.n; i++) {
        if (args.code[i] == '?') {
            printf("usage: %s [options]   (keys: ? inside)\n"
                   "  --config FILE    start from a Hugging Face config.json\n"
                   "  --frames N       draw N frames, the last one finished, and exit (tests, "
                   "benchmarks)\n",
                   name);
            app_cli_print_options(stdout);
            return 0;
        }
        if (args.code[i] == 'F' &&
            app_parse_int("frames", args.val[i], 1, 1000000, &frames, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s\n", name, err);
            return 2;
        }
    }
    if (args.n_positional > 0) {
        int v = app_view_find(args.positional[0]);
        if (v < 0 || args.n_positional > 1) {
            fprintf(stderr, "%s: unexpected argument '%s' (a view name, or options)\n", name,
                    args.positional[v < 0 ? 0 : 1]);
            return 2;
        }
        st.view = v;
    }
    if (app_state_validate(&st, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 2;
    }
    /* the terminal explorer follows a dark terminal (its OSC 11 answer, else COLORFGBG) unless
     * --theme says otherwise; the page is then left in the terminal's own background
     * (render/backend_tui.c). Asked here, before curses takes the terminal. */
    int theme_given = 0;
    for (int i = 1; i < argc; i++) theme_given |= strncmp(argv[i], "--theme", 7) == 0;
    if (!gui && !theme_given && tui_terminal_dark(1) == 1) st.dark = 1;
    app_explorer *x = calloc(1, sizeof *x);
    if (!x) {
        fprintf(stderr, "%s: out of memory\n", name);
        return 1;
    }
    app_explorer_init(x, &st, gui);
    int rc = gui ? app_run_gui(x, (int)frames) : app_run_tui(x, (int)frames);
    for (int i = 0; i < x->n_saved; i++) printf("%s\n", x->saved_commands[i]);
    app_explorer_free(x);
    free(x);
    return rc;
}
