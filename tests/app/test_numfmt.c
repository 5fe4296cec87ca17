/* test_numfmt: the CSV writer's float format against printf("%.9g"): the same text for floats
 * of every exponent (random bit patterns, subnormals, powers of ten and their neighbours,
 * values that round up to the next power of ten), and reading each back gives the float. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "tap.h"

static int same(float f, int *bad_shown)
{
    char a[64], b[64];
    app_format_float(a, f);
    snprintf(b, sizeof b, "%.9g", (double)f);
    int ok = strcmp(a, b) == 0 && strtof(a, NULL) == f;
    if (!ok && (*bad_shown)++ < 5) printf("# %a: got \"%s\", printf \"%s\"\n", (double)f, a, b);
    return ok;
}

int main(void)
{
    int bad_shown = 0, all = 1;
    long n = 0;
    uint32_t s = 12345;
    for (int i = 0; i < 2000000; i++) { /* random finite bit patterns: every exponent */
        s = s * 1664525u + 1013904223u;
        uint32_t u = s;
        float f;
        memcpy(&f, &u, 4);
        if (!isfinite(f)) continue;
        all &= same(f, &bad_shown);
        n++;
    }
    TAP_OK(all, "%ld random floats: the same text as %%.9g and read back exactly", n);
    all = 1;
    n = 0;
    for (int e = -45; e <= 38; e++) { /* powers of ten and the floats around them */
        float p = (float)pow(10.0, e);
        float f = p;
        for (int k = 0; k < 8; k++) f = nextafterf(f, 0);
        for (int k = 0; k < 16; k++, f = nextafterf(f, INFINITY)) {
            all &= same(f, &bad_shown) && same(-f, &bad_shown);
            n += 2;
        }
    }
    float special[] = {
        0.0f,         -0.0f,           1.0f,     0.5f,           1e-5f, 9.99999996e8f, 999999999.0f,
        123456789.0f, 1.17549435e-38f, 1.4e-45f, 3.40282347e38f, 0.1f,  0.3f,          2.5e-5f};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++, n++)
        all &= same(special[i], &bad_shown);
    TAP_OK(all, "%ld floats at powers of ten, subnormals, extremes: the same text", n);
    float x = 0;
    for (int i = 0; i < 100000; i++, x += 0.001f) all &= same(sinf(x), &bad_shown);
    TAP_OK(all, "sines of a ramp (what a sinusoidal table holds): the same text");
    return tap_done();
}
