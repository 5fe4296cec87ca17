/* binary.c: counting in binary, PE[p][j] = bit j of p mapped to -1/+1 (seed 004, guess #3). */
#include "pe_internal.h"

static int binary_validate(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_check_dim(p->dim, 0, err, errlen);
    if (rc == PE_OK) rc = pe_check_len(p->len, err, errlen);
    if (rc == PE_OK)
        rc = pe_check_cells((size_t)p->len, (size_t)p->dim, "--len x --dim", err, errlen);
    return rc;
}

/* Bits past the width of a position (j >= 64) are 0, so -1. d bits count to 2^d, after which
 * the pattern repeats. */
int pe_binary_table(const pe_params *p, pe_matrix *out, char *err, size_t errlen)
{
    int rc = binary_validate(p, err, errlen);
    if (rc == PE_OK) rc = pe_matrix_alloc(out, (size_t)p->len, (size_t)p->dim, 0, err, errlen);
    if (rc != PE_OK) return rc;
    for (size_t pos = 0; pos < out->rows; pos++) {
        /* a report every 256 rows, so an explorer's newer change or q does not wait for a
         * whole table (q waited 570 ms at L 8192, d 4096 under load without them) */
        if ((pos & 255) == 255 && pe_work((double)pos / (double)out->rows)) {
            pe_matrix_free(out);
            return pe_work_cancelled(err, errlen);
        }
        float *row = pe_matrix_row(out, pos);
        uint64_t v = pos;
        for (size_t j = 0; j < out->cols; j++) row[j] = (j < 64 && ((v >> j) & 1u)) ? 1.0f : -1.0f;
    }
    return PE_OK;
}

const pe_encoding pe_enc_binary = {
    .name = "binary",
    .description = "the bits of the position as -1/+1, a counter added to the input (guess #3)",
    .acts = PE_ACTS_INPUT,
    .validate = binary_validate,
    .table = pe_binary_table,
};
