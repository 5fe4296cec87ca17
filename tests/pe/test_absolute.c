/* test_absolute: binary counting, the learned table's initialisation (and its rows drawn alone
 * from the generator's state at each row, as the explorer draws them), NoPE. */
#include <stdio.h>
#include <stdlib.h>

#include "pe_test.h"

static void test_binary(void)
{
    char err[256];
    pe_params p;
    pe_params_default(&p);
    p.dim = 4;
    p.len = 20;
    pe_matrix t = {0};
    TAP_OK(pe_binary_table(&p, &t, err, sizeof err) == PE_OK && t.rows == 20 && t.cols == 4,
           "binary d=4 L=20");
    static const double r0[4] = {-1, -1, -1, -1}, r5[4] = {1, -1, 1, -1}, r11[4] = {1, 1, -1, 1},
                        r15[4] = {1, 1, 1, 1}, r16[4] = {-1, -1, -1, -1};
    close_vec_f(pe_matrix_row(&t, 0), r0, 4, 0, "p=0 -> all -1");
    close_vec_f(pe_matrix_row(&t, 5), r5, 4, 0, "p=5 = 0b0101 -> +1 -1 +1 -1 (bit 0 first)");
    close_vec_f(pe_matrix_row(&t, 11), r11, 4, 0, "p=11 = 0b1011");
    close_vec_f(pe_matrix_row(&t, 15), r15, 4, 0, "p=15 -> all +1");
    close_vec_f(pe_matrix_row(&t, 16), r16, 4, 0, "p=16 wraps: 4 bits count to 2^4");
    int ok = 1;
    for (size_t r = 0; r < t.rows; r++) {
        unsigned v = 0;
        for (int j = 0; j < 4; j++) {
            float x = pe_matrix_row(&t, r)[j];
            ok &= x == 1.0f || x == -1.0f;
            if (x > 0) v |= 1u << j;
        }
        ok &= v == (r & 15u);
    }
    TAP_OK(ok, "every row decodes back to p mod 16");
    pe_matrix_free(&t);
    p.dim = 70;
    p.len = 3;
    pe_binary_table(&p, &t, err, sizeof err);
    TAP_OK(pe_matrix_row(&t, 2)[1] == 1.0f && pe_matrix_row(&t, 2)[69] == -1.0f,
           "d=70: bit 1 of 2 set, bits past 63 are -1");
    pe_matrix_free(&t);
}

static void test_learned(void)
{
    char err[256];
    pe_params p;
    pe_params_default(&p);
    p.len = 512;
    p.dim = 256;
    p.seed = 1234;
    pe_matrix a = {0}, b = {0}, c = {0};
    TAP_OK(pe_learned_table(&p, &a, err, sizeof err) == PE_OK, "learned 512 x 256");
    pe_learned_table(&p, &b, err, sizeof err);
    p.seed = 1235;
    pe_learned_table(&p, &c, err, sizeof err);
    size_t n = a.rows * a.cols;
    TAP_OK(memcmp(a.data, b.data, n * sizeof(float)) == 0, "same seed, same table");
    size_t diff = 0;
    for (size_t i = 0; i < n; i++) diff += a.data[i] != c.data[i];
    TAP_OK(diff > n - n / 1000, "another seed, another table (%zu of %zu differ)", diff, n);
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) {
        s += a.data[i];
        s2 += (double)a.data[i] * a.data[i];
    }
    double mean = s / (double)n, sd = sqrt(s2 / (double)n - mean * mean);
    TAP_CLOSE(mean, 0.0, 0, 0.0005, "mean ~ 0");
    TAP_CLOSE(sd, 0.02, 0.02, 0, "std ~ 0.02");
    pe_matrix_free(&b);
    p.seed = 1234;
    p.learned_std = 0.5;
    pe_learned_table(&p, &b, err, sizeof err);
    TAP_CLOSE(b.data[77], a.data[77] * 25.0, 1e-6, 0, "std scales the same draws");

    /* rows from the states: every entry equal to the table's, bit for bit, for entries picked
     * out of order-preserving subsets (the first and last columns, gaps of every size) */
    pe_rng *states = malloc(512 * sizeof *states);
    TAP_OK(pe_learned_row_states(&p, states, err, sizeof err) == PE_OK, "row states of 512 rows");
    size_t cols[] = {0, 1, 2, 5, 64, 65, 200, 254, 255};
    size_t nc = sizeof cols / sizeof cols[0], bad = 0;
    float got[sizeof cols / sizeof cols[0]];
    for (size_t r = 0; r < 512; r += 7) {
        pe_learned_row(&p, &states[r], cols, nc, got);
        for (size_t j = 0; j < nc; j++)
            bad += memcmp(&got[j], &pe_matrix_row(&b, r)[cols[j]], sizeof(float)) != 0;
    }
    TAP_OK(bad == 0, "entries drawn from the row states equal the table's (%zu differ)", bad);
    size_t one = 255;
    pe_learned_row(&p, &states[511], &one, 1, got);
    TAP_OK(got[0] == pe_matrix_row(&b, 511)[255], "the table's last entry alone");
    free(states);
    pe_rng r1, r2;
    pe_rng_seed(&r1, 99);
    pe_rng_seed(&r2, 99);
    for (int i = 0; i < 1000; i++) pe_rng_u64(&r1);
    pe_rng_skip(&r2, 1000);
    TAP_OK(pe_rng_u64(&r1) == pe_rng_u64(&r2), "skipping 1000 steps lands where 1000 draws do");
    /* the jump-ahead (GF(2) polynomials) lands where stepping does, on both sides of the
     * length where it starts to use them, and far off; jumps compose (T^a T^b = T^(a+b)) */
    static const uint64_t jumps[] = {0, 1, 1023, 1024, 1025, 4097, 123457, ((uint64_t)1 << 26) + 7};
    int jbad = 0;
    for (size_t i = 0; i < sizeof jumps / sizeof jumps[0]; i++) {
        pe_rng_seed(&r1, 7 + i);
        r2 = r1;
        pe_rng_skip(&r1, jumps[i]);
        pe_rng_jump(&r2, jumps[i]);
        jbad += memcmp(&r1, &r2, sizeof r1) != 0;
    }
    TAP_OK(jbad == 0, "pe_rng_jump(n) lands where pe_rng_skip(n) does, n 0 .. 2^26 + 7 (%d differ)",
           jbad);
    uint64_t ja = 5368709120u + 12345, jb = ((uint64_t)1 << 40) + 99;
    pe_rng_seed(&r1, 3);
    r2 = r1;
    pe_rng_jump(&r1, ja);
    pe_rng_jump(&r1, jb);
    pe_rng_jump(&r2, ja + jb);
    TAP_OK(memcmp(&r1, &r2, sizeof r1) == 0, "jumps compose: %llu then %llu is %llu",
           (unsigned long long)ja, (unsigned long long)jb, (unsigned long long)(ja + jb));
    pe_rng_seed(&r1, 3);
    r2 = r1;
    pe_rng_jump(&r1, ja);
    TAP_OK(memcmp(&r1, &r2, sizeof r1) != 0, "and move the state");
    pe_matrix_free(&a);
    pe_matrix_free(&b);
    pe_matrix_free(&c);
}

static void test_nope(void)
{
    const pe_encoding *e = pe_encoding_find("nope");
    pe_params p;
    pe_params_default(&p);
    char err[256] = "";
    TAP_OK(e->validate(&p, err, sizeof err) == PE_OK, "nope validates the defaults");
    p.len = 0;
    expect_fail(e->validate(&p, err, sizeof err), PE_EINVAL, err, "--len", "nope len 0");
}

int main(void)
{
    test_binary();
    test_learned();
    test_nope();
    return tap_done();
}
