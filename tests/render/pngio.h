/* pngio.h: reading PNGs back in render tests (libpng), and temporary directories. Header-only,
 * test code. */
#ifndef PELAB_TEST_PNGIO_H
#define PELAB_TEST_PNGIO_H

#include <dirent.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct png_image_rd {
    int w, h;
    int color_type; /* PNG_COLOR_TYPE_RGB or _RGBA */
    uint8_t *rgba;  /* (h, w, 4) */
    int n_text;
    char keys[16][80];
    char values[16][512];
    int has_phys;
    uint32_t ppm_x, ppm_y;
    int phys_unit;
} png_image_rd;

static inline void png_image_rd_free(png_image_rd *im)
{
    free(im->rgba);
    memset(im, 0, sizeof *im);
}

/* Read path into im as RGBA8 with its text chunks and pHYs. Returns 0 or -1. */
static inline int png_read_file(const char *path, png_image_rd *im)
{
    memset(im, 0, sizeof *im);
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        fclose(fp);
        return -1;
    }
    uint8_t *volatile buf = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(buf);
        free(rows);
        fclose(fp);
        return -1;
    }
    png_init_io(png, fp);
    png_read_info(png, info);
    im->w = (int)png_get_image_width(png, info);
    im->h = (int)png_get_image_height(png, info);
    im->color_type = png_get_color_type(png, info);
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_gray_to_rgb(png);
    if (!(im->color_type & PNG_COLOR_MASK_ALPHA)) png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
    png_read_update_info(png, info);
    buf = malloc((size_t)im->w * (size_t)im->h * 4);
    rows = malloc((size_t)im->h * sizeof *rows);
    if (!buf || !rows) png_error(png, "out of memory");
    for (int y = 0; y < im->h; y++) rows[y] = buf + (size_t)y * (size_t)im->w * 4;
    png_read_image(png, rows);
    png_read_end(png, info);
    png_textp text = NULL;
    int nt = 0;
    png_get_text(png, info, &text, &nt);
    for (int i = 0; i < nt && im->n_text < 16; i++) {
        snprintf(im->keys[im->n_text], sizeof im->keys[0], "%s", text[i].key);
        snprintf(im->values[im->n_text], sizeof im->values[0], "%s", text[i].text);
        im->n_text++;
    }
    png_uint_32 rx, ry;
    int unit;
    if (png_get_pHYs(png, info, &rx, &ry, &unit)) {
        im->has_phys = 1;
        im->ppm_x = rx;
        im->ppm_y = ry;
        im->phys_unit = unit;
    }
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    fclose(fp);
    im->rgba = buf;
    return 0;
}

static inline const char *png_text_get(const png_image_rd *im, const char *key)
{
    for (int i = 0; i < im->n_text; i++)
        if (strcmp(im->keys[i], key) == 0) return im->values[i];
    return NULL;
}

/* A fresh directory under $PELAB_BUILD (or $TMPDIR, or /tmp); path written to out. Returns 0 or
 * -1. */
static inline int test_tmpdir(char *out, size_t n, const char *tag)
{
    const char *base = getenv("PELAB_BUILD");
    if (!base || !*base) base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    snprintf(out, n, "%s/%s.XXXXXX", base, tag);
    return mkdtemp(out) ? 0 : -1;
}

/* Number of entries in dir other than . and .. (-1 when unreadable). */
static inline int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Remove the files in dir and dir itself (one level, as the tests make it). */
static inline void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p) continue;
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            chmod(p, 0700);
            rm_tree(p);
        } else {
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

static inline int file_equal(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int eq = fa && fb;
    while (eq) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) eq = 0;
        if (ca == EOF || cb == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return eq;
}

static inline char *file_read(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *p = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (p && fread(p, 1, (size_t)n, fp) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(fp);
    if (p) {
        p[n] = 0;
        if (len) *len = (size_t)n;
    }
    return p;
}

#endif
