/* cmd_lesson.c: `pelab lesson`: list, check, print and present lessons (lesson.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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

static void usage(FILE *fp)
{
    fprintf(fp, "usage: pelab lesson NAME|FILE                 present a lesson in the terminal\n"
                "       pelab gui --lesson NAME|FILE           present it in the window\n"
                "       pelab lesson NAME|FILE --handout FILE.pdf   one page per slide\n"
                "       pelab lesson --list                    the shipped lessons\n"
                "       pelab lesson --check FILE...           report every problem as "
                "FILE:LINE: message\n"
                "Keys while presenting: Space/PgDn next, PgUp/Backspace previous, 1..9 or "
                ":slide N jump, l list, r reset the slide, q quit; every key of the view works.\n"
                "Writing one: README.md, 'Teaching with pelab'.\n");
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

static int cmd_check(int n, char **files)
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

static int lesson_main(int argc, char **argv, int gui)
{
    const char *handout = NULL, *me = gui ? "pelab gui" : "pelab lesson";
    int list = 0, check = 0;
    long frames = 0, start = 1;
    char err[1024];
    char *pos[64];
    int np = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--list") == 0) {
            list = 1;
        } else if (strcmp(a, "--check") == 0) {
            check = 1;
        } else if (strcmp(a, "--force") == 0) {
            outfile_set_force(1);
        } else if (strcmp(a, "--frames") == 0 || strcmp(a, "--slide") == 0) {
            if (i + 1 >= argc ||
                app_parse_int(a + 2, argv[i + 1], 1, a[2] == 'f' ? 1000000 : LESSON_MAX_SLIDES,
                              a[2] == 'f' ? &frames : &start, err, sizeof err) < 0) {
                fprintf(stderr, "%s: %s\n", me, i + 1 >= argc ? "--frames/--slide need N" : err);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--lesson") == 0 && i + 1 < argc && np < 64) {
            pos[np++] = argv[++i];
        } else if (strcmp(a, "--handout") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "pelab lesson: --handout needs a FILE.pdf\n");
                return 2;
            }
            handout = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr,
                    "pelab lesson: %s: unknown option (allowed --list, --check, "
                    "--handout FILE.pdf, --force, --help)\n",
                    a);
            return 2;
        } else if (np < 64) {
            pos[np++] = argv[i];
        } else {
            fprintf(stderr, "pelab lesson: too many arguments\n");
            return 2;
        }
    }
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
        return cmd_check(np, pos);
    }
    if (np != 1) {
        fprintf(stderr,
                np ? "pelab lesson: one lesson at a time ('%s' is extra)\n"
                   : "pelab lesson: name a lesson (pelab lesson --list shows them)%s\n",
                np ? pos[1] : "");
        return 2;
    }
    if (gui && (list || check || handout)) {
        fprintf(stderr, "%s: --list, --check and --handout belong to pelab lesson\n", me);
        return 2;
    }
    char path[1024];
    if (lesson_resolve(pos[0], path, sizeof path, err, sizeof err) < 0) {
        fprintf(stderr, "pelab lesson: %s\n", err);
        return 2;
    }
    lesson l;
    int problems = lesson_load(&l, path, key_bound, stderr);
    if (problems != 0) {
        /* one problem is its own line (FILE:LINE: what), as a usage error is */
        if (problems > 1)
            fprintf(stderr, "pelab lesson: %s has problems (listed above); nothing was started\n",
                    pos[0]);
        return 2;
    }
    snprintf(l.name, sizeof l.name, "%s", pos[0]);
    int rc;
    if (handout) {
        rc = lesson_handout(&l, handout, err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "pelab lesson: %s\n", err);
        else
            printf("%s: %d pages\n", shown(handout, path, sizeof path), l.n);
    } else if (start > l.n) {
        fprintf(stderr, "%s: --slide %ld: %s has %d slides\n", me, start, pos[0], l.n);
        rc = 2;
    } else {
        rc = lesson_present(&l, (int)start - 1, gui, (int)frames);
    }
    lesson_free(&l);
    return rc;
}

int app_cmd_lesson(int argc, char **argv)
{
    return lesson_main(argc, argv, 0);
}

int app_cmd_lesson_gui(int argc, char **argv)
{
    return lesson_main(argc, argv, 1);
}
