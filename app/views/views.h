/* views.h: one figure per view. A view turns an app_state into a scene for any target (the
 * terminal, the window, an exported file) and hands out the numbers behind the figure. The table
 * in views.c registers them; adding a view is one file and one line there. */
#ifndef PELAB_APP_VIEWS_H
#define PELAB_APP_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "figure.h"
#include "pe.h"
#include "scene.h"
#include "state.h"

struct cmap;

#define APP_PI 3.14159265358979323846
/* Labels are mathematics in Unicode (terminals without UTF-8 get the ASCII spelling through
 * scene_ascii): θₖ */
#define APP_THETA_K "\xce\xb8\xe2\x82\x96"
/* L₀, the training context (one spelling in every figure; L_0 in ASCII) */
#define APP_L0 "L\xe2\x82\x80"
/* ζ and ±, spelt so everywhere a figure writes them */
#define APP_ZETA      "\xce\xb6"
#define APP_PLUSMINUS "\xc2\xb1"

/* The numbers behind a figure, for .csv and .npy. Row-major doubles, written as float32 unless
 * f64 is set. ndim 1..3. */
typedef struct app_data {
    int ndim;
    size_t shape[3];
    double *data; /* owned (malloc); NULL when f32 holds the numbers */
    int f64;
    /* Set by a caller that reads f32 (the .npy and .csv writers) before it calls a view's data:
     * a view whose numbers are a float32 table of its context may then lend the table in f32
     * (valid until the context is freed) instead of copying it into data. Big tables are
     * written without a second copy this way. */
    int lend_ok;
    const float *f32;
    char what[512];  /* one line: what the axes are, e.g. "(len, dim): PE[position][dimension]" */
    size_t reserved; /* bytes held in the process's memory budget (pe_mem_reserve) */
    /* The token texts of the axes that index tokens (the attention views' query and key), as the
     * token strip shows them; the CSV writers put them beside the numbers (NPY has no place for
     * text). Bit i of tok_axes: axis i's index is a token. tok holds tok_lists lists of tok_n
     * texts, APP_DATA_TOK bytes each; list b is used for the values whose axis-0 index is b
     * when tok_lists > 1 (compare: one list per model), else list 0. Owned, freed with d. */
    unsigned tok_axes;
    size_t tok_lists, tok_n;
    char *tok;
} app_data;

#define APP_DATA_TOK 48 /* bytes of one token text in app_data.tok, NUL included */

void app_data_free(app_data *d);
/* Allocate a zeroed ndim array; -1 (with message) when the size is beyond PE_MAX_CELLS or the
 * memory budget. */
int app_data_alloc(app_data *d, int ndim, size_t a, size_t b, size_t c, char *err, size_t errlen);
/* Room for lists x n token texts (zeroed) on the axes of the bitmask axes; -1 with a message
 * when out of memory. Text i of list b is at d->tok + (b * n + i) * APP_DATA_TOK. */
int app_data_tokens(app_data *d, unsigned axes, size_t lists, size_t n, char *err, size_t errlen);
/* A (rows, cols) float32 table lent in f32 (see lend_ok); nothing to free but the lender. */
void app_data_lend(app_data *d, size_t rows, size_t cols, const float *table);

/* One cached result of a view, valid while its key (the inputs it was computed from) is equal. */
typedef struct app_cache_slot {
    unsigned char *key;
    size_t key_len;
    void *val;
    size_t val_len;
} app_cache_slot;

#define APP_CACHE_SLOTS 16

/* What a view keeps between frames: the plot the cursor lives in, the readout, caches. */
typedef struct app_view_ctx {
    fig_axes main; /* the main plot area and its data range */
    int has_main;  /* main is valid */
    int main_rows; /* data extent the cursor moves over (rows, cols) */
    int main_cols;
    char readout[256]; /* value under the cursor, shown in the status line */
    char notice[256];  /* a note the view wants shown (e.g. "rope has no input table") */
    double text_k;     /* the last build's text size over the target's: below 1 when the
                          projector zoom's text stepped down to give the data room (views.c) */
    void *zoom_memo;   /* the state and target text_k was found for (views.c; owned) */
    double zoom_k;
    /* cache of the encoding table for heatmap/similarity/decay */
    pe_matrix table;
    pe_params table_key;
    const pe_encoding *table_enc;
    int table_valid;
    /* anything else a view keeps between frames (the attention views' model runs), released by
     * priv_free(priv) in app_view_ctx_free */
    void *priv;
    void (*priv_free)(void *priv);
    /* set by the exporter: curves at every position (the figure keeps each column's lowest and
     * highest point), where the explorer computes one sample per pixel */
    int full_res;
    /* results keyed by their inputs, so a frame that changes nothing recomputes nothing and a
     * parameter change recomputes only what depends on it */
    app_cache_slot cache[APP_CACHE_SLOTS];
    /* the author's title and subtitle over the view's, and a note after the subtitle (an
     * animation's swept value); app_view_build points the scene at it */
    scene_author author;
} app_view_ctx;

void app_view_ctx_free(app_view_ctx *c);
/* The bytes of the memory budget c's table and cache slots hold, and dropping them (what else the
 * view keeps, such as a loaded model, stays). */
size_t app_view_ctx_held(const app_view_ctx *c);
void app_view_ctx_drop(app_view_ctx *c);
/* The value cached in slot (0..APP_CACHE_SLOTS-1) when its key equals key (klen bytes; build keys
 * from zeroed structs so padding compares equal), else NULL. */
void *app_cache_get(app_view_ctx *c, int slot, const void *key, size_t klen);
/* Replace slot with a zeroed value of vlen bytes under key; returns it to fill, NULL when out of
 * memory or past the memory budget (the slot is then empty; app_cache_error says why). */
void *app_cache_put(app_view_ctx *c, int slot, const void *key, size_t klen, size_t vlen);
/* As app_cache_put, but a value of the same size already in the slot is kept and handed back
 * with its old contents (to overwrite), so a large table recomputed on every parameter change
 * does not pay for fresh pages each time. */
void *app_cache_reuse(app_view_ctx *c, int slot, const void *key, size_t klen, size_t vlen);
/* Why the last app_cache_put or app_cache_reuse of this thread returned NULL: the memory
 * budget's message, or "out of memory ...". */
const char *app_cache_error(void);
/* enc's checks for a view that draws from its frequencies and never builds the (L, d) table (the
 * rope and wavelength views): the parameters at L = 1, then L's own range, so a 10M-position
 * context is not refused for a table nobody draws (issue 25). 0, or -1 with the message. */
int app_validate_untabled(const char *enc, const app_state *st, char *err, size_t errlen);
/* The (L, d) table of enc under p, cached in c; NULL with err when enc has no table or fails. */
const pe_matrix *app_enc_table(app_view_ctx *c, const pe_encoding *enc, const pe_params *p,
                               char *err, size_t errlen);

/* The learned table's generator state at the start of every row (pe_learned_row_states), in
 * slot of c, cached under what it depends on (L, d, seed): a figure then draws only the rows it
 * shows, the table's very values, instead of the whole L x d table (at L 8192, d 4096 that is 67
 * million plain steps of the generator instead of 33 million normal draws). */
const pe_rng *app_view_learned_states(app_view_ctx *c, int slot, const app_state *st, char *err,
                                      size_t errlen);

struct app_option;

/* A key of a view's own (the explorer looks here before its global keys). fn returns 0 with a
 * note in msg, or -1 with an error there. */
typedef struct app_view_key {
    uint32_t key; /* a character or a UI_KEY_* code */
    int (*fn)(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n);
    int arg;
    const char *label; /* "g / G" for help; NULL: listed with the entry before */
    const char *what;
} app_view_key;

/* The arrows, hjkl, HJKL and PgUp/PgDn as one help entry, for a key table of views.h's or the
 * explorer's shape: fn gets 0 up, 1 down, 2 left, 3 right, +4 for a big step (HJKL, PgUp/PgDn). */
#define APP_ARROW_KEYS(fn, label, what)                                                            \
    {UI_KEY_UP, fn, 0, label, what}, {UI_KEY_DOWN, fn, 1, NULL, NULL},                             \
        {UI_KEY_LEFT, fn, 2, NULL, NULL}, {UI_KEY_RIGHT, fn, 3, NULL, NULL},                       \
        {'k', fn, 0, NULL, NULL}, {'j', fn, 1, NULL, NULL}, {'h', fn, 2, NULL, NULL},              \
        {'l', fn, 3, NULL, NULL}, {'K', fn, 4, NULL, NULL}, {'J', fn, 5, NULL, NULL},              \
        {'H', fn, 6, NULL, NULL}, {'L', fn, 7, NULL, NULL}, {UI_KEY_PGUP, fn, 4, NULL, NULL},      \
    {                                                                                              \
        UI_KEY_PGDN, fn, 5, NULL, NULL                                                             \
    }

/* A value a lesson's caption names ({slopes}, {loss rope 64-127}): the view whose figure shows
 * it answers it, from the state alone, so the lesson code computes nothing of a view's. */
typedef struct app_view_value {
    const char *name; /* "slopes" */
    const char *args; /* NULL: written {NAME} alone; else what follows the name, for messages
                         ("MODEL A-B": {loss MODEL A-B}) */
    /* Write the value as a caption shows it into out (args: the words after the name, "" when
     * the value takes none). 0, or -1 with a message in err that names the placeholder. */
    int (*get)(const app_state *st, const char *args, char *out, size_t n, char *err,
               size_t errlen);
} app_view_value;

/* The scripted action a lesson's `do: NAME` starts on arrival at a slide of the view. */
typedef struct app_view_action {
    const char *name; /* "spin", "play" */
    const char *what; /* what it does, as a refusal says it: "turns the RoPE view's pairs" */
    /* Set the state going (the explorer then runs the view's tick while st->playing). */
    void (*start)(app_state *st);
} app_view_action;

typedef struct app_view {
    const char *name;        /* "heatmap" */
    const char *description; /* one line */
    /* Check the state before any work (export validates first). NULL = always fine. */
    int (*validate)(const app_state *st, char *err, size_t errlen);
    /* Build the figure for t into s (already reset). Returns 0 or -1 with err. */
    int (*build)(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t, char *err,
                 size_t errlen);
    /* The numbers behind the figure. NULL when the view has none. */
    int (*data)(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen);
    /* ---- what the explorer needs (all optional) ---- */
    /* The options the figure depends on, by name, space-separated: the status line, the
     * window's sliders, ':' completion and the option keys follow this list. */
    const char *options;
    /* Options of that list the subtitle leaves out (app_subtitle), space-separated: the title
     * names them ("f = 4"), or they move a cursor rather than change what is drawn; NULL: none. */
    const char *not_in_subtitle;
    /* Options of that list that do not act as the state stands, space-separated (the t5 view
     * drawing the trained model's values reads its bucketing from the model, not --buckets):
     * the subtitle leaves them out too; NULL: every row that applies acts. */
    const char *(*idle)(const app_state *st);
    /* The view's own keys, ended by an entry with fn NULL. */
    const app_view_key *keys;
    /* While st->playing: advance by dt seconds (smooth: fractions of a step may show). Returns 1
     * when the figure changed. */
    int (*tick)(app_view_ctx *c, app_state *st, double dt, int smooth);
    /* After every key and ':' command: bring the state back inside what the figure can show. */
    void (*settle)(app_view_ctx *c, app_state *st);
    /* The mouse wheel at figure height y (dir +1 up, -1 down); 1 when handled. */
    int (*wheel)(app_view_ctx *c, app_state *st, double y, int dir, char *msg, size_t n);
    /* The animation the explorer's S key records (a GIF through `pelab export --animate`): an
     * --animate value ("pos=0:48:97"), or an option name (swept over its slider's range); NULL:
     * the first option in `options` that has a slider. */
    const char *record;
    /* Options the recording sets first (':' syntax, "scaling yarn") when its option does not act
     * in the state as it stands (factor with scaling none), so S and e make a figure that moves
     * and their command says so; NULL: none. */
    const char *record_setup;
    /* The query position the view draws while --pos is auto (-1); NULL: the decay view's
     * p0 = L/2 (app_state_p0). The status line and slider show it. */
    int (*pos_auto)(const app_state *st);
    /* The encoding the figure draws as the state stands, when it is not --pe's itself (the
     * wavelength view draws the sinusoid's frequencies for a table encoding such as learned):
     * the subtitle and the status line then list that encoding's parameters, the ones that act;
     * NULL: --pe's. */
    const pe_encoding *(*drawn)(const app_state *st);
    /* ---- what a lesson asks of the view (app/lesson; both optional) ---- */
    /* The caption values the view answers, ended by an entry with name NULL. */
    const app_view_value *values;
    /* The action `do: NAME` starts on the view. */
    const app_view_action *action;
} app_view;

size_t app_view_count(void);
const app_view *app_view_at(size_t i);
/* Index of the view named name, or -1. */
int app_view_find(const char *name);
/* Closest view name (for "did you mean"). */
const char *app_view_suggest(const char *name);
/* 1 when view v declares the option named name in its options list. */
int app_view_uses(const app_view *v, const char *name);
/* 1 when the space-separated list (may be NULL) holds the word name. */
int app_word_in(const char *list, const char *name);
/* The caption value a placeholder names ("slopes", "loss rope 0-63"): view v's own first, then
 * every view's in table order (the values depend on the state only, so a caption may name one
 * another view's figure shows). *args gets the words after the name. NULL when no view has it. */
const app_view_value *app_view_value_find(const app_view *v, const char *placeholder,
                                          const char **args);
/* The first view's action named name (for what it does), or NULL when no view has one. */
const app_view_action *app_view_action_find(const char *name);

/* Build view st->view into s for target t, including the title block. Returns 0 or -1. */
int app_view_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t, char *err,
                   size_t errlen);

/* ---- helpers shared by the views (views/common.c) ----------------------------------------- */

/* The parameters line under a title, from the option rows (app_option.sub): the rows of the
 * view's `options` that apply as the state stands and have a subtitle form, in the table's
 * order, two spaces apart, less those in its not_in_subtitle: "d=128  L=256  base=10,000". No
 * explorer hints (a view adds those itself, and only when !st->figure). */
void app_subtitle(const app_state *st, char *buf, size_t n);
/* The same less the rows named in out (space-separated, may be NULL): what the view's own run
 * shows does not act (a model without a RoPE base leaves --rope-base out). */
void app_subtitle_less(const app_state *st, const char *out, char *buf, size_t n);
/* The reference position of a figure that puts one query position at its centre while --pos is
 * auto (the decay view's p0): pos, or L/2 when pos < 0, clamped to [0, L). */
int app_state_p0(const app_state *st);
/* How a reader of the figure sets an option: "--" in an exported file (whose state records the
 * command line that made it), ":" in the explorer. */
const char *app_opt_prefix(const app_state *st);
/* The colormap for data in [lo, hi]: st->map when set, else diverging when the data has both
 * signs, sequential otherwise. vmin and vmax receive the colour range (symmetric for diverging). */
const struct cmap *app_pick_map(const app_state *st, double lo, double hi, double *vmin,
                                double *vmax);
/* The RoPE pairs' inverse frequencies theta_k under st->p (malloc, *np of them; free it) and
 * the attention factor into *attn; NULL when the parameters give none. */
double *app_rope_inv_freqs(const app_state *st, int *np, double *attn);
/* Min and max of the finite values of n floats (0, 0 when none). */
void app_finite_range(const float *v, size_t n, double *lo, double *hi);

/* Position of sample i of n over 0..len-1: the centre of display row i (every position when
 * n == len). The views that draw an (L, L) or (L, d) matrix compute it at these positions only. */
size_t app_grid_pos(size_t i, size_t n, size_t len);

/* Draw a matrix (rows, cols, stride) as a heatmap with axes and a colorbar into r. Rows run
 * down. x/y ranges are the data coordinates of the first and one-past-last column/row. */
fig_axes app_draw_matrix(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                         const float *data, size_t rows, size_t cols, size_t stride, double x0,
                         double x1, double y0, double y1, const char *xlabel, const char *ylabel,
                         const struct cmap *map, double vmin, double vmax, const char *cbar_label,
                         uint32_t mask_color);
/* A square matrix (n, n) with square cells, as large as r allows with its labels: its colorbar
 * beside it, or under it (fig_colorbar_h) where that draws the matrix larger (a figure 2.2in
 * wide, a phone), the rule every view with one matrix follows. Pixels only: a terminal gets
 * app_draw_matrix over r. cbar_short (may be NULL): the bar's name where the full one is longer
 * than the bar. */
fig_axes app_draw_square_matrix(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                                const float *data, size_t n, size_t stride, double x0, double x1,
                                const char *xlabel, const char *ylabel, const struct cmap *map,
                                double vmin, double vmax, const char *cbar_label,
                                const char *cbar_short, uint32_t mask_color);
/* The width app_draw_matrix needs in a panel h high to draw the matrix square with its tick
 * labels, axis names and colorbar (same ranges and labels as the call that draws it): a view
 * that puts a matrix beside another plot gives it this much, not a fixed share, so a short
 * figure (a paper column) keeps the matrix square instead of a strip. side (may be NULL) gets
 * the square's side. */
double app_matrix_width(const scene_target *t, const fig_theme *th, double h, double x0, double x1,
                        double y0, double y1, const char *xlabel, const char *ylabel, double *side);
/* Draw a cursor cross-hair box at data cell (r, c) of axes a (matrix axes, rows down). */
void app_draw_cell_cursor(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                          double r, double c);
/* The data cursor's line (the hover / cursor position in a line view) from (x0, y0) to (x1, y1):
 * the theme's ink, solid, over a halo of the background (pixel targets), so it is no series
 * colour, stays visible on a heatmap and is told apart from the dashed reference lines. */
void app_cursor_line(scene *s, const scene_target *t, const fig_theme *th, double x0, double y0,
                     double x1, double y1);
/* app_cursor_line across the whole height of axes a at data x. */
void app_cursor_vline(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                      double x);

/* 2 to the power e as a label in superscript digits: 2⁻¹, and 2⁻⁰·⁴¹⁵ for a fractional exponent
 * (three significant digits, a middle dot for the point). Terminals without UTF-8 get 2^-1 and
 * 2^-0.415 (scene_ascii). */
void app_pow2_label(double e, char *buf, size_t n);

/* The title block: draws title and subtitle on the whole canvas, returns the rest. */
fig_rect app_frame(scene *s, const scene_target *t, const fig_theme *th, const char *title,
                   const char *subtitle);

/* Every view, app_view_<name> for each name of view_list.h. */
#include "view_list.h"
#define APP_VIEW_DECLARE(n) extern const app_view app_view_##n;
APP_VIEWS(APP_VIEW_DECLARE)
#undef APP_VIEW_DECLARE

#endif
