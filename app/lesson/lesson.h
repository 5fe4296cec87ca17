/* lesson.h: guided tours written as plain text (assets/lessons/NAME.lesson).
 *
 * A lesson file, line by line ('#' starts a comment line, blank lines are ignored, a line that
 * starts with a space or a tab continues the field above it):
 *
 *   lesson: RoPE, rotary position embedding          the title (once, first)
 *   about: pairs rotating at their own frequency      one line for `pelab lesson --list`
 *   slide: The shift experiment                       starts a slide: its title
 *   view: rope --dim 8 --pos 5 --pos-k 2              the view and its options, exactly as after
 *                                                     `pelab export` (the same option table)
 *   caption: q.k is {readout}.                        a few sentences; {NAME} shows a live value
 *   try: Left Right = move the query position m       a hint: keys (or one :option value) = what
 *   do: spin                                          a scripted action on arrival (see below)
 *   panels: heads bars                                the panels the caption names, by the
 *                                                     names the view's scene gives them
 *                                                     (scene_name_panel: the attention views'
 *                                                     heads, matrix, bars, next-token); --check
 *                                                     fails one the slide does not show in
 *                                                     either front end at a tested size
 *
 * Actions: the one the slide's view names (its entry's .action: `spin`, the RoPE animation, in
 * the rope view; `play`, stepping through the tokens, in the attention views), and
 * `sweep OPTION V1 V2 ...` (the option takes each value in turn, one a second), and `race` (a
 * short position race, lesson_race.h: learned, rope and alibi trained --race-steps steps each on
 * worker threads, its live figure in place of the view's until the slide is left; --check never
 * starts it). Placeholders of a race slide: {race-best} and {race-worst} (the schemes with the
 * lowest and highest held-out loss at 4x the trained context, with it), {race-speed} (tokens/s);
 * "…" until the race has finished.
 * Placeholders: any option name ({base}, {dim}, {heads}...), {readout} (the cursor readout or
 * the view's summary), and the values the views answer (their entries' .values, the slide's
 * view asked first): {distance} (m - n) and {sin-bug} (q.k when sin is read in place of cos) of
 * the rope view, {slopes} of alibi, {bands} (pairs kept / blended / divided by the scaling),
 * {attn-factor} and {eff-base} (the base after NTK scaling) of frequencies, {longest} and
 * {shortest} (wavelengths of the slowest and fastest pair) of wavelength, {loss MODEL A-B} (mean
 * held-out loss of a built-in model over positions A..B in the shipped evaluation, or --data) of
 * extrapolation. The lesson code names no view. */
#ifndef PELAB_APP_LESSON_H
#define PELAB_APP_LESSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lesson_race.h"
#include "scene.h"
#include "state.h"

#define LESSON_MAX_SLIDES 99
#define LESSON_MAX_TRY    6
#define LESSON_MAX_SWEEP  12
#define LESSON_MAX_BYTES  (1024 * 1024)
#define LESSON_MAX_PANELS 8

/* LESSON_DO_VIEW: the action the slide's view names (app_view.action: spin, play) */
/* LESSON_DO_RACE: `do: race`, a short race of LESSON_RACE_SCHEMES for --race-steps steps
 * (lesson_race.h) whose figure replaces the view's while the slide is shown */
typedef enum { LESSON_DO_NONE = 0, LESSON_DO_VIEW, LESSON_DO_SWEEP, LESSON_DO_RACE } lesson_do;

typedef struct lesson_try {
    char keys[64];   /* as written: "Left Right", or ":base 500000" */
    uint32_t key[8]; /* the keys (UI_KEY_* or code points); n_key 0 for an :option hint */
    int n_key;
    char what[200];
} lesson_try;

typedef struct lesson_slide {
    int line; /* the "slide:" line */
    char title[128];
    char view_args[1024]; /* the view line as written ("rope --dim 8") */
    app_state st;         /* the state the view line gives: what `r` resets to */
    char caption[2048];   /* with {placeholders} */
    lesson_try tries[LESSON_MAX_TRY];
    int n_try;
    lesson_do action;
    char sweep_opt[32];
    char sweep_val[LESSON_MAX_SWEEP][32];
    int n_sweep;
    char panels[LESSON_MAX_PANELS][24]; /* the panels the caption names */
    int n_panels, panels_line;
} lesson_slide;

typedef struct lesson {
    char path[1024];
    char name[256]; /* as the user gave it (a shipped name or a path), for the handout */
    char title[128];
    char about[256];
    lesson_slide *slides; /* n (malloc) */
    int n;
} lesson;

/* Is key bound on a slide showing st (the explorer's keys)? Used to check "try:" hints. */
typedef int (*lesson_key_fn)(const app_state *st, uint32_t key);

/* Read and check path. Every problem is written to diag as "PATH:LINE: message" (one a line);
 * returns the number of problems (0: l is complete and valid), or -1 when the file cannot be
 * read at all (also reported). On any problem l is freed: a bad lesson never starts half-way.
 * key_bound may be NULL (keys then only need a valid name). */
int lesson_load(lesson *l, const char *path, lesson_key_fn key_bound, FILE *diag);
void lesson_free(lesson *l);

/* NAME (a shipped lesson: assets/lessons/NAME.lesson) or a file path, into buf. 0 or -1 with a
 * message that lists the shipped lessons. */
int lesson_resolve(const char *name_or_file, char *buf, size_t n, char *err, size_t errlen);
/* The shipped lessons' names in teaching order (why-position, sinusoids, rope, alibi,
 * extrapolation, extension; others after them, alphabetically); returns the count (names[i]
 * malloc'd, free with lesson_names_free). */
int lesson_names(char ***names);
void lesson_names_free(char **names, int n);

/* The caption with its placeholders filled from st and the view's readout. */
void lesson_expand(const lesson_slide *s, const app_state *st, const char *readout, char *out,
                   size_t n);
/* The same with a race slide's numbers (race NULL or not done: they read as pending, "…"). */
void lesson_expand_race(const lesson_slide *s, const app_state *st, const char *readout,
                        const lesson_race_numbers *race, char *out, size_t n);

/* The `pelab export` command that reproduces a slide's figure (as written, with -o out). */
void lesson_export_command(const lesson_slide *s, const char *out, char *buf, size_t n);

/* A key's name as a lesson writes it ("Left", "Space", "b"), and back; -1 for an unknown name. */
void lesson_key_name(uint32_t key, char *buf, size_t n);
int lesson_key_parse(const char *name, uint32_t *key);
/* 1 when the lesson presenter itself takes key (next, previous, jump, list, reset, quit). */
int lesson_key_reserved(uint32_t key, const char **what);

/* Break text into at most max lines no wider than w at size on t (at word boundaries; a word
 * wider than a line is cut). Returns the count; the rest is dropped when max is reached. */
#define LESSON_LINE 512
int lesson_wrap(const scene_target *t, const char *text, double size, double w,
                char (*lines)[LESSON_LINE], int max);

/* Present the lesson name (shipped name or file) from slide (text as typed, NULL: the first) in
 * the terminal or the window, drawing frames frames (NULL: until quit); what `pelab gui --lesson`
 * runs (cmd_lesson.c). Returns the exit status. */
int app_lesson_run(const char *name, const char *slide, const char *frames, int gui);
/* Present l from slide start (0-based) in the terminal or the window; frames > 0 draws that many
 * frames and returns (tests). Returns the exit status. */
int lesson_present(const lesson *l, int start, int gui, int frames);
/* The presenter as a layer on an explorer already initialised (what lesson_present runs; tests
 * drive it with events and frames). NULL when out of memory. */
struct app_explorer;
struct lesson_presenter;
struct lesson_presenter *lesson_attach(struct app_explorer *x, const lesson *l, int start);
/* As lesson_attach, but a `do: race` slide trains nothing: its figure is the race at step 0
 * (what --check's panel check and the layout tests draw; no thread starts). */
struct lesson_presenter *lesson_attach_still(struct app_explorer *x, const lesson *l, int start);
void lesson_detach(struct app_explorer *x, struct lesson_presenter *p);
/* Every panel a slide's caption names (panels:) is in the slide's scene, in the terminal at
 * 80x24 and 120x40 and in the window at 1024x768 and 1280x800 at 100, 150 and 200% zoom, as the
 * presenter lays it out. Each miss is written to diag as "PATH:LINE: message"; returns their
 * count. */
int lesson_check_panels(const lesson *l, FILE *diag);
/* The handout: one PDF page per slide (figure, title, caption, reproducing command). 0, 2 for a
 * usage problem, 1 for a runtime failure (message in err). */
int lesson_handout(const lesson *l, const char *path, char *err, size_t errlen);

#endif
