/* test_scene: the arena (alignment, reuse without growth), item builders and the text dump. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "scene.h"
#include "tap.h"

/* The block list is private to scene.c; its first member is the next pointer. */
static size_t count_blocks(const scene *s)
{
    size_t n = 0;
    for (const scene_arena_block *b = s->blocks; b; b = *(scene_arena_block *const *)b) n++;
    return n;
}

static void test_arena(void)
{
    scene s;
    scene_init(&s, 100, 50, 0xffffff);
    int aligned = 1;
    for (size_t i = 1; i < 300; i += 7) {
        void *p = scene_alloc(&s, i);
        if (!p || ((uintptr_t)p & 15u)) aligned = 0;
        if (p) memset(p, 0xab, i);
    }
    TAP_OK(aligned, "scene_alloc returns 16-byte aligned memory");
    /* A large request gets a block of its own. */
    char *big = scene_alloc(&s, 1u << 20);
    TAP_OK(big != NULL, "a 1 MiB allocation succeeds");
    if (big) memset(big, 1, 1u << 20);

    scene_free(&s);

    /* Build a frame that needs several blocks, reset, build it again: no new blocks. */
    scene_init(&s, 100, 50, 0xffffff);
    float data[12];
    for (int i = 0; i < 12; i++) data[i] = (float)i;
    for (int frame = 0; frame < 3; frame++) {
        scene_reset(&s, 100, 50, 0xffffff);
        for (int k = 0; k < 2000; k++) {
            scene_textf(&s, k, 1, 1.0, SCENE_LEFT, 0, 0, "label %d", k);
            scene_heatmap(&s, 0, 0, 10, 10, data, 3, 4, 4, 0, 11, NULL, 0);
        }
        static size_t blocks_after_first;
        if (frame == 0) {
            blocks_after_first = count_blocks(&s);
            TAP_OK(blocks_after_first > 1, "the first frame needed %zu blocks", blocks_after_first);
        } else
            TAP_OK(count_blocks(&s) == blocks_after_first, "frame %d reuses the arena (%zu blocks)",
                   frame, count_blocks(&s));
    }
    TAP_OK(s.n == 4000, "4000 items after a rebuild (got %zu)", s.n);
    TAP_OK(strcmp(s.items[3998].u.text.str, "label 1999") == 0, "textf formats into the arena");
    scene_free(&s);
    TAP_OK(s.items == NULL && s.blocks == NULL && s.n == 0, "free zeroes the scene");
    scene_free(&s); /* free accepts a zeroed struct */
    scene zero = {0};
    scene_free(&zero);
    TAP_OK(1, "free accepts a zeroed struct twice");
}

static void test_builders(void)
{
    scene s;
    scene_init(&s, 80, 48, 0x101010);
    /* Stride: a 2 x 3 window of a 2 x 5 array. */
    float src[10] = {0, 1, 2, 90, 91, 3, 4, 5, 92, 93};
    scene_item *h =
        scene_heatmap(&s, 1, 2, 30, 20, src, 2, 3, 5, -1, 5, cmap_find("viridis"), 0x808080);
    TAP_OK(h && h->u.heat.data[3] == 3.0f && h->u.heat.data[5] == 5.0f,
           "heatmap copies with the row stride");
    float back = src[0];
    src[0] = 42;
    TAP_OK(h->u.heat.data[0] == back, "heatmap data is a copy");

    double xy[8] = {0, 0, 1, 1, 2, NAN, 3, 3};
    scene_item *p = scene_polyline(&s, xy, 4, 0, 0, 10, 10, 0x0000ff, 1.5, SCENE_DASHED);
    xy[0] = 99;
    TAP_OK(p && p->u.poly.n == 4 && p->u.poly.xy[0] == 0 && isnan(p->u.poly.xy[5]),
           "polyline copies its points (NaN kept as a break)");

    char longs[600];
    memset(longs, 'x', sizeof longs - 1);
    longs[sizeof longs - 1] = 0;
    scene_item *t = scene_textf(&s, 0, 0, 1.0, 0, 0, 0, "%s!", longs);
    TAP_OK(t && strlen(t->u.text.str) == 600 && t->u.text.str[599] == '!',
           "textf longer than its stack buffer");

    scene_target tg = {.width = 80, .height = 48, .text_h = 2, .char_w = 1, .cells = 1};
    TAP_CLOSE(scene_text_width(&tg, "abc", 1.0), 3.0, 0, 1e-12, "text width: 3 ASCII chars");
    TAP_CLOSE(scene_text_width(&tg, "\xce\xb8=\xe2\x86\x92", 2.0), 6.0, 0, 1e-12,
              "text width counts UTF-8 code points (theta = arrow, size 2)");
    TAP_CLOSE(scene_text_width(&tg, "", 1.0), 0.0, 0, 1e-12, "empty text has no width");
    scene_free(&s);
}

static const char *golden_dump =
    "scene 80.00 x 48.00 bg #ffffff items 7\n"
    "rect 1.00 2.00 3.00 4.00 #ff0000 fill\n"
    "line 0.00 0.00 10.50 0.00 #000000 w 0.00 rule\n"
    "arrow 1.00 1.00 5.00 5.00 #00ff00 w 2.00\n"
    "circle 3.00 3.00 r 1.25 #0000ff w 1.00\n"
    "text 40.00 1.00 size 1.50 top-center #222222 \"Title\" bold\n"
    "polyline n 2 #333333 w 1.00 clip 0.00 0.00 80.00 48.00 first 0.00 0.00 last 1.00 1.00 "
    "sum ";

static void test_dump(void)
{
    scene s;
    scene_init(&s, 80, 48, 0xffffff);
    scene_rect(&s, 1, 2, 3, 4, 0xff0000, SCENE_FILL);
    scene_line(&s, -0.001, 0, 10.5, 0, 0x000000, 0, SCENE_RULE);
    scene_arrow(&s, 1, 1, 5, 5, 0x00ff00, 2);
    scene_circle(&s, 3, 3, 1.25, 0x0000ff, 1, 0);
    scene_text(&s, 40, 1, "Title", 1.5, SCENE_CENTER | SCENE_TOP, 0x222222, SCENE_BOLD);
    double xy[4] = {0, 0, 1, 1};
    scene_polyline(&s, xy, 2, 0, 0, 80, 48, 0x333333, 1, 0);
    float d[4] = {0, 1, NAN, 3};
    scene_heatmap(&s, 0, 0, 4, 4, d, 2, 2, 2, 0, 3, cmap_find("viridis"), 0x777777);
    char *out = scene_dump(&s);
    TAP_OK(out && strncmp(out, golden_dump, strlen(golden_dump)) == 0, "dump matches the golden");
    if (out) tap_diag("dump:\n%s", out);
    TAP_OK(out && strstr(out, "heatmap 0.00 0.00 4.00 4.00 shape 2 x 2 range 0.00 3.00 map viridis "
                              "mask #777777 sum ") != NULL,
           "heatmap dumped as shape, range, map and checksum");
    /* Same content, same dump; different data, different checksum. */
    char *again = scene_dump(&s);
    TAP_OK(out && again && strcmp(out, again) == 0, "dump is stable");
    s.items[6].u.heat.data[1] = 1.5f;
    char *changed = scene_dump(&s);
    TAP_OK(out && changed && strcmp(out, changed) != 0, "checksum changes with the data");
    free(out);
    free(again);
    free(changed);
    scene_free(&s);
}

/* The scene with every kind of item that test_hash varies. */
static void hash_scene(scene *s)
{
    scene_reset(s, 80, 48, 0xffffff);
    scene_rect(s, 1, 2, 3, 4, 0xff0000, SCENE_FILL);
    scene_line(s, 0, 0, 10.5, 0, 0x000000, 0, SCENE_RULE);
    scene_arrow(s, 1, 1, 5, 5, 0x00ff00, 2);
    scene_circle(s, 3, 3, 1.25, 0x0000ff, 1, 0);
    scene_text(s, 40, 1, "Title", 1.5, SCENE_CENTER | SCENE_TOP, 0x222222, SCENE_BOLD);
    double xy[6] = {0, 0, 1, 1, 2, NAN};
    scene_polyline(s, xy, 3, 0, 0, 80, 48, 0x333333, 1, 0);
    float d[40];
    for (int i = 0; i < 40; i++) d[i] = (float)i * 0.25f;
    scene_heatmap(s, 0, 0, 4, 4, d, 5, 8, 8, 0, 3, cmap_find("viridis"), 0x777777);
}

/* scene_hash: the same scene built twice hashes the same; a change to any one thing a backend
 * draws from (a coordinate, a colour, a flag, a letter, a curve point, a heatmap cell, the
 * colormap, the background) changes it. This is what lets the window keep its last frame. */
static void test_hash(void)
{
    scene s, t;
    scene_init(&s, 1, 1, 0);
    scene_init(&t, 1, 1, 0);
    hash_scene(&s);
    hash_scene(&t);
    uint64_t h0 = scene_hash(&s);
    TAP_OK(h0 == scene_hash(&t), "the same scene built twice has the same hash");
    TAP_OK(h0 == scene_hash(&s), "hashing does not change the scene");
    int n = 0, differ = 0;
#define VARY(what, stmt)                                                                           \
    do {                                                                                           \
        hash_scene(&t);                                                                            \
        stmt;                                                                                      \
        uint64_t h = scene_hash(&t);                                                               \
        n++;                                                                                       \
        if (h != h0)                                                                               \
            differ++;                                                                              \
        else                                                                                       \
            tap_diag("the hash missed a change of %s", what);                                      \
    } while (0)
    VARY("the background", t.background = 0xfffffe);
    VARY("the canvas width", t.width = 81);
    VARY("the text height", t.text_h = 12);
    VARY("a rectangle's x", t.items[0].u.rect.x = 1.0000001);
    VARY("a rectangle's colour", t.items[0].color = 0xff0001);
    VARY("a rectangle's flags", t.items[0].flags = 0);
    VARY("a line's end", t.items[1].u.line.y1 = 0.5);
    VARY("an arrow's width", t.items[2].width = 2.5);
    VARY("a circle's radius", t.items[3].u.circle.r = 1.5);
    VARY("a letter", t.items[4].u.text.str[0] = 't');
    VARY("a text's anchor", t.items[4].u.text.anchor = SCENE_LEFT);
    VARY("a text's size", t.items[4].u.text.size = 1.4);
    VARY("a curve point", t.items[5].u.poly.xy[3] = 1.5);
    VARY("a curve's length", t.items[5].u.poly.n = 2);
    VARY("a curve's clip", t.items[5].u.poly.ch = 40);
    VARY("the first heatmap cell", t.items[6].u.heat.data[0] = 0.001f);
    VARY("the last heatmap cell", t.items[6].u.heat.data[39] = 0);
    VARY("a heatmap's colormap", t.items[6].u.heat.map = cmap_find("magma"));
    VARY("a heatmap's range", t.items[6].u.heat.vmax = 4);
    VARY("a heatmap's mask colour", t.items[6].u.heat.mask_color = 0x777778);
    VARY("the order of two items", {
        scene_item a = t.items[0];
        t.items[0] = t.items[1];
        t.items[1] = a;
    });
    VARY("one item fewer", t.n--);
#undef VARY
    TAP_OK(differ == n, "each of %d single changes changes the hash (%d did)", n, differ);
    scene_free(&s);
    scene_free(&t);
}

/* Mathematical labels in Unicode and their ASCII spelling for terminals without UTF-8; a layout
 * on such a terminal measures the spelling it will show. */
static void test_ascii(void)
{
    static const char *const cases[][2] = {
        {"\xce\xb8\xe2\x82\x96 (radians)", "theta_k (radians)"},
        {"m = 2\xe2\x81\xbb\xc2\xb9", "m = 2^-1"},
        {"q\xc2\xb7k/\xe2\x88\x9a"
         "d",
         "q.k/sqrt(d)"},
        {"seq_len \xe2\x89\xa4 L0", "seq_len <= L0"},
        {"2\xcf\x80/\xce\xb8\xe2\x82\x96", "2pi/theta_k"},
        {"\xce\xb6\xe2\x82\x96^(r/512)", "zeta_k^(r/512)"},
        {"plain ascii", "plain ascii"},
    };
    char buf[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        TAP_OK(strcmp(scene_ascii(cases[i][0], buf, sizeof buf), cases[i][1]) == 0,
               "scene_ascii: '%s' -> '%s' (%s)", cases[i][0], cases[i][1], buf);
    TAP_OK(strcmp(scene_ascii("\xce\xb8\xce\xb8\xce\xb8", buf, 8), "thetath") == 0,
           "scene_ascii stops at the buffer's end (%s)", buf);
    scene_target u = {.width = 80, .height = 48, .text_h = 2, .char_w = 1, .cells = 1};
    scene_target a = u;
    a.ascii = 1;
    TAP_OK(scene_text_width(&u, "\xce\xb8\xe2\x82\x96", 1) == 2 &&
               scene_text_width(&a, "\xce\xb8\xe2\x82\x96", 1) == 7,
           "theta_k is 2 cells on a UTF-8 terminal, 7 on an ASCII one");
}

int main(void)
{
    test_ascii();
    test_arena();
    test_builders();
    test_dump();
    test_hash();
    return tap_done();
}
