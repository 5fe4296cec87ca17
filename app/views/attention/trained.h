/* trained.h: a model's position parameters for the views (issue 23): the trained learned table,
 * T5's bucket biases, ALiBi's slopes, RoPE's base, read through the model interface
 * (lmi_pos_params) and copied out, so a view keeps them in a cache slot without keeping the
 * model open. The views that used to show only the init (heatmap --pe learned, decay's learned
 * curve, the t5 view) read the shipped models' trained values from here; --weights init shows
 * the seeded start again. */
#ifndef PELAB_APP_TRAINED_H
#define PELAB_APP_TRAINED_H

#include <stddef.h>

#include "lmi.h"

struct app_view_ctx;

typedef struct app_trained {
    char name[128];  /* the model's name (its file) */
    char pe[16];     /* its scheme (pe/'s name) */
    char path[1024]; /* the file */
    int layers, heads, ctx;
    lmi_pos pos; /* values, init and slopes point into this struct's storage: values is the
                    fixed table computed by pe/ for a sinusoidal model; init NULL when the model
                    does not record its start */
    double default_slopes[PE_MAX_HEADS]; /* ALiBi: the paper's slopes for this head count */
    double default_base;                 /* RoPE: 10000 */
    double slopes[PE_MAX_HEADS];
    float data[]; /* values, then init */
} app_trained;

/* The position parameters of the model named name (a scheme of assets/models or a path), cached
 * in slot of c under the name. NULL with err on failure. */
const app_trained *app_trained_get(struct app_view_ctx *c, int slot, const char *name, char *err,
                                   size_t errlen);

/* The values to show: the trained ones, or (init) the start when the model records it; NULL with
 * err when it does not. */
const float *app_trained_values(const app_trained *t, int init, char *err, size_t errlen);

#endif
