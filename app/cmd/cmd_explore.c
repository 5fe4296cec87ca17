/* cmd_explore.c: `pelab [options]` and `pelab gui [options]`, the explorer's command, beside
 * the other commands: it parses like them and hands the state to a front end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "frontend.h"
#include "lesson.h"
#include "options.h"
#include "tui.h"

static const app_cmd_opt explore_opts[] = {
    {.name = "config",
     .code = 'C',
     .arg = "FILE",
     .help = "start from a Hugging Face config.json (the other options refine it)",
     .files = "json"},
    {.name = "frames",
     .code = 'F',
     .arg = "N",
     .help = "draw N frames, the last one finished, and exit (tests, benchmarks)"},
    {.name = "help", .code = '?', .short_name = 'h', .help = "the options"},
    {0},
};
static const app_cmd_opt gui_opts[] = {
    {.name = "config",
     .code = 'C',
     .arg = "FILE",
     .help = "start from a Hugging Face config.json (the other options refine it)",
     .files = "json"},
    {.name = "frames",
     .code = 'F',
     .arg = "N",
     .help = "draw N frames, the last one finished, and exit (tests, benchmarks)"},
    {.name = "lesson",
     .code = 'l',
     .arg = "NAME|FILE",
     .help = "present a lesson in the window (pelab lesson --list)",
     .files = "lesson"},
    {.name = "slide", .code = 'S', .arg = "N", .help = "with --lesson: start at slide N"},
    {.name = "race",
     .code = 'R',
     .help = "the position race in the window; race's options follow (pelab race --help)"},
    {.name = "help", .code = '?', .short_name = 'h', .help = "the options"},
    {0},
};

static int explore(int argc, char **argv, int gui)
{
    app_state st;
    app_state_default(&st);
    const app_command *me = gui ? &app_command_gui : &app_command_explore;
    const char *name = gui ? "pelab gui" : "pelab";
    app_cli_args args;
    char err[512];
    int prc = app_command_parse(me, &st, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    /* `pelab gui --lesson NAME`: the presenter in the window, which takes no figure option */
    const char *lesson_arg = NULL, *slide = NULL, *frames_arg = NULL;
    for (int i = 0; i < args.n; i++) {
        if (args.code[i] == 'l') lesson_arg = args.val[i];
        if (args.code[i] == 'S') slide = args.val[i];
        if (args.code[i] == 'F') frames_arg = args.val[i];
    }
    if (lesson_arg || slide) {
        if (!lesson_arg) {
            fprintf(stderr, "%s: --slide %s: only with --lesson NAME|FILE\n", name, slide);
            return 2;
        }
        if (args.n_figure > 0 || args.n_positional > 0) {
            fprintf(stderr,
                    "%s: --lesson %s: the lesson sets the figures (no view or figure "
                    "option with it)\n",
                    name, lesson_arg);
            return 2;
        }
        return app_lesson_run(lesson_arg, slide, frames_arg, 1);
    }
    long frames = 0;
    for (int i = 0; i < args.n; i++) {
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

static int explore_tui(int argc, char **argv)
{
    return explore(argc, argv, 0);
}

static int explore_gui(int argc, char **argv)
{
    /* `pelab gui --race [race options]`: the position race in the window (cmd_race.c), its
     * options parsed by race's rows */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--race")) {
            char *args[256];
            int n = 0;
            args[n++] = "race";
            for (int k = 1; k < argc && n < 253; k++)
                if (k != i) args[n++] = argv[k];
            args[n++] = "--display";
            args[n++] = "window";
            args[n] = NULL;
            return app_command_race.fn(n, args);
        }
    return explore(argc, argv, 1);
}

const app_command app_command_explore = {.name = "",
                                         .synopsis = "[VIEW] [options]",
                                         .summary = "the terminal explorer (keys: ? inside)",
                                         .fn = explore_tui,
                                         .figure_options = 1,
                                         .words = "view",
                                         .opts = explore_opts};
const app_command app_command_gui = {.name = "gui",
                                     .synopsis = "[VIEW] [options], --lesson NAME|FILE",
                                     .summary = "the same explorer in a window",
                                     .fn = explore_gui,
                                     .figure_options = 1,
                                     .words = "view",
                                     .opts = gui_opts};
