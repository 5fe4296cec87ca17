/* ids.c: the one parser of token id lists (ids.h). */
#include "ids.h"

#include <stdio.h>
#include <stdlib.h>

int app_ids_parse(const char *opt, const char *v, int vocab, const char *whose, int **out, int *n,
                  char *err, size_t errlen)
{
    int k = 0, cap = 0, *ids = NULL;
    long hi = vocab > 0 ? vocab - 1 : 16777215L;
    for (const char *p = v; *p;) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        if (*p < '0' || *p > '9') {
            snprintf(err, errlen,
                     "--%s '%.60s': '%c' is not a digit (allowed: token ids like 1,2,3)", opt, v,
                     *p);
            free(ids);
            return -1;
        }
        const char *q = p;
        long x = 0;
        for (; *p >= '0' && *p <= '9'; p++) x = x > hi ? x : x * 10 + (*p - '0');
        if (x > hi) {
            if (vocab > 0)
                snprintf(err, errlen,
                         "--%s '%.60s': id %.*s is outside the vocabulary%s%.60s (allowed 0..%ld)",
                         opt, v, (int)(p - q > 20 ? 20 : p - q), q, whose ? " of " : "",
                         whose ? whose : "", hi);
            else
                snprintf(err, errlen, "--%s '%.60s': an id past %ld", opt, v, hi);
            free(ids);
            return -1;
        }
        if (*p && *p != ',' && *p != ' ') {
            snprintf(err, errlen, "--%s '%.60s': '%c' after an id (allowed: token ids like 1,2,3)",
                     opt, v, *p);
            free(ids);
            return -1;
        }
        if (out && k == cap) {
            int *more = realloc(ids, sizeof *ids * (size_t)(cap = cap ? 2 * cap : 16));
            if (!more) {
                snprintf(err, errlen, "--%s: out of memory for %d ids", opt, k + 1);
                free(ids);
                return -1;
            }
            ids = more;
        }
        if (out) ids[k] = (int)x;
        k++;
    }
    if (k == 0) {
        snprintf(err, errlen, "--%s '%.60s': no id (allowed: token ids like 1,2,3)", opt, v);
        return -1;
    }
    if (out) *out = ids;
    *n = k;
    return 0;
}
