/* state.h: everything that makes a figure, in one struct. The CLI, the terminal explorer and the
 * window all edit an app_state through the same option rows (options.h), and views read it. The
 * fields here are the figure's own (the encoding, positions, frame, author); what a module adds
 * is its option group's storage (option_groups.h), so this file names no view or module. */
#ifndef PELAB_APP_STATE_H
#define PELAB_APP_STATE_H

#include <stddef.h>

#include "option_groups.h"
#include "pe.h"

struct cmap;

/* How heads drawn as small multiples share their colours (--scale): each head on its own range,
 * all on one, or exp(bias) on 0..1 with each head's window marked (a bias that has windows; the
 * others read it as per head). */
enum { APP_SCALE_PER_HEAD = 0, APP_SCALE_SHARED = 1, APP_SCALE_WINDOW = 2 };

typedef struct app_state {
    pe_params p;            /* every encoding parameter */
    const pe_encoding *enc; /* the encoding drawn by heatmap/similarity */
    int view;               /* index into the view table (views.h) */
    int head;               /* the head shown enlarged; -1 = all as small multiples */
    int pos;                /* query position m (-1 = auto: the view's choice) */
    int pos_k;              /* key position n */
    double pos_frac;        /* animation: fraction of a position added to m (smooth turns) */
    int scale_shared;       /* small-multiple heads: APP_SCALE_PER_HEAD, _SHARED or _WINDOW */
    const struct cmap *map; /* NULL = automatic (diverging for signed data, viridis else) */
    int dark;               /* theme */
    double zoom;            /* window: font and line scale (+/-), 1 = normal */
    int cursor_on;          /* a data cursor is shown */
    int figure;        /* building a saved figure (export, animation, `s`): no explorer hints */
    int cur_r, cur_c;  /* cursor in data coordinates of the view's main plot */
    int row0, rows;    /* heatmap position window (mouse-wheel zoom); rows 0 = all */
    int playing;       /* an animation running (the view's tick) */
    double target_len; /* the target context of a context extension (0 = factor * L0) */
    int orig_ctx_set;  /* --orig-ctx was given: a model's RoPE is then scaled over it rather
                          than over the model's own trained context */
    /* --config: the file, and which of its model's layer kinds the RoPE figures show */
    char config_path[256]; /* "" = no config */
    char layer_type[32];   /* asked for with --layer-type; "" = the model's full attention */
    char model_layer[32];  /* the kind shown ("all" when the model has one) */
    int model_kinds;       /* how many layer kinds the config has (0 = no config) */
    /* each module's option group's storage (option_groups.h), st->NAME */
#define APP_GROUP_ROWS(rows)
#define APP_GROUP_STORAGE(name, type, defaults, rows) type name;
    APP_OPTION_GROUPS(APP_GROUP_ROWS, APP_GROUP_STORAGE)
#undef APP_GROUP_STORAGE
#undef APP_GROUP_ROWS
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

/* Defaults: the sinusoidal heatmap at d 128, L 256, base 1e4, light theme; each group's own. */
void app_state_default(app_state *st);

#endif
