/* cmd_export_race.c: `pelab export race --from DIR -o FILE` (issue 24): the race's figure, its
 * numbers or its animation, from the log a race wrote (DIR/race.csv). `pelab export` hands the
 * word race here (cmd_export.c): the race is drawn from a log, not from the figure options. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "format.h"
#include "infile.h"
#include "options.h"
#include "outfile.h"
#include "race_fig.h"
#include "race_out.h"

enum {
    R_FROM = 256,
    R_OUT,
    R_WIDTH,
    R_HEIGHT,
    R_DPI,
    R_FRAMES,
    R_FPS,
    R_SMOOTH,
    R_FAR,
    R_DARK,
    R_FORCE,
    R_HELP
};

static const app_cmd_opt export_race_opts[] = {
    {.name = "from",
     .code = R_FROM,
     .arg = "DIR",
     .help = "the race's folder (its race.csv), or the log itself",
     .files = ""},
    {.name = "output",
     .code = R_OUT,
     .short_name = 'o',
     .arg = "FILE",
     .help = ".png .svg .pdf (the figure), .csv (its numbers), .gif .webp FOLDER/ (the race "
             "replayed)",
     .files = ""},
    {.name = "width", .code = R_WIDTH, .arg = "N", .help = "pixels, 64..16384 (1000)"},
    {.name = "height", .code = R_HEIGHT, .arg = "N", .help = "pixels, 64..16384 (600)"},
    {.name = "dpi", .code = R_DPI, .arg = "N", .help = "pixels per inch, 10..2400 (96)"},
    {.name = "frames", .code = R_FRAMES, .arg = "N", .help = "animation frames, 2..1000 (48)"},
    {.name = "fps", .code = R_FPS, .arg = "N", .help = "animation frames per second, 1..50 (12)"},
    {.name = "smooth", .code = R_SMOOTH, .arg = "A", .help = "EMA weight, 0..0.999 (0.95)"},
    {.name = "far",
     .code = R_FAR,
     .arg = "K",
     .help = "held-out panel's dashed curves: 2 ([ctx, 2ctx)) or 4 ([2ctx, 4ctx)) (4)"},
    {.name = "dark", .code = R_DARK, .help = "the dark theme"},
    {.name = "force", .code = R_FORCE, .help = "replace a read-only output file"},
    {.name = "help", .code = R_HELP, .short_name = 'h', .help = "the options"},
    {0},
};

static int export_race(int argc, char **argv);

/* Not in the command table (command_list.h): `pelab export race` is export's word. */
static const app_command export_race_cmd = {
    .name = "export race",
    .synopsis = "--from DIR -o FILE [options]",
    .summary = "the position race's figure, numbers or animation from its log",
    .fn = export_race,
    .opts = export_race_opts,
    .notes = "DIR is the folder a pelab race wrote (-o DIR); its race.csv holds the race."};

static int export_race(int argc, char **argv)
{
    app_cli_args args;
    int prc = app_command_parse(&export_race_cmd, NULL, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    const char *from = NULL, *out = NULL;
    app_export_opts o = {1000, 600, 96};
    app_race_ui u;
    app_race_ui_default(&u);
    long frames = 48, far = 4;
    double fps = 12;
    char err[1024];
    for (int i = 0; i < args.n; i++) {
        const char *v = args.val[i];
        long x;
        int bad = 0;
        switch (args.code[i]) {
        case R_FROM:
            from = v;
            break;
        case R_OUT:
            out = v;
            break;
        case R_WIDTH:
        case R_HEIGHT:
            bad = app_parse_int(args.code[i] == R_WIDTH ? "width" : "height", v, 64, 16384, &x, err,
                                sizeof err);
            if (!bad) *(args.code[i] == R_WIDTH ? &o.width : &o.height) = (int)x;
            break;
        case R_DPI:
            bad = app_parse_double("dpi", v, 10, 2400, 0, &o.dpi, err, sizeof err);
            break;
        case R_FRAMES:
            bad = app_parse_int("frames", v, 2, 1000, &frames, err, sizeof err);
            break;
        case R_FPS:
            bad = app_parse_double("fps", v, 1, 50, 0, &fps, err, sizeof err);
            break;
        case R_SMOOTH:
            bad = app_parse_double("smooth", v, 0, 0.999, 0, &u.smooth, err, sizeof err);
            break;
        case R_FAR:
            if (strcmp(v, "2") && strcmp(v, "4")) {
                snprintf(err, sizeof err, "--far %s: 2 or 4", v);
                bad = -1;
            } else
                far = v[0] - '0';
            break;
        case R_DARK:
            u.dark = 1;
            break;
        case R_FORCE:
            outfile_set_force(1);
            break;
        }
        if (bad) {
            fprintf(stderr, "pelab export race: %s\n", err);
            return 2;
        }
    }
    u.far = far == 2 ? 1 : 2;
    if (args.n_positional > 0) {
        fprintf(stderr, "pelab export race: unexpected argument '%s'\n", args.positional[0]);
        return 2;
    }
    if (!from || !out) {
        fprintf(stderr, "pelab export race: %s is required (pelab export race --help)\n",
                !from ? "--from DIR" : "-o FILE");
        return 2;
    }
    char log[4096];
    size_t fl = strlen(from);
    if (fl > 4 && !strcmp(from + fl - 4, ".csv"))
        snprintf(log, sizeof log, "%s", from);
    else if (snprintf(log, sizeof log, "%s/race.csv", from) >= (int)sizeof log) {
        fprintf(stderr, "pelab export race: --from: the name is too long\n");
        return 2;
    }
    pe_infile_note(log); /* -o may not name the log it reads */
    app_race_data d;
    if (app_race_log_read(log, &d, err, sizeof err)) {
        fprintf(stderr, "pelab export race: %s\n", err);
        return 2;
    }
    char command[1024];
    size_t k = (size_t)snprintf(command, sizeof command, "pelab export");
    for (int i = 0; i < argc && k < sizeof command; i++)
        k += (size_t)snprintf(command + k, sizeof command - k, " %s", argv[i]);
    int rc;
    if (app_format_of_as(out, APP_FORMAT_ANIMATION) != APP_FMT_UNKNOWN)
        rc = app_race_animate(&d, &u, out, (int)frames, fps, &o, command, err, sizeof err);
    else
        rc = app_race_export(&d, &u, out, &o, command, err, sizeof err);
    app_race_data_free(&d);
    if (rc) fprintf(stderr, "pelab export race: %s\n", err);
    return rc;
}

int app_cmd_export_race(int argc, char **argv)
{
    return export_race(argc, argv);
}
