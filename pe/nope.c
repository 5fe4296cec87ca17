/* nope.c: no position encoding; only the causal mask carries order. */
#include "pe_internal.h"

static int nope_validate(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_check_dim(p->dim, 0, err, errlen);
    if (rc == PE_OK) rc = pe_check_len(p->len, err, errlen);
    return rc;
}

const pe_encoding pe_enc_nope = {
    .name = "nope",
    .description = "no position encoding; only the causal mask carries order",
    .acts = 0,
    .validate = nope_validate,
};
