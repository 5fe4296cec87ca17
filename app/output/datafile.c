/* datafile.c: the numbers behind a figure as files: CSV (wide and long) and NPY (datafile.h). */
#include "datafile.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pelab_build.h"

/* 10^k for |k| <= 22, exact in double. */
static double pow10_exact(int k)
{
    static const double p[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    return p[k];
}

/* |v| x 10^k in at most two roundings. */
static double scale10(double v, int k)
{
    while (k > 22) {
        v *= 1e22;
        k -= 22;
    }
    while (k < -22) {
        v /= 1e22;
        k += 22;
    }
    return k >= 0 ? v * pow10_exact(k) : v / pow10_exact(-k);
}

int app_format_float(char *buf, float f)
{
    double v = f;
    if (!isfinite(v) || v == 0) return snprintf(buf, 32, "%.9g", v);
    char *o = buf;
    if (v < 0) *o++ = '-';
    double a = fabs(v);
    /* the 9 significant digits as an integer: a x 10^(8 - e) rounded, e the decimal exponent */
    int e = (int)floor(log10(a));
    double s = scale10(a, 8 - e);
    if (s >= 999999999.5) s = scale10(a, 8 - ++e);
    if (s < 99999999.5) s = scale10(a, 8 - --e);
    double fl = floor(s), frac = s - fl;
    /* the scaled value carries an error near 1e-16 relative, about 1e-7 of the last digit: when
     * it falls that close to a half, printf's exact rounding decides */
    if (fabs(frac - 0.5) < 1e-6 || s >= 999999999.5 || s < 99999999.5)
        return snprintf(buf, 32, "%.9g", v);
    unsigned long d = (unsigned long)fl + (frac > 0.5);
    if (d >= 1000000000UL) { /* 9.999999996 rounds to 10.0000000 */
        d /= 10;
        e++;
    }
    char dig[10];
    for (int i = 8; i >= 0; i--, d /= 10) dig[i] = (char)('0' + d % 10);
    int nd = 9;
    while (nd > 1 && dig[nd - 1] == '0') nd--; /* %g drops trailing zeros */
    if (e < -4 || e >= 9) {
        *o++ = dig[0];
        if (nd > 1) {
            *o++ = '.';
            for (int i = 1; i < nd; i++) *o++ = dig[i];
        }
        *o++ = 'e';
        *o++ = e < 0 ? '-' : '+';
        int ae = e < 0 ? -e : e;
        if (ae >= 100) *o++ = (char)('0' + ae / 100);
        *o++ = (char)('0' + ae / 10 % 10);
        *o++ = (char)('0' + ae % 10);
    } else if (e >= 0) {
        for (int i = 0; i <= e; i++) *o++ = dig[i];
        if (nd > e + 1) {
            *o++ = '.';
            for (int i = e + 1; i < nd; i++) *o++ = dig[i];
        }
    } else {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -e - 1; i++) *o++ = '0';
        for (int i = 0; i < nd; i++) *o++ = dig[i];
    }
    *o = '\0';
    return (int)(o - buf);
}

/* Value i of d as a double (d's own or its lent float32 table). */
static double data_at(const app_data *d, size_t i)
{
    return d->f32 ? (double)d->f32[i] : d->data[i];
}

/* One token text as an RFC 4180 field: always quoted, a quote doubled. The texts come escaped
 * (no newline or control character: the token strip's spelling), so a field is one line. */
static void put_field(FILE *fp, const char *text)
{
    fputc('"', fp);
    for (const char *c = text; *c; c++) {
        if (*c == '"') fputc('"', fp);
        fputc(*c, fp);
    }
    fputc('"', fp);
}

/* Text of token i of list b (app_data.tok); "" past the end. */
static const char *tok_text(const app_data *d, size_t b, size_t i)
{
    if (!d->tok || b >= d->tok_lists || i >= d->tok_n) return "";
    return d->tok + (b * d->tok_n + i) * APP_DATA_TOK;
}

static void index_names(const app_data *d, char names[3][40]);

/* The wide layout's token texts: one comment line per list, "# token texts of axes query, key
 * (list 0 = axis 0 index 0): "<s>"," Once",...", the fields quoted as in the long layout. */
static void write_tok_comments(FILE *fp, const app_data *d)
{
    if (!d->tok_axes || !d->tok) return;
    char names[3][40];
    index_names(d, names);
    for (size_t b = 0; b < d->tok_lists; b++) {
        fputs("# token texts of", fp);
        for (int i = 0, k = 0; i < d->ndim; i++)
            if (d->tok_axes >> i & 1u) fprintf(fp, "%s %s", k++ ? "," : "", names[i]);
        if (d->tok_lists > 1) fprintf(fp, " where %s = %zu", names[0], b);
        fputs(", index 0 first:", fp);
        for (size_t i = 0; i < d->tok_n; i++) {
            fputc(i ? ',' : ' ', fp);
            put_field(fp, tok_text(d, b, i));
        }
        fputc('\n', fp);
    }
}

/* CSV that numpy.loadtxt(path, delimiter=',') reads: '#' comment lines say what the numbers are;
 * a 3-d array is written as blocks of rows, one block per leading index. Float32 values are
 * written as printf("%.9g") would (the digits that read back to the same float), formatted by
 * app_format_float into a buffer written in large pieces. */
static int write_csv_wide(FILE *fp, const app_data *d, const char *command)
{
    fprintf(fp, "# pelab %s\n# %s\n", PELAB_VERSION, command);
    fprintf(fp, "# %s\n# shape", d->what);
    for (int i = 0; i < d->ndim; i++) fprintf(fp, "%s%zu", i ? " x " : " ", d->shape[i]);
    fprintf(fp, ", %s\n", d->f64 ? "float64" : "float32");
    write_tok_comments(fp, d);
    size_t blocks = d->ndim == 3 ? d->shape[0] : 1;
    size_t rows = d->ndim == 1 ? d->shape[0] : d->shape[d->ndim - 2];
    size_t cols = d->ndim == 1 ? 1 : d->shape[d->ndim - 1];
    enum { CAP = 1 << 16 };
    char *buf = malloc(CAP);
    if (!buf) return -1;
    size_t len = 0, i = 0;
    for (size_t b = 0; b < blocks; b++) {
        if (blocks > 1) len += (size_t)snprintf(buf + len, 32, "# [%zu]\n", b);
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++, i++) {
                if (len > CAP - 64) {
                    fwrite(buf, 1, len, fp);
                    len = 0;
                }
                double v = data_at(d, i);
                v = v == 0 ? 0 : v; /* -0 is written as 0 */
                if (d->f64)
                    len += (size_t)(isnan(v)   ? snprintf(buf + len, 32, "nan")
                                    : isinf(v) ? snprintf(buf + len, 32, v < 0 ? "-inf" : "inf")
                                               : snprintf(buf + len, 32, "%.17g", v));
                else if (isnan(v))
                    len += (size_t)snprintf(buf + len, 32, "nan");
                else if (isinf(v))
                    len += (size_t)snprintf(buf + len, 32, v < 0 ? "-inf" : "inf");
                else
                    len += (size_t)app_format_float(buf + len, (float)v);
                buf[len++] = c + 1 < cols ? ',' : '\n';
            }
    }
    fwrite(buf, 1, len, fp);
    free(buf);
    return ferror(fp) ? -1 : 0;
}

/* The names of the index columns of the long layout: the words in the parentheses that open
 * d->what ("(len, dim): ..." -> len, dim) when they are names, i0 i1 i2 otherwise; a name that
 * repeats gets _2 ("(len, len)" -> len, len_2). */
static void index_names(const app_data *d, char names[3][40])
{
    char buf[sizeof d->what];
    snprintf(buf, sizeof buf, "%s", d->what);
    char *tok[3] = {0};
    if (buf[0] == '(') {
        char *end = strchr(buf, ')');
        if (end) *end = '\0';
        char *save = NULL;
        int k = 0;
        for (char *t = strtok_r(buf + 1, ", ", &save); t && k < 3; t = strtok_r(NULL, ", ", &save))
            tok[k++] = t;
    }
    for (int i = 0; i < d->ndim; i++) {
        int ok = tok[i] && (isalpha((unsigned char)tok[i][0]) || tok[i][0] == '_') &&
                 strlen(tok[i]) < 24;
        for (const char *c = ok ? tok[i] : ""; *c; c++)
            if (!isalnum((unsigned char)*c) && *c != '_') ok = 0;
        if (ok)
            snprintf(names[i], sizeof names[i], "%s", tok[i]);
        else
            snprintf(names[i], sizeof names[i], "i%d", i);
        int seen = 1;
        for (int j = 0; j < i; j++) seen += strncmp(names[i], names[j], strlen(names[i])) == 0;
        if (seen > 1) {
            char base[25];
            snprintf(base, sizeof base, "%.24s", names[i]);
            snprintf(names[i], sizeof names[i], "%s_%d", base, seen);
        }
    }
}

/* CSV in the long layout: a header row of index names and "value", then one row per value,
 * for pandas.read_csv(f, comment='#') and ggplot; the same '#' lines as the wide layout. */
static int write_csv_long(FILE *fp, const app_data *d, const char *command)
{
    fprintf(fp, "# pelab %s\n# %s\n", PELAB_VERSION, command);
    fprintf(fp, "# %s\n# shape", d->what);
    for (int i = 0; i < d->ndim; i++) fprintf(fp, "%s%zu", i ? " x " : " ", d->shape[i]);
    fprintf(fp, ", %s, one row per value\n", d->f64 ? "float64" : "float32");
    char names[3][40];
    index_names(d, names);
    for (int i = 0; i < d->ndim; i++) fprintf(fp, "%s,", names[i]);
    /* the token axes' texts as columns of their own, named after the axis ("key_text") */
    unsigned tk = d->tok ? d->tok_axes : 0;
    for (int i = 0; i < d->ndim; i++)
        if (tk >> i & 1u) fprintf(fp, "%s_text,", names[i]);
    fputs("value\n", fp);
    size_t n = 1;
    for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
    for (size_t k = 0; k < n; k++) {
        size_t idx[3], rest = k;
        for (int i = d->ndim - 1; i >= 0; i--) {
            idx[i] = rest % d->shape[i];
            rest /= d->shape[i];
        }
        for (int i = 0; i < d->ndim; i++) fprintf(fp, "%zu,", idx[i]);
        for (int i = 0; i < d->ndim; i++)
            if (tk >> i & 1u) {
                put_field(fp, tok_text(d, d->tok_lists > 1 ? idx[0] : 0, idx[i]));
                fputc(',', fp);
            }
        /* the same spelling of each number as the wide layout */
        double v = data_at(d, k);
        char num[40];
        if (isnan(v))
            fputs("nan", fp);
        else if (isinf(v))
            fputs(v < 0 ? "-inf" : "inf", fp);
        else if (d->f64)
            fprintf(fp, "%.17g", v);
        else
            fwrite(num, 1, (size_t)app_format_float(num, (float)v), fp);
        fputc('\n', fp);
    }
    return ferror(fp) ? -1 : 0;
}

/* NPY format 1.0: magic, version, little-endian header length, a dict padded with spaces to a
 * multiple of 64 bytes and ended by a newline, then the raw little-endian data. A lent float32
 * table on a little-endian host is written as it lies in memory, in one call; anything else is
 * converted a block at a time. */
int app_write_npy(FILE *fp, const app_data *d, const char *command, int long_form)
{
    (void)command; /* NPY has no place for it */
    (void)long_form;
    char shape[96];
    if (d->ndim == 1)
        snprintf(shape, sizeof shape, "(%zu,)", d->shape[0]);
    else if (d->ndim == 2)
        snprintf(shape, sizeof shape, "(%zu, %zu)", d->shape[0], d->shape[1]);
    else
        snprintf(shape, sizeof shape, "(%zu, %zu, %zu)", d->shape[0], d->shape[1], d->shape[2]);
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                       d->f64 ? "<f8" : "<f4", shape);
    size_t total = 10 + (size_t)len + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)len + pad + 1;
    unsigned char head[256 + 64 + 10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + 10, dict, (size_t)len);
    memset(head + 10 + len, ' ', pad);
    head[10 + (size_t)len + pad] = '\n';
    fwrite(head, 1, 10 + hlen, fp);
    size_t n = 1;
    for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (d->f32) {
        fwrite(d->f32, sizeof(float), n, fp);
        return ferror(fp) ? -1 : 0;
    }
#endif
    /* bytes put explicitly in little-endian order, so a big-endian host is right too */
    enum { BLOCK = 8192 };
    unsigned char *buf = malloc(BLOCK * 8);
    if (!buf) return -1;
    for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
        size_t i1 = i0 + BLOCK < n ? i0 + BLOCK : n;
        unsigned char *b = buf;
        for (size_t i = i0; i < i1; i++) {
            if (d->f64) {
                uint64_t u;
                memcpy(&u, &d->data[i], 8);
                for (int k = 0; k < 8; k++) *b++ = (unsigned char)(u >> (8 * k));
            } else {
                float f = (float)data_at(d, i);
                uint32_t u;
                memcpy(&u, &f, 4);
                for (int k = 0; k < 4; k++) *b++ = (unsigned char)(u >> (8 * k));
            }
        }
        fwrite(buf, 1, (size_t)(b - buf), fp);
    }
    free(buf);
    return ferror(fp) ? -1 : 0;
}

int app_write_csv(FILE *fp, const app_data *d, const char *command, int long_form)
{
    return long_form ? write_csv_long(fp, d, command) : write_csv_wide(fp, d, command);
}
