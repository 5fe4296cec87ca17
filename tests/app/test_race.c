/* test_race.c: `pelab race` end to end through the real binary (issue 24), with races of a few
 * steps: the saved models are bit for bit those of `pelab train` of each scheme alone, the log
 * holds every step and measurement, its held-out losses equal `pelab eval`'s of the saved models,
 * Ctrl-C saves what is trained, and a bad -o is refused before any work. argv[1] is pelab. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/tiny/model.h"
#include "race_fig.h"
#include "runproc.h"
#include "tap.h"

static const char *pelab;
static char dir[512];
static char errtext[8192];
static int errlines;

static int run(const char *const *args, const char *out)
{
    char errpath[600];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", dir);
    int rc = test_run(pelab, args, out, errpath, errtext, sizeof errtext, &errlines);
    for (char *c = errtext; *c; c++)
        if (*c == '\n') *c = '|'; /* a TAP description is one line */
    return rc;
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t k = fread(b, 1, (size_t)n, fp);
    b[k] = '\0';
    fclose(fp);
    return b;
}

/* Files in d whose name starts with '.' (the output module's temporaries) or ends in .tmp. */
static int temporaries(const char *d)
{
    DIR *dp = opendir(d);
    if (!dp) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            (e->d_name[0] == '.' || strstr(e->d_name, ".tmp")))
            n++;
    closedir(dp);
    return n;
}

static int same_weights(const char *a, const char *b, model *ma)
{
    model mb;
    char err[256];
    if (model_load(a, ma, err, sizeof err) || model_load(b, &mb, err, sizeof err)) {
        TAP_OK(0, "load %s / %s: %s", a, b, err);
        return 0;
    }
    int same = ma->n_params == mb.n_params &&
               !memcmp(ma->params, mb.params, ma->n_params * sizeof(float)) &&
               ma->cfg.train_loss == mb.cfg.train_loss && ma->cfg.steps_done == mb.cfg.steps_done;
    model_free(&mb);
    return same;
}

/* The value after the first occurrence of "  PATH  " in eval's table: its held-out column. */
static double eval_heldout(const char *table, const char *path)
{
    const char *p = strstr(table, path);
    if (!p) return NAN;
    char scheme[32];
    int ctx;
    double train, held;
    if (sscanf(p + strlen(path), " %31s %d %lf %lf", scheme, &ctx, &train, &held) != 4) return NAN;
    return held;
}

/* Mean over positions [a, e) of column col (1-based after "position") of eval's CSV: every
 * position has the same number of windows, so the mean of the means is the mean loss. */
static double csv_range(const char *csv, int col, int a, int e)
{
    double s = 0;
    int k = 0;
    for (const char *p = csv; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (*p < '0' || *p > '9') continue;
        int pos = atoi(p);
        if (pos < a || pos >= e) continue;
        const char *q = p;
        for (int c = 0; c < col && q; c++) q = strchr(q, ','), q = q ? q + 1 : NULL;
        if (!q) return NAN;
        s += atof(q);
        k++;
    }
    return k == e - a ? s / k : NAN;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("1..0 # SKIP usage: test_race PELAB\n");
        return 77;
    }
    pelab = argv[1];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pelab-race-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        printf("1..0 # SKIP no temporary folder\n");
        return 77;
    }
    char out[700], path[800], path2[1000], anim[700];
    snprintf(out, sizeof out, "%s/r", dir);
    snprintf(anim, sizeof anim, "%s/race.webp", dir);

    /* a race of three lanes, one a variant, 6 steps on a small corpus */
    const char *race[] = {"race",
                          "--pe",
                          "rope,alibi:slope-ratio=0.25,learned",
                          "--steps",
                          "6",
                          "--eval-every",
                          "3",
                          "--eval-tokens",
                          "1000",
                          "--tokens",
                          "20000",
                          "--threads",
                          "2",
                          "--display",
                          "none",
                          "--animate",
                          anim,
                          "-o",
                          out,
                          NULL};
    int rc = run(race, NULL);
    TAP_OK(rc == 0, "race of 3 lanes, 6 steps: exit %d (%s)", rc, errtext);
    TAP_OK(temporaries(out) == 0, "no temporary left in DIR");
    char *webp = slurp(anim);
    TAP_OK(webp && !memcmp(webp, "RIFF", 4) && !memcmp(webp + 8, "WEBPVP8X", 8),
           "--animate FILE.webp: the race recorded as an animated WebP");
    free(webp);
    const char *badanim[] = {"race", "--steps", "2", "--animate", "x.png", "-o", out, NULL};
    rc = run(badanim, NULL);
    TAP_OK(rc == 2 && strstr(errtext, "--animate x.png") && strstr(errtext, ".gif") &&
               errlines == 1,
           "--animate x.png refused before any work (exit %d): %s", rc, errtext);

    /* the same schemes trained alone */
    const char *trains[3][12] = {
        {"train", "--pe", "rope", NULL},
        {"train", "--pe", "alibi", "--slope-ratio", "0.25", NULL},
        {"train", "--pe", "learned", NULL},
    };
    const char *saved[3] = {"rope", "alibi_slope-ratio=0.25", "learned"};
    for (int i = 0; i < 3; i++) {
        const char *args[24];
        int n = 0;
        for (int k = 0; trains[i][k]; k++) args[n++] = trains[i][k];
        snprintf(path2, sizeof path2, "%s/alone-%d.pelab", dir, i);
        const char *more[] = {"--steps", "6",       "--tokens", "20000", "--threads",
                              "1",       "--quiet", "-o",       path2,   NULL};
        for (int k = 0; more[k]; k++) args[n++] = more[k];
        args[n] = NULL;
        rc = run(args, NULL);
        snprintf(path, sizeof path, "%s/%s.pelab", out, saved[i]);
        model m;
        TAP_OK(rc == 0 && same_weights(path, path2, &m),
               "%s: the race's weights are pelab train's, bit for bit (train exit %d %s)", saved[i],
               rc, errtext);
        model_free(&m);
    }

    /* the log */
    snprintf(path, sizeof path, "%s/race.csv", out);
    app_race_data d;
    char err[512];
    rc = app_race_log_read(path, &d, err, sizeof err);
    TAP_OK(rc == 0 && d.n == 3 && !strcmp(d.lanes[1].label, "alibi:slope-ratio=0.25"),
           "race.csv reads back: %d lanes (%s)", d.n, rc ? err : d.lanes[1].label);
    for (int i = 0; rc == 0 && i < d.n; i++) {
        const app_race_lane *l = &d.lanes[i];
        TAP_OK(l->done == 6 && l->steps == 6 && l->tokens_per_step == 16 * 64 && l->nevals == 3 &&
                   l->evals[0].step == 0 && l->evals[1].step == 3 && l->evals[2].step == 6 &&
                   l->evals[2].tokens == 6 * 1024,
               "%s: 6 steps and measurements at 0, 3, 6 logged", l->label);
        model m;
        snprintf(path, sizeof path, "%s/%s.pelab", out, saved[i]);
        if (model_load(path, &m, err, sizeof err) == 0) {
            double mean = 0;
            for (int k = 0; k < 6; k++) mean += l->loss[k] / 6;
            TAP_CLOSE(mean, m.cfg.train_loss, 0, 2e-6,
                      "logged step losses average to the checkpoint's training loss");
            TAP_OK(m.cfg.steps_done == 6 && strstr(m.cfg.command, "pelab race"),
                   "checkpoint records its 6 steps and the race's command");
            model_free(&m);
        }
    }

    /* held-out losses equal pelab eval's of the saved models */
    snprintf(path, sizeof path, "%s/rope.pelab", out);
    snprintf(path2, sizeof path2, "%s/learned.pelab", out);
    char table[800], csvp[800];
    snprintf(table, sizeof table, "%s/eval.txt", dir);
    snprintf(csvp, sizeof csvp, "%s/eval.csv", dir);
    const char *ev[] = {"eval", "--extrapolate", "--tokens", "1000", "-o", csvp, path, path2, NULL};
    rc = run(ev, table);
    char *tt = slurp(table), *cc = slurp(csvp);
    TAP_OK(rc == 0 && tt && cc, "pelab eval of the saved models (%s)", errtext);
    for (int j = 0; rc == 0 && tt && cc && j < 2; j++) {
        const app_race_lane *l = &d.lanes[j == 0 ? 0 : 2];
        const app_race_eval *e = &l->evals[l->nevals - 1];
        TAP_CLOSE(e->held[0], eval_heldout(tt, j == 0 ? path : path2), 0, 5e-4 + 1e-9,
                  "held-out loss at ctx = pelab eval's (3 decimals)");
        TAP_CLOSE(e->held[1], csv_range(cc, j + 1, 64, 128), 0, 2e-5,
                  "held-out loss at [ctx, 2ctx) = pelab eval --extrapolate's");
        TAP_CLOSE(e->held[2], csv_range(cc, j + 1, 128, 256), 0, 2e-5,
                  "held-out loss at [2ctx, 4ctx) = pelab eval --extrapolate's");
        TAP_OK(e->sink >= 0 && e->sink <= 1, "sink share %.3f in [0, 1]", e->sink);
    }
    free(tt);
    free(cc);

    /* pelab export race from the log: the figure in each format, the numbers, a replay */
    static const char *const kinds[] = {"png", "svg", "pdf", "csv", "gif"};
    for (int k = 0; k < 5; k++) {
        snprintf(path2, sizeof path2, "%s/fig.%s", dir, kinds[k]);
        const char *ex[] = {"export", "race", "--from", out, "-o", path2, "--frames", "4", NULL};
        rc = run(ex, NULL);
        char *b = slurp(path2);
        static const char *const magic[] = {"\x89PNG", "<?xml", "%PDF", "# pelab export race",
                                            "GIF89a"};
        TAP_OK(rc == 0 && b && !strncmp(b, magic[k], strlen(magic[k])),
               "export race -o fig.%s (exit %d %s)", kinds[k], rc, errtext);
        if (k == 3 && b) {
            /* the CSV's raw losses and held-out values are the log's */
            char want[256];
            snprintf(want, sizeof want, "\nrope,6,6144,%.6f,", d.lanes[0].loss[5]);
            const app_race_eval *e = &d.lanes[0].evals[2];
            char want2[256];
            snprintf(want2, sizeof want2, ",%.6f,%.6f,%.6f,%.6f\n", e->held[0], e->held[1],
                     e->held[2], e->sink);
            TAP_OK(strstr(b, want) && strstr(strstr(b, want), want2),
                   "export race CSV: step 6 of rope holds the log's numbers");
        }
        free(b);
    }
    const char *exbad[] = {"export", "race", "--from", dir, "-o", path2, NULL};
    rc = run(exbad, NULL);
    TAP_OK(rc == 2 && strstr(errtext, "--from") && errlines == 1,
           "export race from a folder without a log: exit %d: %s", rc, errtext);
    app_race_data_free(&d);

    /* the log's reader: a bad value is named by its line, column and what is allowed */
    static const char head[] = "# pelab race\n# lane rope steps=2 tokens_per_step=1024 ctx=64\n"
                               "scheme,step,tokens,train_loss,heldout_ctx,heldout_2x,heldout_4x,"
                               "sink_share,tokens_per_s,elapsed_s\n";
    static const struct {
        const char *rows, *want;
    } badlogs[] = {
        {"rope,0,0,,5.1,5.2,5.3,0,0,0.1\nrope,1,1024,5.0,,,,,100,0.2\n", NULL},
        {"rope,1,1024,-0.5,,,,,100,0.2\n",
         "line 4, column 4 (train_loss): '-0.5' is not a loss: a finite number >= 0"},
        {"rope,0,0,,5.1,5.2,5.3,1.5,0,0.1\n",
         "line 4, column 8 (sink_share): '1.5' is not a share: a number in [0, 1]"},
        {"rope,0,0,,nan,5.2,5.3,0,0,0.1\n", "line 4, column 5 (heldout_ctx): 'nan' is not a loss"},
        {"rope,0,0,,5.1,inf,5.3,0,0,0.1\n", "line 4, column 6 (heldout_2x): 'inf' is not a loss"},
        {"rope,1,1024,5.0,,,,\n", "line 4: 'rope,1,1024,5.0,,,,' has 8 fields: a row has 10"},
        {"t5,1,1024,5.0,,,,,100,0.2\n", "line 4, column 1 (scheme): 't5' is no '# lane' above"},
        {"rope,3,3072,5.0,,,,,100,0.2\n",
         "line 4, column 2 (step): '3' is not a step: a whole number 0..2"},
        {"rope,2,2048,5.0,,,,,100,0.2\n",
         "line 4, column 2 (step): '2' is out of order: rope's next training step is 1"},
        {"rope,1,1000,5.0,,,,,100,0.2\n",
         "line 4, column 3 (tokens): '1000' is not the tokens of step 1: 1024"},
        {"rope,1,1024,5.0,,,,,-1,0.2\n", "line 4, column 9 (tokens_per_s): '-1' is not a speed"},
        {"rope,1,1024,5.0,,,,0.5,100,0.2\n",
         "line 4, column 8 (sink_share): '0.5' is set on a training step's row: empty there"},
    };
    for (size_t i = 0; i < sizeof badlogs / sizeof badlogs[0]; i++) {
        char log[1024];
        snprintf(log, sizeof log, "%s%s", head, badlogs[i].rows);
        app_race_data bd;
        char e[512] = "";
        int r = app_race_log_parse(log, strlen(log), &bd, e, sizeof e);
        if (!badlogs[i].want) {
            TAP_OK(r == 0 && bd.n == 1 && bd.lanes[0].done == 1 && bd.lanes[0].nevals == 1,
                   "a well-formed log reads (%s)", e);
            if (r == 0) app_race_data_free(&bd);
        } else
            TAP_OK(r != 0 && !strncmp(e, badlogs[i].want, strlen(badlogs[i].want)),
                   "a bad log: '%s' (want '%s')", e, badlogs[i].want);
    }
    const char *exneg[] = {"export", "race", "--from", path, "-o", path2, NULL};
    snprintf(path, sizeof path, "%s/neg.csv", dir);
    FILE *nf = fopen(path, "w");
    fprintf(nf, "%srope,1,1024,-2,,,,,100,0.2\n", head);
    fclose(nf);
    snprintf(path2, sizeof path2, "%s/neg.png", dir);
    rc = run(exneg, NULL);
    TAP_OK(rc == 2 && errlines == 1 && strstr(errtext, "neg.csv: line 4, column 4 (train_loss)"),
           "export race --from a log with a negative loss: exit %d: %s", rc, errtext);

    /* Ctrl-C: the race stops after the steps in flight and saves them (exit 130) */
    snprintf(out, sizeof out, "%s/stopped", dir);
    snprintf(path, sizeof path, "%s/stderr-int.txt", dir);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *e = freopen(path, "w", stderr);
        FILE *o = freopen("/dev/null", "w", stdout);
        (void)e;
        (void)o;
        execl(pelab, pelab, "race", "--pe", "nope,t5", "--steps", "100000", "--eval-every", "1000",
              "--eval-tokens", "1000", "--tokens", "20000", "--display", "none", "-o", out,
              (char *)NULL);
        _exit(127);
    }
    /* wait for the first progress line (the race started), then a little training */
    for (int i = 0; i < 600; i++) {
        char *s = slurp(path);
        int started = s && strstr(s, "race: ");
        free(s);
        if (started) break;
        sleep_ms(100);
    }
    sleep_ms(1500);
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 130, "Ctrl-C: exit 130 (status %d)", status);
    snprintf(path, sizeof path, "%s/race.csv", out);
    rc = app_race_log_read(path, &d, err, sizeof err);
    TAP_OK(rc == 0 && d.n == 2 && d.stopped, "Ctrl-C: race.csv saved (%s)", rc ? err : "stopped");
    for (int i = 0; rc == 0 && i < 2; i++) {
        model m;
        snprintf(path, sizeof path, "%s/%s.pelab", out, d.lanes[i].label);
        int lr = model_load(path, &m, err, sizeof err);
        TAP_OK(lr == 0 && m.cfg.steps_done == d.lanes[i].done && m.cfg.steps_done > 0 &&
                   d.lanes[i].nevals >= 2 &&
                   d.lanes[i].evals[d.lanes[i].nevals - 1].step == d.lanes[i].done,
               "Ctrl-C: %s saved at step %d, as logged, measured at its end", d.lanes[i].label,
               lr ? -1 : m.cfg.steps_done);
        if (!lr) model_free(&m);
    }
    TAP_OK(temporaries(out) == 0, "Ctrl-C: no temporary left");
    app_race_data_free(&d);

    /* a bad -o: a file, a folder inside a missing one; refused before the corpus is made */
    snprintf(path, sizeof path, "%s/plain-file", dir);
    FILE *f = fopen(path, "w");
    fputs("x", f);
    fclose(f);
    const char *bad1[] = {"race", "--steps", "2", "--display", "none", "-o", path, NULL};
    rc = run(bad1, NULL);
    TAP_OK(rc == 2 && strstr(errtext, "-o") && strstr(errtext, "not a folder") && errlines == 1,
           "-o FILE refused (exit %d): %s", rc, errtext);
    snprintf(path, sizeof path, "%s/missing/deeper", dir);
    const char *bad2[] = {"race", "--steps", "2", "--display", "none", "-o", path, NULL};
    rc = run(bad2, NULL);
    TAP_OK(rc == 2 && strstr(errtext, "cannot make the folder") && errlines == 1,
           "-o in a missing folder refused (exit %d): %s", rc, errtext);
    /* a file in DIR that a race would replace and that is not pelab's */
    snprintf(path, sizeof path, "%s/foreign", dir);
    mkdir(path, 0777);
    snprintf(path2, sizeof path2, "%s/rope.pelab", path);
    f = fopen(path2, "w");
    fputs("someone's notes", f);
    fclose(f);
    const char *bad3[] = {"race",      "--pe", "rope", "--steps", "2",
                          "--display", "none", "-o",   path,      NULL};
    rc = run(bad3, NULL);
    char *kept = slurp(path2);
    TAP_OK(rc == 2 && kept && !strcmp(kept, "someone's notes") && strstr(errtext, "--force"),
           "a file in DIR that is not a checkpoint is kept (exit %d): %s", rc, errtext);
    free(kept);

    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return tap_done();
}
