/* learned.c: a learned absolute table as initialised (BERT/GPT-2: N(0, 0.02)), from a seed. */
#include <math.h>

#include "pe_internal.h"

static int learned_validate(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_check_dim(p->dim, 0, err, errlen);
    if (rc == PE_OK) rc = pe_check_len(p->len, err, errlen);
    if (rc == PE_OK && (!isfinite(p->learned_std) || p->learned_std < 0.0 || p->learned_std > 1e6))
        rc = pe_fail(err, errlen, PE_EINVAL,
                     "--std %g: the init standard deviation must be a finite number 0..1e6",
                     p->learned_std);
    if (rc == PE_OK)
        rc = pe_check_cells((size_t)p->len, (size_t)p->dim, "--len x --dim", err, errlen);
    return rc;
}

/* Row-major N(0, learned_std) values from pe_rng seeded with p->seed: the same seed gives the
 * same table, and a longer table (same dim) extends a shorter one. */
int pe_learned_table(const pe_params *p, pe_matrix *out, char *err, size_t errlen)
{
    int rc = learned_validate(p, err, errlen);
    if (rc == PE_OK) rc = pe_matrix_alloc(out, (size_t)p->len, (size_t)p->dim, 0, err, errlen);
    if (rc != PE_OK) return rc;
    pe_rng r;
    pe_rng_seed(&r, p->seed);
    size_t n = out->rows * out->cols;
    for (size_t i = 0; i < n; i++) {
        out->data[i] = (float)(p->learned_std * pe_rng_normal(&r));
        if ((i & 0x3ffff) == 0x3ffff && pe_work((double)i / (double)n)) {
            pe_matrix_free(out);
            return pe_work_cancelled(err, errlen);
        }
    }
    return PE_OK;
}

int pe_learned_row_states(const pe_params *p, pe_rng *states, char *err, size_t errlen)
{
    int rc = learned_validate(p, err, errlen);
    if (rc != PE_OK) return rc;
    pe_rng r;
    pe_rng_seed(&r, p->seed);
    size_t len = (size_t)p->len, steps = 2 * (size_t)p->dim; /* a normal takes two uniforms */
    for (size_t i = 0; i < len; i++) {
        if ((i & 63) == 63 && pe_work((double)i / (double)len))
            return pe_work_cancelled(err, errlen);
        states[i] = r;
        pe_rng_skip(&r, steps);
    }
    return PE_OK;
}

void pe_learned_row(const pe_params *p, const pe_rng *state, const size_t *cols, size_t n,
                    float *out)
{
    pe_rng r = *state;
    size_t at = 0; /* the column r draws next */
    for (size_t j = 0; j < n; j++) {
        pe_rng_skip(&r, 2 * (cols[j] - at)); /* the columns between: two uniforms each */
        out[j] = (float)(p->learned_std * pe_rng_normal(&r));
        at = cols[j] + 1;
    }
}

const pe_encoding pe_enc_learned = {
    .name = "learned",
    .description = "a trainable (len, dim) table added to the input, random N(0, std) at init",
    .acts = PE_ACTS_INPUT,
    .validate = learned_validate,
    .table = pe_learned_table,
};
