/* lm_kernels.c: the linear maps of the real models on the thread pool.
 *
 * Two layouts: W (out, in) row-major (Llama, the heads) is a dot product per output, taken with
 * eight independent partial sums so that gcc vectorises it without reassociating anything the
 * source does not say; GPT-2's Conv1D W (in, out) is an axpy per input over a block of outputs.
 * Each output element is the work of one chunk in a fixed order, so results do not depend on
 * the number of threads (see pool.h). */
#include <string.h>

#include "lm_internal.h"
#include "pool.h"

typedef struct lin_job {
    const lm_linear *L;
    const float *x;
    int T;
    float *out;
} lin_job;

LM_CLONES static float dot8(const float *a, const float *b, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += a[i + j] * b[i + j];
    float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

/* Outputs [o0, o1) of every token: the weight row is read once and used for all T tokens. */
static void lin_rows(void *ctx, size_t o0, size_t o1)
{
    const lin_job *j = ctx;
    const lm_linear *L = j->L;
    for (size_t o = o0; o < o1; o++) {
        const float *w = L->w + o * L->ld;
        float b = L->b ? L->b[o] : 0.0f;
        for (int t = 0; t < j->T; t++)
            j->out[(size_t)t * (size_t)L->out + o] =
                b + dot8(w, j->x + (size_t)t * (size_t)L->in, L->in);
    }
}

#define COLS 64

/* Outputs [blk * COLS, ...) of every token from the (in, out) layout: for each input row of W,
 * every token adds x[t][i] times the row's slice (vectorised over the slice). */
LM_CLONES static void lin_cols_block(const lin_job *j, size_t c0, size_t c1)
{
    const lm_linear *L = j->L;
    float acc[LM_CHUNK][COLS];
    int T = j->T, n = (int)(c1 - c0);
    for (int t = 0; t < T; t++) memset(acc[t], 0, sizeof acc[t]);
    for (int i = 0; i < L->in; i++) {
        const float *w = L->w + (size_t)i * L->ld + c0;
        for (int t = 0; t < T; t++) {
            float xi = j->x[(size_t)t * (size_t)L->in + (size_t)i];
            float *a = acc[t];
            for (int c = 0; c < n; c++) a[c] += xi * w[c];
        }
    }
    for (int t = 0; t < T; t++)
        for (int c = 0; c < n; c++)
            j->out[(size_t)t * (size_t)L->out + c0 + (size_t)c] =
                acc[t][c] + (L->b ? L->b[c0 + (size_t)c] : 0.0f);
}

static void lin_cols(void *ctx, size_t b0, size_t b1)
{
    const lin_job *j = ctx;
    for (size_t b = b0; b < b1; b++) {
        size_t c0 = b * COLS, c1 = c0 + COLS;
        if (c1 > (size_t)j->L->out) c1 = (size_t)j->L->out;
        lin_cols_block(j, c0, c1);
    }
}

void lm_linear_apply(const lm_linear *L, const float *x, int T, float *out, int threads)
{
    lin_job j = {L, x, T, out};
    if (L->t) {
        size_t blocks = ((size_t)L->out + COLS - 1) / COLS;
        pool_run(threads, blocks, 1, lin_cols, &j);
    } else {
        /* chunks of ~32 KiB of weights: small enough to balance, large enough to amortise */
        size_t grain = 8192 / ((size_t)L->in + 1) + 1;
        pool_run(threads, (size_t)L->out, grain, lin_rows, &j);
    }
}
