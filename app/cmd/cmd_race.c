/* cmd_race.c: `pelab race` (issue 24): the position schemes trained side by side on the same data,
 * shown live, saved into one folder with a log of the whole race.
 *
 * The engine is pe/model/tiny/race.c (each model stepped by model_train's own loop, so the
 * weights are those of `pelab train` of each scheme alone); this file parses, prepares the corpus
 * as train does, copies the lanes' numbers into an app_race_data for the figure (views/race.c)
 * and the log, and saves through the output module (a temporary renamed into place). The live
 * display is the terminal's or the window's (explorer/race_live.c); without a terminal the race
 * prints a progress line now and then, as train does. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd_model.h"
#include "commands.h"
#include "format.h"
#include "model.h"
#include "outfile.h"
#include "race.h"
#include "race_fig.h"
#include "race_live.h"
#include "race_out.h"
#include "race_sync.h"

static volatile sig_atomic_t race_stop_requested;

static void on_sigint(int sig)
{
    (void)sig;
    race_stop_requested = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum {
    O_PE = 256,
    O_STEPS,
    O_THREADS,
    O_SEED,
    O_DSEED,
    O_TOKENS,
    O_EVERY,
    O_ETOKENS,
    O_SMOOTH,
    O_DISPLAY,
    O_STORY,
    O_FORCE,
    O_GUI,
    O_FRAMES,
    O_ANIMATE,
    O_HELP
};

static const char *const displays[] = {"auto", "terminal", "window", "none", NULL};

static const app_cmd_opt race_opts[] = {
    {.name = "pe",
     .code = O_PE,
     .arg = "LIST",
     .help = "schemes, comma-separated, each with optional parameters: rope:base=500, "
             "alibi:slope-ratio=0.25 (nope,learned,sinusoidal,alibi,rope,t5)"},
    {.name = "output",
     .code = 'o',
     .short_name = 'o',
     .arg = "DIR",
     .help = "folder for the checkpoints and race.csv (race)",
     .files = "/"},
    {.name = "steps", .code = O_STEPS, .arg = "N", .help = "AdamW steps of every scheme (2000)"},
    {.name = "threads", .code = O_THREADS, .arg = "N", .help = "worker threads, 0 = all cores (0)"},
    {.name = "seed", .code = O_SEED, .arg = "N", .help = "initialisation and batches (1)"},
    {.name = "data-seed", .code = O_DSEED, .arg = "N", .help = "story corpus (1)"},
    {.name = "tokens", .code = O_TOKENS, .arg = "N", .help = "corpus size (1000000)"},
    {.name = "eval-every",
     .code = O_EVERY,
     .arg = "N",
     .help = "steps between held-out measurements (steps / 10)"},
    {.name = "eval-tokens",
     .code = O_ETOKENS,
     .arg = "N",
     .help = "held-out tokens per measurement, as pelab eval --tokens (8192)"},
    {.name = "smooth",
     .code = O_SMOOTH,
     .arg = "A",
     .help = "EMA weight of the training curves, 0..0.999 (0.95)"},
    {.name = "display",
     .code = O_DISPLAY,
     .arg = "WHERE",
     .help = "live display: auto (the terminal when there is one), terminal, window, none",
     .choices = displays},
    {.name = "frames",
     .code = O_FRAMES,
     .arg = "N",
     .help = "with a display: close it after N frames (tests)"},
    {.name = "animate",
     .code = O_ANIMATE,
     .arg = "FILE",
     .help = "also record the race's view as an animation, .gif .webp or FOLDER/ (48 frames of "
             "the race as it unfolded; S records the race so far)",
     .files = ""},
    {.name = "story",
     .code = O_STORY,
     .arg = "DIR",
     .help = "grammar directory (assets/story)",
     .files = "/"},
    {.name = "force", .code = O_FORCE, .help = "replace files in DIR that pelab did not write"},
    {.name = "help", .code = O_HELP, .short_name = 'h', .help = "this usage"},
    {0},
};

typedef struct lane_spec {
    char label[APP_RACE_LABEL];
    model_config c;
} lane_spec;

static const char *scheme_list = "nope, learned, sinusoidal, alibi, rope, t5";

/* One entry of --pe: SCHEME[:NAME=VALUE[:NAME=VALUE...]] (parameters as train's options). */
static int parse_lane(const char *spec, size_t n, lane_spec *out)
{
    char buf[APP_RACE_LABEL];
    if (n == 0 || n >= sizeof buf) {
        fprintf(stderr,
                "pelab race: --pe '%.*s': each entry is 1..%zu characters: a scheme (%s) "
                "with optional :name=value parameters\n",
                (int)(n > 200 ? 200 : n), spec, sizeof buf - 1, scheme_list);
        return -1;
    }
    memcpy(buf, spec, n);
    buf[n] = 0;
    snprintf(out->label, sizeof out->label, "%s", buf);
    char *save = NULL, *tok = strtok_r(buf, ":", &save);
    int k = tok ? model_pe_from_name(tok) : -1;
    if (k < 0) {
        fprintf(stderr, "pelab race: --pe '%s': the scheme '%s' is not one of %s\n", out->label,
                tok ? tok : "", scheme_list);
        return -1;
    }
    model_config_default(&out->c, k);
    while ((tok = strtok_r(NULL, ":", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            fprintf(stderr,
                    "pelab race: --pe '%s': '%s' is not name=value (base, pairing, "
                    "slope-ratio, t5-buckets, t5-max-distance)\n",
                    out->label, tok);
            return -1;
        }
        *eq = 0;
        const char *v = eq + 1;
        model_config *c = &out->c;
        int bad = 0;
        if (!strcmp(tok, "base") && (k == MODEL_PE_ROPE || k == MODEL_PE_SINUSOIDAL))
            bad = app_model_parse_double("race", "pe ... base", v, 1.0000001, 1e30, &c->pe.base);
        else if (!strcmp(tok, "pairing") && k == MODEL_PE_ROPE) {
            if (!strcmp(v, "interleaved"))
                c->pe.pairing = PE_PAIRING_INTERLEAVED;
            else if (!strcmp(v, "half"))
                c->pe.pairing = PE_PAIRING_HALF;
            else {
                fprintf(stderr, "pelab race: --pe '%s': pairing=%s: interleaved or half\n",
                        out->label, v);
                bad = -1;
            }
        } else if (!strcmp(tok, "slope-ratio") && k == MODEL_PE_ALIBI)
            bad = app_model_parse_double("race", "pe ... slope-ratio", v, 0, 0.999999,
                                         &c->pe.slope_ratio);
        else if (!strcmp(tok, "t5-buckets") && k == MODEL_PE_T5)
            bad = app_model_parse_int("race", "pe ... t5-buckets", v, 2, 1024, &c->pe.t5_buckets);
        else if (!strcmp(tok, "t5-max-distance") && k == MODEL_PE_T5)
            bad = app_model_parse_int("race", "pe ... t5-max-distance", v, 2, PE_MAX_LEN,
                                      &c->pe.t5_max_distance);
        else {
            fprintf(stderr,
                    "pelab race: --pe '%s': %s takes no parameter '%s' (rope: base, pairing; "
                    "sinusoidal: base; alibi: slope-ratio; t5: t5-buckets, t5-max-distance)\n",
                    out->label, model_pe_name(k), tok);
            return -1;
        }
        if (bad) return -1;
    }
    return 0;
}

static int parse_lanes(const char *list, lane_spec *lanes, int *n)
{
    *n = 0;
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (*n == APP_RACE_MAX_LANES) {
            fprintf(stderr, "pelab race: --pe %s: at most %d schemes race at once\n", list,
                    APP_RACE_MAX_LANES);
            return -1;
        }
        if (parse_lane(p, len, &lanes[*n])) return -1;
        for (int i = 0; i < *n; i++)
            if (!strcmp(lanes[i].label, lanes[*n].label)) {
                fprintf(stderr, "pelab race: --pe %s: '%s' is named twice\n", list, lanes[i].label);
                return -1;
            }
        ++*n;
        if (!p[len]) break;
        p += len + 1;
    }
    return 0;
}

/* DIR/LABEL.pelab, with the label's ':' as '_' (rope:base=500 -> rope_base=500.pelab). */
static void lane_path(const char *dir, const char *label, char *buf, size_t n)
{
    if (snprintf(buf, n, "%s/%s.pelab", dir, label) >= (int)n) buf[0] = 0; /* check_dir's limit */
    for (char *c = buf + strlen(dir) + 1; *c; c++)
        if (*c == ':') *c = '_';
}

/* -o DIR: a folder, made when missing (its parent must exist); everything in it the race will
 * write checked before the minutes of training. Returns 0 or prints and returns 2. */
static int check_dir(const char *dir, const lane_spec *lanes, int n, int *made)
{
    *made = 0;
    struct stat st;
    if (strlen(dir) > 3000) {
        fprintf(stderr, "pelab race: -o: the folder name is %zu bytes long, at most 3000\n",
                strlen(dir));
        return 2;
    }
    if (!dir[0] || outfile_is_stdout(dir)) {
        fprintf(stderr, "pelab race: -o '%s': name a folder for the checkpoints and race.csv\n",
                dir);
        return 2;
    }
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr,
                    "pelab race: -o %s: exists and is not a folder (a folder holds the "
                    "checkpoints and race.csv)\n",
                    dir);
            return 2;
        }
    } else if (mkdir(dir, 0777) != 0) {
        fprintf(stderr, "pelab race: -o %s: cannot make the folder: %s\n", dir, strerror(errno));
        return 2;
    } else
        *made = 1;
    char path[4096], err[1024];
    for (int i = 0; i <= n; i++) {
        if (i < n)
            lane_path(dir, lanes[i].label, path, sizeof path);
        else
            snprintf(path, sizeof path, "%s/race.csv", dir);
        if (outfile_check(path, err, sizeof err) < 0) {
            fprintf(stderr, "pelab race: %s\n", err);
            return 2;
        }
        if (app_model_check_contents("race", path, i < n ? "PELABMDL" : "# pelab race",
                                     i < n ? "a checkpoint" : "a race log"))
            return 2;
    }
    return 0;
}

typedef struct race_run {
    model_race r;
    app_race_data d;
    double t0, paused_s, pause_t0;
    int paused;
    outfile log;
    int log_ok;
    int step_at[APP_RACE_MAX_LANES], eval_at[APP_RACE_MAX_LANES];
} race_run;

void app_race_sync(app_race_data *d, model_race *r, long *seen, long *goal)
{
    *seen = *goal = 0;
    model_race_lock(r);
    for (int i = 0; i < r->n; i++) {
        model_race_lane *l = &r->lanes[i];
        app_race_lane *o = &d->lanes[i];
        if (l->done > o->done)
            memcpy(o->loss + o->done, l->loss + o->done,
                   (size_t)(l->done - o->done) * sizeof(float));
        o->done = l->done;
        for (int k = o->nevals; k < l->nevals; k++) {
            const model_race_eval *e = &l->evals[k];
            app_race_eval ae = {e->step, e->tokens, {e->held[0], e->held[1], e->held[2]}, e->sink};
            if (app_race_add_eval(o, &ae)) break;
        }
        o->failed = l->state == RACE_LANE_FAILED;
        *seen += (long)l->done * o->tokens_per_step;
        *goal += (long)l->m.cfg.steps * o->tokens_per_step;
    }
    model_race_unlock(r);
}

/* Copy what the lanes did since the last call into run->d, with the race's clock. */
static void snapshot(race_run *run)
{
    app_race_data *d = &run->d;
    long seen, goal;
    app_race_sync(d, &run->r, &seen, &goal);
    double now = now_s();
    d->elapsed_s = now - run->t0;
    double active = d->elapsed_s - run->paused_s - (run->paused ? now - run->pause_t0 : 0);
    d->tokens_per_s = active > 0 ? (double)seen / active : 0;
    d->eta_s = seen > 0 && d->tokens_per_s > 0 ? (double)(goal - seen) / d->tokens_per_s : -1;
    d->paused = run->paused;
}

static void log_rows(race_run *run)
{
    if (!run->log_ok) return;
    for (int i = 0; i < run->d.n; i++)
        if (app_race_log_rows(run->log.fp, &run->d, i, &run->step_at[i], &run->eval_at[i]))
            run->log_ok = 0;
}

static void set_paused(race_run *run, int on)
{
    if (on == run->paused) return;
    model_race_pause(&run->r, on);
    double now = now_s();
    if (on)
        run->pause_t0 = now;
    else
        run->paused_s += now - run->pause_t0;
    run->paused = on;
}

/* Without a display: a line every tenth of the race, as train prints without a terminal. */
static void text_progress(race_run *run, int *last_tenth)
{
    const app_race_data *d = &run->d;
    int done = 0, steps = 0;
    for (int i = 0; i < d->n; i++) done += d->lanes[i].done, steps += d->lanes[i].steps;
    int tenth = steps ? done * 10 / steps : 10;
    if (tenth == *last_tenth) return;
    *last_tenth = tenth;
    fprintf(stderr, "race: %d/%d steps  %.0f tokens/s  %.1f s elapsed ", done, steps,
            d->tokens_per_s, d->elapsed_s);
    for (int i = 0; i < d->n; i++) {
        const app_race_lane *l = &d->lanes[i];
        fprintf(stderr, " %s %.3f", l->label, l->done ? l->loss[l->done - 1] : NAN);
    }
    fputc('\n', stderr);
}

/* The size and pace S and --animate record at: pelab export race's defaults, so the same
 * animation comes again from the log (pelab export race --from DIR -o FILE.gif). */
static const app_export_opts record_size = {1000, 600, 96};
enum { RECORD_FRAMES = 48 };
#define RECORD_FPS 12.0

/* S: the race so far as DIR/race-N.gif (the first N free); what happened goes on the key line. */
static void record_now(race_run *run, app_race_ui *ui, const char *dir, const char *command)
{
    char path[4096], err[1024];
    struct stat st;
    int k = 1;
    do snprintf(path, sizeof path, "%s/race-%d.gif", dir, k);
    while (stat(path, &st) == 0 && ++k < 1000);
    app_race_ui u = *ui;
    u.note[0] = 0;
    int rc = app_race_animate(&run->d, &u, path, RECORD_FRAMES, RECORD_FPS, &record_size, command,
                              err, sizeof err);
    ui->note_bad = rc != 0;
    if (rc)
        snprintf(ui->note, sizeof ui->note, "record failed: %.200s", err);
    else
        snprintf(ui->note, sizeof ui->note, "recorded %.180s (%d frames of the race so far)", path,
                 RECORD_FRAMES);
}

static int cmd_race(int argc, char **argv)
{
    const char *pe = "nope,learned,sinusoidal,alibi,rope,t5", *dir = "race", *story = NULL;
    const char *display = "auto", *animate = NULL;
    int steps = 2000, threads = 0, tokens = 1000000, every = 0, etokens = 8192, frames = 0;
    uint64_t seed = 1, dseed = 1;
    double smooth = 0.95;
    app_cli_args args;
    int prc = app_command_parse(&app_command_race, NULL, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    for (int i = 0; i < args.n; i++) {
        const char *v = args.val[i];
        int bad = 0;
        switch (args.code[i]) {
        case O_PE:
            pe = v;
            break;
        case 'o':
            dir = v;
            break;
        case O_STEPS:
            bad = app_model_parse_int("race", "steps", v, 1, 10000000, &steps);
            break;
        case O_THREADS:
            bad = app_model_parse_int("race", "threads", v, 0, 1024, &threads);
            break;
        case O_SEED:
            bad = app_model_parse_u64("race", "seed", v, &seed);
            break;
        case O_DSEED:
            bad = app_model_parse_u64("race", "data-seed", v, &dseed);
            break;
        case O_TOKENS:
            bad = app_model_parse_int("race", "tokens", v, 1000, 100000000, &tokens);
            break;
        case O_EVERY:
            bad = app_model_parse_int("race", "eval-every", v, 1, 10000000, &every);
            break;
        case O_ETOKENS:
            bad = app_model_parse_int("race", "eval-tokens", v, 1000, 100000000, &etokens);
            break;
        case O_SMOOTH:
            bad = app_model_parse_double("race", "smooth", v, 0, 0.999, &smooth);
            break;
        case O_DISPLAY:
            display = v;
            bad = -1;
            for (int k = 0; displays[k]; k++)
                if (!strcmp(v, displays[k])) bad = 0;
            if (bad)
                fprintf(stderr, "pelab race: --display %s: auto, terminal, window or none\n", v);
            break;
        case O_FRAMES:
            bad = app_model_parse_int("race", "frames", v, 1, 100000000, &frames);
            break;
        case O_STORY:
            story = v;
            break;
        case O_ANIMATE:
            animate = v;
            if (app_format_of_as(v, APP_FORMAT_ANIMATION) == APP_FMT_UNKNOWN) {
                char exts[128];
                app_format_list(APP_FORMAT_ANIMATION, ".", exts, sizeof exts);
                fprintf(stderr, "pelab race: --animate %s: an animation is %s or FOLDER/\n", v,
                        exts);
                bad = -1;
            } else {
                char e[1024];
                const app_format_info *fi =
                    app_format_info_of(app_format_of_as(v, APP_FORMAT_ANIMATION));
                if ((fi->check ? fi->check(v, e, sizeof e) : outfile_check(v, e, sizeof e)) < 0) {
                    fprintf(stderr, "pelab race: --animate %s\n", e);
                    bad = -1;
                }
            }
            break;
        case O_FORCE:
            outfile_set_force(1);
            break;
        }
        if (bad) return 2;
    }
    if (args.n_positional > 0) {
        fprintf(stderr, "pelab race: unexpected argument %s\n", args.positional[0]);
        return 2;
    }
    if (!every) every = steps >= 10 ? steps / 10 : 1;
    lane_spec lanes[APP_RACE_MAX_LANES];
    int n;
    if (parse_lanes(pe, lanes, &n)) return 2;
    int want = !strcmp(display, "window")     ? 2
               : !strcmp(display, "terminal") ? 1
               : !strcmp(display, "none")     ? 0
               : isatty(0) && isatty(1)       ? 1
                                              : 0;
    int made = 0;
    if (check_dir(dir, lanes, n, &made)) {
        if (made) rmdir(dir);
        return 2;
    }
    char sdir[2048], err[512];
    model_grammar g;
    if (app_model_story_dir(story, sdir, sizeof sdir)) { /* it printed why */
        if (made) rmdir(dir);
        return 1;
    }
    if (model_grammar_load(&g, sdir, err, sizeof err)) {
        fprintf(stderr, "pelab race: %s\n", err);
        if (made) rmdir(dir);
        return 1;
    }
    tok_vocab v = {0};
    int *ids = NULL, *held = NULL, rc = 1;
    race_run run;
    memset(&run, 0, sizeof run);
    model models[APP_RACE_MAX_LANES];
    memset(models, 0, sizeof models);
    app_race_live *live = NULL;
    ids = malloc((size_t)tokens * sizeof *ids);
    held = malloc((size_t)etokens * sizeof *held);
    if (!ids || !held) {
        fprintf(stderr, "pelab race: out of memory for %d tokens\n", tokens);
        goto out;
    }
    if (model_corpus_vocab(&g, dseed, (size_t)tokens, &v, ids, err, sizeof err) ||
        model_corpus(&g, &v, model_heldout_seed(dseed), (size_t)etokens, held, NULL, err,
                     sizeof err)) {
        fprintf(stderr, "pelab race: %s\n", err);
        goto out;
    }
    unsigned long long need = 4096;
    for (int i = 0; i < n; i++) {
        model_config *c = &lanes[i].c;
        c->steps = steps;
        c->seed = seed;
        c->data_seed = dseed;
        c->vocab = v.n;
        c->grammar_hash = g.hash;
        c->hidden = 4 * c->dim;
        size_t k = 0;
        k += (size_t)snprintf(c->command, sizeof c->command, "pelab");
        for (int a = 0; a < argc && k < sizeof c->command; a++)
            k += (size_t)snprintf(c->command + k, sizeof c->command - k, " %s", argv[a]);
        if (model_init(&models[i], c, &v, err, sizeof err)) {
            fprintf(stderr, "pelab race: --pe %s: %s\n", lanes[i].label, err);
            goto out;
        }
        /* the checkpoint (as train counts it) and the log's rows of this lane */
        need += (unsigned long long)models[i].n_params * 4 + (unsigned long long)v.n * 33 +
                sizeof c->command + 1024 + (unsigned long long)steps * 64 + 4096;
    }
    if (outfile_room(dir[0] ? dir : ".", need, err, sizeof err) < 0) {
        fprintf(stderr, "pelab race: %s\n", err);
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (app_race_lane_init(&run.d.lanes[i], lanes[i].label, steps,
                               (long)models[i].cfg.batch * models[i].cfg.ctx, models[i].cfg.ctx)) {
            fprintf(stderr, "pelab race: out of memory\n");
            goto out;
        }
    run.d.n = n;
    if (model_race_init(&run.r, models, n, ids, (size_t)tokens, held, (size_t)etokens, every, err,
                        sizeof err)) {
        fprintf(stderr, "pelab race: %s\n", err);
        goto out;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/race.csv", dir);
    if (outfile_open(&run.log, path, err, sizeof err) < 0) {
        fprintf(stderr, "pelab race: %s\n", err);
        goto out;
    }
    run.log_ok = 1;
    char command[MODEL_MAX_COMMAND];
    snprintf(command, sizeof command, "%s", run.r.lanes[0].m.cfg.command);
    if (app_race_log_header(run.log.fp, &run.d, command)) run.log_ok = 0;
    int nthreads = threads ? threads : model_cpus();
    run.d.threads = nthreads;
    if (want) {
        if (app_race_live_open(&live, want == 2, err, sizeof err)) {
            fprintf(stderr, "pelab race: %s\n", err);
            rc = 1;
            goto out;
        }
    } else
        fprintf(stderr,
                "pelab race: %d scheme%s, %d steps of %d x %d tokens each, on %d thread%s; "
                "held-out every %d steps; into %s/\n",
                n, n == 1 ? "" : "s", steps, run.r.lanes[0].m.cfg.batch, run.r.lanes[0].m.cfg.ctx,
                nthreads, nthreads == 1 ? "" : "s", every, dir);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    race_stop_requested = 0;
    if (!live) sigaction(SIGINT, &sa, &old);
    run.t0 = now_s();
    if (model_race_start(&run.r, nthreads, err, sizeof err)) {
        fprintf(stderr, "pelab race: %s\n", err);
        goto out;
    }
    app_race_ui ui;
    app_race_ui_default(&ui);
    ui.smooth = smooth;
    ui.live = 1;
    int stopped = 0, last_tenth = -1, shown = 0, quit_sig = 0;
    for (;;) {
        int fin = model_race_finished(&run.r);
        snapshot(&run);
        log_rows(&run);
        if (live) {
            int act = app_race_live_step(live, &run.d, &ui, fin ? 0 : 200);
            shown++;
            if (act == APP_RACE_ACT_PAUSE) set_paused(&run, !run.paused);
            if (act == APP_RACE_ACT_RECORD) {
                /* the frames take a moment (the race goes on meanwhile): say so first */
                snprintf(ui.note, sizeof ui.note, "recording the race so far ...");
                ui.note_bad = 0;
                app_race_live_draw(live, &run.d, &ui);
                record_now(&run, &ui, dir, command);
            }
            if (act == APP_RACE_ACT_STOP || act == APP_RACE_ACT_QUIT) {
                quit_sig = app_race_live_signal(live);
                stopped = !fin;
                break;
            }
            if (frames && shown >= frames && !fin) {
                /* --frames N (tests): the display closes, the race runs on to its end */
                app_race_live_close(live);
                live = NULL;
                sigaction(SIGINT, &sa, &old);
                want = 0;
            }
        } else {
            text_progress(&run, &last_tenth);
            if (race_stop_requested) {
                stopped = !fin;
                break;
            }
            if (!fin) model_race_wait(&run.r, 0.2);
        }
        if (fin) break;
    }
    if (run.paused) set_paused(&run, 0);
    model_race_stop(&run.r);
    model_race_join(&run.r);
    snapshot(&run);
    run.d.finished = 1;
    run.d.stopped = stopped;
    log_rows(&run);
    if (live) {
        app_race_live_close(live);
        live = NULL;
    }
    if (!want) sigaction(SIGINT, &old, NULL);
    rc = stopped ? 130 : 0;
    if (quit_sig) rc = 128 + quit_sig;
    int failed = 0;
    /* every lane is saved, whatever happened to the others: nothing trained is lost silently */
    for (int i = 0; i < n; i++) {
        model_race_lane *l = &run.r.lanes[i];
        if (l->state == RACE_LANE_FAILED) {
            fprintf(stderr, "pelab race: %s: %s\n", l->m.cfg.pe_name, l->err);
            failed = 1;
            if (l->done == 0) continue;
        }
        if (l->nevals) l->m.cfg.heldout_loss = (float)l->evals[l->nevals - 1].held[0];
        lane_path(dir, run.d.lanes[i].label, path, sizeof path);
        if (app_model_save(&l->m, path, err, sizeof err)) {
            fprintf(stderr, "pelab race: %s\n", err);
            failed = 1;
        }
    }
    if (!run.log_ok) {
        outfile_fail(&run.log, "write failed", err, sizeof err);
        fprintf(stderr, "pelab race: %s\n", err);
        failed = 1;
    } else if (outfile_commit(&run.log, err, sizeof err) < 0) {
        fprintf(stderr, "pelab race: %s\n", err);
        failed = 1;
    }
    run.log_ok = 0;
    char name[4096];
    printf("%s %d scheme%s into %s/ in %.1f s (%.0f tokens/s on %d thread%s)\n",
           stopped ? "stopped, saved" : "raced", n, n == 1 ? "" : "s",
           app_model_shown(dir, name, sizeof name), run.d.elapsed_s, run.d.tokens_per_s, nthreads,
           nthreads == 1 ? "" : "s");
    printf("  %-24s %6s %8s %9s %9s %9s %6s\n", "scheme", "steps", "train", "held@ctx", "2x ctx",
           "4x ctx", "sinks");
    for (int i = 0; i < n; i++) {
        const model_race_lane *l = &run.r.lanes[i];
        const model_race_eval *e = l->nevals ? &l->evals[l->nevals - 1] : NULL;
        printf("  %-24s %6d %8.3f %9.3f %9.3f %9.3f %5.0f%%\n",
               app_model_shown(run.d.lanes[i].label, name, sizeof name), l->done,
               l->m.cfg.train_loss, e ? e->held[0] : NAN, e ? e->held[1] : NAN,
               e ? e->held[2] : NAN, e ? 100 * e->sink : NAN);
    }
    if (animate) {
        app_race_ui u;
        app_race_ui_default(&u);
        u.smooth = smooth;
        int ar = app_race_animate(&run.d, &u, animate, RECORD_FRAMES, RECORD_FPS, &record_size,
                                  command, err, sizeof err);
        if (ar) {
            fprintf(stderr, "pelab race: --animate %s\n", err);
            failed = 1;
        } else
            printf("recorded %s (%d frames)\n", animate, RECORD_FRAMES);
    }
    if (failed) rc = 1;
out:
    if (live) app_race_live_close(live);
    outfile_abort(&run.log); /* a temporary left by an early failure; nothing after a commit */
    model_race_free(&run.r);
    for (int i = 0; i < APP_RACE_MAX_LANES; i++) model_free(&models[i]);
    app_race_data_free(&run.d);
    free(ids);
    free(held);
    tok_vocab_free(&v);
    model_grammar_free(&g);
    if (rc == 1 && made) rmdir(dir); /* a folder this race made and left empty goes again */
    return rc;
}

const app_command app_command_race = {
    .name = "race",
    .synopsis = "[--pe LIST] [--steps N] [--threads N] [--seed S] [-o DIR]",
    .summary = "train the position schemes side by side, live",
    .fn = cmd_race,
    .opts = race_opts,
    .notes = "Trains one model per scheme at once on the same stories (each exactly as pelab train "
             "would, bit for bit) and shows the training loss, the held-out loss at and past the "
             "trained context and the first-token sink share as they form. Keys: space pauses, s "
             "stops and saves, S records the race so far as DIR/race-N.gif, 1-8 show or hide a "
             "scheme, tab switches the panel in focus, q quits (saving). Ctrl-C stops after the "
             "current steps and saves them. DIR gets "
             "SCHEME.pelab per scheme and race.csv (pelab export race --from DIR)."};
