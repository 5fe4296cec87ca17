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

int main(void)
{
    test_d16();
    test_real_models();
    test_bands_and_attention();
    return tap_done();
}
