/* figure.h: composing figures on a scene: theme, title, axes with round ticks, colorbar, legend,
 * curves. Views call these so every figure has the same anatomy on every medium. */
#ifndef PELAB_FIGURE_H
#define PELAB_FIGURE_H

#include "scene.h"

struct cmap;

typedef struct fig_theme {
    const char *name; /* "light" or "dark" */
    uint32_t bg, fg, muted, grid, accent, mask;
    uint32_t series[8]; /* distinguishable curve colours (colour-blind safe order) */
} fig_theme;

/* dark = 0 light, 1 dark. */
const fig_theme *fig_theme_get(int dark);

typedef struct fig_rect {
    double x, y, w, h;
} fig_rect;

/* Data -> figure mapping of one plot area. */
typedef struct fig_axes {
    fig_rect area;         /* the plot area inside the frame */
    double x0, x1, y0, y1; /* data range shown; y0 at the bottom */
    int xlog, ylog;        /* log10 axes */
    double col_w; /* curves keep their lowest and highest point per column this wide (0: 0.5) */
} fig_axes;

double fig_x(const fig_axes *a, double v);
double fig_y(const fig_axes *a, double v);
/* Inverse mapping (for the mouse and the cursor). */
double fig_x_inv(const fig_axes *a, double fx);
double fig_y_inv(const fig_axes *a, double fy);

/* Round tick values in [lo, hi] ("nice numbers": 1, 2, 5 x 10^k), at most max_ticks of them.
 * Returns the count written to out (out has room for max_ticks). */
int fig_ticks(double lo, double hi, int max_ticks, double *out);
/* Tick label for v given the tick step (no needless decimals, -0 printed as 0). */
void fig_tick_label(double v, double step, char *buf, size_t n);

/* v written for people, to sig significant digits (1..15; 0 = 3): 6.1, 0.0156, 1234, 11,030,
 * 500,000, 10⁶ (an exact power of ten from a million on), 1.5×10⁹, 2.4×10⁻⁵; negative numbers
 * with U+2212, the minus sign. A terminal without UTF-8 gets the ASCII spelling (scene_ascii):
 * 10^6, 2.4x10^-5. */
void fig_num(double v, int sig, char *buf, size_t n);

/* v with a fixed number of decimals (0..15), for numbers that line up or change in place (an
 * angle and a cosine under each circle): U+2212 for a negative value, and with plus a "+" for a
 * positive one; a value that rounds to zero has no sign (printf's "%+.2f" writes -0.00); the
 * ASCII spelling through scene_ascii. */
void fig_fixed(double v, int decimals, int plus, char *buf, size_t n);

/* Draw a title (bold, larger) and an optional subtitle line (parameters) at the top of r;
 * returns what is left of r below them. */
fig_rect fig_title(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                   const char *title, const char *subtitle);

/* Flags for fig_axes_draw. */
enum {
    FIG_GRID = 1u << 0, /* light grid lines at the ticks */
    FIG_NO_XTICKS = 1u << 1,
    FIG_NO_YTICKS = 1u << 2,
    FIG_Y_DOWN = 1u << 3, /* y0 at the top (matrices: row 0 first) */
    FIG_YLOG = 1u << 4,   /* log10 y axis: ticks at powers of ten (y0, y1 > 0); sets ylog */
    FIG_XLOG = 1u << 5,   /* log10 x axis; sets xlog */
};

/* Reserve room in outer for tick labels and axis labels, draw the frame, ticks, tick labels and
 * labels, and return the axes whose area is the plot area. xlabel/ylabel may be NULL.
 * The area is snapped to whole units (whole cells on a cell target). With FIG_Y_DOWN the
 * returned y0/y1 are swapped (y0 stays "at the bottom"), so fig_y maps the y0 argument to the
 * top. On a cell target the y label goes on the row above the plot, not vertically. */
fig_axes fig_axes_draw(scene *s, const scene_target *t, const fig_theme *th, fig_rect outer,
                       double x0, double x1, double y0, double y1, const char *xlabel,
                       const char *ylabel, unsigned flags);

/* Width a colorbar with its labels needs on this target. */
double fig_colorbar_width(const scene_target *t);
/* A vertical colorbar in r: the map from vmin (bottom) to vmax (top), round tick values, and a
 * label (e.g. "value", "bias", "attention (log)"). */
void fig_colorbar(scene *s, const scene_target *t, const fig_theme *th, fig_rect r, double vmin,
                  double vmax, const struct cmap *map, const char *label);
/* The same colorbar lying under a plot (vmin left): for a figure too narrow to give a bar its
 * column beside the plot (a tall figure, a paper column 2.2in wide). It takes
 * fig_colorbar_h_height(t) of height: the bar, its tick labels and its label under them. */
double fig_colorbar_h_height(const scene_target *t);
void fig_colorbar_h(scene *s, const scene_target *t, const fig_theme *th, fig_rect r, double vmin,
                    double vmax, const struct cmap *map, const char *label);

/* The height of a horizontal colorbar with its tick labels (pixel targets), and the colorbar
 * itself across the top of r, vmin on the left, its label left of the bar (the caller leaves
 * room there: under a matrix, its y axis's margin): under a square matrix in a narrow figure,
 * where one beside it would take the width the matrix needs. */
double fig_colorbar_side_height(const scene_target *t);
void fig_colorbar_h_side(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                         double vmin, double vmax, const struct cmap *map, const char *label);

/* A legend box in the top-right (corner 0) or bottom-right (1) of the axes area. */
void fig_legend(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                const char *const *names, const uint32_t *colors, int n, int corner);
/* The same with each entry's line flags (SCENE_DASHED or SCENE_DOTTED for a curve drawn so: a
 * curve that coincides with another reads as such in the legend too); flags may be NULL. */
void fig_legend_styled(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                       const char *const *names, const uint32_t *colors, const unsigned *flags,
                       int n, int corner);

/* 1 when a legend of these names fits a's area in one or two columns with every name whole (at
 * the smallest label size at most): a view with shorter names for a narrow plot (a paper
 * column) picks them with it. */
int fig_legend_fits(const scene_target *t, const fig_axes *a, const char *const *names, int n);

/* A legend outside the plot, for a plot too short to hold one inside (the projector zoom, a
 * paper column): when the names at their size would take more than about a third of the plot's
 * height, fig_legend_take takes a strip off the top of outer (before fig_axes_draw) with as
 * many columns as fit, or a column off its right side, and fig_legend_in_slot draws the legend
 * there (it returns 0 and draws nothing when no strip was taken: draw the usual fig_legend then).
 */
typedef struct fig_legend_slot {
    fig_rect r;
    int cols;
    int right; /* 1: the strip is a column on the right of outer (a paper column's short plot,
                  where a strip above would leave it a sliver): fig_legend_take chose whichever
                  leaves the plot the larger area */
} fig_legend_slot;
fig_legend_slot fig_legend_take(const scene_target *t, fig_rect *outer, const char *const *names,
                                int n);
/* The strip above outer always (when the names fit across it): a legend shared by panels side
 * by side whose curves leave no corner free in a small figure. */
fig_legend_slot fig_legend_take_top(const scene_target *t, fig_rect *outer,
                                    const char *const *names, int n);
int fig_legend_in_slot(scene *s, const scene_target *t, const fig_theme *th,
                       const fig_legend_slot *slot, const char *const *names,
                       const uint32_t *colors, const unsigned *flags, int n);

/* A curve y(x) of n samples in data units through the axes (clipped to its area). */
void fig_curve(scene *s, const fig_axes *a, const double *x, const double *y, size_t n,
               uint32_t color, double width, unsigned flags);
/* A reference line (p0, the training length, L0, a target context) at data x (vmark) or y
 * (hmark): in the theme's ink (fg), never a series colour, dashed, with its label written next
 * to it where it covers the fewest curve segments already in the scene (so draw the curves
 * first), inside the area, stepping its size down rather than leaving it. */
void fig_vmark(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a, double x,
               const char *label);
/* fig_vmark with a short form of the label (e.g. "+128" for "+max_distance") for when the
 * label covers data wherever it goes, even at the smallest label size. */
void fig_vmark_short(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                     double x, const char *label, const char *short_label);
void fig_hmark(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a, double y,
               const char *label);
/* Only the label of fig_hmark: with several lines, draw them all (label NULL) first and label
 * them after, so no later line runs through an earlier label. */
void fig_hmark_label(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                     double y, const char *label);

/* Mark r as the figure's main panel (scene_mark_main): the plot the view is about, which the
 * layout never drops and gives up space last. */
void fig_mark_main(scene *s, fig_rect r, const char *name);

/* The thinnest a data bar may be drawn across its value axis on this target (about 4 pixels at
 * 100%, growing with the zoom as text does; one cell in a terminal): a layout shows fewer bars
 * rather than thinner ones. */
double fig_min_bar(const scene_target *t);

/* Split r: return its right part of width w (clamped to r) and shrink r to what is left of it
 * after a gap. take_bottom does the same with the bottom part of height h. */
fig_rect fig_take_right(fig_rect *r, double w, double gap);
fig_rect fig_take_bottom(fig_rect *r, double h, double gap);
/* Cell (i, j) of a rows x cols grid of small multiples in r with a gap between them. */
fig_rect fig_grid_cell(fig_rect r, int rows, int cols, int i, int j, double gap);

/* The arrangement of n panels in r, one rule for every multi-panel view (so a paper column, a
 * tall figure and a wide window choose alike): each panel's content keeps the aspect w/h =
 * aspect (1: a square matrix) under a head of head units (its label lines) and beside a margin
 * of side units (its tick labels), gap apart, and the grid (rows x cols) is the one that draws
 * the content largest; a grid whose cells are narrower than min_w (the panel's label) is taken
 * only when none is that wide. Returns cols; sets *rows, and *content to the content's width
 * (NULL: not wanted). */
int fig_grid_pick(fig_rect r, int n, double aspect, double head, double side, double gap,
                  double min_w, int *rows, double *content);
/* Two plots of one figure (the main one first) in r, gap apart, by the rule of fig_grid_pick for
 * plots of aspect w/h = aspect with their tick and axis labels: side by side (the second
 * 1 - wide_share of the width, the first the rest less the gap) when that draws them larger,
 * else one above the other (the first about tall_share of the height: a column figure
 * 2.2x3.5in, a phone); a terminal always side by side. Returns 1 when side by side. */
int fig_split_two(const scene_target *t, fig_rect r, double aspect, double wide_share,
                  double tall_share, double gap, fig_rect *first, fig_rect *second);
/* The part of outer to hand fig_axes_draw so that its plot area has the aspect w/h = aspect
 * (1: square cells for a square matrix), centred across outer at its top: the tick labels and axis
 * labels are measured as fig_axes_draw lays them out, not guessed. The area is at most max_w wide
 * (0: as large as outer allows; panels that share one size pass the smallest); *area (may be NULL)
 * gets the plot area fig_axes_draw will give it. */
fig_rect fig_axes_outer_for(const scene_target *t, const fig_theme *th, fig_rect outer, double x0,
                            double x1, double y0, double y1, const char *xlabel, const char *ylabel,
                            unsigned flags, double aspect, double max_w, fig_rect *area);

#endif
