/* trained.c: a model's position parameters copied out of the model for the views (trained.h). */
#include "trained.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "options.h"
#include "views.h"

const app_trained *app_trained_get(app_view_ctx *c, int slot, const char *name, char *err,
                                   size_t errlen)
{
    struct {
        char name[512];
    } key;
    memset(&key, 0, sizeof key);
    snprintf(key.name, sizeof key.name, "%s", name);
    app_trained *t = app_cache_get(c, slot, &key, sizeof key);
    if (t) return t;
    char path[1024];
    if (app_attn_model_path(name, path, sizeof path, err, errlen) < 0) return NULL;
    lmi_model m = {0};
    if (lmi_open(&m, path, err, errlen) < 0) return NULL;
    lmi_pos pos;
    if (lmi_pos_params(&m, &pos, err, errlen) < 0) {
        lmi_close(&m);
        return NULL;
    }
    size_t n = 0;
    if (pos.kind == LMI_POS_TABLE || pos.kind == LMI_POS_BUCKETS)
        n = (size_t)pos.rows * (size_t)pos.cols;
    pe_matrix fixed = {0};
    if (pos.kind == LMI_POS_TABLE && !pos.values) { /* a formula's table: pe/ computes it */
        const pe_encoding *e = pe_encoding_find(m.info.pe_name);
        pe_params p = pos.params;
        p.len = pos.rows;
        p.dim = pos.cols;
        if (!e || !e->table || e->table(&p, &fixed, err, errlen) < 0) {
            if (!e || !e->table) snprintf(err, errlen, "%s: no table for %s", name, m.info.pe_name);
            lmi_close(&m);
            return NULL;
        }
    }
    t = app_cache_put(c, slot, &key, sizeof key, sizeof *t + 2 * n * sizeof(float));
    if (!t) {
        snprintf(err, errlen, "%s", app_cache_error());
        pe_matrix_free(&fixed);
        lmi_close(&m);
        return NULL;
    }
    snprintf(t->name, sizeof t->name, "%s", m.info.name);
    snprintf(t->pe, sizeof t->pe, "%s", m.info.pe_name);
    snprintf(t->path, sizeof t->path, "%s", path);
    t->layers = m.info.layers;
    t->heads = m.info.heads;
    t->ctx = m.info.ctx;
    t->pos = pos;
    if (n) {
        memcpy(t->data, fixed.data ? fixed.data : pos.values, n * sizeof(float));
        t->pos.values = t->data;
        t->pos.init = pos.trained ? NULL : t->pos.values; /* a formula starts where it ends */
        if (pos.init) {
            memcpy(t->data + n, pos.init, n * sizeof(float));
            t->pos.init = t->data + n;
        }
    }
    pe_matrix_free(&fixed);
    int H = t->heads < PE_MAX_HEADS ? t->heads : PE_MAX_HEADS;
    if (pos.slopes) {
        memcpy(t->slopes, pos.slopes, (size_t)H * sizeof(double));
        t->pos.slopes = t->slopes;
    }
    /* the defaults the trained values are read against: the paper's slopes, base 10000 */
    if (pe_alibi_slopes(H, 0, t->default_slopes, NULL, 0) < 0)
        memset(t->default_slopes, 0, sizeof t->default_slopes);
    t->default_base = 10000;
    lmi_close(&m);
    return t;
}

const float *app_trained_values(const app_trained *t, int init, char *err, size_t errlen)
{
    if (!init) return t->pos.values;
    if (!t->pos.init)
        snprintf(err, errlen,
                 "--weights init: %s does not record the values it started from (only pelab's "
                 "own models do); allowed: trained",
                 t->name);
    return t->pos.init;
}
