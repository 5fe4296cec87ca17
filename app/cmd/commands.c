/* commands.c: the table of subcommands (commands.h), pelab's usage and `pelab list`. */
#include "commands.h"

#include <string.h>

#include "assets.h"
#include "cli.h"
#include "cmd_model.h"
#include "colormap.h"
#include "export.h"
#include "frontend.h"
#include "lesson.h"
#include "views.h"

int app_cmd_bench(int argc, char **argv);
int app_cmd_tokenize(int argc, char **argv); /* cmd_tokenize.c */
void app_tokenize_usage(FILE *f);
static int cmd_list(int argc, char **argv);
static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const char *const formats[] = {"png", "svg", "pdf", "csv", "npy", NULL};

/* Each command's own options; the commands parse with these (app_command_extras). */
static const app_cmd_opt explore_opts[] = {
    {"config", 'C', 0, "FILE",
     "start from a Hugging Face config.json (the other options refine it)", "json", NULL},
    {"frames", 'F', 0, "N", "draw N frames and exit (for tests and benchmarks)", NULL, NULL},
    {"help", '?', 0, NULL, "the options", NULL, NULL},
    {NULL, 0, 0, NULL, NULL, NULL, NULL},
};
static const app_cmd_opt export_opts[] = {
    {"output", 'o', 'o', "FILE",
     "where to write; the extension picks the format: .png .svg .pdf (the figure), .csv .npy "
     "(its numbers); - is standard output (with --format)",
     "", NULL},
    {"width", 'W', 0, "N", "figure width in pixels, 64..16384 (1000)", NULL, NULL},
    {"height", 'H', 0, "N", "figure height in pixels, 64..16384 (600)", NULL, NULL},
    {"dpi", 'D', 0, "N", "pixels per inch, 10..2400 (96); text stays in points", NULL, NULL},
    {"config", 'C', 0, "FILE", "set the parameters from a Hugging Face config.json", "json", NULL},
    {"format", 'F', 0, "EXT", "png svg pdf csv npy: for -o - (standard output) and devices", NULL,
     formats},
    {"animate", 'A', 0, "NAME=FROM:TO[:FRAMES][:log]",
     "an animation (-o FILE.gif, FILE.webp, or FOLDER/ for numbered PNGs) sweeping a numeric "
     "option (FRAMES 2..1000, default 48)",
     NULL, NULL},
    {"fps", 'R', 0, "N", "animation frames per second, 1..50 (12)", NULL, NULL},
    {"loop", 'L', 0, "N", "times an animation plays, 0 = forever (0)", NULL, NULL},
    {"quality", 'Q', 0, "Q", "WebP: lossy at quality 0..100 (default lossless)", NULL, NULL},
    {"free-axes", 'X', 0, NULL,
     "let each animation frame pick its axes and colour range (default fixed over the sweep)", NULL,
     NULL},
    {"dither", 'T', 0, NULL, "GIF: dither to the palette (default off: flat figures)", NULL, NULL},
    {"size", 'S', 0, "WxH{in,cm,px}",
     "figure size with a unit, at --dpi (6x4in, 16x10cm, 800x600px)", NULL, NULL},
    {"force", 'f', 0, NULL, "replace a read-only output file (refused without it)", NULL, NULL},
    {"help", '?', 0, NULL, "the options", NULL, NULL},
    {NULL, 0, 0, NULL, NULL, NULL, NULL},
};
static const app_cmd_opt bench_opts[] = {
    {"quick", 'q', 0, NULL, "fewer runs", NULL, NULL},
    {"help", '?', 0, NULL, "what it measures", NULL, NULL},
    {NULL, 0, 0, NULL, NULL, NULL, NULL},
};
static const app_cmd_opt gui_opts[] = {
    {"config", 'C', 0, "FILE",
     "start from a Hugging Face config.json (the other options refine it)", "json", NULL},
    {"frames", 'F', 0, "N", "draw N frames and exit (for tests and benchmarks)", NULL, NULL},
    {"lesson", 'l', 0, "NAME|FILE", "present a lesson in the window (pelab lesson --list)",
     "lesson", NULL},
    {"help", '?', 0, NULL, "the options", NULL, NULL},
    {NULL, 0, 0, NULL, NULL, NULL, NULL},
};
static const app_cmd_opt lesson_opts[] = {
    {"list", 'L', 0, NULL, "the shipped lessons", NULL, NULL},
    {"check", 'K', 0, "FILE", "report every problem of a lesson file as FILE:LINE: message",
     "lesson", NULL},
    {"handout", 'H', 0, "FILE.pdf", "one page per slide", "pdf", NULL},
    {"force", 'f', 0, NULL, "replace a read-only handout (refused without it)", NULL, NULL},
    {"slide", 'S', 0, "N", "start at slide N", NULL, NULL},
    {"frames", 'F', 0, "N", "draw N frames and exit (for tests)", NULL, NULL},
    {"help", '?', 0, NULL, "the usage", NULL, NULL},
    {NULL, 0, 0, NULL, NULL, NULL, NULL},
};
static const app_cmd_opt completion_opts[] = {
    {NULL, 0, 0, NULL, NULL, NULL, NULL},
};

static const app_command commands[] = {
    {"", "[VIEW] [options]", "the terminal explorer (keys: ? inside)", NULL, 1, "view",
     explore_opts, NULL, NULL},
    {"gui", "[VIEW] [options]", "the same explorer in a window", NULL, 1, "view", gui_opts, NULL,
     NULL},
    {"export", "VIEW [options] -o FILE", "a figure (.png .svg .pdf) or its numbers (.csv .npy)",
     app_cmd_export, 1, "view", export_opts, NULL, NULL},
    {"train", "--pe NAME [options] -o FILE", "train the built-in model with one position scheme",
     app_cmd_train, 0, NULL, NULL, NULL, app_train_usage},
    {"eval", "[--extrapolate] [options] MODEL...",
     "held-out loss, and loss past the training length", app_cmd_eval, 0, "model file", NULL, NULL,
     app_eval_usage},
    {"generate", "--model M [--ids 1,2,3] [--steps N] [options]",
     "run a llama2.c or Hugging Face checkpoint forward (greedy or sampled)", app_cmd_generate, 0,
     NULL, NULL, NULL, app_generate_usage},
    {"tokenize", "--tokenizer FILE [--ids] TEXT|-",
     "the tokens a real tokenizer cuts a text into, with their ids", app_cmd_tokenize, 0, NULL,
     NULL, NULL, app_tokenize_usage},
    {"bench", "[--quick]", "speed figures for this machine", app_cmd_bench, 0, NULL, bench_opts,
     NULL, NULL},
    {"list", "", "encodings, views and colormaps", cmd_list, 0, NULL, NULL, NULL, NULL},
    {"lesson", "NAME|FILE [--handout FILE.pdf], --list, --check FILE...",
     "a guided lesson (pelab gui --lesson NAME in the window)", app_cmd_lesson, 0, "lesson",
     lesson_opts, NULL, NULL},
    {"completion", "bash|zsh|fish", "a completion script for the shell", app_cmd_completion, 0,
     "shell", completion_opts, NULL, NULL},
    {"manpage", "", "this manual in roff (man -l <(pelab manpage))", app_cmd_manpage, 0, NULL, NULL,
     NULL, NULL},
    {"help", "", "this summary (also --help)", cmd_help, 0, NULL, NULL, NULL, NULL},
    {"version", "", "the version (also --version)", cmd_version, 0, NULL, NULL, NULL, NULL},
};

size_t app_command_count(void)
{
    return sizeof commands / sizeof commands[0];
}

const app_command *app_command_at(size_t i)
{
    return i < app_command_count() ? &commands[i] : NULL;
}

size_t app_command_extras(const app_command *c, app_cli_extra *out, size_t max)
{
    size_t n = 0;
    for (const app_cmd_opt *o = c->opts; o && o->name && n < max; o++)
        out[n++] = (app_cli_extra){o->name, o->code, o->arg == NULL};
    return n;
}

const app_command *app_command_find(const char *name)
{
    for (size_t i = 0; i < app_command_count(); i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

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
    const char *assets = app_assets_dir();
    printf("\nassets (PELAB_ASSETS): %s\n", assets ? assets : "not found");
    return 0;
}

static void usage(FILE *fp)
{
    fprintf(fp, "pelab %s: a position-embedding lab\nusage:\n", PELAB_VERSION_STRING);
    for (size_t i = 0; i < app_command_count(); i++) {
        const app_command *c = &commands[i];
        char head[96];
        snprintf(head, sizeof head, "pelab%s%s %s", c->name[0] ? " " : "", c->name, c->synopsis);
        fprintf(fp, "  %-40s %s\n", head, c->summary);
    }
    fprintf(fp, "`pelab export --help` lists every figure option; `man pelab` has it all.\n");
}

static int cmd_help(int argc, char **argv)
{
    if (argc > 1) {
        fprintf(stderr, "pelab help: takes no arguments (got '%s')\n", argv[1]);
        return 2;
    }
    usage(stdout);
    return 0;
}

static int cmd_version(int argc, char **argv)
{
    if (argc > 1) {
        fprintf(stderr, "pelab version: takes no arguments (got '%s')\n", argv[1]);
        return 2;
    }
    printf("pelab %s\n", PELAB_VERSION_STRING);
    return 0;
}

/* Whether the command answers --help itself (its own usage, or a "help" option it parses). */
static int has_own_help(const app_command *c)
{
    if (c->usage) return 1;
    for (const app_cmd_opt *o = c->opts; o && o->name; o++)
        if (strcmp(o->name, "help") == 0) return 1;
    return 0;
}

/* The usage of a command without its own: the table's synopsis, summary and options. */
static void command_usage(const app_command *c, FILE *fp)
{
    fprintf(fp, "usage: pelab %s%s%s\n  %s\n", c->name, c->synopsis[0] ? " " : "", c->synopsis,
            c->summary);
    for (const app_cmd_opt *o = c->opts; o && o->name; o++)
        fprintf(fp, "  --%s%s%s  %s\n", o->name, o->arg ? " " : "", o->arg ? o->arg : "", o->help);
}

static int is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

int app_main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (!cmd || cmd[0] == '-') {
        if (cmd && is_help(cmd)) return cmd_help(0, 0);
        if (cmd && strcmp(cmd, "--version") == 0) return cmd_version(0, 0);
        return app_cmd_explore(argc, argv, 0);
    }
    if (strcmp(cmd, "gui") == 0) {
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--lesson") == 0) return app_cmd_lesson_gui(argc - 1, argv + 1);
        return app_cmd_explore(argc - 1, argv + 1, 1);
    }
    if (strcmp(cmd, "tui") == 0) return app_cmd_explore(argc - 1, argv + 1, 0);
    const app_command *c = app_command_find(cmd);
    if (c && c->fn && argc == 3 && is_help(argv[2]) && !has_own_help(c)) {
        command_usage(c, stdout); /* every command takes --help, even one without options */
        return 0;
    }
    if (c && c->fn) return c->fn(argc - 1, argv + 1);
    /* a view name starts the explorer on it: `pelab rope` */
    if (app_view_find(cmd) >= 0) return app_cmd_explore(argc, argv, 0);
    const char *names[sizeof commands / sizeof commands[0]];
    size_t n = 0;
    for (size_t i = 0; i < app_command_count(); i++)
        if (commands[i].name[0]) names[n++] = commands[i].name;
    const char *sug = pe_closest(cmd, names, n);
    fprintf(stderr, "pelab: unknown command '%s'%s%s%s (pelab --help lists them)\n", cmd,
            sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
    return 2;
}
