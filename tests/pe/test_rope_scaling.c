/* test_rope_scaling: reference section 5 (HF modeling_rope_utils), bands, attention factor. */
#include <stdio.h>

#include "pe_test.h"

static void d16(pe_params *p, pe_scaling_type type, double f)
{
    pe_params_default(p);
    p->dim = 16;
    p->scaling.type = type;
    p->scaling.factor = f;
    p->scaling.original_ctx = 64;
}

static void inv(const pe_params *p, double *th, double *attn)
{
    char err[256];
    int rc = pe_rope_inv_freq(p, th, attn, err, sizeof err);
    if (rc != PE_OK) tap_diag("pe_rope_inv_freq: %s", err);
}

static void test_d16(void)
{
    pe_params p;
    double th[8], attn;
    d16(&p, PE_SCALING_NONE, 1);
    inv(&p, th, &attn);
    static const double def[] = {1, 0.31622776602, 0.1, 0.031622776602, 0.01};
    close_vec_d(th, def, 5, REL_D, 0, "default theta");
    TAP_OK(attn == 1.0, "no scaling: attention factor 1");

    d16(&p, PE_SCALING_LINEAR, 4);
    inv(&p, th, &attn);
    static const double lin[] = {0.25, 0.079056941504, 0.025};
    close_vec_d(th, lin, 3, REL_D, 0, "linear f=4");
    TAP_OK(attn == 1.0, "linear: attention factor 1");

    d16(&p, PE_SCALING_NTK, 4);
    inv(&p, th, &attn);
    TAP_CLOSE(pe_rope_effective_base(&p), 48760.546168, REL_D, 0, "NTK a=4: base'");
    static const double ntk[] = {1, 0.25941281701, 0.067295009632, 0.017457188020};
    close_vec_d(th, ntk, 4, REL_D, 0, "NTK a=4 theta");

    d16(&p, PE_SCALING_DYNAMIC, 4);
    p.scaling.seq_len = 128;
    inv(&p, th, &attn);
    TAP_CLOSE(pe_rope_effective_base(&p), 62924.947532, REL_D, 0, "dynamic f=4 L0=64 seq 128");
    static const double dyn[] = {1, 0.25127376217, 0.063138503556};
    close_vec_d(th, dyn, 3, REL_D, 0, "dynamic theta");
    p.scaling.seq_len = 64;
    TAP_OK(pe_rope_effective_base(&p) == 1e4, "dynamic: unchanged at seq_len = L0");
    p.scaling.seq_len = 10;
    inv(&p, th, &attn);
    close_vec_d(th, def, 5, REL_D, 0, "dynamic: unchanged below L0");

    d16(&p, PE_SCALING_YARN, 4);
    inv(&p, th, &attn);
    double lo, hi;
    pe_rope_yarn_range(&p, &lo, &hi);
    TAP_OK(lo == 0 && hi == 3, "YaRN f=4 L0=64: low 0 high 3 (got %g %g)", lo, hi);
    TAP_CLOSE(attn, 1.1386294361, REL_D, ABS_10, "YaRN attention 0.1 ln 4 + 1");
    static const double yarn[] = {1,      0.23717082451,    0.05,    0.0079056941504,
                                  0.0025, 0.00079056941504, 0.00025, 0.000079056941504};
    close_vec_d(th, yarn, 8, REL_D, 0, "YaRN theta'");

    d16(&p, PE_SCALING_LLAMA3, 4);
    inv(&p, th, &attn);
    static const double l3[] = {1, 0.25464790895, 0.025464790895, 0.0079056941504, 0.0025};
    close_vec_d(th, l3, 5, REL_D, 0, "llama3 f=4 lo=1 hi=4 L0=64");
    TAP_OK(attn == 1.0, "llama3: attention factor 1");
}

static void test_real_models(void)
{
    pe_params p;
    double th[64], attn, lo, hi;
    pe_params_default(&p);
    p.scaling.type = PE_SCALING_YARN;
    p.scaling.factor = 16;
    p.scaling.original_ctx = 4096;
    inv(&p, th, &attn);
    pe_rope_yarn_range(&p, &lo, &hi);
    TAP_OK(lo == 20 && hi == 46, "YaRN Llama-2: low 20 high 46 (got %g %g)", lo, hi);
    TAP_CLOSE(attn, 1.2772588722, REL_D, ABS_10, "YaRN Llama-2: attention 1.2772588722");
    TAP_CLOSE(th[1], 0.86596432336, REL_D, 0, "YaRN Llama-2: theta'[1]");
    int bands[3] = {0};
    for (int k = 0; k < 64; k++) bands[pe_rope_band(&p, k)]++;
    TAP_OK(bands[PE_BAND_KEEP] == 21 && bands[PE_BAND_BLEND] == 25 && bands[PE_BAND_INTERP] == 18,
           "YaRN Llama-2 bands by ramp: k<=20 keep, 21..45 blend, >=46 interp");

    pe_params_default(&p);
    p.base = 5e5;
    p.scaling.type = PE_SCALING_LLAMA3;
    p.scaling.factor = 8;
    p.scaling.original_ctx = 8192;
    inv(&p, th, &attn);
    TAP_CLOSE(th[29], 2.1665707635e-03, REL_D, 1e-13, "Llama-3.1: theta'[29]");
    int keep = 0, blend = 0, interp = 0, ok = 1;
    for (int k = 0; k < 64; k++) {
        double t0 = pow(5e5, -2.0 * k / 128);
        switch (pe_rope_band(&p, k)) {
        case PE_BAND_KEEP:
            keep++;
            ok &= th[k] == t0;
            break;
        case PE_BAND_BLEND:
            blend++;
            ok &= th[k] < t0 && th[k] > t0 / 8;
            break;
        case PE_BAND_INTERP:
            interp++;
            ok &= fabs(th[k] - t0 / 8) <= 1e-15 * t0;
            break;
        }
    }
    TAP_OK(keep == 29 && blend == 6 && interp == 29,
           "Llama-3.1: 29 kept, 6 blended, 29 divided "
           "(got %d %d %d)",
           keep, blend, interp);
    TAP_OK(ok, "Llama-3.1: bands agree with the frequencies");
}

static void test_bands_and_attention(void)
{
    pe_params p;
    d16(&p, PE_SCALING_LINEAR, 4);
    TAP_OK(pe_rope_band(&p, 0) == PE_BAND_INTERP && pe_rope_band(&p, 7) == PE_BAND_INTERP,
           "linear f=4: every pair INTERP");
    p.scaling.factor = 1;
    TAP_OK(pe_rope_band(&p, 3) == PE_BAND_KEEP, "linear f=1: KEEP");
    p.scaling.type = PE_SCALING_NTK;
    TAP_OK(pe_rope_band(&p, 3) == PE_BAND_KEEP, "NTK f=1: KEEP");
    p.scaling.factor = 2;
    p.scaling.type = PE_SCALING_DYNAMIC;
    TAP_OK(pe_rope_band(&p, 3) == PE_BAND_INTERP, "dynamic f=2: INTERP");
    p.scaling.type = PE_SCALING_NONE;
    TAP_OK(pe_rope_band(&p, 3) == PE_BAND_KEEP, "no scaling: KEEP");
    d16(&p, PE_SCALING_YARN, 4);
    TAP_OK(pe_rope_band(&p, 0) == PE_BAND_KEEP && pe_rope_band(&p, 1) == PE_BAND_BLEND &&
               pe_rope_band(&p, 2) == PE_BAND_BLEND && pe_rope_band(&p, 3) == PE_BAND_INTERP,
           "YaRN d=16: keep, blend, blend, interp");
    d16(&p, PE_SCALING_LLAMA3, 4);
    TAP_OK(pe_rope_band(&p, 0) == PE_BAND_KEEP && pe_rope_band(&p, 1) == PE_BAND_BLEND &&
               pe_rope_band(&p, 2) == PE_BAND_BLEND && pe_rope_band(&p, 3) == PE_BAND_INTERP,
           "llama3 d=16: keep, blend, blend, interp");

    /* The attention factor multiplies cos and sin, so the tables and the norm carry it. */
    char err[256];
    d16(&p, PE_SCALING_YARN, 4);
    p.len = 10;
    pe_matrix ct = {0}, st = {0};
    TAP_OK(pe_rope_tables(&p, &ct, &st, err, sizeof err) == PE_OK, "YaRN tables");
    double c = pe_matrix_row(&ct, 7)[1], s = pe_matrix_row(&st, 7)[1];
    TAP_CLOSE(sqrt(c * c + s * s), 1.1386294361, 1e-6, 0, "tables: |cos, sin| = attention");
    TAP_CLOSE(atan2(s, c), remainder(7 * 0.23717082451, 2 * 3.14159265358979), 1e-6, 1e-6,
              "tables: angle = pos * theta'");
    pe_matrix_free(&ct);
    pe_matrix_free(&st);
    double th[8], attn;
    p.scaling.attention_factor = 0.5;
    inv(&p, th, &attn);
    TAP_OK(attn == 0.5, "attention override replaces the derived factor");
    p.scaling.attention_factor = 0;
    p.scaling.factor = 1;
    inv(&p, th, &attn);
    TAP_OK(attn == 1.0, "YaRN f=1: attention factor 1");

    double q[16], k[16];
    pe_rope_qk(16, 1, q, k);
    d16(&p, PE_SCALING_YARN, 4);
    double s1, s0;
    pe_rope_score_curve(&p, q, k, 5, 3, 1, &s1, err, sizeof err);
    p.scaling.attention_factor = 1.0;
    pe_rope_score_curve(&p, q, k, 5, 3, 1, &s0, err, sizeof err);
    TAP_CLOSE(s1, s0 * 1.1386294361 * 1.1386294361, 1e-9, 1e-12, "logits scale by attention^2");
}

/* Issue 17's round two. Every reference below was computed in double precision with plain
 * Python from HF transformers' modeling_rope_utils formulas as pe-reference.md section 5 gives
 * them (_compute_dynamic_ntk_parameters, _compute_yarn_parameters with find_correction_range's
 * `truncate` and get_mscale), independently of pelab's code. */
static void test_round_two(void)
{
    pe_params p;
    double th[64], attn, lo, hi;

    /* Dynamic NTK, d 128, base 5e5, f 8, L0 8192 (the case): at or below L0 HF keeps (or
     * returns to) the original frequencies; 0 = not given reads as L0. */
    pe_params_default(&p);
    p.base = 5e5;
    p.scaling.type = PE_SCALING_DYNAMIC;
    p.scaling.factor = 8;
    p.scaling.original_ctx = 8192;
    static const int below[] = {8192, 4096, 1, 0};
    for (int i = 0; i < 4; i++) {
        p.scaling.seq_len = below[i];
        inv(&p, th, &attn);
        char name[96];
        snprintf(name, sizeof name, "dynamic seq_len %d <= L0: theta_63 original", below[i]);
        TAP_CLOSE(th[63], 2.4551407911e-06, 1e-10, 0, name);
    }
    p.scaling.seq_len = 16384;
    inv(&p, th, &attn);
    TAP_CLOSE(pe_rope_effective_base(&p), 4659713.555, 1e-10, 0, "dynamic seq 16384: base'");
    TAP_CLOSE(th[1], 0.78669590074, 1e-10, 0, "dynamic seq 16384: theta_1");
    TAP_CLOSE(th[40], 6.7963461058e-05, 1e-10, 0, "dynamic seq 16384: theta_40");
    TAP_CLOSE(th[63], 2.7279342124e-07, 1e-10, 0, "dynamic seq 16384: theta_63");

    /* YaRN with truncate false (gpt-oss ships it): the ramp ends stay fractional. */
    d16(&p, PE_SCALING_YARN, 4);
    p.scaling.yarn_truncate = 0;
    inv(&p, th, &attn);
    pe_rope_yarn_range(&p, &lo, &hi);
    TAP_OK(lo == 0 && fabs(hi - 2.0160002112515443) < 1e-12,
           "YaRN d16 truncate false: low 0, high 2.0160002113 (got %.12g %.12g)", lo, hi);
    static const double yarn_nt[] = {1,      0.19858352015,    0.025595245892, 0.0079056941504,
                                     0.0025, 0.00079056941504, 0.00025,        7.9056941504e-05};
    close_vec_d(th, yarn_nt, 8, 1e-10, 0, "YaRN d16 truncate false theta'");
    TAP_CLOSE(attn, 1.138629436111989, REL_D, 0, "YaRN truncate false: attention unchanged");

    pe_params_default(&p);
    p.scaling.type = PE_SCALING_YARN;
    p.scaling.factor = 16;
    p.scaling.original_ctx = 4096;
    p.scaling.yarn_truncate = 0;
    inv(&p, th, &attn);
    pe_rope_yarn_range(&p, &lo, &hi);
    TAP_CLOSE(lo, 20.944481621, 1e-10, 0, "YaRN Llama-2 truncate false: low");
    TAP_CLOSE(hi, 45.026881274, 1e-10, 0, "YaRN Llama-2 truncate false: high");
    static const double l2_nt[] = {
        0.056234132519, 0.03359532748,   0.019046743399,  0.01057017848,    0.0056962144014,
        0.002940626698, 0.0014171042302, 0.0006004309178, 0.00018222971922, 7.2173874043e-05};
    double got[10];
    for (int i = 0; i < 10; i++) got[i] = th[20 + 3 * i];
    close_vec_d(got, l2_nt, 10, 1e-10, 0, "YaRN Llama-2 truncate false theta'_20,23..47");

    /* gpt-oss-style parameters (d 64, base 150000, f 32, L0 4096): pair 17 differs by 76%
     * between truncating and not. */
    pe_params_default(&p);
    p.dim = 64;
    p.base = 150000;
    p.scaling.type = PE_SCALING_YARN;
    p.scaling.factor = 32;
    p.scaling.original_ctx = 4096;
    p.scaling.yarn_truncate = 0;
    inv(&p, th, &attn);
    TAP_CLOSE(th[17], 0.00012931870125, 1e-10, 0, "d64 base 1.5e5 f32 truncate false: theta'_17");
    TAP_CLOSE(th[13], 0.0038603593172, 1e-10, 0, "d64 base 1.5e5 f32 truncate false: theta'_13");
    TAP_CLOSE(attn, 1.3465735903, 1e-10, 0, "f 32: attention 0.1 ln 32 + 1");
    p.scaling.yarn_truncate = 1;
    inv(&p, th, &attn);
    TAP_CLOSE(th[17], 0.0002279477958, 1e-10, 0, "the same truncated: theta'_17");

    /* mscale / mscale_all_dim (DeepSeek): the attention factor is the get_mscale ratio; an
     * explicit attention factor still wins, and one of the two alone is ignored, as in HF. */
    pe_params_default(&p);
    p.scaling.type = PE_SCALING_YARN;
    p.scaling.factor = 40;
    p.scaling.original_ctx = 4096;
    p.scaling.mscale = 0.707;
    p.scaling.mscale_all_dim = 1;
    inv(&p, th, &attn);
    TAP_CLOSE(attn, 0.92104235532, 1e-10, 0, "YaRN f 40 mscale 0.707 / all_dim 1");
    p.scaling.mscale = 1;
    p.scaling.mscale_all_dim = 0.5;
    inv(&p, th, &attn);
    TAP_CLOSE(attn, 1.1557219902, 1e-10, 0, "YaRN f 40 mscale 1 / all_dim 0.5");
    p.scaling.mscale_all_dim = 0;
    inv(&p, th, &attn);
    TAP_CLOSE(attn, 0.1 * log(40) + 1, REL_D, 0, "mscale alone: get_mscale(f)");
    p.scaling.mscale_all_dim = 0.5;
    p.scaling.attention_factor = 1.25;
    inv(&p, th, &attn);
    TAP_OK(attn == 1.25, "attention_factor wins over mscale");
}

/* LongRoPE with made-up lists (d 8, base 1e4, L0 64, f 4): references computed in Python from
 * transformers' _compute_longrope_parameters, theta_k = 1 / (ext_k 10000^(2k/8)), attention
 * sqrt(1 + ln 4 / ln 64) = 1.15470053838. */
static void test_longrope(void)
{
    pe_params p;
    double th[4], attn;
    pe_params_default(&p);
    p.dim = 8;
    p.scaling.type = PE_SCALING_LONGROPE;
    p.scaling.factor = 4;
    p.scaling.original_ctx = 64;
    p.scaling.n_factors = 4;
    static const double sf[4] = {1, 1.5, 2, 2.5}, lf[4] = {1, 3, 9, 27};
    memcpy(p.scaling.short_factor, sf, sizeof sf);
    memcpy(p.scaling.long_factor, lf, sizeof lf);
    static const double want_s[4] = {1, 0.0666666666667, 0.005, 0.0004};
    static const double want_l[4] = {1, 0.0333333333333, 0.00111111111111, 3.7037037037e-05};
    static const int seqs[4] = {0, 64, 65, 100000};
    for (int i = 0; i < 4; i++) {
        p.scaling.seq_len = seqs[i];
        inv(&p, th, &attn);
        char name[96];
        snprintf(name, sizeof name, "longrope seq_len %d: %s factors", seqs[i],
                 i < 2 ? "short" : "long");
        close_vec_d(th, i < 2 ? want_s : want_l, 4, 1e-11, 0, name);
        TAP_CLOSE(attn, 1.15470053838, 1e-10, 0, "longrope attention sqrt(1 + ln f / ln L0)");
    }
    p.scaling.attention_factor = 1.3;
    inv(&p, th, &attn);
    TAP_OK(attn == 1.3, "longrope: attention_factor wins");
    p.scaling.attention_factor = 0;
    p.scaling.factor = 1;
    inv(&p, th, &attn);
    TAP_OK(attn == 1.0, "longrope f 1: attention 1");
    char err[256];
    p.dim = 16;
    TAP_OK(pe_rope_inv_freq(&p, th, &attn, err, sizeof err) == PE_EINVAL && strstr(err, "--dim 16"),
           "longrope: 4 factors for 8 pairs refused: %s", err);
    p.dim = 8;
    p.scaling.n_factors = 0;
    TAP_OK(pe_rope_inv_freq(&p, th, &attn, err, sizeof err) == PE_EINVAL && strstr(err, "--config"),
           "longrope without lists refused: %s", err);
}

int main(void)
{
    test_d16();
    test_longrope();
    test_round_two();
    test_real_models();
    test_bands_and_attention();
    return tap_done();
}
