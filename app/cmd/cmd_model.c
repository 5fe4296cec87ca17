/* cmd_model.c: `pelab train` and `pelab eval`, the built-in model's subcommands.
 *
 * train: generate the story corpus, build the vocabulary, train one model with a progress bar,
 *        save it atomically every --save-every steps and when Ctrl-C stops it.
 * eval:  held-out loss at the training length; with --extrapolate the mean loss at every
 *        position 0..4 x ctx, printed as a table and optionally written as CSV.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "assets.h"
#include "cmd_model.h"
#include "commands.h"
#include "infile.h"
#include "model.h"
#include "outfile.h"
#include "textclean.h"

static volatile sig_atomic_t stop_requested;

static void on_sigint(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int parse_int(const char *cmd, const char *opt, const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "pelab %s: --%s %s: expected an integer in %ld..%ld\n", cmd, opt, s, lo,
                hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') {
        fprintf(stderr, "pelab %s: --%s %s: expected a non-negative integer\n", cmd, opt, s);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

static int parse_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                        double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "pelab %s: --%s %s: expected a number in %g..%g\n", cmd, opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int story_dir(const char *given, char *buf, size_t n)
{
    char err[512];
    if (given) {
        snprintf(buf, n, "%s", given);
        return 0;
    }
    if (app_asset_path("story", buf, n, err, sizeof err) < 0) {
        fprintf(stderr, "pelab: %s\n", err);
        return -1;
    }
    return 0;
}

/* A name the user gave, as standard output shows it: control characters written out (\x1b) and
 * bytes that are not UTF-8 as U+FFFD (stderr does this by itself, see main.c). */
static const char *shown(const char *s, char *buf, size_t n)
{
    text_clean(buf, n, s, strlen(s), 0);
    return buf;
}

int app_model_save(model *m, const char *path, char *err, size_t errlen)
{
    outfile of;
    if (outfile_open(&of, path, err, errlen) != 0) return -1;
    char why[256];
    if (model_write(m, of.fp, why, sizeof why) != 0) {
        outfile_fail(&of, why, err, errlen);
        return -1;
    }
    return outfile_commit(&of, err, errlen);
}

/* The extension an output of cmd must have: a regular file is named for what it holds (a PNG
 * name holding a checkpoint misleads every program that opens it); a device is not. */
static int check_ext(const char *cmd, const char *path, const char *ext, const char *what)
{
    if (outfile_is_special(path)) return 0;
    size_t n = strlen(path), e = strlen(ext);
    if (n > e && strcasecmp(path + n - e, ext) == 0 && path[n - e - 1] != '/') return 0;
    fprintf(stderr, "pelab %s: -o %s: %s is written to a file ending in %s\n", cmd, path, what,
            ext);
    return -1;
}

/* What an existing regular file at path must start with to be replaced: what this command
 * writes (a checkpoint, pelab's CSV). A PNG that happens to be named p.pelab, or someone's
 * table named m.csv, is another program's file: refused, the name tells nothing (issue 28).
 * An empty file, a new name or a device pass; --force replaces anything. */
static int check_contents(const char *cmd, const char *path, const char *magic, const char *what)
{
    if (outfile_forced() || outfile_is_special(path)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0; /* a new file (outfile_check told the rest) */
    char head[64] = "";
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    if (n == 0) return 0;
    /* magic: the beginnings allowed, separated by '|' */
    for (const char *m = magic; *m;) {
        size_t k = strcspn(m, "|");
        if (n >= k && memcmp(head, m, k) == 0) return 0;
        m += k + (m[k] == '|');
    }
    char name[3 * 1024];
    fprintf(stderr,
            "pelab %s: -o %s: the file exists and is not %s written by pelab; name a new file "
            "(or --force replaces it)\n",
            cmd, shown(path, name, sizeof name), what);
    return -1;
}

/* ---- train -------------------------------------------------------------------------------- */

typedef struct train_ui {
    model *m;
    const char *out;
    int save_every;
    int tty, quiet;
    double t0, last_draw;
    long tokens0;
    int last_line_step;
    int saved_step;
} train_ui;

static void fmt_time(double s, char *buf, size_t n)
{
    if (!(s >= 0) || s > 359999) s = 359999;
    int t = (int)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%02d:%02d", t / 60, t % 60);
}

static int train_progress(void *user, const model_progress *p)
{
    train_ui *u = user;
    double t = now_s(), el = t - u->t0;
    double tps = el > 0 ? (double)p->tokens / el : 0;
    double left = p->step > 0 ? el / p->step * (p->steps - p->step) : 0;
    int final = p->step == p->steps || stop_requested;
    if (!u->quiet) {
        char l[32], e[32];
        fmt_time(left, l, sizeof l);
        fmt_time(el, e, sizeof e);
        if (u->tty && (t - u->last_draw > 0.1 || final)) {
            int width = 24, fill = (int)((double)width * p->step / p->steps);
            char bar[32];
            for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
            bar[width] = 0;
            fprintf(stderr, "\r[%s] step %d/%d  loss %.3f  %.0f tok/s  %s elapsed  %s left ", bar,
                    p->step, p->steps, p->loss, tps, e, l);
            fflush(stderr);
            u->last_draw = t;
        } else if (!u->tty) {
            int every = p->steps >= 20 ? p->steps / 20 : 1;
            if (p->step % every == 0 || final)
                fprintf(stderr, "step %d/%d  loss %.3f  lr %.2e  %.0f tok/s  %s elapsed  %s left\n",
                        p->step, p->steps, p->loss, p->lr, tps, e, l);
        }
    }
    if (u->save_every > 0 && p->step % u->save_every == 0 && p->step < p->steps) {
        char err[512];
        if (app_model_save(u->m, u->out, err, sizeof err) == 0)
            u->saved_step = p->step;
        else
            fprintf(stderr, "\npelab train: %s\n", err);
    }
    return stop_requested != 0;
}

static void record_command(model_config *c, int argc, char **argv)
{
    size_t n = 0;
    n += (size_t)snprintf(c->command, sizeof c->command, "pelab");
    for (int i = 0; i < argc && n < sizeof c->command; i++)
        n += (size_t)snprintf(c->command + n, sizeof c->command - n, " %s", argv[i]);
}

enum {
    O_PE = 256,
    O_STEPS,
    O_BATCH,
    O_CTX,
    O_LAYERS,
    O_DIM,
    O_HEADS,
    O_HIDDEN,
    O_TIED,
    O_LR,
    O_MINLR,
    O_WARMUP,
    O_WD,
    O_CLIP,
    O_SEED,
    O_DSEED,
    O_TOKENS,
    O_BASE,
    O_PAIRING,
    O_SLOPE,
    O_BUCKETS,
    O_MAXD,
    O_THREADS,
    O_SAVE,
    O_STORY,
    O_QUIET,
    O_FORCE,
    O_HELP
};

static size_t model_schemes(const char **out, size_t n)
{
    size_t k = 0;
    for (int i = 0; i < MODEL_PE_COUNT && k < n; i++) out[k++] = model_pe_name(i);
    return k;
}

static const char *const pairings[] = {"interleaved", "half", NULL};

static const app_cmd_opt train_opts[] = {
    {.name = "pe",
     .code = O_PE,
     .arg = "NAME",
     .help = "the position scheme",
     .choices_fn = model_schemes},
    {.name = "output",
     .code = 'o',
     .short_name = 'o',
     .arg = "FILE",
     .help = "checkpoint (written atomically, also every --save-every steps)",
     .files = "pelab"},
    {.name = "steps", .code = O_STEPS, .arg = "N", .help = "AdamW steps (2000)"},
    {.name = "batch", .code = O_BATCH, .arg = "N", .help = "windows per step (16)"},
    {.name = "ctx", .code = O_CTX, .arg = "N", .help = "training context (64)"},
    {.name = "layers", .code = O_LAYERS, .arg = "N", .help = "blocks (3)"},
    {.name = "dim", .code = O_DIM, .arg = "N", .help = "width (64)"},
    {.name = "heads", .code = O_HEADS, .arg = "N", .help = "heads (4)"},
    {.name = "hidden", .code = O_HIDDEN, .arg = "N", .help = "MLP width (4 x dim)"},
    {.name = "tied", .code = O_TIED, .help = "tie the output layer to the embedding"},
    {.name = "lr", .code = O_LR, .arg = "X", .help = "peak learning rate (3e-3)"},
    {.name = "min-lr", .code = O_MINLR, .arg = "X", .help = "final learning rate (3e-4)"},
    {.name = "warmup", .code = O_WARMUP, .arg = "N", .help = "warmup steps (100)"},
    {.name = "weight-decay", .code = O_WD, .arg = "X", .help = "AdamW weight decay (0.1)"},
    {.name = "clip", .code = O_CLIP, .arg = "X", .help = "gradient norm clip (1)"},
    {.name = "seed", .code = O_SEED, .arg = "N", .help = "initialisation and batches (1)"},
    {.name = "data-seed", .code = O_DSEED, .arg = "N", .help = "story corpus (1)"},
    {.name = "tokens", .code = O_TOKENS, .arg = "N", .help = "corpus size (1000000)"},
    {.name = "base", .code = O_BASE, .arg = "X", .help = "sinusoidal/rope frequency base (10000)"},
    {.name = "pairing",
     .code = O_PAIRING,
     .arg = "P",
     .help = "rope: which dimensions rotate together",
     .choices = pairings},
    {.name = "slope-ratio",
     .code = O_SLOPE,
     .arg = "X",
     .help = "alibi: m_h = X^(h+1) instead of the paper's slopes"},
    {.name = "t5-buckets", .code = O_BUCKETS, .arg = "N", .help = "t5 buckets (32)"},
    {.name = "t5-max-distance",
     .code = O_MAXD,
     .arg = "N",
     .help = "t5 largest bucketed distance (ctx)"},
    {.name = "threads", .code = O_THREADS, .arg = "N", .help = "0 = all cores (0)"},
    {.name = "save-every", .code = O_SAVE, .arg = "N", .help = "save every N steps (250, 0 = off)"},
    {.name = "story",
     .code = O_STORY,
     .arg = "DIR",
     .help = "grammar directory (assets/story)",
     .files = "/"},
    {.name = "quiet", .code = O_QUIET, .help = "no progress"},
    {.name = "force", .code = O_FORCE, .help = "replace an existing file that is not a checkpoint"},
    {.name = "help", .code = O_HELP, .short_name = 'h', .help = "this usage"},
    {0},
};

static int cmd_train(int argc, char **argv)
{
    const char *pe = NULL, *out = NULL, *story = NULL;
    model_config c;
    model_config_default(&c, MODEL_PE_NOPE);
    int hidden = 0, threads = 0, save_every = 250, quiet = 0, tokens = 1000000;
    double dv;
    app_cli_args args;
    int prc = app_command_parse(&app_command_train, NULL, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    /* --pe first (the last one given), so scheme defaults do not override later options */
    for (int i = 0; i < args.n; i++)
        if (args.code[i] == O_PE) pe = args.val[i];
    if (pe) {
        int k = model_pe_from_name(pe);
        if (k < 0) {
            const char *names[MODEL_PE_COUNT];
            for (int i = 0; i < MODEL_PE_COUNT; i++) names[i] = model_pe_name(i);
            const char *sug = pe_closest(pe, names, MODEL_PE_COUNT);
            fprintf(stderr,
                    "pelab train: --pe '%s': the model supports nope, learned, sinusoidal, alibi, "
                    "rope, t5%s%s%s\n",
                    pe, sug ? " (did you mean " : "", sug ? sug : "", sug ? "?)" : "");
            return 2;
        }
        model_config_default(&c, k);
    }
    for (int i = 0; i < args.n; i++) {
        int bad = 0;
        const char *val = args.val[i];
        switch (args.code[i]) {
        case O_PE:
            break;
        case 'o':
            out = val;
            break;
        case O_STEPS:
            bad = parse_int("train", "steps", val, 1, 10000000, &c.steps);
            break;
        case O_BATCH:
            bad = parse_int("train", "batch", val, 1, 4096, &c.batch);
            break;
        case O_CTX:
            bad = parse_int("train", "ctx", val, 2, MODEL_MAX_CTX, &c.ctx);
            break;
        case O_LAYERS:
            bad = parse_int("train", "layers", val, 1, MODEL_MAX_LAYERS, &c.layers);
            break;
        case O_DIM:
            bad = parse_int("train", "dim", val, 2, MODEL_MAX_DIM, &c.dim);
            break;
        case O_HEADS:
            bad = parse_int("train", "heads", val, 1, MODEL_MAX_HEADS, &c.heads);
            break;
        case O_HIDDEN:
            bad = parse_int("train", "hidden", val, 1, 4 * MODEL_MAX_DIM, &hidden);
            break;
        case O_TIED:
            c.tied = 1;
            break;
        case O_LR:
            if (!(bad = parse_double("train", "lr", val, 1e-9, 10, &dv))) c.lr = (float)dv;
            break;
        case O_MINLR:
            if (!(bad = parse_double("train", "min-lr", val, 0, 10, &dv))) c.min_lr = (float)dv;
            break;
        case O_WARMUP:
            bad = parse_int("train", "warmup", val, 0, 10000000, &c.warmup);
            break;
        case O_WD:
            if (!(bad = parse_double("train", "weight-decay", val, 0, 10, &dv)))
                c.weight_decay = (float)dv;
            break;
        case O_CLIP:
            if (!(bad = parse_double("train", "clip", val, 0, 1e9, &dv))) c.clip = (float)dv;
            break;
        case O_SEED:
            bad = parse_u64("train", "seed", val, &c.seed);
            break;
        case O_DSEED:
            bad = parse_u64("train", "data-seed", val, &c.data_seed);
            break;
        case O_TOKENS:
            bad = parse_int("train", "tokens", val, 1000, 100000000, &tokens);
            break;
        case O_BASE:
            bad = parse_double("train", "base", val, 1.0000001, 1e30, &c.pe.base);
            break;
        case O_PAIRING:
            if (!strcmp(val, "interleaved"))
                c.pe.pairing = PE_PAIRING_INTERLEAVED;
            else if (!strcmp(val, "half"))
                c.pe.pairing = PE_PAIRING_HALF;
            else {
                fprintf(stderr, "pelab train: --pairing %s: interleaved or half\n", val);
                bad = 1;
            }
            break;
        case O_SLOPE:
            bad = parse_double("train", "slope-ratio", val, 0, 0.999999, &c.pe.slope_ratio);
            break;
        case O_BUCKETS:
            bad = parse_int("train", "t5-buckets", val, 2, 1024, &c.pe.t5_buckets);
            break;
        case O_MAXD:
            bad = parse_int("train", "t5-max-distance", val, 2, PE_MAX_LEN, &c.pe.t5_max_distance);
            break;
        case O_THREADS:
            bad = parse_int("train", "threads", val, 0, 1024, &threads);
            break;
        case O_SAVE:
            bad = parse_int("train", "save-every", val, 0, 10000000, &save_every);
            break;
        case O_STORY:
            story = val;
            break;
        case O_FORCE:
            outfile_set_force(1);
            break;
        case O_QUIET:
            quiet = 1;
            break;
        }
        if (bad) return 2;
    }
    if (!pe || !out) {
        fprintf(stderr, "pelab train: %s is required (pelab train --help)\n",
                !pe ? "--pe NAME" : "-o FILE");
        return 2;
    }
    if (args.n_positional > 0) {
        fprintf(stderr, "pelab train: unexpected argument %s\n", args.positional[0]);
        return 2;
    }
    c.hidden = hidden ? hidden : 4 * c.dim;
    if (c.min_lr > c.lr) c.min_lr = c.lr;
    record_command(&c, argc, argv);
    char dir[2048], err[512];
    /* -o is checked before the corpus and the minutes of training, not after them */
    if (outfile_is_stdout(out)) {
        fprintf(stderr, "pelab train: -o -: the checkpoint is saved during training too "
                        "(--save-every); give a file name\n");
        return 2;
    }
    if (outfile_check(out, err, sizeof err) < 0) {
        fprintf(stderr, "pelab train: %s\n", err);
        return 2;
    }
    if (check_ext("train", out, ".pelab", "a checkpoint")) return 2;
    if (check_contents("train", out, "PELABMDL", "a checkpoint")) return 2;
    if (story_dir(story, dir, sizeof dir)) return 1;
    model_grammar g;
    if (model_grammar_load(&g, dir, err, sizeof err)) {
        fprintf(stderr, "pelab train: %s\n", err);
        return 1;
    }
    tok_vocab v = {0};
    size_t nh = (size_t)c.ctx * 512 + 1;
    int *ids = malloc((size_t)tokens * sizeof *ids), *held = malloc(nh * sizeof *held);
    model m = {0};
    int rc = 1;
    if (!ids || !held) {
        fprintf(stderr, "pelab train: out of memory for %d tokens\n", tokens);
        goto out;
    }
    if (model_corpus_vocab(&g, c.data_seed, (size_t)tokens, &v, ids, err, sizeof err)) {
        fprintf(stderr, "pelab train: %s\n", err);
        goto out;
    }
    c.vocab = v.n;
    c.grammar_hash = g.hash;
    if (model_corpus(&g, &v, model_heldout_seed(c.data_seed), nh, held, NULL, err, sizeof err) ||
        model_init(&m, &c, &v, err, sizeof err)) {
        fprintf(stderr, "pelab train: %s\n", err);
        goto out;
    }
    /* the checkpoint's size is known now: a disk without room for it fails here, not at the
     * end (the weights, the vocabulary and less than 1 KB of header and config) */
    unsigned long long need = (unsigned long long)m.n_params * 4 + (unsigned long long)v.n * 33 +
                              sizeof m.cfg.command + 1024;
    if (outfile_room(out, need, err, sizeof err) < 0) {
        fprintf(stderr, "pelab train: %s\n", err);
        goto out;
    }
    if (!quiet)
        fprintf(stderr,
                "pelab train: %s, %d layers, dim %d, %d heads, ctx %d, vocab %d, %zu parameters; "
                "%d steps of %d x %d tokens from %d generated tokens\n",
                m.cfg.pe_name, m.cfg.layers, m.cfg.dim, m.cfg.heads, m.cfg.ctx, m.cfg.vocab,
                m.n_params, m.cfg.steps, m.cfg.batch, m.cfg.ctx, tokens);
    train_ui ui = {.m = &m, .out = out, .save_every = save_every, .tty = isatty(2), .quiet = quiet};
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    stop_requested = 0;
    sigaction(SIGINT, &sa, &old);
    ui.t0 = now_s();
    int trc = model_train(&m, ids, (size_t)tokens, threads, train_progress, &ui, err, sizeof err);
    double elapsed = now_s() - ui.t0;
    sigaction(SIGINT, &old, NULL);
    if (!quiet && ui.tty) fputc('\n', stderr);
    if (trc && trc != MODEL_ESTOPPED) {
        fprintf(stderr, "pelab train: %s\n", err);
        if (ui.saved_step) fprintf(stderr, "pelab train: %s holds step %d\n", out, ui.saved_step);
        goto out;
    }
    double sum[MODEL_MAX_CTX] = {0}, cnt[MODEL_MAX_CTX] = {0};
    if (model_eval_positions(&m, held, nh, m.cfg.ctx, 0, threads, sum, cnt, err, sizeof err) == 0) {
        double s = 0, k = 0;
        for (int t = 0; t < m.cfg.ctx; t++) s += sum[t], k += cnt[t];
        m.cfg.heldout_loss = (float)(s / k);
    }
    if (app_model_save(&m, out, err, sizeof err)) {
        fprintf(stderr, "pelab train: %s\n", err);
        goto out;
    }
    char name[1024];
    printf("%s %s: %d steps in %.1f s (%.0f tokens/s); training loss %.3f, held-out loss %.3f "
           "at ctx %d; checksum %08x\n",
           trc == MODEL_ESTOPPED ? "stopped, saved" : "saved", shown(out, name, sizeof name),
           m.cfg.steps_done, elapsed,
           elapsed > 0 ? (double)m.cfg.steps_done * m.cfg.batch * m.cfg.ctx / elapsed : 0,
           m.cfg.train_loss, m.cfg.heldout_loss, m.cfg.ctx, m.cfg.checksum);
    rc = trc == MODEL_ESTOPPED ? 130 : 0;
out:
    free(ids);
    free(held);
    model_free(&m);
    tok_vocab_free(&v);
    model_grammar_free(&g);
    return rc;
}

/* ---- eval --------------------------------------------------------------------------------- */

typedef struct eval_row {
    const char *path;
    model m;
    int win;
    double *sum, *cnt; /* (win) */
    double at_ctx;
} eval_row;

static double mean_range(const eval_row *r, int a, int b)
{
    double s = 0, k = 0;
    for (int t = a; t < b && t < r->win; t++) s += r->sum[t], k += r->cnt[t];
    return k > 0 ? s / k : NAN;
}

static const char *const scalings[] = {"none", "linear", "ntk", "dynamic", "yarn", "llama3", NULL};

static const app_cmd_opt eval_opts[] = {
    {.name = "extrapolate",
     .code = APP_EVAL_EXTRA,
     .help = "also the mean loss at every position 0..4 x ctx (with --model: windows of 4x the "
             "trained context)"},
    {.name = "output",
     .code = 'o',
     .short_name = 'o',
     .arg = "FILE.csv",
     .help = "write the per-position table as CSV (with --extrapolate, or --model)",
     .files = "csv"},
    {.name = "tokens", .code = APP_EVAL_TOKENS, .arg = "N", .help = "held-out tokens (32768)"},
    {.name = "bin",
     .code = APP_EVAL_BIN,
     .arg = "N",
     .help = "positions per table row (ctx / 8; 1 = every position)"},
    {.name = "threads", .code = APP_EVAL_THREADS, .arg = "N", .help = "0 = all cores (0)"},
    {.name = "story",
     .code = APP_EVAL_STORY,
     .arg = "DIR",
     .help = "grammar directory (assets/story)",
     .files = "/"},
    {.name = "model",
     .code = APP_EVAL_MODEL,
     .arg = "M",
     .help = "a real checkpoint: a llama2.c .bin, a Hugging Face folder or a file inside one "
             "(with --text)",
     .files = ""},
    {.name = "tokenizer",
     .code = APP_EVAL_TOK,
     .arg = "T",
     .help = "with --model: the tokenizer (default: the one beside the model)",
     .files = ""},
    {.name = "text",
     .code = APP_EVAL_TEXT,
     .arg = "FILE",
     .help = "with --model: the text (UTF-8, at most 64 MiB)",
     .files = ""},
    {.name = "ctx",
     .code = APP_EVAL_CTX,
     .arg = "N",
     .help = "with --model: tokens per window (the model's context; 4x with --extrapolate)"},
    {.name = "scaling",
     .code = APP_EVAL_SCALING,
     .arg = "NAME",
     .help = "with --model: RoPE scaling at inference",
     .choices = scalings},
    {.name = "factor",
     .code = APP_EVAL_FACTOR,
     .arg = "F",
     .help = "with --scaling: its factor (>= 1)"},
    {.name = "orig-ctx",
     .code = APP_EVAL_ORIG,
     .arg = "N",
     .help = "with --scaling: its original context (the model's trained context)"},
    {.name = "windows",
     .code = APP_EVAL_WINDOWS,
     .arg = "N",
     .help = "with --model: at most N windows (all that fit)"},
    {.name = "force",
     .code = APP_EVAL_FORCE,
     .help = "replace an existing -o file that is not pelab's table"},
    {.name = "help", .code = APP_EVAL_HELP, .short_name = 'h', .help = "this usage"},
    {0},
};

const char *app_eval_row_name(int code)
{
    static char name[48];
    for (const app_cmd_opt *o = eval_opts; o->name; o++)
        if (o->code == code) {
            snprintf(name, sizeof name, "--%s", o->name);
            return name;
        }
    return "?";
}

static int cmd_eval(int argc, char **argv)
{
    int extra = 0, tokens = 32768, bin = 0, threads = 0;
    const char *csv = NULL, *story = NULL;
    app_cli_args args;
    int prc = app_command_parse(&app_command_eval, NULL, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    /* a real checkpoint (llama2.c, Hugging Face) over a text: cmd_eval_lm.c */
    for (int i = 0; i < args.n; i++)
        if (args.code[i] == APP_EVAL_MODEL || args.code[i] == APP_EVAL_TEXT)
            return app_eval_lm_run(&args, argc, argv);
    for (int i = 0; i < args.n; i++) {
        int bad = 0;
        const char *val = args.val[i];
        switch (args.code[i]) {
        case APP_EVAL_TOK:
        case APP_EVAL_CTX:
        case APP_EVAL_SCALING:
        case APP_EVAL_FACTOR:
        case APP_EVAL_ORIG:
        case APP_EVAL_WINDOWS:
            fprintf(stderr, "pelab eval: %s: with --model M --text FILE (a real checkpoint)\n",
                    app_eval_row_name(args.code[i]));
            return 2;
        case APP_EVAL_EXTRA:
            extra = 1;
            break;
        case 'o':
            csv = val;
            break;
        case APP_EVAL_TOKENS:
            bad = parse_int("eval", "tokens", val, 1000, 100000000, &tokens);
            break;
        case APP_EVAL_BIN:
            bad = parse_int("eval", "bin", val, 1, MODEL_MAX_CTX, &bin);
            break;
        case APP_EVAL_THREADS:
            bad = parse_int("eval", "threads", val, 0, 1024, &threads);
            break;
        case APP_EVAL_STORY:
            story = val;
            break;
        case APP_EVAL_FORCE:
            outfile_set_force(1);
            break;
        }
        if (bad) return 2;
    }
    int n = args.n_positional;
    if (n < 1) {
        fprintf(stderr, "pelab eval: name at least one model file (pelab eval --help)\n");
        return 2;
    }
    if (csv && !extra) {
        fprintf(stderr,
                "pelab eval: -o %s: the CSV holds the per-position losses of "
                "--extrapolate; add --extrapolate\n",
                csv);
        return 2;
    }
    char dir[2048], err[512];
    if (csv && outfile_is_stdout(csv)) {
        fprintf(stderr, "pelab eval: -o -: the table goes to standard output already; -o names "
                        "a .csv file\n");
        return 2;
    }
    /* checked before the minutes of evaluation, not after; the models are inputs, which -o
     * may not name */
    for (int i = 0; i < args.n_positional; i++) pe_infile_note(args.positional[i]);
    if (csv && outfile_check(csv, err, sizeof err) < 0) {
        fprintf(stderr, "pelab eval: %s\n", err);
        return 2;
    }
    if (csv && check_ext("eval", csv, ".csv", "the per-position table (CSV)")) return 2;
    if (csv && check_contents("eval", csv, "# pelab eval|position,", "a table")) return 2;
    if (story_dir(story, dir, sizeof dir)) return 1;
    model_grammar g;
    if (model_grammar_load(&g, dir, err, sizeof err)) {
        fprintf(stderr, "pelab eval: %s\n", err);
        return 1;
    }
    eval_row *rows = calloc((size_t)n, sizeof *rows);
    int *ids = malloc((size_t)tokens * sizeof *ids);
    int rc = 1, maxwin = 0;
    if (!rows || !ids) {
        fprintf(stderr, "pelab eval: out of memory\n");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        eval_row *r = &rows[i];
        r->path = args.positional[i];
        if (model_load(r->path, &r->m, err, sizeof err)) {
            fprintf(stderr, "pelab eval: %s\n", err);
            goto out;
        }
        const model_config *c = &r->m.cfg;
        if (c->grammar_hash != g.hash)
            fprintf(stderr,
                    "pelab eval: warning: %s was trained on another version of the story grammar "
                    "(%016llx, now %016llx)\n",
                    r->path, (unsigned long long)c->grammar_hash, (unsigned long long)g.hash);
        size_t unk = 0;
        if (model_corpus(&g, &r->m.vocab, model_heldout_seed(c->data_seed), (size_t)tokens, ids,
                         &unk, err, sizeof err)) {
            fprintf(stderr, "pelab eval: %s\n", err);
            goto out;
        }
        r->win = extra ? 4 * c->ctx : c->ctx;
        r->sum = calloc((size_t)r->win, sizeof(double));
        r->cnt = calloc((size_t)r->win, sizeof(double));
        double *s1 = calloc((size_t)c->ctx, sizeof(double)), *k1 = calloc((size_t)c->ctx, 8);
        if (!r->sum || !r->cnt || !s1 || !k1) {
            free(s1);
            free(k1);
            fprintf(stderr, "pelab eval: out of memory\n");
            goto out;
        }
        int erc = model_eval_positions(&r->m, ids, (size_t)tokens, c->ctx, 0, threads, s1, k1, err,
                                       sizeof err);
        if (!erc && extra)
            erc = model_eval_positions(&r->m, ids, (size_t)tokens, r->win, 0, threads, r->sum,
                                       r->cnt, err, sizeof err);
        double s = 0, k = 0;
        for (int t = 0; t < c->ctx; t++) s += s1[t], k += k1[t];
        free(s1);
        free(k1);
        if (erc) {
            fprintf(stderr, "pelab eval: %s: %s\n", r->path, err);
            goto out;
        }
        r->at_ctx = s / k;
        if (r->win > maxwin) maxwin = r->win;
        if (i == 0) {
            printf("held-out loss (nats per token) at the training length:\n");
            printf("  %-32s %-11s %5s %8s %8s  %s\n", "model", "scheme", "ctx", "train", "held-out",
                   "unknown tokens");
        }
        char name[1024];
        printf("  %-32s %-11s %5d %8.3f %8.3f  %zu of %d\n", shown(r->path, name, sizeof name),
               c->pe_name, c->ctx, c->train_loss, r->at_ctx, unk, tokens);
    }
    if (extra) {
        int ctx0 = rows[0].m.cfg.ctx;
        int b = bin ? bin : (ctx0 / 8 > 0 ? ctx0 / 8 : 1);
        printf("\nmean held-out loss by position (windows of 4 x ctx, every window starts at "
               "position 0):\n");
        printf("  %-11s", "position");
        for (int i = 0; i < n; i++) printf(" %11s", rows[i].m.cfg.pe_name);
        printf("\n");
        for (int p = 0; p < maxwin; p += b) {
            char lab[32];
            snprintf(lab, sizeof lab, b == 1 ? "%d" : "%d-%d", p, p + b - 1);
            printf("  %-11s", lab);
            for (int i = 0; i < n; i++) {
                double v = mean_range(&rows[i], p, p + b);
                if (isnan(v))
                    printf(" %11s", "-");
                else
                    printf(" %11.3f", v);
            }
            printf("\n");
        }
        printf("  ranges (in units of each model's ctx):\n");
        const char *names[3] = {"[0,ctx)", "[ctx,2ctx)", "[2ctx,4ctx)"};
        for (int k = 0; k < 3; k++) {
            printf("  %-11s", names[k]);
            for (int i = 0; i < n; i++) {
                int c = rows[i].m.cfg.ctx, a = k == 0 ? 0 : k == 1 ? c : 2 * c;
                int e = k == 0 ? c : k == 1 ? 2 * c : 4 * c;
                printf(" %11.3f", mean_range(&rows[i], a, e));
            }
            printf("\n");
        }
        printf("\nwhat the positions past ctx measure:\n");
        int seen[MODEL_PE_COUNT] = {0};
        for (int i = 0; i < n; i++) {
            int k = model_pe_from_name(rows[i].m.cfg.pe_name);
            if (k >= 0 && !seen[k]++) printf("  %s\n", model_pe_extrapolation_note(k));
        }
        if (csv) {
            /* a temporary name renamed into place: an existing table is never half-written */
            outfile of = {0};
            char oerr[512];
            if (outfile_open(&of, csv, oerr, sizeof oerr) < 0) {
                fprintf(stderr, "pelab eval: %s\n", oerr);
                goto out;
            }
            FILE *f = of.fp;
            /* the training context of each model, so a figure can mark where extrapolation
             * starts (pelab export extrapolation --data FILE) */
            fprintf(f, "# pelab eval --extrapolate: mean held-out loss (nats/token) by position\n");
            fprintf(f, "# ctx");
            for (int i = 0; i < n; i++)
                fprintf(f, " %s=%d", rows[i].m.cfg.pe_name, rows[i].m.cfg.ctx);
            fprintf(f, "\n");
            fprintf(f, "position");
            for (int i = 0; i < n; i++) fprintf(f, ",%s", rows[i].m.cfg.pe_name);
            fprintf(f, "\n");
            for (int p = 0; p < maxwin; p++) {
                fprintf(f, "%d", p);
                for (int i = 0; i < n; i++) {
                    double v = mean_range(&rows[i], p, p + 1);
                    if (isnan(v))
                        fprintf(f, ",");
                    else
                        fprintf(f, ",%.6f", v);
                }
                fprintf(f, "\n");
            }
            if (ferror(f)) {
                outfile_fail(&of, "write failed", oerr, sizeof oerr);
                fprintf(stderr, "pelab eval: %s\n", oerr);
                goto out;
            }
            if (outfile_commit(&of, oerr, sizeof oerr) < 0) {
                fprintf(stderr, "pelab eval: %s\n", oerr);
                goto out;
            }
            char name[1024];
            printf("\nwrote %s (%d positions x %d models)\n", shown(csv, name, sizeof name), maxwin,
                   n);
        }
    }
    rc = 0;
out:
    for (int i = 0; rows && i < n; i++) {
        model_free(&rows[i].m);
        free(rows[i].sum);
        free(rows[i].cnt);
    }
    free(rows);
    free(ids);
    model_grammar_free(&g);
    return rc;
}

const app_command app_command_train = {
    .name = "train",
    .synopsis = "--pe NAME [options] -o FILE",
    .summary = "train the built-in model with one position scheme",
    .fn = cmd_train,
    .opts = train_opts,
    .notes =
        "Trains the built-in transformer on generated stories. Ctrl-C stops after the current step "
        "and saves the weights of the last full step."};
const app_command app_command_eval = {
    .name = "eval",
    .synopsis = "[--extrapolate] [options] MODEL..., --model M --text FILE [options]",
    .summary = "held-out loss, and loss past the training length",
    .fn = cmd_eval,
    .words = "model file",
    .opts = eval_opts,
    .notes = "The loss is in nats per token, on stories from a seed the models never saw.\n"
             "A real checkpoint over a text: pelab eval --model M --text FILE [--ctx N] "
             "[--scaling NAME --factor F] [-o FILE.csv]: the loss at every position of the "
             "text's windows, as CSV."};

/* ---- lent to pelab race (cmd_race.c), which parses and checks as train does ---------------- */

int app_model_parse_int(const char *cmd, const char *opt, const char *s, long lo, long hi, int *out)
{
    return parse_int(cmd, opt, s, lo, hi, out);
}

int app_model_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
    return parse_u64(cmd, opt, s, out);
}

int app_model_parse_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                           double *out)
{
    return parse_double(cmd, opt, s, lo, hi, out);
}

int app_model_story_dir(const char *given, char *buf, size_t n)
{
    return story_dir(given, buf, n);
}

int app_model_check_contents(const char *cmd, const char *path, const char *magic, const char *what)
{
    return check_contents(cmd, path, magic, what);
}

const char *app_model_shown(const char *s, char *buf, size_t n)
{
    return shown(s, buf, n);
}
