/* test_corpus: the story grammar, the corpus stream and the tokenizer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/tiny/model.h"
#include "tap.h"

static char dir[4096];

static void write_file(const char *d, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", d, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A grammar in a temp dir must be refused with a message containing want. */
static void refused(const char *grammar, const char *want, const char *name)
{
    char tmp[160];
    tap_tmp_path(tmp, sizeof tmp, "pelab-grammar-XXXXXX");
    if (!mkdtemp(tmp)) {
        TAP_OK(0, "mkdtemp for %s", name);
        return;
    }
    write_file(tmp, "grammar.txt", grammar);
    write_file(tmp, "color.txt", "red\nblue\n");
    write_file(tmp, "empty.txt", "# nothing\n");
    model_grammar g = {0};
    char err[256] = "";
    int rc = model_grammar_load(&g, tmp, err, sizeof err);
    TAP_OK(rc < 0 && strstr(err, want), "%s refused: \"%s\"", name, err);
    model_grammar_free(&g);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd)) tap_diag("could not remove %s", tmp);
}

int main(void)
{
    const char *src = getenv("PELAB_SRC");
    snprintf(dir, sizeof dir, "%s/assets/story", src ? src : ".");
    model_grammar g = {0};
    char err[256] = "";
    int rc = model_grammar_load(&g, dir, err, sizeof err);
    if (!TAP_OK(rc == 0, "grammar loads from %s (%s)", dir, err)) return tap_done();
    TAP_OK(g.hash != 0, "grammar hash %016llx", (unsigned long long)g.hash);

    /* Determinism: same (seed, index) -> same story; another seed -> another story. */
    const char *a[1024], *b[1024];
    int na = model_story(&g, 7, 3, a, 1024, err, sizeof err);
    int nb = model_story(&g, 7, 3, b, 1024, err, sizeof err);
    int same = na == nb && na > 0;
    for (int i = 0; same && i < na; i++) same = !strcmp(a[i], b[i]);
    TAP_OK(same, "story (7, 3) is reproducible (%d tokens)", na);
    nb = model_story(&g, 8, 3, b, 1024, err, sizeof err);
    same = na == nb;
    for (int i = 0; same && i < na; i++) same = !strcmp(a[i], b[i]);
    TAP_OK(!same, "another seed gives another story");
    TAP_OK(!strcmp(a[0], "Once") || !strcmp(a[0], "There") || (a[0][0] >= 'A' && a[0][0] <= 'Z'),
           "a story starts with a capital (%s)", a[0]);

    /* Structure: the hero's name (the first capitalised word that is not sentence-initial
     * boilerplate) comes back later, at distances that vary. */
    int min_gap = 1 << 30, max_gap = 0, nstories = 300, total = 0, bad_case = 0, with_an = 0;
    for (int s = 0; s < nstories; s++) {
        const char *w[1024];
        int n = model_story(&g, 1, (uint64_t)s, w, 1024, err, sizeof err);
        if (n <= 0 || n > 1024) {
            TAP_OK(0, "story %d generated (%s)", s, err);
            break;
        }
        total += n;
        /* the last mention of the word that ends the opening sentence's name */
        const char *name = NULL;
        int first = -1;
        for (int i = 0; i + 1 < n; i++)
            if ((!strcmp(w[i], "named") || !strcmp(w[i], "called")) && first < 0) {
                name = w[i + 1];
                first = i + 1;
            }
        if (!name) {
            name = w[0];
            first = 0;
        }
        int last = first;
        for (int i = first + 1; i < n; i++)
            if (!strcmp(w[i], name)) last = i;
        int gap = last - first;
        if (gap < min_gap) min_gap = gap;
        if (gap > max_gap) max_gap = gap;
        for (int i = 1; i < n; i++) {
            if (!strcmp(w[i - 1], ".") && w[i][0] >= 'a' && w[i][0] <= 'z') bad_case++;
            if (!strcmp(w[i - 1], "an")) with_an++;
            if (!strcmp(w[i - 1], "a") && strchr("aeiou", w[i][0])) bad_case++;
        }
    }
    TAP_OK(min_gap > 0, "every hero is named again later (min distance %d)", min_gap);
    TAP_OK(max_gap > 64, "some references reach past 64 tokens (max %d)", max_gap);
    TAP_OK(bad_case == 0, "sentences start with capitals, a/an agree (%d errors)", bad_case);
    TAP_OK(with_an > 0, "\"an\" appears before vowels (%d times)", with_an);
    double mean = (double)total / nstories;
    TAP_OK(mean > 60 && mean < 250, "mean story length %.1f tokens", mean);

    /* Vocabulary and the corpus stream. */
    tok_vocab v = {0};
    rc = model_vocab_build(&g, 1, 200000, &v, err, sizeof err);
    TAP_OK(rc == 0 && v.n > 100 && v.n < 2000, "vocabulary built: %d tokens (%s)", v.n, err);
    TAP_OK(!strcmp(tok_word(&v, TOK_UNK), "<unk>") && !strcmp(tok_word(&v, TOK_EOS), "<eos>"),
           "special tokens 0 and 1");
    TAP_OK(!strcmp(tok_word(&v, 2), ".") || !strcmp(tok_word(&v, 2), "the"),
           "most frequent token first: %s", tok_word(&v, 2));
    TAP_OK(!strcmp(tok_word(&v, -1), "<unk>") && !strcmp(tok_word(&v, v.n), "<unk>"),
           "ids out of range read as <unk>");
    size_t n = 50000, unk = 99;
    int *ids = malloc(n * sizeof *ids), *ids2 = malloc(n * sizeof *ids2);
    rc = model_corpus(&g, &v, 1, n, ids, &unk, err, sizeof err);
    TAP_OK(rc == 0 && unk == 0, "training stream has no unknown tokens (%zu)", unk);
    int eos = 0;
    for (size_t i = 0; i < n; i++) eos += ids[i] == TOK_EOS;
    TAP_OK(eos > 100, "stories are separated by <eos> (%d)", eos);
    /* one pass for both (what train and race use) = the vocabulary, then the corpus */
    {
        tok_vocab v1 = {0};
        size_t nv = 200000;
        int *big = malloc(nv * sizeof *big);
        rc = big ? model_corpus_vocab(&g, 1, nv, &v1, big, err, sizeof err) : -1;
        int same_words = rc == 0 && v1.n == v.n;
        for (int i = 0; same_words && i < v.n; i++)
            same_words = !strcmp(tok_word(&v1, i), tok_word(&v, i));
        TAP_OK(same_words, "model_corpus_vocab: the vocabulary of model_vocab_build (%d words, %s)",
               v1.n, err);
        size_t diff = 0;
        for (size_t i = 0; rc == 0 && i < n; i++) diff += big[i] != ids[i];
        TAP_OK(rc == 0 && diff == 0, "model_corpus_vocab: the ids of model_corpus (%zu differ)",
               diff);
        tok_vocab_free(&v1);
        free(big);
    }
    rc = model_corpus(&g, &v, model_heldout_seed(1), n, ids2, &unk, err, sizeof err);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) differ += ids[i] != ids2[i];
    TAP_OK(rc == 0 && differ > n / 2, "held-out stream differs (%zu of %zu ids)", differ, n);
    TAP_OK(unk < n / 1000, "held-out stream: %zu unknown tokens", unk);
    TAP_OK(model_heldout_seed(1) != 1, "held-out seed differs from the data seed");

    /* Tokenizer round trip on the stream decoded as text. */
    size_t need = tok_decode(&v, ids, 20000, NULL, 0);
    char *text = malloc(need + 1);
    size_t got = tok_decode(&v, ids, 20000, text, need + 1);
    TAP_OK(got == need && strlen(text) == need, "decode length %zu", need);
    int *back = malloc(30000 * sizeof *back);
    unsigned char *unkf = malloc(30000);
    int m = tok_encode(&v, text, back, unkf, 30000);
    int equal = m == 20000;
    for (int i = 0; equal && i < m; i++) equal = back[i] == ids[i] && !unkf[i];
    TAP_OK(equal, "encode(decode(ids)) == ids over 20000 tokens (%d back)", m);
    size_t need2 = tok_decode(&v, back, m, NULL, 0);
    char *text2 = malloc(need2 + 1);
    tok_decode(&v, back, m, text2, need2 + 1);
    TAP_OK(!strcmp(text, text2), "decode(encode(text)) == text");
    char *nl = strchr(text, '\n');
    if (nl) *nl = 0;
    tap_diag("first story: %.300s", text);
    TAP_OK(strstr(text, " .") == NULL && strstr(text, " ,") == NULL, "no space before . or ,");

    /* Unknown words are flagged and shown visibly; case is forgiven. */
    int u[16];
    unsigned char uf[16];
    m = tok_encode(&v, "the zyxxy went to THE park.\n\nonce", u, uf, 16);
    TAP_OK(m == 9, "9 tokens (%d)", m);
    TAP_OK(uf[1] && u[1] == TOK_UNK && !uf[0] && !uf[2], "zyxxy is flagged unknown");
    TAP_OK(!uf[4] && u[4] == tok_find(&v, "the"), "THE falls back to the");
    TAP_OK(u[6] == tok_find(&v, ".") && u[7] == TOK_EOS, "punctuation split, blank line = <eos>");
    char small[8];
    size_t full = tok_decode(&v, u, 2, small, sizeof small);
    TAP_OK(full == strlen("the <unk>") && !strcmp(small, "the <un"), "decode truncates: %s", small);
    TAP_OK(tok_encode(&v, "the cat", u, uf, 1) == 2, "encode reports the full count");
    TAP_OK(tok_find(&v, "nonexistent") == -1, "tok_find misses");

    /* Vocabulary checks. */
    tok_vocab bad = {0};
    const char *w1[] = {"<unk>", "<eos>", "a", "a"};
    TAP_OK(tok_vocab_init(&bad, w1, 4, err, sizeof err) < 0 && strstr(err, "twice"),
           "duplicate token refused: %s", err);
    const char *w2[] = {"<eos>", "<unk>", "a"};
    TAP_OK(tok_vocab_init(&bad, w2, 3, err, sizeof err) < 0, "specials out of order refused");
    const char *w3[] = {"<unk>", "<eos>", "a b"};
    TAP_OK(tok_vocab_init(&bad, w3, 3, err, sizeof err) < 0, "white space refused: %s", err);
    tok_vocab_free(&bad);

    /* Grammar errors carry messages. */
    refused("story = <missing> .\n", "never defined", "undefined rule");
    refused("story = {nolist}\n", "nolist.txt", "missing list file");
    refused("story = {empty}\n", "empty", "empty list");
    refused("hello\n", "expected", "line without =");
    refused("story = a | | b\n", "empty alternative", "empty alternative");
    refused("start = a\n", "story", "no story rule");
    refused("story = a\nstory = b\n", "twice", "rule defined twice");
    refused("story = @x a\n", "weight", "bad weight");
    model_grammar loop = {0};
    {
        char tmp[160];
        tap_tmp_path(tmp, sizeof tmp, "pelab-grammar-XXXXXX");
        if (mkdtemp(tmp)) {
            write_file(tmp, "grammar.txt", "story = <story> x\n");
            rc = model_grammar_load(&loop, tmp, err, sizeof err);
            const char *w[8];
            int k = rc ? 0 : model_story(&loop, 1, 0, w, 8, err, sizeof err);
            TAP_OK(k < 0 && strstr(err, "deeper"), "a cycle is stopped: %s", err);
            model_grammar_free(&loop);
            write_file(tmp, "grammar.txt", "story = $X a\n");
            rc = model_grammar_load(&loop, tmp, err, sizeof err);
            k = rc ? 0 : model_story(&loop, 1, 0, w, 8, err, sizeof err);
            TAP_OK(k < 0 && strstr(err, "before it is bound"), "unbound variable: %s", err);
            model_grammar_free(&loop);
            char cmd[200];
            snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
            if (system(cmd)) tap_diag("could not remove %s", tmp);
        }
    }
    model_grammar_free(&loop);

    free(ids);
    free(ids2);
    free(text);
    free(text2);
    free(back);
    free(unkf);
    tok_vocab_free(&v);
    model_grammar_free(&g);
    model_grammar_free(&g);
    return tap_done();
}
