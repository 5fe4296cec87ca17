/* cmd_generate.c: `pelab generate`, a real checkpoint (llama2.c .bin, Hugging Face folder) run
 * forward from a prompt, greedy by default, as llama2.c's run.c does it: --steps counts the
 * positions run (prompt included), every token after the first is printed (run.c's streaming
 * decode), and a llama2.c model stops when it produces BOS, a Hugging Face one at its EOS.
 * The tokenizer is --tokenizer FILE or the one beside the model (pe/model/tok.h); ids in
 * (--ids) and out (--print-ids) need none. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd_model.h"
#include "commands.h"
#include "lm.h"
#include "lmi.h"
#include "ids.h"
#include "outfile.h"
#include "tok.h"

static int gen_int(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "pelab generate: --%s %s: expected a whole number %ld..%ld\n", opt, s, lo,
                hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* An .npy (version 1.0) of float32 rows x cols through the output module. */
static int write_npy(const char *path, const float *data, int rows, int cols, char *err,
                     size_t errlen)
{
    outfile of;
    if (outfile_open(&of, path, err, errlen) != 0) return -1;
    char hdr[128];
    int n = snprintf(hdr, sizeof hdr,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols);
    int total = 10 + n + 1, pad = (64 - total % 64) % 64;
    fwrite("\x93NUMPY\x01\x00", 1, 8, of.fp);
    unsigned hl = (unsigned)(n + pad + 1);
    fputc((int)(hl & 0xff), of.fp);
    fputc((int)(hl >> 8), of.fp);
    fwrite(hdr, 1, (size_t)n, of.fp);
    for (int i = 0; i < pad; i++) fputc(' ', of.fp);
    fputc('\n', of.fp);
    fwrite(data, sizeof *data, (size_t)rows * (size_t)cols, of.fp);
    return outfile_commit(&of, err, errlen);
}

/* The text of ids[1..n), piece by piece as run.c prints it: a piece that is one byte neither
 * printable nor white space is skipped (run.c's safe_printf; it also keeps raw control bytes
 * off the terminal). */
static void print_text(const pe_tok *tok, const int *ids, int n)
{
    char buf[512];
    for (int i = 1; i < n; i++) {
        int len = pe_tok_decode_next(tok, ids[i - 1], ids[i], buf, sizeof buf);
        if (len <= 0) continue;
        if (len >= (int)sizeof buf) len = (int)sizeof buf - 1;
        unsigned char b = (unsigned char)buf[0];
        if (len == 1 && !((b >= 0x20 && b < 0x7f) || b == '\n' || b == '\t' || b == '\r' ||
                          b == '\v' || b == '\f'))
            continue;
        fwrite(buf, 1, (size_t)len, stdout);
    }
    printf("\n");
}

enum {
    O_MODEL = 256,
    O_TOK,
    O_PROMPT,
    O_IDS,
    O_STEPS,
    O_TEMP,
    O_SEED,
    O_PRINT,
    O_LOGITS,
    O_THREADS,
    O_HELP
};

static const app_cmd_opt generate_opts[] = {
    {.name = "model",
     .code = O_MODEL,
     .arg = "M",
     .help = "a llama2.c .bin, a Hugging Face folder or a file inside one",
     .files = ""},
    {.name = "tokenizer",
     .code = O_TOK,
     .arg = "T",
     .help = "tokenizer.json, tokenizer.model, a llama2.c tokenizer.bin (default: the one beside "
             "the model)",
     .files = ""},
    {.name = "prompt",
     .code = O_PROMPT,
     .arg = "TEXT",
     .help = "the prompt as text (encoded with BOS, as run.c does)"},
    {.name = "ids",
     .code = O_IDS,
     .arg = "1,2,3",
     .help = "the prompt as token ids (default: the model's BOS)"},
    {.name = "steps",
     .code = O_STEPS,
     .arg = "N",
     .help = "positions to run, the prompt included (256; at most the model's context)"},
    {.name = "temperature",
     .code = O_TEMP,
     .arg = "T",
     .help = "0 = greedy (default); > 0 samples from softmax(logits / T)"},
    {.name = "seed", .code = O_SEED, .arg = "S", .help = "the sampler's seed (0)"},
    {.name = "print-ids",
     .code = O_PRINT,
     .help = "print the ids of the sequence (comma-separated) instead of its text"},
    {.name = "logits-out",
     .code = O_LOGITS,
     .arg = "F.npy",
     .help = "float32 logits (positions, vocabulary) of every position run",
     .files = "npy"},
    {.name = "threads", .code = O_THREADS, .arg = "N", .help = "0 = the CPUs free now (default)"},
    {.name = "help", .code = O_HELP, .short_name = 'h', .help = "this usage"},
    {0},
};

static int cmd_generate(int argc, char **argv)
{
    const char *model_path = NULL, *ids_arg = NULL, *logits_path = NULL, *prompt = NULL,
               *tok_path = NULL;
    long steps = 256, threads = 0;
    double temperature = 0.0;
    unsigned long long seed = 0;
    int print_ids = 0;
    app_cli_args args;
    int prc = app_command_parse(&app_command_generate, NULL, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    for (int i = 0; i < args.n; i++) {
        char *end;
        const char *optarg = args.val[i];
        switch (args.code[i]) {
        case O_MODEL:
            model_path = optarg;
            break;
        case O_TOK:
            tok_path = optarg;
            break;
        case O_PROMPT:
            prompt = optarg;
            break;
        case O_IDS:
            ids_arg = optarg;
            break;
        case O_STEPS:
            if (gen_int("steps", optarg, 1, LM_MAX_CTX, &steps)) return 2;
            break;
        case O_THREADS:
            if (gen_int("threads", optarg, 0, 1024, &threads)) return 2;
            break;
        case O_TEMP:
            errno = 0;
            temperature = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(temperature >= 0 && temperature <= 100)) {
                fprintf(stderr,
                        "pelab generate: --temperature %s: expected a number 0..100 (0 = "
                        "greedy)\n",
                        optarg);
                return 2;
            }
            break;
        case O_SEED:
            errno = 0;
            seed = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-') {
                fprintf(stderr, "pelab generate: --seed %s: expected a whole number >= 0\n",
                        optarg);
                return 2;
            }
            break;
        case O_PRINT:
            print_ids = 1;
            break;
        case O_LOGITS:
            logits_path = optarg;
            break;
        }
    }
    if (args.n_positional > 0) {
        fprintf(stderr, "pelab generate: unexpected argument %s (the model is --model M)\n",
                args.positional[0]);
        return 2;
    }
    if (!model_path) {
        fprintf(stderr, "pelab generate: --model M is required (a llama2.c .bin or a Hugging "
                        "Face folder)\n");
        return 2;
    }
    if (prompt && ids_arg) {
        fprintf(stderr, "pelab generate: --prompt and --ids: give the prompt one way\n");
        return 2;
    }
    char err[1024];
    if (logits_path &&
        (outfile_check(logits_path, err, sizeof err) < 0 || outfile_is_stdout(logits_path))) {
        fprintf(stderr, "pelab generate: %s\n",
                outfile_is_stdout(logits_path) ? "--logits-out -: names a .npy file" : err);
        return 2;
    }
    lm_model *m = NULL;
    if (lm_open(model_path, &m, err, sizeof err) != PE_OK) {
        fprintf(stderr, "pelab generate: %s\n", err);
        return 1;
    }
    const lm_config *c = &m->c;
    int V = c->vocab, *ids = NULL, n_prompt = 0, rc = 1;
    float *all = NULL;
    size_t held = 0;
    lm_session s = {0};
    pe_tok *tok = NULL;
    /* Text in or out needs a tokenizer; ids in and out need none. */
    if (prompt || tok_path || !print_ids) {
        tok = pe_tok_open(tok_path ? tok_path : model_path, err, sizeof err);
        if (!tok) {
            /* name the option when the file was named (as pelab tokenize does) */
            fprintf(stderr, "pelab generate: %s%s%s\n", tok_path ? "--tokenizer " : "", err,
                    tok_path ? ""
                             : " (--tokenizer FILE names one; --ids and --print-ids need none)");
            goto out;
        }
        if (pe_tok_vocab_size(tok) > V) {
            fprintf(stderr,
                    "pelab generate: %s has %d tokens, more than the model's vocabulary of %d: "
                    "not this model's tokenizer\n",
                    pe_tok_path(tok), pe_tok_vocab_size(tok), V);
            goto out;
        }
    }
    if (prompt) {
        pe_tok_ids ti = {0};
        if (pe_tok_encode(tok, prompt, strlen(prompt), PE_TOK_BOS, &ti, err, sizeof err) < 0 ||
            ti.n == 0) {
            fprintf(stderr, "pelab generate: --prompt: %s\n", ti.n ? err : "no tokens");
            pe_tok_ids_free(&ti);
            goto out;
        }
        ids = ti.ids; /* taken over; the spans are not needed */
        n_prompt = ti.n;
        free(ti.spans);
    } else if (ids_arg) {
        if (app_ids_parse("ids", ids_arg, V, NULL, &ids, &n_prompt, err, sizeof err) < 0) {
            fprintf(stderr, "pelab generate: %s\n", err);
            rc = 2;
            goto out;
        }
    } else {
        if (c->bos_id < 0) {
            fprintf(stderr, "pelab generate: %s names no BOS token; give the prompt with --ids\n",
                    model_path);
            rc = 2;
            goto out;
        }
        ids = malloc(sizeof *ids);
        if (ids) ids[0] = c->bos_id, n_prompt = 1;
    }
    if (steps > c->seq_len) steps = c->seq_len; /* run.c: at most the trained context */
    if (n_prompt > steps) steps = n_prompt;
    int *seq = realloc(ids, (size_t)(steps + 1) * sizeof *seq);
    if (!seq) goto oom;
    ids = seq;
    if (logits_path) {
        held = (size_t)steps * (size_t)V * sizeof(float);
        if (pe_mem_reserve_hint(held, "--logits-out", "fewer --steps need less", err, sizeof err) !=
            PE_OK) {
            held = 0;
            fprintf(stderr, "pelab generate: %s\n", err);
            goto out;
        }
        all = malloc(held);
        if (!all) goto oom;
    }
    if (lm_session_init(&s, m, (int)steps, (int)threads, err, sizeof err) != PE_OK) {
        fprintf(stderr, "pelab generate: %s\n", err);
        goto out;
    }
    /* The prompt in one pass; then one token at a time. */
    if (lm_forward(&s, ids, n_prompt, all, err, sizeof err) != PE_OK) {
        fprintf(stderr, "pelab generate: %s\n", err);
        goto out;
    }
    pe_rng rng;
    pe_rng_seed(&rng, seed);
    int n = n_prompt, stop = c->format == LM_FORMAT_LLAMA2C ? 1 : c->eos_id;
    for (;;) {
        int next =
            temperature > 0 ? lmi_sample(s.logits, V, temperature, &rng) : lm_argmax(s.logits, V);
        ids[n++] = next;
        if (next == stop || s.n >= steps) break;
        if (lm_forward(&s, &next, 1, all ? all + (size_t)s.n * (size_t)V : NULL, err, sizeof err) !=
            PE_OK) {
            fprintf(stderr, "pelab generate: %s\n", err);
            goto out;
        }
    }
    if (print_ids) {
        for (int i = 0; i < n; i++) printf("%s%d", i ? "," : "", ids[i]);
        printf("\n");
    } else {
        print_text(tok, ids, n);
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "pelab generate: standard output: %s\n", strerror(errno));
        goto out;
    }
    /* logits exist for the positions run: the prompt's and each fed token's */
    if (all && write_npy(logits_path, all, s.n, V, err, sizeof err) != 0) {
        fprintf(stderr, "pelab generate: %s\n", err);
        goto out;
    }
    rc = 0;
    goto out;
oom:
    fprintf(stderr, "pelab generate: out of memory\n");
out:
    lm_session_free(&s);
    free(all);
    if (held) pe_mem_release(held);
    free(ids);
    pe_tok_free(tok);
    lm_close(m);
    return rc;
}

const app_command app_command_generate = {
    .name = "generate",
    .synopsis = "--model M [--ids 1,2,3 | --prompt TEXT] [--steps N] [options]",
    .summary = "run a llama2.c or Hugging Face checkpoint forward (greedy or sampled)",
    .fn = cmd_generate,
    .opts = generate_opts};
