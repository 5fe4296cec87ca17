/* scene.h: a display list in figure units that knows nothing of terminals or pixels.
 *
 * Views build a scene for a scene_target (the canvas size and text metrics of the medium) and
 * every backend draws the same scene: cells in the terminal, pixels through cairo for the SDL
 * window and PNG, vectors for SVG and PDF. So the terminal, the window and an exported figure
 * always show the same thing, each laid out for its medium.
 *
 * Figure units: x grows right, y grows down, (0,0) is the top-left corner. A unit is square
 * (one unit across equals one unit down on the medium), so circles stay round:
 *   cairo: 1 unit = 1 device pixel;
 *   terminal: 1 unit = one cell column = half a cell row (a cell is 1 x 2 units; a half-block
 *   "pixel" is 1 x 1 unit; a braille dot is 0.5 x 0.5 unit).
 *
 * Memory: a scene owns everything it holds (strings, points, heatmap data) in an arena that
 * scene_reset() recycles, so rebuilding a scene every frame allocates nothing once warm.
 */
#ifndef PELAB_SCENE_H
#define PELAB_SCENE_H

#include <stddef.h>
#include <stdint.h>

struct cmap;

/* What a medium offers the layout. Built by the backend (tui_target, rc_target). */
typedef struct scene_target {
    double width, height; /* canvas, figure units */
    double text_h;        /* height of one line of normal text (1.0 size), figure units */
    double char_w;        /* advance of an average character at size 1.0 */
    double hairline;      /* thinnest visible line width */
    int cells;            /* 1 for a character grid: text is 1 cell per character, snap to cells */
    int ascii; /* text is shown as its ASCII spelling (scene_ascii): a non-UTF-8 terminal */
    /* Optional exact width of utf8 at the given size (multiple of text_h), returned in units of
     * text_h (scene_text_width multiplies by text_h), so a measure function needs no state
     * about the canvas; NULL = char_w * code points. */
    double (*measure)(void *ctx, const char *utf8, double size);
    double (*measure_bold)(void *ctx, const char *utf8, double size); /* NULL = measure */
    void *measure_ctx;
    /* The font family its text is measured and drawn in: a name that lives as long as the
     * process (raster_font_name); NULL: the backend's own. The target holds it, not the process,
     * so a worker thread building for one target and a window drawing another never share it. */
    const char *font;
} scene_target;

/* The ASCII spelling of the mathematical text the views write in Unicode, for terminals without
 * UTF-8: θₖ -> theta_k, 2⁻¹ -> 2^-1, √d -> sqrt(d)... (a subscript or superscript run gets one
 * _ or ^; other non-ASCII characters are left for the backend's '?'). Writes at most n bytes
 * with the terminator; returns out. */
char *scene_ascii(const char *utf8, char *out, size_t n);

/* Width of s at size on target t (uses t->measure when set; counts UTF-8 code points else, of
 * the ASCII spelling on an ascii target). */
double scene_text_width(const scene_target *t, const char *s, double size);
/* The same for text drawn with SCENE_BOLD. */
double scene_text_width_bold(const scene_target *t, const char *s, double size);

typedef enum {
    SCENE_RECT,     /* filled or stroked rectangle */
    SCENE_LINE,     /* straight segment */
    SCENE_POLYLINE, /* curve through n points, clipped to clip */
    SCENE_TEXT,     /* one line of UTF-8 */
    SCENE_HEATMAP,  /* a (rows, cols) float array through a colormap into a rectangle */
    SCENE_ARROW,    /* segment with a head at (x1, y1) */
    SCENE_CIRCLE,   /* circle outline (or disc with SCENE_FILL) */
} scene_kind;

/* Item flags. */
enum {
    SCENE_FILL = 1u << 0,    /* rect/circle: fill instead of stroke */
    SCENE_RULE = 1u << 1,    /* line: an axis, tick or grid rule (terminal: box drawing) */
    SCENE_DASHED = 1u << 2,  /* line/polyline: dashed (marks, e.g. the training length) */
    SCENE_BOLD = 1u << 3,    /* text: bold */
    SCENE_NEAREST = 1u << 4, /* heatmap: nearest-neighbour sampling (default is box average
                                when downsampling, nearest when upsampling) */
    /* rect: a data bar whose value runs up (SCENE_BAR: its width is its thickness) or across
       (SCENE_HBAR: its height is); the layout keeps the thickness readable (fig_min_bar) and
       layout tests check it */
    SCENE_BAR = 1u << 5,
    SCENE_HBAR = 1u << 6,
    /* line/polyline: dotted, the second pattern for a curve that coincides with two others
       (one solid, one SCENE_DASHED, one dotted: all three show) */
    SCENE_DOTTED = 1u << 7
};

/* Text anchors: horizontal | vertical. */
enum {
    SCENE_LEFT = 0,
    SCENE_CENTER = 1,
    SCENE_RIGHT = 2,
    SCENE_TOP = 0 << 2,
    SCENE_MIDDLE = 1 << 2,
    SCENE_BOTTOM = 2 << 2,
    SCENE_VERTICAL = 1 << 4 /* rotated 90 degrees counter-clockwise (y-axis labels); the
                               terminal writes it horizontally */
};

typedef struct scene_item {
    scene_kind kind;
    uint32_t color; /* 0xRRGGBB */
    double width;   /* stroke width in figure units; 0 = the target's hairline */
    unsigned flags; /* SCENE_FILL, SCENE_RULE, ... */
    union {
        struct {
            double x, y, w, h;
        } rect;
        struct {
            double x0, y0, x1, y1;
        } line; /* LINE and ARROW */
        struct {
            size_t n;
            double *xy;            /* (n, 2) points, owned by the scene; NaN y breaks the curve */
            double cx, cy, cw, ch; /* clip rectangle */
            int xmono; /* x never decreases along the points: a box's segments are found by
                          bisection (figure.c's label placement) instead of a scan */
        } poly;
        struct {
            double x, y;
            double size; /* multiple of target text_h; 1.0 normal */
            unsigned anchor;
            char *str; /* owned by the scene */
        } text;
        struct {
            double x, y, w, h; /* where the array is drawn; row 0 at the top */
            size_t rows, cols;
            float *data;       /* (rows, cols), owned by the scene; NaN/-inf = masked */
            double vmin, vmax; /* colour range; values are clamped to it */
            const struct cmap *map;
            uint32_t mask_color; /* colour of masked (non-finite) cells */
        } heat;
        struct {
            double cx, cy, r;
        } circle;
    } u;
} scene_item;

enum { SCENE_MAX_PANELS = 16 };

typedef struct scene_arena_block scene_arena_block;

/* Ranges an animation holds still. An animation builds every frame once recording the ranges
 * its figures use (axes, colour ranges), then again with each replaced by the union over all
 * frames, so the axes and colours do not jump from frame to frame. The n-th range of a kind in a
 * frame is matched with the n-th of that kind in the others. Matrices' axes (FIG_Y_DOWN) are
 * their data extents, not value ranges, and are left alone. */
enum { SCENE_RANGE_X, SCENE_RANGE_Y, SCENE_RANGE_HEAT, SCENE_RANGE_CBAR, SCENE_RANGE_KINDS };
enum { SCENE_RANGE_MAX = 64 };
typedef struct scene_ranges {
    int apply;                   /* 0: record (grow the unions), 1: replace by the unions */
    int seen[SCENE_RANGE_KINDS]; /* ranges met in the current frame (scene_reset zeroes) */
    int n[SCENE_RANGE_KINDS];    /* unions recorded */
    double lo[SCENE_RANGE_KINDS][SCENE_RANGE_MAX], hi[SCENE_RANGE_KINDS][SCENE_RANGE_MAX];
} scene_ranges;

/* What an author asks of every figure, over what the view would draw (NULL = the view's). */
typedef struct scene_author {
    const char *title;    /* "" removes the title */
    const char *subtitle; /* "" removes the subtitle */
    const char *note;     /* leads the subtitle (an animation's swept value, "base=1000") */
    const char *note_key; /* the subtitle's own word for that value ("base="), left out of it
                             so the value is not written twice in two formats; NULL = none */
} scene_author;

typedef struct scene {
    scene_item *items; /* (n) in drawing order */
    size_t n, cap;
    uint32_t background;       /* 0xRRGGBB, painted first */
    double width, height;      /* the target's canvas */
    scene_arena_block *blocks; /* arena for owned data */
    /* The target's text_h, which backends that scale text (cairo) need: text sizes are
     * multiples of it. 0 = unknown (cairo then uses raster_font_px(width, height, 1)). init and
     * reset set 0; the figure.c helpers copy it from their target; a view that draws text
     * without them sets it from its target. */
    double text_h;
    /* Text the layout had to shorten with an ellipsis (scene_fit_text). A title, legend, axis
     * label, number or help text never should be (n_cut stays 0; the layout tests assert it);
     * data labels such as long tokens may be (n_cut_data). cut_example keeps the first of n_cut,
     * for a test's message. reset clears them. */
    unsigned n_cut, n_cut_data;
    /* Data panels drawn below the size their data asks for (a matrix whose square cells left
     * it narrower than its room, bars dropped for want of width: scene_note_squeeze), so a
     * zoomed view gives its text back first (views.c). reset clears it. */
    unsigned n_squeezed;
    /* what legends and reference-line labels had to cover (curve segments, reference lines,
     * labels: figure.c's box_covers) because no spot in the plot was free: 0 in a clean layout
     * (tests assert it) */
    size_t legend_covers;
    char cut_example[96];
    /* The view's main panel: the plot the figure is about (scene_mark_main), so a layout test
     * can check it is there, at a useful size, whatever else had to give up space. main_w = 0
     * when the view marked none; reset clears it. */
    double main_x, main_y, main_w, main_h;
    char main_name[32];
    /* The panels drawn, by the names lesson captions use for them ("heads", "matrix", "bars",
     * "next-token"; scene_name_panel), so `pelab lesson --check` can fail a caption that names
     * a panel the slide does not show. reset clears them. */
    char panels[SCENE_MAX_PANELS][24];
    int n_panels;
    /* Kept by scene_reset (owned by the caller, NULL when unused): see scene_ranges and
     * scene_author. */
    scene_ranges *ranges;
    const scene_author *author;
    /* The font family of its text, as the target it was built for says (scene_target.font);
     * NULL: the backend's own. Set by whoever builds it for a target; scene_reset keeps it. */
    const char *font;
} scene;

/* init/free; free accepts a zeroed struct. reset empties the list and recycles the arena. */
void scene_init(scene *s, double width, double height, uint32_t background);
void scene_free(scene *s);
void scene_reset(scene *s, double width, double height, uint32_t background);
/* The range [*lo, *hi] of the given kind passes through s->ranges: recorded, or replaced by the
 * union over the frames (see scene_ranges). Nothing happens without s->ranges. */
void scene_lock_range(scene *s, int kind, double *lo, double *hi);
/* Arena allocation, 16-byte aligned, owned by the scene; NULL on failure. */
void *scene_alloc(scene *s, size_t bytes);
char *scene_strdup(scene *s, const char *str);

/* str fitted into maxw at size on target t: str itself when it fits, else cut at a code point
 * boundary with a trailing ellipsis into buf (n bytes), which is recorded in s (data = 1 for a
 * data label, 0 for anything else). "" when not even the ellipsis fits. */
const char *scene_fit_text(scene *s, const scene_target *t, const char *str, double size,
                           double maxw, int data, char *buf, size_t n);

/* Record that str (a title, label or help text, not data) could not be shown whole, for a
 * layout that leaves text out some other way than scene_fit_text (lines that did not fit). */
void scene_note_cut(scene *s, const char *str);
/* Record that a data panel got less room than its data asks for (see n_squeezed). */
void scene_note_squeeze(scene *s);

/* Record that the panel called name is drawn (idempotent; names beyond SCENE_MAX_PANELS are
 * dropped), and whether it is. */
void scene_name_panel(scene *s, const char *name);
int scene_has_panel(const scene *s, const char *name);

/* Mark (x, y, w, h) as the scene's main panel, named for a test's message ("plot", "matrix").
 * A later mark replaces an earlier one. */
void scene_mark_main(scene *s, double x, double y, double w, double h, const char *name);

/* Builders; each returns the new item (NULL when out of memory, and the scene stays valid). */
scene_item *scene_rect(scene *s, double x, double y, double w, double h, uint32_t color,
                       unsigned flags);
scene_item *scene_line(scene *s, double x0, double y0, double x1, double y1, uint32_t color,
                       double width, unsigned flags);
scene_item *scene_arrow(scene *s, double x0, double y0, double x1, double y1, uint32_t color,
                        double width);
scene_item *scene_circle(scene *s, double cx, double cy, double r, uint32_t color, double width,
                         unsigned flags);
scene_item *scene_text(scene *s, double x, double y, const char *str, double size, unsigned anchor,
                       uint32_t color, unsigned flags);
/* printf-style text. */
scene_item *scene_textf(scene *s, double x, double y, double size, unsigned anchor, uint32_t color,
                        unsigned flags, const char *fmt, ...) __attribute__((format(printf, 8, 9)));
/* xy (n, 2) is copied. clip is the plot area. */
scene_item *scene_polyline(scene *s, const double *xy, size_t n, double cx, double cy, double cw,
                           double ch, uint32_t color, double width, unsigned flags);
/* data (rows, cols) with row stride `stride` floats is copied. */
/* 1 when the x of n points (x, y pairs) never decreases (a polyline filled in place after
 * scene_polyline sets u.poly.xmono from it). */
int scene_xy_monotone(const double *xy, size_t n);
scene_item *scene_heatmap(scene *s, double x, double y, double w, double h, const float *data,
                          size_t rows, size_t cols, size_t stride, double vmin, double vmax,
                          const struct cmap *map, uint32_t mask_color);

/* A 64-bit hash of everything a backend draws from (exact bits of every coordinate, string,
 * curve point and heatmap cell), so a frame equal to the last one can be recognised and not
 * drawn again. About 0.1 ms per MiB of heatmap data. */
uint64_t scene_hash(const scene *s);

/* A plain-text dump of the scene (one item per line, numbers to 2 decimals, heatmaps as their
 * shape, range and a checksum) for golden tests. Returns malloc'd text; NULL on failure. */
char *scene_dump(const scene *s);

#endif
