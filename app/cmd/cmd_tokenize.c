/* cmd_tokenize.c: `pelab tokenize`, the tokens a real tokenizer cuts a text into: one line per
 * token with its id, the text it shows and the input bytes it covers; --ids prints only the ids
 * (the form --ids of generate takes), --decode turns ids back into text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "ids.h"
#include "tok.h"

/* The token's text with control characters, quotes, backslashes and invalid UTF-8 escaped. */
static void put_escaped(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
        int valid = c >= 0xC2 && c <= 0xF4 && i + len <= n;
        for (size_t k = 1; valid && k < len; k++) valid = ((unsigned char)s[i + k] & 0xC0) == 0x80;
        if (c < 0x80) {
            if (c == '\n')
                fputs("\\n", f);
            else if (c == '\t')
                fputs("\\t", f);
            else if (c == '\r')
                fputs("\\r", f);
            else if (c == '"' || c == '\\')
                fprintf(f, "\\%c", c);
            else if (c < 0x20 || c == 0x7F)
                fprintf(f, "\\x%02X", c);
            else
                fputc(c, f);
            i++;
        } else if (valid) {
            fwrite(s + i, 1, len, f);
            i += len;
        } else {
            fprintf(f, "\\x%02X", c);
            i++;
        }
    }
}

static char *read_stdin(size_t *n)
{
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len, stdin);
        len += got;
        if (got == 0) break;
        if (len == cap) {
            if (cap >= (size_t)1 << 30) {
                free(buf);
                return NULL;
            }
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    if (buf && ferror(stdin)) {
        free(buf);
        return NULL;
    }
    *n = len;
    return buf;
}

static int run_decode(const pe_tok *t, const char *arg)
{
    int *ids = NULL, n = 0;
    char *text = NULL, err[512];
    if (app_ids_parse("decode", arg, pe_tok_vocab_size(t), NULL, &ids, &n, err, sizeof err) < 0) {
        fprintf(stderr, "pelab tokenize: %s\n", err);
        return 2;
    }
    size_t len = 0;
    int rc = pe_tok_decode(t, ids, n, &text, &len, err, sizeof err);
    free(ids);
    if (rc < 0) {
        fprintf(stderr, "pelab tokenize: %s\n", err);
        return 1;
    }
    fwrite(text, 1, len, stdout);
    fputc('\n', stdout);
    free(text);
    return 0;
}

enum { O_TOK = 256, O_IDS, O_BOS, O_NOSPECIAL, O_DECODE, O_HELP };
static const app_cmd_opt tokenize_opts[] = {
    {.name = "tokenizer",
     .code = O_TOK,
     .arg = "FILE",
     .help = "tokenizer.json, a tiktoken tokenizer.model, llama2.c's tokenizer.bin, or a model "
             "folder (or a file in it)",
     .files = ""},
    {.name = "ids", .code = O_IDS, .help = "print only the ids, comma-separated"},
    {.name = "bos", .code = O_BOS, .help = "begin with BOS where the tokenizer adds one"},
    {.name = "no-special",
     .code = O_NOSPECIAL,
     .help = "special tokens written in TEXT (<|eot_id|>) stay text"},
    {.name = "decode", .code = O_DECODE, .arg = "IDS", .help = "print the text of the ids instead"},
    {.name = "help", .code = O_HELP, .short_name = 'h', .help = "this usage"},
    {0},
};

static int cmd_tokenize(int argc, char **argv)
{
    const char *tok_path = NULL, *decode = NULL;
    int only_ids = 0, flags = 0;
    app_cli_args args;
    int prc = app_command_parse(&app_command_tokenize, NULL, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    for (int i = 0; i < args.n; i++) {
        switch (args.code[i]) {
        case O_TOK:
            tok_path = args.val[i];
            break;
        case O_IDS:
            only_ids = 1;
            break;
        case O_BOS:
            flags |= PE_TOK_BOS;
            break;
        case O_NOSPECIAL:
            flags |= PE_TOK_NO_SPECIAL;
            break;
        case O_DECODE:
            decode = args.val[i];
            break;
        }
    }
    if (!tok_path) {
        fprintf(stderr, "pelab tokenize: --tokenizer FILE is required (tokenizer.json, a tiktoken "
                        "tokenizer.model, llama2.c's tokenizer.bin, or a model folder)\n");
        return 2;
    }
    if (decode && args.n_positional > 0) {
        fprintf(stderr, "pelab tokenize: --decode takes no TEXT (got '%s')\n", args.positional[0]);
        return 2;
    }
    if (!decode && args.n_positional != 1) {
        fprintf(stderr,
                args.n_positional > 1
                    ? "pelab tokenize: one TEXT at a time ('%s' is extra; quote it)\n"
                    : "pelab tokenize: give the TEXT to cut (or - for standard input)%s\n",
                args.n_positional > 1 ? args.positional[1] : "");
        return 2;
    }
    char err[1024];
    pe_tok *t = pe_tok_open(tok_path, err, sizeof err);
    if (!t) {
        fprintf(stderr, "pelab tokenize: --tokenizer %s: %s\n", tok_path, err);
        return 1;
    }
    if (decode) {
        int rc = run_decode(t, decode);
        pe_tok_free(t);
        return rc;
    }
    const char *arg = args.positional[0];
    char *owned = NULL;
    size_t len = strlen(arg);
    if (!strcmp(arg, "-")) {
        owned = read_stdin(&len);
        if (!owned) {
            fprintf(stderr, "pelab tokenize: standard input could not be read (or is over 1 "
                            "GiB)\n");
            pe_tok_free(t);
            return 1;
        }
        arg = owned;
    }
    pe_tok_ids ids = {0};
    int n = pe_tok_encode(t, arg, len, flags, &ids, err, sizeof err);
    int rc = 0;
    if (n < 0) {
        fprintf(stderr, "pelab tokenize: %s\n", err);
        rc = 1;
    } else if (only_ids) {
        for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", ids.ids[i]);
        printf("\n");
    } else {
        const char **texts = malloc(sizeof *texts * ((size_t)n + 1));
        char *pool = NULL;
        if (!texts || pe_tok_display(t, ids.ids, n, texts, &pool, err, sizeof err) < 0) {
            fprintf(stderr, "pelab tokenize: %s\n", texts ? err : "out of memory");
            rc = 1;
        } else {
            printf("# %s, %d tokens in the vocabulary: %s\n", pe_tok_format(t),
                   pe_tok_vocab_size(t), pe_tok_path(t));
            printf("#   i      id  bytes      text\n");
            for (int i = 0; i < n; i++) {
                char span[32];
                snprintf(span, sizeof span, "%d..%d", ids.spans[i].start, ids.spans[i].end);
                printf("%5d %7d  %-9s  \"", i, ids.ids[i], span);
                put_escaped(stdout, texts[i], strlen(texts[i]));
                char raw[8];
                printf("\"%s\n",
                       pe_tok_is_special(t, ids.ids[i]) ? "  (special)"
                       : !texts[i][0] && pe_tok_token_text(t, ids.ids[i], raw, sizeof raw) > 0
                           ? "  (a byte of the character above)"
                           : "");
            }
            printf("# %d tokens for %zu bytes\n", n, len);
        }
        free(pool);
        free(texts);
    }
    if (fflush(stdout) != 0 && rc == 0) rc = 1;
    pe_tok_ids_free(&ids);
    free(owned);
    pe_tok_free(t);
    return rc;
}

const app_command app_command_tokenize = {
    .name = "tokenize",
    .synopsis = "--tokenizer FILE [--ids] [--bos] TEXT|-, --tokenizer FILE --decode 1,2,3",
    .summary = "the tokens a real tokenizer cuts a text into (- reads standard input), with ids",
    .fn = cmd_tokenize,
    .opts = tokenize_opts};
