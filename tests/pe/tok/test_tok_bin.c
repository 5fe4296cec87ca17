/* test_tok_bin: llama2.c's tokenizer.bin. llama.cpp's llama-spm vectors with Llama 2's
 * tokenizer.bin; a literal port of run.c's encode() (sorted vocabulary, bsearch, O(n^2) rescans)
 * as the independent computation; stories260K's tok512.bin against run.c's expected output;
 * spans, display texts and refusals. Suite 'tok'. */
#include "tok_test.h"

/* ---- run.c's encode(), as written in llama2.c (350e04fe), on our own parse of the file ---- */
typedef struct runc_tok {
    char **vocab;
    float *scores;
    int n, max_len;
    struct sorted {
        char *str;
        int id;
    } * sorted;
} runc_tok;

static int cmp_sorted(const void *a, const void *b)
{
    return strcmp(((const struct sorted *)a)->str, ((const struct sorted *)b)->str);
}

static int runc_load(runc_tok *t, const char *path)
{
    size_t n;
    unsigned char *d = (unsigned char *)slurp(path, &n);
    if (!d) return -1;
    memset(t, 0, sizeof *t);
    memcpy(&t->max_len, d, 4);
    int cap = 1024;
    t->vocab = malloc(sizeof(char *) * (size_t)cap);
    t->scores = malloc(sizeof(float) * (size_t)cap);
    for (size_t p = 4; p + 8 <= n;) {
        int len;
        if (t->n == cap) {
            cap *= 2;
            t->vocab = realloc(t->vocab, sizeof(char *) * (size_t)cap);
            t->scores = realloc(t->scores, sizeof(float) * (size_t)cap);
        }
        memcpy(&t->scores[t->n], d + p, 4);
        memcpy(&len, d + p + 4, 4);
        t->vocab[t->n] = malloc((size_t)len + 1);
        memcpy(t->vocab[t->n], d + p + 8, (size_t)len);
        t->vocab[t->n][len] = '\0';
        t->n++;
        p += 8 + (size_t)len;
    }
    free(d);
    t->sorted = malloc(sizeof *t->sorted * (size_t)t->n);
    for (int i = 0; i < t->n; i++) t->sorted[i] = (struct sorted){t->vocab[i], i};
    qsort(t->sorted, (size_t)t->n, sizeof *t->sorted, cmp_sorted);
    return 0;
}

static void runc_free(runc_tok *t)
{
    for (int i = 0; i < t->n; i++) free(t->vocab[i]);
    free(t->vocab);
    free(t->scores);
    free(t->sorted);
}

static int str_lookup(const char *str, const runc_tok *t)
{
    struct sorted key = {(char *)str, 0};
    struct sorted *r = bsearch(&key, t->sorted, (size_t)t->n, sizeof key, cmp_sorted);
    return r ? r->id : -1;
}

static void runc_encode(const runc_tok *t, const char *text, int bos, int *tokens, int *n_tokens)
{
    char *str_buffer = malloc((size_t)t->max_len * 2 + 1 + 2);
    size_t str_len = 0;
    *n_tokens = 0;
    if (bos) tokens[(*n_tokens)++] = 1;
    if (text[0] != '\0') {
        int dummy_prefix = str_lookup(" ", t);
        tokens[(*n_tokens)++] = dummy_prefix;
    }
    for (const char *c = text; *c != '\0'; c++) {
        if ((*c & 0xC0) != 0x80) str_len = 0;
        str_buffer[str_len++] = *c;
        str_buffer[str_len] = '\0';
        if ((*(c + 1) & 0xC0) == 0x80 && str_len < 4) continue;
        int id = str_lookup(str_buffer, t);
        if (id != -1) {
            tokens[(*n_tokens)++] = id;
        } else {
            for (size_t i = 0; i < str_len; i++)
                tokens[(*n_tokens)++] = (unsigned char)str_buffer[i] + 3;
        }
        str_len = 0;
    }
    while (1) {
        float best_score = -1e10f;
        int best_id = -1, best_idx = -1;
        for (int i = 0; i < (*n_tokens - 1); i++) {
            snprintf(str_buffer, (size_t)t->max_len * 2 + 3, "%s%s", t->vocab[tokens[i]],
                     t->vocab[tokens[i + 1]]);
            int id = str_lookup(str_buffer, t);
            if (id != -1 && t->scores[id] > best_score) {
                best_score = t->scores[id];
                best_id = id;
                best_idx = i;
            }
        }
        if (best_idx == -1) break;
        tokens[best_idx] = best_id;
        for (int i = best_idx + 1; i < (*n_tokens - 1); i++) tokens[i] = tokens[i + 1];
        (*n_tokens)--;
    }
    free(str_buffer);
}

/* pelab's encoding equals run.c's (with BOS). Texts must be free of NUL and of pieces longer
 * than run.c's buffer (max_len * 2 bytes), as run.c assumes. */
static int same_as_runc(const pe_tok *t, const runc_tok *r, const char *text)
{
    size_t len = strlen(text);
    int *want = malloc(sizeof(int) * (len * 4 + 3)), nw;
    runc_encode(r, text, 1, want, &nw);
    pe_tok_ids ids = {0};
    char err[256];
    int n = pe_tok_encode(t, text, len, PE_TOK_BOS, &ids, err, sizeof err);
    int ok = n == nw && !memcmp(ids.ids, want, sizeof(int) * (size_t)n);
    free(want);
    pe_tok_ids_free(&ids);
    return ok;
}

static void test_llama2(const char *dir)
{
    char p[2300], err[512];
    snprintf(p, sizeof p, "%s/llama2-tokenizer/tokenizer.bin", dir);
    pe_tok *t = pe_tok_open(p, err, sizeof err);
    if (!TAP_OK(t, "Llama 2's tokenizer.bin opens (%s)", t ? "" : err)) return;
    TAP_OK(pe_tok_vocab_size(t) == 32000, "32000 tokens (%d)", pe_tok_vocab_size(t));
    TAP_OK(pe_tok_bos(t) == 1 && pe_tok_eos(t) == 2 && pe_tok_adds_bos(t), "BOS 1, EOS 2");
    TAP_OK(!strcmp(pe_tok_format(t), "llama2.c tokenizer.bin"), "format named");
    vectors v;
    if (vectors_read(&v, dir, "llama-spm") == 0) {
        check_vectors(t, &v, "llama-spm tokenizer.bin");
        runc_tok r;
        if (TAP_OK(runc_load(&r, p) == 0, "run.c's own reading of tokenizer.bin")) {
            int same = 0;
            for (int i = 0; i < v.n; i++) same += same_as_runc(t, &r, v.text[i]);
            TAP_OK(same == v.n,
                   "run.c's encode() gives the same ids with BOS for all %d "
                   "strings (%d)",
                   v.n, same);
            runc_free(&r);
        }
        vectors_free(&v);
    }
    /* BOS and the dummy prefix: run.c's "<s> ▁Hello" */
    pe_tok_ids ids = {0};
    int n = pe_tok_encode(t, "Hello", 5, PE_TOK_BOS, &ids, err, sizeof err);
    TAP_OK(n == 2 && ids.ids[0] == 1 && ids.ids[1] == 15043, "BOS + \"▁Hello\" (15043)");
    TAP_OK(n == 2 && ids.spans[0].start == 0 && ids.spans[0].end == 0 && ids.spans[1].start == 0 &&
               ids.spans[1].end == 5,
           "BOS covers nothing, \"▁Hello\" covers Hello");
    pe_tok_ids_free(&ids);
    /* display: a llama's byte tokens show the llama once */
    const char *llama = "\xF0\x9F\xA6\x99"; /* U+1F999 */
    n = pe_tok_encode(t, llama, 4, 0, &ids, err, sizeof err);
    const char *texts[8];
    char *pool = NULL;
    int bytes = n == 5 && ids.ids[1] == 0xF0 + 3 && ids.ids[4] == 0x99 + 3;
    TAP_OK(bytes, "a character outside the vocabulary falls back to its 4 byte tokens");
    if (bytes && pe_tok_display(t, ids.ids, n, texts, &pool, err, sizeof err) == 0) {
        TAP_OK(!strcmp(texts[0], " ") && !strcmp(texts[1], llama) && !texts[2][0] && !texts[3][0] &&
                   !texts[4][0],
               "display: the dummy prefix as a space, the bytes as the character they form");
        free(pool);
    }
    char one[16];
    TAP_OK(pe_tok_token_text(t, 13, one, sizeof one) == 1 && one[0] == '\n',
           "<0x0A> shows as a newline");
    TAP_OK(pe_tok_token_text(t, 1, one, sizeof one) == 3 && !strcmp(one, "<s>"),
           "BOS shows as <s>");
    TAP_OK(pe_tok_token_text(t, 32000, one, sizeof one) == -1, "an id past the end: -1");
    int bad = 32000;
    char *dec = NULL;
    TAP_OK(pe_tok_decode(t, &bad, 1, &dec, NULL, err, sizeof err) < 0 && strstr(err, "32000"),
           "decoding id 32000 is refused: %s", err);
    pe_tok_ids_free(&ids);
    pe_tok_free(t);
}

static void test_stories(const char *dir)
{
    char p[2300], err[512];
    snprintf(p, sizeof p, "%s/stories260K/tok512.bin", dir);
    pe_tok *t = pe_tok_open(p, err, sizeof err);
    if (!TAP_OK(t, "tok512.bin opens (%s)", t ? "" : err)) return;
    TAP_OK(pe_tok_vocab_size(t) == 512, "512 tokens");
    runc_tok r;
    int have_r = runc_load(&r, p) == 0;
    const char *files[] = {"expected_runc_t0_n200.txt", "expected_runc_t0_n60_prompt_Zoo.txt"};
    for (int f = 0; f < 2; f++) {
        snprintf(p, sizeof p, "%s/stories260K/%s", dir, files[f]);
        size_t len;
        char *text = slurp(p, &len);
        if (!TAP_OK(text && len > 100, "%s read", files[f])) continue;
        pe_tok_ids ids = {0};
        int n = pe_tok_encode(t, text, len, PE_TOK_BOS, &ids, err, sizeof err);
        TAP_OK(n > 10 && ids.ids[0] == 1, "%s: %d tokens after BOS", files[f], n - 1);
        TAP_OK(spans_cover(&ids, len), "%s: the spans cover the text", files[f]);
        /* every token's decoded text is the text of its span (the dummy prefix aside) */
        int match = 1;
        for (int i = 1; i < n; i++) {
            char piece[64];
            int k = pe_tok_token_text(t, ids.ids[i], piece, sizeof piece);
            const char *s = piece;
            if (i == 1 && k > 0 && piece[0] == ' ') s++, k--;
            int sl = ids.spans[i].end - ids.spans[i].start;
            if (k != sl || memcmp(s, text + ids.spans[i].start, (size_t)sl)) match = 0;
        }
        TAP_OK(match, "%s: each token's text is the text it covers", files[f]);
        /* run.c prints generated tokens with decode(prev, token): the stream gives the text */
        char *out = malloc(len + 64);
        size_t k = 0;
        for (int i = 1; i < n; i++) {
            char piece[64];
            int m = pe_tok_decode_next(t, ids.ids[i - 1], ids.ids[i], piece, sizeof piece);
            if (m > 0 && k + (size_t)m <= len + 32) memcpy(out + k, piece, (size_t)m), k += m;
        }
        TAP_OK(k == len && !memcmp(out, text, len),
               "%s: run.c's streaming decode after BOS prints the text byte for byte", files[f]);
        char *dec = NULL;
        size_t dn;
        TAP_OK(pe_tok_decode(t, ids.ids + 1, n - 1, &dec, &dn, err, sizeof err) == 0 && dn == len &&
                   !memcmp(dec, text, len),
               "%s: decode without BOS gives the text", files[f]);
        if (have_r) TAP_OK(same_as_runc(t, &r, text), "%s: run.c's encode() agrees", files[f]);
        free(dec);
        free(out);
        free(text);
        pe_tok_ids_free(&ids);
    }
    if (have_r) runc_free(&r);
    pe_tok_free(t);
}

static void test_refusals(const char *dir)
{
    char p[2300], err[512];
    snprintf(p, sizeof p, "%s/stories260K/stories260K.bin", dir);
    pe_tok *t = pe_tok_open(p, err, sizeof err);
    TAP_OK(!t && strstr(err, "no tokenizer beside") && strstr(err, "tokenizer.bin") &&
               !strchr(err, '\n'),
           "a llama2.c model without tokenizer.bin beside it: %s", err);
    pe_tok_free(t);
    t = pe_tok_open("/nonexistent/tokenizer.bin", err, sizeof err);
    TAP_OK(!t && strstr(err, "/nonexistent/tokenizer.bin"), "a missing file: %s", err);
    /* a tokenizer.bin cut in the middle of an entry */
    snprintf(p, sizeof p, "%s/stories260K/tok512.bin", dir);
    size_t n;
    char *data = slurp(p, &n);
    if (data) {
        t = pe_tok_open_mem("tok512.bin", data, n - 3, err, sizeof err);
        TAP_OK(!t && strstr(err, "tokenizer.bin") && strstr(err, "byte"), "cut short: %s", err);
        pe_tok_free(t);
        /* a length field forged to 2^30 */
        unsigned char forged[64];
        memcpy(forged, data, sizeof forged);
        forged[4 + 4 + 3] = 0x40;
        t = pe_tok_open_mem("tok512.bin", forged, sizeof forged, err, sizeof err);
        TAP_OK(!t, "a forged entry length is refused: %s", err);
        pe_tok_free(t);
        free(data);
    }
}

int main(void)
{
    const char *dir = realmodels();
    if (dir) {
        test_llama2(dir);
        test_stories(dir);
        test_refusals(dir);
    }
    return tap_done();
}
