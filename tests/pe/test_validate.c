/* test_validate: every validator rejects bad input with a status and a message naming the
 * option in pelab's CLI spelling. */
#include <stdio.h>

#include "pe_test.h"

typedef void (*mutate_fn)(pe_params *p);

static pe_params base_params(void)
{
    pe_params p;
    pe_params_default(&p);
    return p;
}

/* Validate p with encoding name and check the failure. */
static void bad(const char *enc, pe_params p, int want, const char *opt, const char *what)
{
    char err[256] = "";
    const pe_encoding *e = pe_encoding_find(enc);
    char name[160];
    snprintf(name, sizeof name, "%s: %s", enc, what);
    expect_fail(e->validate(&p, err, sizeof err), want, err, opt, name);
}

static void test_shared_checks(void)
{
    char err[256] = "";
    expect_fail(pe_check_dim(7, 1, err, sizeof err), PE_EINVAL, err, "--dim 7", "odd d");
    TAP_OK(strstr(err, "even") && strstr(err, "2..65536"), "odd d message: even, allowed range");
    expect_fail(pe_check_dim(0, 0, err, sizeof err), PE_EINVAL, err, "--dim 0", "d 0");
    expect_fail(pe_check_dim(-3, 0, err, sizeof err), PE_EINVAL, err, "--dim", "d < 0");
    expect_fail(pe_check_dim(PE_MAX_DIM + 2, 1, err, sizeof err), PE_EINVAL, err, "--dim",
                "d over 65536");
    TAP_OK(pe_check_dim(7, 0, err, sizeof err) == PE_OK, "odd d fine when pairs not needed");
    expect_fail(pe_check_len(0, err, sizeof err), PE_EINVAL, err, "--len 0", "L 0");
    expect_fail(pe_check_len(-1, err, sizeof err), PE_EINVAL, err, "--len", "L < 0");
    expect_fail(pe_check_len(PE_MAX_LEN + 1, err, sizeof err), PE_EINVAL, err, "--len", "L big");
    expect_fail(pe_check_base(0.5, err, sizeof err), PE_EINVAL, err, "--base 0.5", "base 0.5");
    TAP_OK(strstr(err, "> 1") != NULL, "base message states > 1");
    expect_fail(pe_check_base(1.0, err, sizeof err), PE_EINVAL, err, "--base", "base 1");
    expect_fail(pe_check_base(NAN, err, sizeof err), PE_EINVAL, err, "--base", "base NaN");
    expect_fail(pe_check_base(INFINITY, err, sizeof err), PE_EINVAL, err, "--base", "base inf");
    expect_fail(pe_check_heads(0, err, sizeof err), PE_EINVAL, err, "--heads", "0 heads");
    expect_fail(pe_check_heads(PE_MAX_HEADS + 1, err, sizeof err), PE_EINVAL, err, "--heads",
                "too many heads");
    /* issue 25: the memory budget bounds a table, not a fixed cap on --len */
    expect_fail(pe_check_cells(1 << 20, 1 << 10, "--len x --dim", err, sizeof err), PE_ERANGE, err,
                "--len x --dim", "cells over the budget");
    TAP_OK(strstr(err, "1048576 x 1024 = 1073741824 cells need 4096 MiB") &&
               strstr(err, "memory budget of 2048 MiB") && strstr(err, "--max-memory") &&
               strstr(err, "up to 536870912") && !strstr(err, "--len 1048576"),
           "cells message: the sizes, the budget, what it allows and --max-memory: %s", err);
    TAP_OK(pe_check_cells(1 << 19, 1 << 10, "--len x --dim", err, sizeof err) == PE_OK,
           "a table of exactly the budget is fine");
    size_t budget = pe_mem_budget();
    pe_mem_set_budget((size_t)64 << 20);
    expect_fail(pe_check_cells(1 << 20, 128, "--len x --dim", err, sizeof err), PE_ERANGE, err,
                "budget of 64 MiB", "--max-memory 64 refuses L 1048576 x d 128 (512 MiB)");
    pe_mem_set_budget((size_t)8 << 30);
    TAP_OK(pe_check_cells(1 << 20, 1 << 10, "--len x --dim", err, sizeof err) == PE_OK,
           "--max-memory 8192 admits L 1048576 x d 1024 (4 GiB)");
    /* past the budget, the budget says so first (issue 25: sizes and --max-memory) */
    expect_fail(pe_check_cells(PE_MAX_LEN, PE_MAX_DIM, "--len x --dim", err, sizeof err), PE_ERANGE,
                err, "more than the memory budget of 8192 MiB", "2^40 cells: past the budget");
    TAP_OK(strstr(err, "--max-memory") != NULL, "and names --max-memory: %s", err);
    /* under a budget that holds them, a table past an int index is still refused */
    pe_mem_set_budget((size_t)1 << 43);
    expect_fail(pe_check_cells(PE_MAX_LEN, PE_MAX_DIM, "--len x --dim", err, sizeof err), PE_ERANGE,
                err, "more than one table can index", "2^40 cells under 8 TiB: past an int index");
    pe_mem_set_budget(budget);
    TAP_OK(PE_MAX_LEN >= 10485760, "--len reaches Llama 4 Scout's 10485760 positions (%d)",
           PE_MAX_LEN);
    /* A NULL or tiny buffer is safe. */
    TAP_OK(pe_check_len(0, NULL, 0) == PE_EINVAL, "NULL err");
    char tiny[4] = "xyz";
    pe_check_len(0, tiny, sizeof tiny);
    TAP_OK(strcmp(tiny, "--l") == 0, "message truncated into a small buffer");
}

static void test_input_encodings(void)
{
    pe_params p;
    static const char *const inputs[] = {"sinusoidal", "learned", "binary"};
    for (int i = 0; i < 3; i++) {
        p = base_params();
        p.len = 0;
        bad(inputs[i], p, PE_EINVAL, "--len", "L 0");
        p = base_params();
        p.dim = 0;
        bad(inputs[i], p, PE_EINVAL, "--dim", "d 0");
        p = base_params();
        p.dim = -8;
        bad(inputs[i], p, PE_EINVAL, "--dim", "d < 0");
        p = base_params();
        p.len = 1 << 23; /* x d 128: 4 GiB of floats */
        bad(inputs[i], p, PE_ERANGE, "--len x --dim", "L*d over the memory budget");
    }
    p = base_params();
    p.dim = 7;
    bad("sinusoidal", p, PE_EINVAL, "--dim 7", "odd d");
    char err[256];
    const pe_encoding *e = pe_encoding_find("sinusoidal");
    e->validate(&p, err, sizeof err);
    TAP_OK(strstr(err, "sinusoidal") && strstr(err, "2..65536"), "message: %s", err);
    p = base_params();
    p.base = 1;
    bad("sinusoidal", p, PE_EINVAL, "--base", "base 1");
    p.base = NAN;
    bad("sinusoidal", p, PE_EINVAL, "--base", "base NaN");
    p = base_params();
    p.layout = (pe_layout)5;
    bad("sinusoidal", p, PE_EINVAL, "--layout", "layout 5");
    p = base_params();
    p.freq = PE_FREQ_FAIRSEQ;
    p.dim = 2;
    bad("sinusoidal", p, PE_EINVAL, "--dim", "fairseq with d=2");
    p = base_params();
    p.learned_std = NAN;
    bad("learned", p, PE_EINVAL, "--std", "std NaN");
    p.learned_std = -0.1;
    bad("learned", p, PE_EINVAL, "--std", "std < 0");
    p.learned_std = INFINITY;
    bad("learned", p, PE_EINVAL, "--std", "std inf");
    p = base_params();
    p.dim = 0;
    bad("nope", p, PE_EINVAL, "--dim", "d 0");

    /* The table functions validate too and leave the output empty. */
    pe_matrix m = {0};
    p = base_params();
    p.dim = 9;
    TAP_OK(pe_sinusoidal_table(&p, &m, err, sizeof err) == PE_EINVAL && m.data == NULL,
           "pe_sinusoidal_table rejects odd d");
    p = base_params();
    p.len = -3;
    TAP_OK(pe_binary_table(&p, &m, err, sizeof err) == PE_EINVAL && m.data == NULL &&
               pe_learned_table(&p, &m, err, sizeof err) == PE_EINVAL && m.data == NULL,
           "binary and learned tables reject L < 0");
}

static void test_bias_encodings(void)
{
    pe_params p;
    char err[256];
    static const char *const biased[] = {"alibi", "t5", "xl"};
    for (int i = 0; i < 3; i++) {
        p = base_params();
        p.len = 30000; /* 9e8 floats: 3.4 GiB */
        bad(biased[i], p, PE_ERANGE, "--len x --len", "L*L over the memory budget");
        p = base_params();
        p.heads = 0;
        bad(biased[i], p, PE_EINVAL, "--heads", "0 heads");
        p = base_params();
        p.len = 0;
        bad(biased[i], p, PE_EINVAL, "--len", "L 0");
        pe_matrix m = {0};
        p = base_params();
        p.len = 4;
        int rc = pe_encoding_find(biased[i])->bias(&p, 8, &m, err, sizeof err);
        expect_fail(rc, PE_EINVAL, err, "--head 8", "head past --heads 8");
        rc = pe_encoding_find(biased[i])->bias(&p, -1, &m, err, sizeof err);
        expect_fail(rc, PE_EINVAL, err, "--head", "head -1");
        TAP_OK(m.data == NULL, "%s: no output on failure", biased[i]);
    }
    p = base_params();
    p.slope_ratio = 1.0;
    bad("alibi", p, PE_EINVAL, "--slope-ratio", "ratio 1");
    p.slope_ratio = -0.5;
    bad("alibi", p, PE_EINVAL, "--slope-ratio", "ratio < 0");
    p.slope_ratio = NAN;
    bad("alibi", p, PE_EINVAL, "--slope-ratio", "ratio NaN");
    double s[4];
    expect_fail(pe_alibi_slopes(0, 0, s, err, sizeof err), PE_EINVAL, err, "--heads",
                "slopes for 0 heads");
    expect_fail(pe_alibi_slopes(4, INFINITY, s, err, sizeof err), PE_EINVAL, err, "--slope-ratio",
                "slopes with ratio inf");

    p = base_params();
    p.t5_buckets = 30;
    p.t5_buckets = 3;
    bad("t5", p, PE_EINVAL, "--buckets", "3 buckets bidirectional (odd)");
    p.t5_buckets = 2;
    bad("t5", p, PE_EINVAL, "--buckets", "2 buckets bidirectional");
    p.t5_bidirectional = 0;
    p.t5_buckets = 1;
    bad("t5", p, PE_EINVAL, "--buckets", "1 bucket causal");
    p = base_params();
    p.t5_max_distance = 8;
    bad("t5", p, PE_EINVAL, "--max-distance", "max distance 8 <= 32/4");
    p.t5_max_distance = -1;
    bad("t5", p, PE_EINVAL, "--max-distance", "max distance < 0");
    pe_matrix m = {0};
    p = base_params();
    p.t5_buckets = 0;
    expect_fail(pe_t5_values(&p, &m, err, sizeof err), PE_EINVAL, err, "--buckets",
                "t5 values with 0 buckets");

    p = base_params();
    p.dim = 9;
    bad("xl", p, PE_EINVAL, "--dim", "odd d");
    p = base_params();
    p.base = 0.5;
    bad("xl", p, PE_EINVAL, "--base", "base 0.5");
    pe_matrix t[4] = {{0}};
    p = base_params();
    p.len = -1;
    expect_fail(pe_xl_terms(&p, t, err, sizeof err), PE_EINVAL, err, "--len", "xl terms L -1");
}

static void test_rope_encodings(void)
{
    static const char *const qk[] = {"rope", "xpos"};
    char err[256];
    for (int i = 0; i < 2; i++) {
        const char *n = qk[i];
        pe_params p = base_params();
        p.dim = 7;
        bad(n, p, PE_EINVAL, "--dim 7", "odd d");
        p = base_params();
        p.base = -2;
        bad(n, p, PE_EINVAL, "--base", "base < 0");
        p.base = NAN;
        bad(n, p, PE_EINVAL, "--base", "base NaN");
        p = base_params();
        p.pairing = (pe_pairing)2;
        bad(n, p, PE_EINVAL, "--pairing", "pairing 2");
        p = base_params();
        p.rotary_frac = 0;
        bad(n, p, PE_EINVAL, "--rotary-frac", "rotary 0");
        p.rotary_frac = 1.5;
        bad(n, p, PE_EINVAL, "--rotary-frac", "rotary 1.5");
        p.rotary_frac = NAN;
        bad(n, p, PE_EINVAL, "--rotary-frac", "rotary NaN");
        p = base_params();
        p.len = 1 << 23;
        p.dim = 128;
        bad(n, p, PE_ERANGE, "--len x --dim", "L*d over the memory budget");
        p = base_params();
        p.scaling.type = (pe_scaling_type)9;
        bad(n, p, PE_EINVAL, "--scaling", "scaling 9");
        p = base_params();
        p.scaling.type = PE_SCALING_LINEAR;
        p.scaling.factor = 0.5;
        bad(n, p, PE_EINVAL, "--factor", "factor 0.5");
        p.scaling.factor = NAN;
        bad(n, p, PE_EINVAL, "--factor", "factor NaN");
        p.scaling.factor = 2;
        p.scaling.original_ctx = 0;
        bad(n, p, PE_EINVAL, "--orig-ctx", "L0 0");
        p = base_params();
        p.scaling.type = PE_SCALING_DYNAMIC;
        p.scaling.factor = 2;
        p.scaling.seq_len = -1; /* 0 means not given (L0) */
        bad(n, p, PE_EINVAL, "--seq-len", "seq_len -1");
        p = base_params();
        p.scaling.type = PE_SCALING_NTK;
        p.scaling.factor = 2;
        p.dim = 2;
        bad(n, p, PE_EINVAL, "--rotary-frac", "NTK with a rotary dim of 2");
        p = base_params();
        p.scaling.type = PE_SCALING_YARN;
        p.scaling.factor = 4;
        p.scaling.beta_fast = NAN;
        bad(n, p, PE_EINVAL, "--beta-fast", "beta_fast NaN");
        p.scaling.beta_fast = 0;
        bad(n, p, PE_EINVAL, "--beta-fast", "beta_fast 0");
        p.scaling.beta_fast = 32;
        p.scaling.beta_slow = -1;
        bad(n, p, PE_EINVAL, "--beta-slow", "beta_slow < 0");
        p.scaling.beta_slow = INFINITY;
        bad(n, p, PE_EINVAL, "--beta-slow", "beta_slow inf");
        p.scaling.beta_slow = 64;
        bad(n, p, PE_EINVAL, "--beta-fast", "beta_fast <= beta_slow");
        p.scaling.beta_slow = 1;
        p.scaling.mscale = -1;
        bad(n, p, PE_EINVAL, "--mscale", "mscale < 0");
        p.scaling.mscale = 1;
        p.scaling.mscale_all_dim = NAN;
        bad(n, p, PE_EINVAL, "--mscale-all-dim", "mscale_all_dim NaN");
        p.scaling.mscale_all_dim = 1;
        p.scaling.yarn_truncate = 2;
        bad(n, p, PE_EINVAL, "--yarn-truncate", "truncate 2");
        p = base_params();
        p.scaling.type = PE_SCALING_LLAMA3;
        p.scaling.factor = 8;
        p.scaling.low_freq_factor = 0;
        bad(n, p, PE_EINVAL, "--low-freq-factor", "low freq factor 0");
        /* high = low is HF's too (Llama 4 Scout ships 1 and 1); high < low is not */
        p.scaling.low_freq_factor = 4;
        p.scaling.high_freq_factor = 2;
        bad(n, p, PE_EINVAL, "--high-freq-factor", "high < low");
        p.scaling.high_freq_factor = NAN;
        bad(n, p, PE_EINVAL, "--high-freq-factor", "high NaN");
        p = base_params();
        p.scaling.attention_factor = NAN;
        bad(n, p, PE_EINVAL, "--attn-factor", "attention factor NaN");
        p.scaling.attention_factor = -1;
        bad(n, p, PE_EINVAL, "--attn-factor", "attention factor < 0");
    }
    pe_params p = base_params();
    p.xpos_scale_base = 0;
    bad("xpos", p, PE_EINVAL, "--xpos-scale", "scale base 0");
    p.xpos_scale_base = NAN;
    bad("xpos", p, PE_EINVAL, "--xpos-scale", "scale base NaN");

    /* The RoPE entry points validate before touching their outputs. */
    double th[64], attn = -1, q[8] = {0}, k[8] = {0}, out[2];
    p = base_params();
    p.base = 1;
    expect_fail(pe_rope_inv_freq(&p, th, &attn, err, sizeof err), PE_EINVAL, err, "--base",
                "pe_rope_inv_freq base 1");
    TAP_OK(attn == -1, "attention untouched on failure");
    pe_matrix c = {0}, s = {0};
    p = base_params();
    p.len = 0;
    expect_fail(pe_rope_tables(&p, &c, &s, err, sizeof err), PE_EINVAL, err, "--len",
                "pe_rope_tables L 0");
    TAP_OK(c.data == NULL && s.data == NULL, "no tables on failure");
    p = base_params();
    p.dim = 8;
    p.rotary_frac = -1;
    expect_fail(pe_rope_score_curve(&p, q, k, 0, 0, 2, out, err, sizeof err), PE_EINVAL, err,
                "--rotary-frac", "score curve rotary -1");
    p.rotary_frac = 1;
    expect_fail(pe_rope_score_curve(&p, q, k, 0, 0, -2, out, err, sizeof err), PE_EINVAL, err,
                "--len", "score curve count < 0");
    p.dim = 5;
    expect_fail(pe_wavelengths(&p, 1, th, err, sizeof err), PE_EINVAL, err, "--dim",
                "RoPE wavelengths odd d");
    TAP_OK(pe_rope_resolution(&p, 1, 1, 0.1) < 0, "resolution rejects odd d");
}

int main(void)
{
    test_shared_checks();
    test_input_encodings();
    test_bias_encodings();
    test_rope_encodings();
    return tap_done();
}
