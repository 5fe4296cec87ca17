/* decay_opts.h: the decay view's option group (options/option_groups.h): the curves it overlays,
 * which app_state holds as st->decay, and their defaults; its row (--curves) is in decay.c. */
#ifndef PELAB_APP_DECAY_OPTS_H
#define PELAB_APP_DECAY_OPTS_H

/* Curves the decay view can overlay (bit i = curve i of app_decay_curves). */
enum {
    APP_CURVE_SINUSOIDAL = 1u << 0,
    APP_CURVE_LEARNED = 1u << 1,
    APP_CURVE_BINARY = 1u << 2,
    APP_CURVE_ROPE = 1u << 3,        /* <R_m 1, R_n 1>: all-ones q and k */
    APP_CURVE_ROPE_RANDOM = 1u << 4, /* seeded random q and k */
    APP_CURVE_ROPE_BOUND = 1u << 5,  /* RoFormer's bound B(|m - n|) */
    APP_CURVE_ALIBI = 1u << 6,       /* exp(bias): the factor ALiBi applies to attention */
    APP_CURVE_XPOS = 1u << 7,        /* RoPE all-ones score times the xPos decay */
    APP_CURVE_ROPE_GAUSS = 1u << 8,  /* mean and spread over Gaussian q, k draws */
    APP_CURVE_COUNT = 9,
};

typedef struct app_decay_opts {
    unsigned curves; /* APP_CURVE_* bits */
} app_decay_opts;

void app_decay_opts_default(app_decay_opts *o);

#endif
