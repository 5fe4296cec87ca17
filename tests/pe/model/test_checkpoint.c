/* test_checkpoint: save/load round trip, and the loader fuzzed: every truncation, every flipped
 * byte and a set of forged files with valid checksums must be refused with a message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/tiny/model.h"
#include "tap.h"

static uint32_t crc32_ref(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return c ^ 0xffffffffu;
}

static void reseal(unsigned char *b, size_t n)
{
    uint32_t c = crc32_ref(b, n - 4);
    for (int i = 0; i < 4; i++) b[n - 4 + (size_t)i] = (unsigned char)(c >> (8 * i));
}

static void put32(unsigned char *b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

/* A forged variant must be refused with want in the message. */
static void forged(const unsigned char *orig, size_t n, size_t at, uint32_t v, int reseal_it,
                   const char *want, const char *what)
{
    unsigned char *b = malloc(n);
    memcpy(b, orig, n);
    put32(b, at, v);
    if (reseal_it) reseal(b, n);
    model m;
    char err[256] = "";
    int rc = model_load_mem(b, n, &m, err, sizeof err);
    TAP_OK(rc == MODEL_EFORMAT && strstr(err, want), "%s refused: %s", what, err);
    free(b);
}

int main(void)
{
    const char *w[] = {"<unk>", "<eos>", "the", "cat", "sat", ".", "Mia", "\""};
    tok_vocab v = {0};
    tok_vocab_init(&v, w, 8, NULL, 0);
    char err[256] = "", path[512];
    tap_tmp_path(path, sizeof path, "pelab-ckpt-XXXXXX");
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    for (int pe = 0; pe < MODEL_PE_COUNT; pe++) {
        model_config c;
        model_config_default(&c, pe);
        c.layers = 2;
        c.dim = 8;
        c.heads = 2;
        c.hidden = 16;
        c.ctx = 6;
        c.vocab = 8;
        c.tied = pe % 2;
        c.pe.t5_buckets = 8;
        snprintf(c.command, sizeof c.command, "pelab train --pe %s -o x.model", model_pe_name(pe));
        model a = {0}, b = {0};
        model_init(&a, &c, &v, err, sizeof err);
        a.cfg.train_loss = 1.25f;
        a.cfg.heldout_loss = 1.5f;
        a.cfg.grammar_hash = 0x1234567890abcdefull;
        FILE *fw = fopen(path, "wb");
        int rc = fw ? model_write(&a, fw, err, sizeof err) : -1;
        if (fw && fclose(fw) != 0) rc = -1;
        TAP_OK(rc == 0 && a.cfg.checksum != 0, "%s: saved (%s)", c.pe_name, err);
        rc = model_load(path, &b, err, sizeof err);
        TAP_OK(rc == 0, "%s: loaded (%s)", c.pe_name, err);
        if (rc) continue;
        TAP_OK(b.n_params == a.n_params && !memcmp(a.params, b.params, a.n_params * sizeof(float)),
               "%s: %zu weights identical", c.pe_name, b.n_params);
        TAP_OK(!strcmp(b.cfg.pe_name, a.cfg.pe_name) && b.cfg.layers == 2 && b.cfg.dim == 8 &&
                   b.cfg.tied == a.cfg.tied && b.cfg.pos_len == a.cfg.pos_len &&
                   b.cfg.pe.base == a.cfg.pe.base && b.cfg.pe.t5_buckets == a.cfg.pe.t5_buckets &&
                   b.cfg.pe.t5_max_distance == a.cfg.pe.t5_max_distance &&
                   b.cfg.train_loss == 1.25f && b.cfg.heldout_loss == 1.5f &&
                   b.cfg.grammar_hash == a.cfg.grammar_hash && b.cfg.checksum == a.cfg.checksum &&
                   !strcmp(b.cfg.command, a.cfg.command),
               "%s: config round trip (command \"%s\", checksum %08x)", c.pe_name, b.cfg.command,
               b.cfg.checksum);
        int same = b.vocab.n == 8;
        for (int i = 0; same && i < 8; i++) same = !strcmp(tok_word(&b.vocab, i), w[i]);
        TAP_OK(same, "%s: vocabulary round trip", c.pe_name);
        TAP_OK((b.wpe != NULL) == (pe == MODEL_PE_LEARNED) &&
                   (b.t5 != NULL) == (pe == MODEL_PE_T5) && (b.wout == NULL) == (c.tied == 1),
               "%s: tensors carved for the scheme", c.pe_name);
        model_free(&a);
        model_free(&b);
    }

    /* Fuzz the t5 file (the last one written). */
    size_t n = 0;
    unsigned char *orig = slurp(path, &n);
    if (!TAP_OK(orig && n > 100, "read back %zu bytes", n)) return tap_done();
    model m;
    int refused = 0, crashed_msg = 0;
    for (size_t cut = 0; cut < n; cut++) {
        unsigned char *b = malloc(cut ? cut : 1);
        memcpy(b, orig, cut);
        err[0] = 0;
        int rc = model_load_mem(b, cut, &m, err, sizeof err);
        refused += rc == MODEL_EFORMAT;
        crashed_msg += err[0] == 0;
        free(b);
    }
    TAP_OK(refused == (int)n && crashed_msg == 0,
           "every truncation (0..%zu bytes) refused with a message (%d)", n - 1, refused);
    int flips = 0, flip_ok = 0;
    for (size_t i = 0; i < n; i++)
        for (int bit = 0; bit < 8; bit += 3) {
            unsigned char *b = malloc(n);
            memcpy(b, orig, n);
            b[i] ^= (unsigned char)(1u << bit);
            err[0] = 0;
            int rc = model_load_mem(b, n, &m, err, sizeof err);
            flips++;
            flip_ok += rc == MODEL_EFORMAT && err[0];
            free(b);
        }
    TAP_OK(flip_ok == flips, "every flipped bit (%d files) refused with a message", flips);
    unsigned char *b = malloc(n);
    memcpy(b, orig, n);
    b[n / 2] ^= 0x40;
    model_load_mem(b, n, &m, err, sizeof err);
    TAP_OK(strstr(err, "corrupted") && strstr(err, "checksum"), "a flipped weight: %s", err);
    model_load_mem(orig, 5, &m, err, sizeof err);
    TAP_OK(strstr(err, "too short"), "5 bytes: %s", err);
    model_load_mem(orig, 20, &m, err, sizeof err);
    TAP_OK(strstr(err, "truncated"), "20 bytes: %s", err);
    model_load_mem(orig, n - 100, &m, err, sizeof err);
    TAP_OK(strstr(err, "truncated") && strstr(err, "cut short"), "cut 100 bytes: %s", err);
    memcpy(b, "PNG\r\n\x1a\n\0", 8);
    model_load_mem(b, n, &m, err, sizeof err);
    TAP_OK(strstr(err, "not a pelab checkpoint (bad magic"), "bad magic: %s", err);
    free(b);
    unsigned char *big = malloc(n + 7);
    memcpy(big, orig, n);
    memset(big + n, 0, 7);
    model_load_mem(big, n + 7, &m, err, sizeof err);
    TAP_OK(strstr(err, "unexpected data"), "trailing bytes: %s", err);
    free(big);

    /* Forged files with a valid checksum: each field checked. Offsets: header 24 bytes, then
     * the name (16), layers 40, dim 44, heads 48, ctx 52, hidden 56, vocab 60, tied 64. */
    forged(orig, n, 8, 2, 1, "version 2", "version 2");
    forged(orig, n, 8, 2, 0, "version 2", "version 2 (any checksum)");
    forged(orig, n, 40, 3, 1, "wrong size", "3 layers with weights for 2");
    forged(orig, n, 40, 0, 1, "--layers 0", "0 layers");
    forged(orig, n, 44, 10, 1, "--dim 10", "dim 10 with 2 heads (odd head dim)");
    forged(orig, n, 52, 0, 1, "--ctx 0", "ctx 0");
    forged(orig, n, 60, 9, 1, "vocabulary has 8 tokens", "vocab 9");
    forged(orig, n, 56, 17, 1, "wrong size", "hidden 17");
    forged(orig, n, 20, 999, 1, "config section has", "config length");
    forged(orig, n, n - 8, 0x7fc00000u, 1, "not a finite number", "a NaN weight");
    {
        unsigned char *x = malloc(n);
        memcpy(x, orig, n);
        memcpy(x + 24, "quantum\0", 8);
        reseal(x, n);
        model_load_mem(x, n, &m, err, sizeof err);
        TAP_OK(strstr(err, "--pe quantum"), "unknown scheme: %s", err);
        free(x);
    }
    TAP_OK(model_load("/nonexistent/pelab.model", &m, err, sizeof err) == MODEL_EIO &&
               strstr(err, "/nonexistent/pelab.model"),
           "missing file: %s", err);
    FILE *f = fopen(path, "wb");
    fwrite(orig, 1, n / 3, f);
    fclose(f);
    TAP_OK(model_load(path, &m, err, sizeof err) == MODEL_EFORMAT && strstr(err, path) &&
               strstr(err, "truncated"),
           "truncated file on disk: %s", err);
    TAP_OK(m.params == NULL && m.vocab.n == 0, "a refused load leaves the model empty");
    model_free(&m);
    free(orig);
    remove(path);
    tok_vocab_free(&v);
    return tap_done();
}
