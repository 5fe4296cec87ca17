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

const pe_encoding pe_enc_learned = {
    .name = "learned",
    .description = "a trainable (len, dim) table added to the input, random N(0, std) at init",
    .acts = PE_ACTS_INPUT,
    .validate = learned_validate,
    .table = pe_learned_table,
};
