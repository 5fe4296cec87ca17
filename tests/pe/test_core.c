/* test_core: matrix, rng, parameter defaults and the registry. */
#include <stdint.h>
#include <stdio.h>

#include "pe_test.h"

static void test_matrix(void)
{
    char err[256] = "";
    pe_matrix m = {0};
    pe_matrix_free(&m); /* a zeroed struct is fine */
    TAP_OK(m.data == NULL && m.rows == 0, "free of a zeroed matrix");
    TAP_OK(pe_matrix_init(&m, 3, 5, err, sizeof err) == PE_OK && m.rows == 3 && m.cols == 5,
           "init 3 x 5");
    int zero = 1;
    for (size_t i = 0; i < 15; i++) zero &= m.data[i] == 0.0f;
    TAP_OK(zero, "init zeroes the cells");
    pe_matrix_row(&m, 2)[4] = 7.0f;
    TAP_OK(m.data[14] == 7.0f, "row 2 col 4 is cell 14");
    pe_matrix_free(&m);
    TAP_OK(m.data == NULL && m.rows == 0 && m.cols == 0, "free zeroes the struct");

    int rc = pe_matrix_init(&m, SIZE_MAX / 2, 3, err, sizeof err);
    TAP_OK(rc == PE_ERANGE && m.data == NULL, "overflowing rows*cols -> PE_ERANGE");
    rc = pe_matrix_init(&m, PE_MAX_CELLS / 4 + 1, 4, err, sizeof err);
    TAP_OK(rc == PE_ERANGE && strstr(err, "2147483647"), "past an int index -> PE_ERANGE: %s", err);
    /* the budget decides below that (issue 25): 2^27 cells (512 MiB) fit the default 2 GiB,
     * 2^30 (4 GiB) do not */
    TAP_OK(pe_matrix_init(&m, (size_t)1 << 17, 1024, err, sizeof err) == PE_OK,
           "512 MiB within the budget is allowed");
    pe_matrix_free(&m);
    rc = pe_matrix_init(&m, (size_t)1 << 20, 1024, err, sizeof err);
    TAP_OK(rc == PE_ERANGE && strstr(err, "memory budget") && m.data == NULL,
           "4 GiB over the budget -> PE_ERANGE: %s", err);
    TAP_OK(pe_matrix_init(&m, 0, 9, err, sizeof err) == PE_OK && m.rows == 0, "0 rows is empty");
    pe_matrix_free(&m);
}

static void test_rng(void)
{
    pe_rng a, b;
    pe_rng_seed(&a, 42);
    pe_rng_seed(&b, 42);
    int same = 1;
    for (int i = 0; i < 1000; i++) same &= pe_rng_u64(&a) == pe_rng_u64(&b);
    TAP_OK(same, "same seed, same stream");
    pe_rng_seed(&b, 43);
    TAP_OK(pe_rng_u64(&a) != pe_rng_u64(&b), "different seeds differ");

    /* splitmix64(0) is the published first output 0xe220a8397b1dcdaf. */
    pe_rng_seed(&a, 0);
    TAP_OK(a.s[0] == 0xe220a8397b1dcdafu, "seed 0 state from splitmix64");

    pe_rng_seed(&a, 7);
    double lo = 1, hi = 0, sum = 0, sum2 = 0, nsum = 0, nsum2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double u = pe_rng_uniform(&a);
        if (u < lo) lo = u;
        if (u > hi) hi = u;
        sum += u;
        sum2 += u * u;
        double z = pe_rng_normal(&a);
        nsum += z;
        nsum2 += z * z;
    }
    TAP_OK(lo >= 0.0 && hi < 1.0, "uniform in [0, 1)");
    TAP_CLOSE(sum / n, 0.5, 0, 0.005, "uniform mean 1/2");
    TAP_CLOSE(sum2 / n - (sum / n) * (sum / n), 1.0 / 12.0, 0, 0.002, "uniform variance 1/12");
    TAP_CLOSE(nsum / n, 0.0, 0, 0.01, "normal mean 0");
    TAP_CLOSE(nsum2 / n, 1.0, 0, 0.02, "normal variance 1");
}

static void test_defaults(void)
{
    pe_params p;
    memset(&p, 0xff, sizeof p);
    pe_params_default(&p);
    TAP_OK(p.dim == 128 && p.len == 256 && p.base == 1e4, "defaults d 128, L 256, base 1e4");
    TAP_OK(p.layout == PE_LAYOUT_INTERLEAVED && p.freq == PE_FREQ_PAPER &&
               p.pairing == PE_PAIRING_INTERLEAVED && p.rotary_frac == 1.0,
           "defaults: interleaved, paper frequencies, full rotary");
    TAP_OK(p.scaling.type == PE_SCALING_NONE && p.scaling.factor == 1.0 &&
               p.scaling.original_ctx == 4096 && p.scaling.beta_fast == 32 &&
               p.scaling.beta_slow == 1 && p.scaling.low_freq_factor == 1 &&
               p.scaling.high_freq_factor == 4 && p.scaling.attention_factor == 0,
           "defaults: no scaling, L0 4096, beta 32/1, llama3 1/4");
    TAP_OK(p.heads == 8 && p.slope_ratio == 0 && p.alibi_symmetric == 0 && p.t5_buckets == 32 &&
               p.t5_max_distance == 128 && p.t5_bidirectional == 1,
           "defaults: 8 heads, paper slopes, causal, T5 32/128 bidirectional");
    TAP_OK(p.xpos_scale_base == 512 && p.learned_std == 0.02 && p.seed == 0,
           "defaults: xPos 512, std 0.02, seed 0");
    char err[256];
    for (size_t i = 0; i < pe_encoding_count(); i++) {
        const pe_encoding *e = pe_encoding_at(i);
        int rc = e->validate(&p, err, sizeof err);
        TAP_OK(rc == PE_OK, "defaults validate for %s", e->name);
    }
}

static void test_registry(void)
{
    /* the encodings the reference covers must be there; the checks then run over whatever the
     * registry holds, so adding an encoding needs no line here */
    static const char *const names[] = {"sinusoidal", "learned", "binary", "alibi", "rope",
                                        "nope",       "t5",      "xl",     "xpos"};
    size_t n = pe_encoding_count(), have = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        have += pe_encoding_find(names[i]) != NULL;
    TAP_OK(have == sizeof names / sizeof names[0] && n >= have,
           "%zu encodings registered, the reference's %zu among them", n, have);
    TAP_OK(pe_encoding_at(n) == NULL, "pe_encoding_at past the end is NULL");
    for (size_t i = 0; i < n; i++) {
        const pe_encoding *e = pe_encoding_at(i);
        const char *name = e ? e->name : "?";
        int ok = e && pe_encoding_find(name) == e && e->validate && e->description &&
                 e->description[0] && !strchr(e->description, '\n') &&
                 e->description[strlen(e->description) - 1] != '.';
        TAP_OK(ok, "%s: found, validate, one-line description", name);
        for (const char *c = name; *c; c++)
            if (*c >= 'A' && *c <= 'Z') ok = 0;
        TAP_OK(ok, "%s: lowercase name", name);
    }
    const pe_encoding *e;
    e = pe_encoding_find("sinusoidal");
    TAP_OK(e->acts == PE_ACTS_INPUT && e->table == pe_sinusoidal_table && !e->bias && !e->apply_qk,
           "sinusoidal: INPUT table");
    e = pe_encoding_find("learned");
    TAP_OK(e->acts == PE_ACTS_INPUT && e->table == pe_learned_table, "learned: INPUT table");
    e = pe_encoding_find("binary");
    TAP_OK(e->acts == PE_ACTS_INPUT && e->table == pe_binary_table, "binary: INPUT table");
    e = pe_encoding_find("alibi");
    TAP_OK(e->acts == PE_ACTS_LOGITS && e->bias == pe_alibi_bias && !e->table, "alibi: LOGITS");
    e = pe_encoding_find("t5");
    TAP_OK(e->acts == PE_ACTS_LOGITS && e->bias && !e->table, "t5: LOGITS bias");
    e = pe_encoding_find("xl");
    TAP_OK(e->acts == PE_ACTS_LOGITS && e->bias && !e->table, "xl: LOGITS bias");
    e = pe_encoding_find("rope");
    TAP_OK(e->acts == PE_ACTS_QK && e->apply_qk && !e->bias && !e->table, "rope: QK apply_qk");
    e = pe_encoding_find("xpos");
    TAP_OK(e->acts == PE_ACTS_QK && e->apply_qk && !e->bias && !e->table, "xpos: QK apply_qk");
    e = pe_encoding_find("nope");
    TAP_OK(e->acts == 0 && e->validate && !e->table && !e->bias && !e->apply_qk,
           "nope: acts 0, validate only");

    TAP_OK(pe_encoding_find("Rope") == NULL && pe_encoding_find("") == NULL &&
               pe_encoding_find(NULL) == NULL,
           "find is exact");
    TAP_OK(strcmp(pe_encoding_suggest("Sinusodial"), "sinusoidal") == 0, "suggest Sinusodial");
    TAP_OK(strcmp(pe_encoding_suggest("ROPE"), "rope") == 0, "suggest ROPE (case-insensitive)");
    TAP_OK(strcmp(pe_encoding_suggest("alibii"), "alibi") == 0, "suggest alibii");
    TAP_OK(strcmp(pe_encoding_suggest("xpso"), "xpos") == 0, "suggest xpso");
    TAP_OK(strcmp(pe_encoding_suggest("lerned"), "learned") == 0, "suggest lerned");
    static const char *const cands[] = {"kitten", "sitting", "mitten"};
    TAP_OK(pe_closest("SITTIN", cands, 3) == cands[1], "closest SITTIN -> sitting");
    TAP_OK(pe_closest("kittens", cands, 3) == cands[0], "closest kittens -> kitten");
    TAP_OK(pe_closest("x", cands, 0) == NULL, "closest of nothing is NULL");
}

/* The budget's refusal names the request, what is free, the budget and what is held, each in
 * MiB (KiB below 1 MiB, never "0 MiB"). */
static void test_mem_message(void)
{
    char err[512];
    size_t old = pe_mem_budget(), base = pe_mem_used();
    pe_mem_set_budget(base + ((size_t)64 << 20));
    int rc = pe_mem_reserve((size_t)128 << 20, "the data (4096 x 4096 values)", err, sizeof err);
    TAP_OK(base == 0 && rc == PE_ERANGE &&
               strstr(err, "the data (4096 x 4096 values) needs 128 MiB, more than the memory "
                           "budget of 64 MiB"),
           "past an empty budget: %s", err);
    TAP_OK(pe_mem_reserve((size_t)60 << 20, "a", err, sizeof err) == PE_OK, "60 MiB fit in 64");
    rc = pe_mem_reserve((size_t)10 << 20, "b", err, sizeof err);
    TAP_OK(rc == PE_ERANGE &&
               strstr(err, "b needs 10 MiB more, but only 4 MiB of the memory "
                           "budget") &&
               strstr(err, "60 MiB are already held"),
           "past a part-used budget: %s", err);
    rc =
        pe_mem_reserve_hint((size_t)10 << 20, "c", "a smaller --width needs less", err, sizeof err);
    TAP_OK(rc == PE_ERANGE && strstr(err, "c needs 10 MiB more") &&
               strstr(err, "a smaller --width needs less)") && !strstr(err, "--len"),
           "a reservation with its own advice: %s", err);
    pe_mem_release((size_t)60 << 20);
    pe_mem_set_budget(base + 1024);
    rc = pe_mem_reserve(2048, "e", err, sizeof err);
    TAP_OK(rc == PE_ERANGE && strstr(err, "e needs 2 KiB") && strstr(err, "budget of 1 KiB") &&
               !strstr(err, "0 MiB"),
           "small sizes in KiB: %s", err);
    pe_mem_set_budget(old);
}

int main(void)
{
    test_mem_message();
    test_matrix();
    test_rng();
    test_defaults();
    test_registry();
    return tap_done();
}
