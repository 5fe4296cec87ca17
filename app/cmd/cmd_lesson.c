/* cmd_lesson.c: `pelab lesson`: list, check, print and present lessons (lesson.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "explorer.h"
#include "lesson.h"
#include "options.h"
#include "outfile.h"
#include "textclean.h"

/* A name the user gave, as standard output shows it: control characters written out (\x1b),
 * bytes that are not UTF-8 as U+FFFD (issue 28: a file named ESC ] 0 ; ... set the terminal's
 * title through "FILE: ok"). Standard error is cleaned by main.c. */
static const char *shown(const char *s, char *buf, size_t n)
{
    text_clean(buf, n, s, strlen(s), 0);
    return buf;
}

/* A hint's key is good when pressing it on the slide does something: the explorer answers an
 * unbound key, or one that does not apply to this view, with an error message. */
static int key_bound(const app_state *st, uint32_t key)
{
    app_explorer *x = calloc(1, sizeof *x);
    if (!x) return 1;
    app_explorer_init(x, st, 0);
    /* Enter plays and pauses in a lesson, where Space moves on */
    ui_event ev = {.type = UI_EV_KEY, .key = key == UI_KEY_ENTER ? ' ' : key};
    app_explorer_event(x, &ev);
    int ok = !x->message_error;
    app_explorer_free(x);
    free(x);
    return ok;
}

static int cmd_list(void)
{
    char **names;
    int n = lesson_names(&names);
    if (n == 0) {
        fprintf(stderr, "pelab lesson: no lessons found in the assets folder (assets/lessons)\n");
        return 1;
    }
    int total = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        char path[1024], err[512];
        lesson l;
        if (lesson_resolve(names[i], path, sizeof path, err, sizeof err) < 0 ||
            lesson_load(&l, path, NULL, stderr) != 0) {
            rc = 1;
            continue;
        }
        printf("  %-16s %2d slides  %s%s%s\n", names[i], l.n, l.title, l.about[0] ? ": " : "",
               l.about);
        total += l.n;
        lesson_free(&l);
    }
    printf("%d lessons, %d slides (pelab lesson NAME presents one)\n", n, total);
    lesson_names_free(names, n);
    return rc;
}

static int cmd_check(int n, const char *const *files)
{
    if (n == 0) {
        fprintf(stderr, "pelab lesson --check: name one or more lesson files\n");
        return 2;
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        char path[1024], err[512];
        if (lesson_resolve(files[i], path, sizeof path, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s\n", files[i], err);
            bad++;
            continue;
        }
        lesson l;
        int p = lesson_load(&l, path, key_bound, stderr);
        if (p != 0) {
            bad++;
            continue;
        }
        /* the panels captions name are in the slides' scenes (lesson_panels.c) */
        if (lesson_check_panels(&l, stderr) != 0) {
            bad++;
            lesson_free(&l);
            continue;
        }
        char name[3 * 1024];
        printf("%s: ok, %d slide%s\n", shown(files[i], name, sizeof name), l.n,
               l.n == 1 ? "" : "s");
        lesson_free(&l);
    }
    return bad ? 2 : 0;
}

static const app_cmd_opt lesson_opts[] = {
    {.name = "list", .code = 'L', .help = "the shipped lessons"},
    {.name = "check",
     .code = 'K',
     .help = "check the lesson files named after it: every problem as FILE:LINE: message"},
    {.name = "handout",
     .code = 'H',
     .arg = "FILE.pdf",
     .help = "write a handout, one page per slide",
     .files = "pdf"},
    {.name = "slide", .code = 'S', .arg = "N", .help = "start at slide N"},
    {.name = "force", .code = 'f', .help = "replace a read-only handout (refused without it)"},
    {.name = "frames", .code = 'F', .arg = "N", .help = "draw N frames and exit (for tests)"},
    {.name = "help", .code = '?', .short_name = 'h', .help = "the usage"},
    {0},
};

/* Present, or write the handout of, the lesson named by name (a shipped name or a file). slide
 * and frames are the option values as typed (NULL: the first slide, run until quit). */
static int run_lesson(const char *name, const char *slide, const char *frames_arg,
                      const char *handout, int gui)
{
    const char *me = gui ? "pelab gui" : "pelab lesson";
    char err[1024];
    long frames = 0, start = 1;
    if (slide && app_parse_int("slide", slide, 1, LESSON_MAX_SLIDES, &start, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", me, err);
        return 2;
    }
    if (frames_arg &&
        app_parse_int("frames", frames_arg, 1, 1000000, &frames, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", me, err);
        return 2;
    }
    char path[1024];
    if (lesson_resolve(name, path, sizeof path, err, sizeof err) < 0) {
        fprintf(stderr, "pelab lesson: %s\n", err);
        return 2;
    }
    lesson l;
    int problems = lesson_load(&l, path, key_bound, stderr);
    if (problems != 0) {
        /* one problem is its own line (FILE:LINE: what), as a usage error is */
        if (problems > 1)
            fprintf(stderr, "pelab lesson: %s has problems (listed above); nothing was started\n",
                    name);
        return 2;
    }
    snprintf(l.name, sizeof l.name, "%s", name);
    int rc;
    if (handout) {
        rc = lesson_handout(&l, handout, err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "pelab lesson: %s\n", err);
        else
            printf("%s: %d pages\n", shown(handout, path, sizeof path), l.n);
    } else if (start > l.n) {
        fprintf(stderr, "%s: --slide %ld: %s has %d slides\n", me, start, name, l.n);
        rc = 2;
    } else {
        rc = lesson_present(&l, (int)start - 1, gui, (int)frames);
    }
    lesson_free(&l);
    return rc;
}

int app_lesson_run(const char *name, const char *slide, const char *frames, int gui)
{
    return run_lesson(name, slide, frames, NULL, gui);
}

static int cmd_lesson(int argc, char **argv)
{
    app_cli_args args;
    int prc = app_command_parse(&app_command_lesson, NULL, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    const char *handout = NULL, *slide = NULL, *frames = NULL;
    int list = 0, check = 0;
    for (int i = 0; i < args.n; i++) {
        switch (args.code[i]) {
        case 'L':
            list = 1;
            break;
        case 'K':
            check = 1;
            break;
        case 'H':
            handout = args.val[i];
            break;
        case 'S':
            slide = args.val[i];
            break;
        case 'F':
            frames = args.val[i];
            break;
        case 'f':
            outfile_set_force(1);
            break;
        }
    }
    int np = args.n_positional;
    if (list) {
        if (np || check || handout) {
            fprintf(stderr, "pelab lesson: --list takes nothing else\n");
            return 2;
        }
        return cmd_list();
    }
    if (check) {
        if (handout) {
            fprintf(stderr, "pelab lesson: --check and --handout are separate commands\n");
            return 2;
        }
        return cmd_check(np, args.positional);
    }
    if (np != 1) {
        fprintf(stderr,
                np ? "pelab lesson: one lesson at a time ('%s' is extra)\n"
                   : "pelab lesson: name a lesson (pelab lesson --list shows them)%s\n",
                np ? args.positional[1] : "");
        return 2;
    }
    return run_lesson(args.positional[0], slide, frames, handout, 0);
}

const app_command app_command_lesson = {
    .name = "lesson",
    .synopsis = "NAME|FILE [--handout FILE.pdf], --list, --check FILE...",
    .summary = "a guided lesson (pelab gui --lesson NAME in the window)",
    .fn = cmd_lesson,
    .words = "lesson",
    .opts = lesson_opts,
    .notes =
        "Keys while presenting: Space/PgDn next, PgUp/Backspace previous, 1..9 or :slide N jump, l "
        "list, r reset the slide, q quit; every key of the view works.\n"
        "In the window: pelab gui --lesson NAME|FILE [--slide N].\n"
        "Writing one: README.md, 'Teaching with pelab'."};
