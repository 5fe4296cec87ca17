/* colormap.c: lookup of the tables in colormap_data.c. */
#include "colormap.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <strings.h>

/* Defined in colormap_data.c (generated). */
extern const cmap cmap_table[];
extern const size_t cmap_table_n;

size_t cmap_count(void)
{
    return cmap_table_n;
}

const cmap *cmap_at(size_t i)
{
    return i < cmap_table_n ? &cmap_table[i] : NULL;
}

const cmap *cmap_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < cmap_table_n; i++)
        if (strcasecmp(cmap_table[i].name, name) == 0) return &cmap_table[i];
    return NULL;
}

const cmap *cmap_default_diverging(void)
{
    return cmap_find("rdbu");
}

const cmap *cmap_default_sequential(void)
{
    return cmap_find("viridis");
}

uint32_t cmap_color(const cmap *m, double t)
{
    if (isnan(t)) t = 0.5;
    if (t < 0.0) t = 0.0;
    if (t > 1.0) t = 1.0;
    /* Nearest of the 256 entries: entry i stands for t = i / 255. */
    int i = (int)lround(t * 255.0);
    const uint8_t *c = m->rgb[i];
    return ((uint32_t)c[0] << 16) | ((uint32_t)c[1] << 8) | (uint32_t)c[2];
}
