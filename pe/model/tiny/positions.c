/* positions.c: the position data of the network (the scheme's tables, RoPE's rotations, ALiBi's
 * slopes, T5's buckets), every number from pe/. */
#include <stdlib.h>
#include <string.h>

#include "nn.h"

void nn_posbuf_free(nn_posbuf *b)
{
    pe_matrix_free(&b->table);
    pe_matrix_free(&b->cos);
    pe_matrix_free(&b->sin);
    pe_matrix_free(&b->nsin);
    free(b->inv_freq);
    free(b->bucket);
    memset(b, 0, sizeof *b);
}

int nn_pos_build(const model_config *c, int rows, double rope_base, const double *slopes,
                 nn_pos *pos, nn_posbuf *b, char *err, size_t errlen)
{
    memset(pos, 0, sizeof *pos);
    memset(b, 0, sizeof *b);
    int pe = model_pe_from_name(c->pe_name), rc = 0;
    if (rows < 1 || rows > PE_MAX_LEN)
        return model_fail(err, errlen, PE_ERANGE, "positions 0..%d: allowed up to %d", rows - 1,
                          PE_MAX_LEN);
    pos->rows = rows;
    pe_params p = c->pe;
    p.len = rows;
    if (pe == MODEL_PE_LEARNED && rows > c->pos_len)
        return model_fail(err, errlen, PE_ERANGE,
                          "position %d is past the learned table (%d rows, trained on the first "
                          "%d): learned has no vector there",
                          rows - 1, c->pos_len, c->ctx);
    if (pe == MODEL_PE_SINUSOIDAL) {
        p.dim = c->dim;
        if ((rc = pe_sinusoidal_table(&p, &b->table, err, errlen))) goto fail;
        pos->table = b->table.data;
    } else if (pe == MODEL_PE_ROPE) {
        p.dim = c->dim / c->heads;
        if (rope_base > 0) p.base = rope_base;
        if ((rc = pe_rope_tables(&p, &b->cos, &b->sin, err, errlen))) goto fail;
        pos->rot_dim = pe_rope_rotary_dim(&p);
        size_t n = (size_t)rows * (size_t)(pos->rot_dim / 2);
        if ((rc = pe_matrix_init(&b->nsin, (size_t)rows, (size_t)pos->rot_dim / 2, err, errlen)))
            goto fail;
        for (size_t i = 0; i < n; i++) b->nsin.data[i] = -b->sin.data[i];
        if (!(b->inv_freq = malloc((size_t)(pos->rot_dim / 2) * sizeof(double)))) goto oom;
        if ((rc = pe_rope_inv_freq(&p, b->inv_freq, &pos->rope_attn, err, errlen))) goto fail;
        pos->rope_cos = b->cos.data;
        pos->rope_sin = b->sin.data;
        pos->rope_nsin = b->nsin.data;
        pos->inv_freq = b->inv_freq;
        pos->rope_p = p;
    } else if (pe == MODEL_PE_ALIBI) {
        if (slopes)
            memcpy(b->slopes, slopes, (size_t)c->heads * sizeof(double));
        else if ((rc = pe_alibi_slopes(c->heads, c->pe.slope_ratio, b->slopes, err, errlen)))
            goto fail;
        pos->slopes = b->slopes;
    } else if (pe == MODEL_PE_T5) {
        if (!(b->bucket = malloc((size_t)rows * sizeof(int)))) goto oom;
        for (int dist = 0; dist < rows; dist++)
            b->bucket[dist] = pe_t5_bucket(-dist, 0, c->pe.t5_buckets, c->pe.t5_max_distance);
        pos->t5_bucket = b->bucket;
    }
    return 0;
oom:
    rc =
        model_fail(err, errlen, PE_ENOMEM, "position tables for %d positions: out of memory", rows);
fail:
    nn_posbuf_free(b);
    return rc;
}
