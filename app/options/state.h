/* state.h: everything that makes a figure, in one struct. The CLI, the terminal explorer and the
 * window all edit an app_state through the same option table (options.h), and views read it. */
#ifndef PELAB_APP_STATE_H
#define PELAB_APP_STATE_H

#include <stddef.h>

#include "option_groups.h"
#include "pe.h"

struct cmap;

/* How the ALiBi and T5 views colour their heads (--scale): each head on its own range, all on
 * one, or (ALiBi; T5 reads it as per head) exp(bias) on 0..1 with each head's window marked. */
enum { APP_SCALE_PER_HEAD = 0, APP_SCALE_SHARED = 1, APP_SCALE_WINDOW = 2 };

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

/* What the extension view draws against distance (--measure). */
enum { APP_MEASURE_BOUND = 0, APP_MEASURE_SCORE = 1, APP_MEASURE_BOTH = 2 };

typedef struct app_state {
    pe_params p;            /* every encoding parameter */
    const pe_encoding *enc; /* the encoding drawn by heatmap/similarity */
    int view;               /* index into the view table (views.h) */
    int head;               /* ALiBi/T5/attention head; -1 = all as small multiples */
    int pos;                /* RoPE: query position m; decay: reference position p0 (-1 = L/2) */
    int pos_k;              /* RoPE: key position n */
    double pos_frac;        /* RoPE animation: fraction of a position added to m (smooth turns) */
    int cosine;             /* similarity: cosine instead of raw dot product */
    int scale_shared;       /* ALiBi/T5 heads: APP_SCALE_PER_HEAD, _SHARED or _WINDOW */
    unsigned curves;        /* decay view: APP_CURVE_* bits */
    int ext_measure;        /* extension view: APP_MEASURE_* (--measure) */
    const struct cmap *map; /* NULL = automatic (diverging for signed data, viridis else) */
    int dark;               /* theme */
    double zoom;            /* window: font and line scale (+/-), 1 = normal */
    int cursor_on;          /* a data cursor is shown */
    int figure;        /* building a saved figure (export, animation, `s`): no explorer hints */
    int cur_r, cur_c;  /* cursor in data coordinates of the view's main plot */
    int row0, rows;    /* heatmap position window (mouse-wheel zoom); rows 0 = all */
    int playing;       /* RoPE animation running */
    double target_len; /* context-extension views: the target context (0 = factor * L0) */
    int orig_ctx_set;  /* --orig-ctx was given: the attention views then scale over it rather
                          than over the model's own trained context */
    /* --config: the file, and which of its model's layer kinds the RoPE views show */
    char config_path[256]; /* "" = no config */
    char layer_type[32];   /* asked for with --layer-type; "" = the model's full attention */
    char model_layer[32];  /* the kind shown ("all" when the model has one) */
    int model_kinds;       /* how many layer kinds the config has (0 = no config) */
    double min_angle;      /* resolution probe threshold, radians */
    int probe_d;           /* resolution probe distance D */
    /* each option group's storage (option_groups.h): st->attn, the attention views' */
#define APP_GROUP_STORAGE(name, type, defaults) type name;
    APP_OPTION_GROUPS(APP_GROUP_STORAGE)
#undef APP_GROUP_STORAGE
    /* the author's controls over every figure (exports, the explorer's `s`, the window) */
    char title[256], subtitle[256]; /* used when title_set / subtitle_set; "" removes */
    int title_set, subtitle_set;
    double font_pt; /* text size in points at the export's dpi; 0 = scaled to the figure */
    char font[128]; /* fontconfig family for cairo outputs; "" = DejaVu Sans */
    int csv_long;   /* CSV: one row per value with named index columns (else the wide table) */
    int svg_paths;  /* SVG: text as cairo's glyph outlines (else <text> elements) */
    /* provenance for exports: the command line that made the figure */
    char command[2048];
} app_state;

/* Defaults: the sinusoidal heatmap at d 128, L 256, base 1e4, light theme. */
void app_state_default(app_state *st);
/* Reference position of the decay view (pos, or L/2 when pos < 0), clamped to [0, L). */
int app_state_p0(const app_state *st);

#endif
