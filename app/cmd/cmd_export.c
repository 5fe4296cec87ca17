/* cmd_export.c: `pelab export VIEW [options] -o FILE`: a figure, its numbers or an animation of
 * it, through the export engine (output/export.h) and the animation (output/animate.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "animate.h"
#include "commands.h"
#include "export.h"
#include "infile.h"
#include "outfile.h"
#include "options.h"

/* --format's values: the figure and data formats of the format table */
static size_t file_formats(const char **out, size_t n)
{
    return app_format_names(APP_FORMAT_FILES, out, n);
}

static const app_cmd_opt export_opts[] = {
    {.name = "output",
     .code = 'o',
     .short_name = 'o',
     .arg = "FILE",
     .help =
         "where to write; the extension picks the format: .png .svg .pdf (the figure), .csv .npy "
         "(its numbers); - is standard output (with --format)",
     .files = ""},
    {.name = "width", .code = 'W', .arg = "N", .help = "figure width in pixels, 64..16384 (1000)"},
    {.name = "height", .code = 'H', .arg = "N", .help = "figure height in pixels, 64..16384 (600)"},
    {.name = "dpi",
     .code = 'D',
     .arg = "N",
     .help = "pixels per inch, 10..2400 (96); text stays in points"},
    {.name = "config",
     .code = 'C',
     .arg = "FILE",
     .help = "set the parameters from a Hugging Face config.json",
     .files = "json"},
    {.name = "format",
     .code = 'F',
     .arg = "EXT",
     .help = "the format, for -o - (standard output) and devices, whose names say nothing",
     .choices_fn = file_formats},
    {.name = "animate",
     .code = 'A',
     .arg = "NAME=FROM:TO[:FRAMES][:log]",
     .help =
         "an animation (-o FILE.gif, FILE.webp, or FOLDER/ for numbered PNGs) sweeping a numeric "
         "option (FRAMES 2..1000, default 48)"},
    {.name = "fps", .code = 'R', .arg = "N", .help = "animation frames per second, 1..50 (12)"},
    {.name = "loop", .code = 'L', .arg = "N", .help = "times an animation plays, 0 = forever (0)"},
    {.name = "quality",
     .code = 'Q',
     .arg = "Q",
     .help = "WebP: lossy at quality 0..100 (default lossless)"},
    {.name = "free-axes",
     .code = 'X',
     .help =
         "let each animation frame pick its axes and colour range (default fixed over the sweep)"},
    {.name = "dither",
     .code = 'T',
     .help = "GIF: dither to the palette (default off: flat figures)"},
    {.name = "size",
     .code = 'S',
     .arg = "WxH{in,cm,px}",
     .help = "figure size with a unit, at --dpi (6x4in, 16x10cm, 800x600px)"},
    {.name = "force", .code = 'f', .help = "replace a read-only output file (refused without it)"},
    {.name = "help", .code = '?', .short_name = 'h', .help = "the options"},
    {0},
};

/* --size WxH with a unit: in, cm or px; inches and centimetres become pixels at o->dpi. */
static int parse_size(const char *v, app_export_opts *o, char *err, size_t errlen)
{
    static const struct {
        const char *unit;
        double per_inch; /* units in an inch; 0 for pixels */
    } units[] = {{"in", 1}, {"cm", 2.54}, {"px", 0}};
    /* split at the first 'x' by hand: strtod would read "0x4" as a hexadecimal number */
    char buf[64], unit[16] = "";
    snprintf(buf, sizeof buf, "%s", v);
    char *x = strchr(buf, 'x'), *end = NULL;
    double w = 0, h = 0;
    int ok = x != NULL && x != buf;
    if (ok) {
        *x = '\0';
        w = strtod(buf, &end);
        ok = *end == '\0';
    }
    if (ok) {
        h = strtod(x + 1, &end);
        ok = end != x + 1;
        snprintf(unit, sizeof unit, "%s", end);
    }
    if (!ok) {
        snprintf(err, errlen,
                 "--size '%s': allowed WxH with a unit in, cm or px (6x4in, 16x10cm, 1200x800px)",
                 v);
        return -1;
    }
    size_t k = 0, nu = sizeof units / sizeof units[0];
    while (k < nu && strcmp(unit, units[k].unit) != 0) k++;
    if (k == nu) {
        snprintf(err, errlen, "--size '%s': %s (allowed WxH with a unit in, cm or px, e.g. 6x4in)",
                 v, *unit ? "unknown unit" : "no unit");
        return -1;
    }
    if (!(w > 0) || !(h > 0) || !isfinite(w) || !isfinite(h)) {
        snprintf(err, errlen, "--size '%s': width and height must be > 0", v);
        return -1;
    }
    double dpi = o->dpi > 0 ? o->dpi : 96;
    double pw = units[k].per_inch > 0 ? w / units[k].per_inch * dpi : w;
    double ph = units[k].per_inch > 0 ? h / units[k].per_inch * dpi : h;
    if (!(pw >= 64 && pw <= 16384 && ph >= 64 && ph <= 16384)) {
        snprintf(err, errlen,
                 "--size %s at --dpi %g: %.0f x %.0f pixels (allowed 64..16384 pixels a side)", v,
                 dpi, pw, ph);
        return -1;
    }
    o->width = (int)lround(pw);
    o->height = (int)lround(ph);
    return 0;
}

int app_cmd_export(int argc, char **argv)
{
    /* the position race is drawn from its log, not from the figure options (cmd_export_race.c) */
    if (argc > 1 && !strcmp(argv[1], "race")) return app_cmd_export_race(argc - 1, argv + 1);
    app_state st;
    app_state_default(&st);
    app_cli_record_command(&st, argc, argv, "export");
    const char *out = NULL;
    app_export_opts o = {1000, 600, 96};
    const char *format = NULL;
    char err[512];
    int view_set = 0;
    app_anim anim;
    app_anim_default(&anim);
    const char *size_arg = NULL;
    int animate = 0, anim_only = 0; /* anim_only: an animation option, without --animate */
    int quality_set = 0, dither_set = 0;

    /* the view may come first as a word */
    int first = 1;
    if (argc > 1 && argv[1][0] != '-') {
        if (app_option_set(&st, app_option_find("view"), argv[1], err, sizeof err) < 0) {
            fprintf(stderr, "pelab export: %s\n", err);
            return 2;
        }
        view_set = 1;
        first = 2;
    }
    /* its own options are its rows, like its --help, man page and completion */
    app_cli_args args;
    int rc = app_command_parse(&app_command_export, &st, argc - first + 1, argv + first - 1, &args);
    if (rc != 0) return rc > 0 ? 0 : 2;
    for (int i = 0; i < args.n; i++) {
        const char *v = args.val[i];
        long x;
        switch (args.code[i]) {
        case 'o':
            out = v;
            break;
        case 'W':
        case 'H':
            if (app_parse_int(args.code[i] == 'W' ? "width" : "height", v, 64, 16384, &x, err,
                              sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            *(args.code[i] == 'W' ? &o.width : &o.height) = (int)x;
            break;
        case 'D':
            if (app_parse_double("dpi", v, 10, 2400, 0, &o.dpi, err, sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            break;
        case 'C': /* applied by app_cli_parse, before the other options */
            break;
        case 'S': /* resolved after the loop: its pixels depend on --dpi, wherever it stands */
            size_arg = v;
            break;
        case 'A':
            if (animate) { /* the second one replaced the first without a word (issue 28) */
                fprintf(stderr,
                        "pelab export: --animate %s: one animation at a time (--animate given "
                        "twice)\n",
                        v);
                return 2;
            }
            if (app_anim_parse(v, &anim, err, sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            animate = 1;
            break;
        case 'R':
            if (app_parse_double("fps", v, 1, 50, 0, &anim.fps, err, sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            anim_only = 'R';
            break;
        case 'L':
            if (app_parse_int("loop", v, 0, 65535, &x, err, sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            anim.loop = (int)x;
            anim_only = 'L';
            break;
        case 'Q':
            if (app_parse_double("quality", v, 0, 100, 0, &anim.quality, err, sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            anim_only = 'Q';
            quality_set = 1;
            break;
        case 'X':
            anim.free_axes = 1;
            anim_only = 'X';
            break;
        case 'T':
            anim.dither = 1;
            anim_only = 'T';
            dither_set = 1;
            break;
        case 'F':
            format = v;
            break;
        case 'f':
            outfile_set_force(1);
            break;
        }
    }
    if (args.n_positional > 0) {
        if (view_set || args.n_positional > 1) {
            fprintf(stderr, "pelab export: unexpected argument '%s' (one VIEW, then options)\n",
                    args.positional[view_set ? 0 : 1]);
            return 2;
        }
        if (app_option_set(&st, app_option_find("view"), args.positional[0], err, sizeof err) < 0) {
            fprintf(stderr, "pelab export: %s\n", err);
            return 2;
        }
        view_set = 1;
    }
    if (!view_set) {
        fprintf(stderr, "pelab export: name a view (e.g. pelab export heatmap -o pe.png); "
                        "`pelab list` shows them\n");
        return 2;
    }
    if (!out) {
        fprintf(stderr, "pelab export: -o FILE is required (.png .svg .pdf .csv .npy; with "
                        "--animate .gif .webp FOLDER/)\n");
        return 2;
    }
    if (app_state_validate(&st, err, sizeof err) < 0) {
        fprintf(stderr, "pelab export: %s\n", err);
        return 2;
    }
    if (size_arg && parse_size(size_arg, &o, err, sizeof err) < 0) {
        fprintf(stderr, "pelab export: %s\n", err);
        return 2;
    }
    {
        /* the figure is laid out at its physical size (app_export_layout): a few pixels at a
         * high dpi would be a figure a few hundredths of an inch wide */
        double lw, lh;
        app_export_layout(&o, &lw, &lh);
        if (lw < 63.5 || lh < 63.5) {
            fprintf(stderr,
                    "pelab export: --dpi %g: %d x %d pixels is %.2f x %.2f in at that dpi "
                    "(allowed at least 0.67 in a side, 64 pixels at 96 dpi)\n",
                    o.dpi, o.width, o.height, o.width / o.dpi, o.height / o.dpi);
            return 2;
        }
    }
    if (anim_only && !animate) {
        static const struct {
            int code;
            const char *name;
        } names[] = {
            {'R', "fps"}, {'L', "loop"}, {'Q', "quality"}, {'X', "free-axes"}, {'T', "dither"}};
        const char *name = "?";
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (names[i].code == anim_only) name = names[i].name;
        fprintf(stderr, "pelab export: --%s: only for animations (add --animate NAME=FROM:TO)\n",
                name);
        return 2;
    }
    /* each writer's own option on another format was ignored without a word (issue 28) */
    app_format anim_fmt = animate ? app_format_of_as(out, APP_FORMAT_ANIMATION) : APP_FMT_UNKNOWN;
    if (animate && quality_set && anim_fmt != APP_FMT_WEBP) {
        fprintf(stderr,
                "pelab export: --quality: only for WebP animations (-o FILE.webp); -o %s "
                "is not one\n",
                out);
        return 2;
    }
    if (animate && dither_set && anim_fmt != APP_FMT_GIF) {
        fprintf(stderr,
                "pelab export: --dither: only for GIF animations (-o FILE.gif); -o %s "
                "is not one\n",
                out);
        return 2;
    }
    if (animate && format) {
        fprintf(stderr,
                "pelab export: --format %s: not for animations (the format follows -o: "
                ".gif .webp FOLDER/)\n",
                format);
        return 2;
    }
    /* the files this export reads: -o may not name one of them (outfile.h); --config was read
     * already, the others are read during the work */
    pe_infile_note(st.attn.data_path);
    pe_infile_note(st.attn.model_name);
    pe_infile_note(st.attn.compare);
    if (animate)
        rc = app_anim_export(&st, &anim, out, &o, err, sizeof err);
    else
        rc = app_export_file_as(&st, out, format, &o, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "pelab export: %s\n", err);
        return rc;
    }
    return 0;
}

const app_command app_command_export = {
    .name = "export",
    .synopsis = "VIEW [options] -o FILE",
    .summary = "a figure (.png .svg .pdf) or its numbers (.csv .npy)",
    .fn = app_cmd_export,
    .figure_options = 1,
    .words = "view",
    .opts = export_opts,
    .notes = "views, encodings and colormaps: pelab list. The position race from the folder a "
             "race wrote: pelab export race --from DIR -o FILE (pelab export race --help)."};
