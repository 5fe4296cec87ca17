/* params.c: defaults and the checks of fields shared by several encodings. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "pe_internal.h"

int pe_fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

void pe_params_default(pe_params *p)
{
    *p = (pe_params){
        .dim = 128,
        .len = 256,
        .base = 10000.0,
        .layout = PE_LAYOUT_INTERLEAVED,
        .freq = PE_FREQ_PAPER,
        .pairing = PE_PAIRING_INTERLEAVED,
        .rotary_frac = 1.0,
        .scaling =
            {
                .type = PE_SCALING_NONE,
                .factor = 1.0,
                .original_ctx = 4096,
                .seq_len = 0,
                .beta_fast = 32.0,
                .beta_slow = 1.0,
                .yarn_truncate = 1,
                .mscale = 0.0,
                .mscale_all_dim = 0.0,
                .low_freq_factor = 1.0,
                .high_freq_factor = 4.0,
                .attention_factor = 0.0,
            },
        .heads = 8,
        .slope_ratio = 0.0,
        .alibi_symmetric = 0,
        .t5_buckets = 32,
        .t5_max_distance = 128,
        .t5_bidirectional = 1,
        .xpos_scale_base = 512.0,
        .xpos_zeta_rotary = 0,
        .learned_std = 0.02,
        .seed = 0,
    };
}

int pe_check_finite(double v, const char *opt, const char *what, char *err, size_t errlen)
{
    if (isfinite(v)) return PE_OK;
    return pe_fail(err, errlen, PE_EINVAL, "%s %g: must be a finite number (%s)", opt, v, what);
}

int pe_check_dim_for(int dim, int need_even, const char *why, char *err, size_t errlen)
{
    int lo = need_even ? 2 : 1;
    if (dim < lo || dim > PE_MAX_DIM)
        return pe_fail(err, errlen, PE_EINVAL, "--dim %d: must be %d..%d", dim, lo, PE_MAX_DIM);
    if (need_even && dim % 2 != 0)
        return pe_fail(err, errlen, PE_EINVAL, "--dim %d: must be even %s; allowed 2..%d", dim,
                       why ? why : "for pairs", PE_MAX_DIM);
    return PE_OK;
}

int pe_check_dim(int dim, int need_even, char *err, size_t errlen)
{
    return pe_check_dim_for(dim, need_even, "for pairs", err, errlen);
}

int pe_check_len(int len, char *err, size_t errlen)
{
    if (len < 1 || len > PE_MAX_LEN)
        return pe_fail(err, errlen, PE_EINVAL, "--len %d: the number of positions must be 1..%d",
                       len, PE_MAX_LEN);
    return PE_OK;
}

int pe_check_base(double base, char *err, size_t errlen)
{
    if (!isfinite(base) || !(base > 1.0))
        return pe_fail(err, errlen, PE_EINVAL,
                       "--base %g: the frequency base must be a finite number > 1", base);
    return PE_OK;
}

int pe_check_heads(int heads, char *err, size_t errlen)
{
    if (heads < 1 || heads > PE_MAX_HEADS)
        return pe_fail(err, errlen, PE_EINVAL, "--heads %d: the number of heads must be 1..%d",
                       heads, PE_MAX_HEADS);
    return PE_OK;
}

/* The budget's bound on a table's cells never falls below this (64 Mi cells, 256 MiB of floats):
 * what a small --max-memory still lets the sampled views check. */
static const size_t min_cells = (size_t)1 << 26;

int pe_check_cells(size_t rows, size_t cols, const char *what, char *err, size_t errlen)
{
    const char *name = what ? what : "rows x cols";
    double cells = (double)rows * (double)cols;
    /* the whole budget: what caches hold gives way when the table is reserved (pe_mem_reserve
     * says so if it cannot), so a state is not refused for what is merely cached. Never less
     * than 64 Mi cells: the views that draw a sample of a table (similarity, ALiBi at L 4096)
     * keep working under a small --max-memory, and a table they do build is refused by its
     * reservation with the budget's message. */
    size_t budget = pe_mem_budget(), room = budget / sizeof(float);
    if (room < min_cells) room = min_cells;
    /* the budget first (issue 25): a table of a 10M context that will not fit is refused with
     * its sizes and --max-memory; past an int index only under a budget of 8 GiB and more */
    if (cells > (double)room)
        return pe_fail(err, errlen, PE_ERANGE,
                       "%s = %zu x %zu = %.0f cells need %.0f MiB of floats, more than the memory "
                       "budget of %.0f MiB (allowed: a product up to %zu; --max-memory MIB raises "
                       "it)",
                       name, rows, cols, cells, ceil(cells * sizeof(float) / 1048576.0),
                       (double)budget / 1048576.0, room);
    if (cells > (double)PE_MAX_CELLS)
        return pe_fail(err, errlen, PE_ERANGE,
                       "%s = %zu x %zu = %.0f cells: more than one table can index (allowed: a "
                       "product up to %zu)",
                       name, rows, cols, cells, PE_MAX_CELLS);
    return PE_OK;
}

int pe_check_layout(pe_layout layout, char *err, size_t errlen)
{
    if (layout != PE_LAYOUT_INTERLEAVED && layout != PE_LAYOUT_CONCAT)
        return pe_fail(err, errlen, PE_EINVAL, "--layout %d: must be interleaved (0) or concat (1)",
                       (int)layout);
    return PE_OK;
}

int pe_check_pairing(pe_pairing pairing, char *err, size_t errlen)
{
    if (pairing != PE_PAIRING_INTERLEAVED && pairing != PE_PAIRING_HALF)
        return pe_fail(err, errlen, PE_EINVAL, "--pairing %d: must be interleaved (0) or half (1)",
                       (int)pairing);
    return PE_OK;
}

int pe_check_freq(pe_freq freq, int dim, char *err, size_t errlen)
{
    if (freq != PE_FREQ_PAPER && freq != PE_FREQ_FAIRSEQ)
        return pe_fail(err, errlen, PE_EINVAL, "--freq %d: must be paper (0) or fairseq (1)",
                       (int)freq);
    /* fairseq divides by d/2 - 1. */
    if (freq == PE_FREQ_FAIRSEQ && dim < 4)
        return pe_fail(err, errlen, PE_EINVAL,
                       "--dim %d: fairseq frequencies divide by d/2 - 1, so need 4..%d", dim,
                       PE_MAX_DIM);
    return PE_OK;
}
