/* cmd_eval_lm.c: `pelab eval --model M --text FILE`, a real checkpoint's loss in nats at every
 * position of windows over a text, as CSV whose header carries the command. The text is cut into
 * windows of --ctx tokens (the model's BOS first when it has one); position p's loss is
 * -log softmax(logits_p)[token p+1], averaged over the windows. --scaling/--factor apply a RoPE
 * context extension at inference (pe/rope_scaling.c, transformers' semantics) and --extrapolate
 * runs windows of 4x the trained context: the YaRN paper's loss-against-position figure for any
 * RoPE model. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd_model.h"
#include "commands.h"
#include "lm.h"
#include "outfile.h"
#include "tok.h"

#define TEXT_MAX ((size_t)64 << 20) /* --text files over 64 MiB are refused */

static int ev_int(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "pelab eval: --%s %s: expected a whole number %ld..%ld\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static const struct {
    const char *name;
    pe_scaling_type type;
} scalings[] = {
    {"none", PE_SCALING_NONE},       {"linear", PE_SCALING_LINEAR}, {"ntk", PE_SCALING_NTK},
    {"dynamic", PE_SCALING_DYNAMIC}, {"yarn", PE_SCALING_YARN},     {"llama3", PE_SCALING_LLAMA3},
};

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "pelab eval: --text %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 65536, n = 0;
    char *b = malloc(cap + 1);
    for (;;) {
        if (!b) break;
        if (n == cap) {
            if (cap >= TEXT_MAX) {
                fprintf(stderr, "pelab eval: --text %s: more than 64 MiB\n", path);
                free(b);
                fclose(f);
                return NULL;
            }
            char *nb = realloc(b, (cap *= 2) + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (!b || bad) {
        fprintf(stderr, "pelab eval: --text %s: %s\n", path, b ? "cannot read" : "out of memory");
        free(b);
        return NULL;
    }
    b[n] = 0;
    *len = n;
    return b;
}

/* The loss of every position of one window, added into sum/cnt; logits holds (block, V).
 * The window goes through lm_forward in blocks of `block` positions: each block reads the
 * weights once per pass of LM_PASS tokens, so blocks of a multiple of LM_PASS cost nothing over
 * one call; the block only bounds the logits held at once. The results do not depend on it:
 * dynamic NTK is set for the whole window first (transformers' model(window) computes every
 * position at seq_len = the window's length). */
static int run_window(lm_session *s, const int *w, int n, int block, float *logits, double *sum,
                      double *cnt, char *err, size_t errlen)
{
    int V = s->m->c.vocab;
    lm_session_reset(s);
    int rc = lm_session_dynamic(s, (long)s->offset + n, err, errlen);
    if (rc < 0) return rc;
    for (int i = 0; i < n; i += block) {
        int T = n - i < block ? n - i : block;
        rc = lm_forward(s, w + i, T, logits, err, errlen);
        if (rc) return rc;
        for (int t = 0; t < T; t++) {
            int p = i + t;
            if (p + 1 >= n) break;
            const float *l = logits + (size_t)t * (size_t)V;
            double mx = l[0], z = 0.0;
            for (int v = 1; v < V; v++)
                if (l[v] > mx) mx = l[v];
            for (int v = 0; v < V; v++) z += exp((double)l[v] - mx);
            sum[p] += mx + log(z) - (double)l[w[p + 1]];
            cnt[p] += 1.0;
        }
    }
    return PE_OK;
}

/* Positions a block of the window holds: the whole window when its logits take at most
 * LOGITS_MAX bytes, else the most that fit, a multiple of LM_PASS when that is >= LM_PASS. */
#define LOGITS_MAX ((size_t)64 << 20)
static int window_block(long ctx, int vocab)
{
    size_t fit = LOGITS_MAX / ((size_t)vocab * sizeof(float));
    if (fit < 1) fit = 1;
    if ((size_t)ctx <= fit) return (int)ctx;
    return (int)(fit >= LM_PASS ? fit - fit % LM_PASS : fit);
}

int app_eval_lm_run(const app_cli_args *args, int argc, char **argv)
{
    const char *model_path = NULL, *tok_path = NULL, *text_path = NULL, *out_path = NULL,
               *scaling = NULL;
    long ctx = 0, orig = 0, windows = 0, threads = 0;
    double factor = 0.0;
    int extra = 0;
    for (int i = 0; i < args->n; i++) {
        char *end;
        const char *optarg = args->val[i];
        switch (args->code[i]) {
        case APP_EVAL_MODEL:
            model_path = optarg;
            break;
        case APP_EVAL_TOK:
            tok_path = optarg;
            break;
        case APP_EVAL_TEXT:
            text_path = optarg;
            break;
        case 'o':
            out_path = optarg;
            break;
        case APP_EVAL_CTX:
            if (ev_int("ctx", optarg, 2, LM_MAX_CTX, &ctx)) return 2;
            break;
        case APP_EVAL_ORIG:
            if (ev_int("orig-ctx", optarg, 1, LM_MAX_CTX, &orig)) return 2;
            break;
        case APP_EVAL_WINDOWS:
            if (ev_int("windows", optarg, 1, 1L << 30, &windows)) return 2;
            break;
        case APP_EVAL_THREADS:
            if (ev_int("threads", optarg, 0, 1024, &threads)) return 2;
            break;
        case APP_EVAL_EXTRA:
            extra = 1;
            break;
        case APP_EVAL_SCALING:
            scaling = optarg;
            break;
        case APP_EVAL_FACTOR:
            errno = 0;
            factor = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(factor >= 1 && factor <= 1e6)) {
                fprintf(stderr, "pelab eval: --factor %s: expected a number 1..1e6\n", optarg);
                return 2;
            }
            break;
        case APP_EVAL_FORCE:
            outfile_set_force(1);
            break;
        case APP_EVAL_TOKENS:
        case APP_EVAL_BIN:
        case APP_EVAL_STORY:
            fprintf(stderr, "pelab eval: %s: for the built-in models, not with --model M\n",
                    app_eval_row_name(args->code[i]));
            return 2;
        }
    }
    if (args->n_positional > 0) {
        fprintf(stderr, "pelab eval: unexpected argument %s (with --model, the model is M)\n",
                args->positional[0]);
        return 2;
    }
    if (!model_path || !text_path) {
        fprintf(stderr, "pelab eval: --model M and --text FILE go together (pelab eval --help)\n");
        return 2;
    }
    int stype = -1;
    if (scaling) {
        for (size_t i = 0; i < sizeof scalings / sizeof scalings[0]; i++)
            if (strcmp(scalings[i].name, scaling) == 0) stype = (int)scalings[i].type;
        if (stype < 0) {
            fprintf(stderr,
                    "pelab eval: --scaling %s: allowed none, linear, ntk, dynamic, yarn, llama3\n",
                    scaling);
            return 2;
        }
        if (stype != PE_SCALING_NONE && factor == 0.0) {
            fprintf(stderr, "pelab eval: --scaling %s needs --factor F (>= 1)\n", scaling);
            return 2;
        }
    } else if (factor != 0.0 || orig) {
        fprintf(stderr, "pelab eval: --factor and --orig-ctx belong to --scaling NAME\n");
        return 2;
    }
    char err[1024];
    if (out_path && !outfile_is_stdout(out_path) && outfile_check(out_path, err, sizeof err) < 0) {
        fprintf(stderr, "pelab eval: %s\n", err);
        return 2;
    }
    size_t tlen = 0;
    char *text = read_text(text_path, &tlen);
    if (!text) return 1;
    int rc = 1;
    lm_model *m = NULL;
    pe_tok *tok = NULL;
    pe_tok_ids ti = {0};
    lm_session s = {0};
    double *sum = NULL, *cnt = NULL;
    float *logits = NULL;
    size_t held = 0; /* logits' bytes in the memory budget */
    int *win = NULL;
    if (lm_open(model_path, &m, err, sizeof err) != PE_OK) {
        fprintf(stderr, "pelab eval: %s\n", err);
        goto out;
    }
    const lm_config *c = &m->c;
    tok = pe_tok_open(tok_path ? tok_path : model_path, err, sizeof err);
    if (!tok) {
        fprintf(stderr, "pelab eval: %s%s\n", err, tok_path ? "" : " (--tokenizer FILE names one)");
        goto out;
    }
    if (pe_tok_vocab_size(tok) > c->vocab) {
        fprintf(stderr, "pelab eval: %s has %d tokens, more than the model's vocabulary of %d\n",
                pe_tok_path(tok), pe_tok_vocab_size(tok), c->vocab);
        goto out;
    }
    if (pe_tok_encode(tok, text, tlen, 0, &ti, err, sizeof err) < 0) {
        fprintf(stderr, "pelab eval: --text %s: %s\n", text_path, err);
        goto out;
    }
    if (!ctx) ctx = extra ? 4L * c->seq_len : c->seq_len;
    if (c->arch == LM_ARCH_GPT2 && (ctx > c->seq_len || scaling)) {
        fprintf(stderr, "pelab eval: %s: GPT-2 has %d learned positions and no RoPE to scale; %s\n",
                model_path, c->seq_len,
                scaling ? "--scaling needs a RoPE model" : "use --ctx up to that");
        rc = 2;
        goto out;
    }
    int bos = c->bos_id >= 0 && c->bos_id < c->vocab ? c->bos_id : -1;
    int per = (int)ctx - (bos >= 0); /* text tokens per window */
    long nwin = ti.n / per;
    if (nwin == 0) nwin = ti.n > 1 ? 1 : 0;
    if (windows && nwin > windows) nwin = windows;
    if (nwin == 0) {
        fprintf(stderr, "pelab eval: --text %s: %d tokens, too few for a window\n", text_path,
                ti.n);
        goto out;
    }
    if (lm_session_init(&s, m, (int)ctx, (int)threads, err, sizeof err) != PE_OK) {
        fprintf(stderr, "pelab eval: %s\n", err);
        goto out;
    }
    if (scaling) {
        pe_params p = c->rope;
        p.len = (int)(ctx < PE_MAX_LEN ? ctx : PE_MAX_LEN);
        p.scaling.type = (pe_scaling_type)stype;
        if (stype != PE_SCALING_NONE) {
            p.scaling.factor = factor;
            p.scaling.original_ctx = orig ? (int)orig : c->seq_len;
            p.scaling.seq_len = 0; /* dynamic NTK: run_window sets each window's length */
        }
        if (lm_session_set_rope(&s, &p, err, sizeof err) != PE_OK) {
            fprintf(stderr, "pelab eval: %s\n", err);
            rc = 2;
            goto out;
        }
    }
    sum = calloc((size_t)ctx, sizeof *sum);
    cnt = calloc((size_t)ctx, sizeof *cnt);
    int block = window_block(ctx, c->vocab);
    size_t lbytes = (size_t)block * (size_t)c->vocab * sizeof *logits;
    if (pe_mem_reserve_hint(lbytes, "eval's logits", "a smaller --ctx needs less", err,
                            sizeof err) != PE_OK) {
        fprintf(stderr, "pelab eval: %s\n", err);
        goto out;
    }
    held = lbytes;
    logits = malloc(lbytes);
    win = malloc((size_t)ctx * sizeof *win);
    if (!sum || !cnt || !logits || !win) {
        fprintf(stderr, "pelab eval: out of memory\n");
        goto out;
    }
    for (long w = 0; w < nwin; w++) {
        int n = 0;
        if (bos >= 0) win[n++] = bos;
        for (long i = w * per; i < (w + 1) * per && i < ti.n; i++) win[n++] = ti.ids[i];
        if (run_window(&s, win, n, block, logits, sum, cnt, err, sizeof err) != PE_OK) {
            fprintf(stderr, "pelab eval: %s\n", err);
            goto out;
        }
    }
    outfile of = {0};
    FILE *fp = stdout;
    if (out_path && !outfile_is_stdout(out_path)) {
        if (outfile_open(&of, out_path, err, sizeof err) != 0) {
            fprintf(stderr, "pelab eval: %s\n", err);
            goto out;
        }
        fp = of.fp;
    }
    fprintf(fp, "# pelab");
    for (int i = 0; i < argc; i++) {
        fputc(' ', fp);
        for (const char *q = argv[i]; *q; q++) fputc(*q == '\n' || *q == '\r' ? ' ' : *q, fp);
    }
    /* the trained context ends the line: the extrapolation view (--data) marks it */
    fprintf(fp, "\n# %s (%s), %ld windows of %ld tokens, RoPE scaling %s%s, trained context %d\n",
            model_path, c->arch_name, nwin, ctx, scaling ? scaling : "as trained",
            c->arch == LM_ARCH_GPT2 ? " (none: learned positions)" : "", c->seq_len);
    fprintf(fp, "position,loss,windows\n");
    for (long p = 0; p + 1 < ctx; p++)
        if (cnt[p] > 0) fprintf(fp, "%ld,%.6f,%.0f\n", p, sum[p] / cnt[p], cnt[p]);
    if (fp == stdout) {
        if (fflush(stdout) != 0) {
            fprintf(stderr, "pelab eval: standard output: %s\n", strerror(errno));
            goto out;
        }
    } else if (outfile_commit(&of, err, sizeof err) != 0) {
        fprintf(stderr, "pelab eval: %s\n", err);
        goto out;
    }
    rc = 0;
out:
    free(win);
    free(logits);
    if (held) pe_mem_release(held);
    free(sum);
    free(cnt);
    lm_session_free(&s);
    pe_tok_ids_free(&ti);
    pe_tok_free(tok);
    lm_close(m);
    free(text);
    return rc;
}
