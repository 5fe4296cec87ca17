/* lm_safetensors.c: the safetensors header. An 8-byte little-endian length N, N bytes of JSON
 * {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}}
 * and the data, with offsets relative to its start. Everything a forged file could claim is
 * checked here before a single tensor is read. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm_internal.h"

/* Known dtypes and their sizes; only the first three are supported. */
static const struct {
    const char *name;
    int size;
} dtypes[] = {
    {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"F64", 8},     {"I64", 8},
    {"I32", 4}, {"I16", 2}, {"I8", 1},   {"U8", 1},      {"BOOL", 1},
    {"U16", 2}, {"U32", 4}, {"U64", 8},  {"F8_E4M3", 1}, {"F8_E5M2", 1},
};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

void lm_st_free(lm_st_header *h)
{
    free(h->t);
    h->t = NULL;
    h->n = 0;
}

/* A whole number 0..2^53 from a JSON number. */
static int json_u53(const cJSON *v, uint64_t *out)
{
    if (!cJSON_IsNumber(v)) return 0;
    double d = v->valuedouble;
    if (!(d >= 0.0) || d > 9007199254740992.0 || floor(d) != d) return 0;
    *out = (uint64_t)d;
    return 1;
}

static int by_begin(const void *a, const void *b)
{
    const lm_st_tensor *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const lm_st_tensor *)a)->name, ((const lm_st_tensor *)b)->name);
}

int lm_st_dtype_size(lm_dtype dt)
{
    return (int)dt >= 0 && (size_t)dt < N_DTYPES ? dtypes[dt].size : 0;
}

int lm_st_parse(const unsigned char *buf, size_t len, uint64_t file_size, const char *name,
                lm_st_header *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    if (file_size < 8 || len < 8)
        return pe_fail(err, errlen, PE_EINVAL,
                       "%s: truncated: a safetensors file starts with an 8-byte header length",
                       name);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | buf[i];
    if (n > LM_ST_MAX_HEADER)
        return pe_fail(err, errlen, PE_EINVAL,
                       "%s: the safetensors header claims %llu bytes (at most %llu are accepted)",
                       name, (unsigned long long)n, (unsigned long long)LM_ST_MAX_HEADER);
    if (n < 2 || n > file_size - 8)
        return pe_fail(err, errlen, PE_EINVAL,
                       "%s: the safetensors header claims %llu bytes, the file has %llu after the "
                       "length",
                       name, (unsigned long long)n, (unsigned long long)(file_size - 8));
    if (len < 8 + n)
        return pe_fail(err, errlen, PE_EINVAL, "%s: truncated header (%zu of %llu bytes read)",
                       name, len, (unsigned long long)(8 + n));
    h->header_len = n;
    h->data_len = file_size - 8 - n;
    cJSON *root = cJSON_ParseWithLength((const char *)buf + 8, (size_t)n);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return pe_fail(err, errlen, PE_EINVAL, "%s: the safetensors header is not a JSON object",
                       name);
    }
    int count = 0, rc = PE_OK;
    for (const cJSON *it = root->child; it; it = it->next) count++;
    h->t = calloc((size_t)(count ? count : 1), sizeof *h->t);
    if (!h->t) {
        cJSON_Delete(root);
        return pe_fail(err, errlen, PE_ENOMEM, "%s: out of memory for %d tensors", name, count);
    }
    for (const cJSON *it = root->child; it && rc == PE_OK; it = it->next) {
        const char *key = it->string ? it->string : "";
        if (strcmp(key, "__metadata__") == 0) {
            if (!cJSON_IsObject(it))
                rc = pe_fail(err, errlen, PE_EINVAL, "%s: __metadata__ must be an object", name);
            continue;
        }
        for (const char *q = key; *q; q++)
            if ((unsigned char)*q < 0x20 || *q == 0x7f) {
                rc = pe_fail(err, errlen, PE_EINVAL,
                             "%s: a tensor name holds the control character 0x%02x", name,
                             (unsigned char)*q);
                break;
            }
        if (rc) break;
        if (strlen(key) >= sizeof h->t[0].name) {
            rc = pe_fail(err, errlen, PE_EINVAL, "%s: a tensor name of %zu bytes is too long", name,
                         strlen(key));
            break;
        }
        lm_st_tensor *t = &h->t[h->n];
        snprintf(t->name, sizeof t->name, "%s", key);
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(it, "dtype");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(it, "shape");
        const cJSON *of = cJSON_GetObjectItemCaseSensitive(it, "data_offsets");
        if (!cJSON_IsObject(it) || !cJSON_IsString(dt) || !cJSON_IsArray(sh) ||
            !cJSON_IsArray(of)) {
            rc = pe_fail(err, errlen, PE_EINVAL,
                         "%s: tensor %.60s: needs dtype (string), shape and data_offsets (arrays)",
                         name, key);
            break;
        }
        size_t k = 0;
        while (k < N_DTYPES && strcmp(dtypes[k].name, dt->valuestring) != 0) k++;
        for (const char *q = dt->valuestring; k == N_DTYPES && *q; q++)
            if ((unsigned char)*q < 0x20 || *q == 0x7f) {
                rc = pe_fail(err, errlen, PE_EINVAL,
                             "%s: tensor %.60s: an unknown dtype holding control characters "
                             "(pelab reads F32, F16, BF16)",
                             name, key);
                break;
            }
        if (rc) break;
        if (k == N_DTYPES) {
            rc = pe_fail(err, errlen, PE_EINVAL,
                         "%s: tensor %.60s: unknown dtype \"%.20s\" (pelab reads F32, F16, BF16)",
                         name, key, dt->valuestring);
            break;
        }
        t->dtype = (lm_dtype)k;
        int nd = cJSON_GetArraySize(sh);
        if (nd > 4) {
            rc = pe_fail(err, errlen, PE_EINVAL, "%s: tensor %.60s: %d dimensions (at most 4)",
                         name, key, nd);
            break;
        }
        t->ndim = nd;
        uint64_t numel = 1;
        int i = 0;
        for (const cJSON *d = sh->child; d; d = d->next, i++) {
            uint64_t v;
            if (!json_u53(d, &v) || v > ((uint64_t)1 << 40)) {
                rc = pe_fail(err, errlen, PE_EINVAL,
                             "%s: tensor %.60s: shape entries must be whole numbers 0..2^40", name,
                             key);
                break;
            }
            t->shape[i] = (int64_t)v;
            if (v != 0 && numel > ((uint64_t)1 << 62) / v) {
                rc = pe_fail(err, errlen, PE_EINVAL, "%s: tensor %.60s: the shape is too large",
                             name, key);
                break;
            }
            numel *= v;
        }
        if (rc) break;
        uint64_t b, e;
        if (cJSON_GetArraySize(of) != 2 || !json_u53(of->child, &b) ||
            !json_u53(of->child->next, &e) || e < b) {
            rc = pe_fail(err, errlen, PE_EINVAL,
                         "%s: tensor %.60s: data_offsets must be [begin, end] with begin <= end",
                         name, key);
            break;
        }
        if (e > h->data_len) {
            rc = pe_fail(err, errlen, PE_EINVAL,
                         "%s: tensor %.60s: data_offsets [%llu, %llu] run past the end of the "
                         "data (%llu bytes)",
                         name, key, (unsigned long long)b, (unsigned long long)e,
                         (unsigned long long)h->data_len);
            break;
        }
        if (numel * (uint64_t)dtypes[k].size != e - b) {
            rc = pe_fail(err, errlen, PE_EINVAL,
                         "%s: tensor %.60s: %llu bytes at data_offsets, but its shape and dtype "
                         "need %llu",
                         name, key, (unsigned long long)(e - b),
                         (unsigned long long)(numel * (uint64_t)dtypes[k].size));
            break;
        }
        t->begin = b;
        t->end = e;
        h->n++;
    }
    cJSON_Delete(root);
    if (rc == PE_OK && h->n > 1) {
        qsort(h->t, (size_t)h->n, sizeof *h->t, by_name);
        for (int i = 1; i < h->n && rc == PE_OK; i++)
            if (strcmp(h->t[i - 1].name, h->t[i].name) == 0)
                rc = pe_fail(err, errlen, PE_EINVAL, "%s: tensor %.60s is listed twice", name,
                             h->t[i].name);
        qsort(h->t, (size_t)h->n, sizeof *h->t, by_begin);
        for (int i = 1; i < h->n && rc == PE_OK; i++)
            if (h->t[i].begin < h->t[i - 1].end && h->t[i].begin < h->t[i].end)
                rc = pe_fail(err, errlen, PE_EINVAL,
                             "%s: tensors %.60s and %.60s overlap (bytes %llu..%llu and "
                             "%llu..%llu)",
                             name, h->t[i - 1].name, h->t[i].name,
                             (unsigned long long)h->t[i - 1].begin,
                             (unsigned long long)h->t[i - 1].end, (unsigned long long)h->t[i].begin,
                             (unsigned long long)h->t[i].end);
        qsort(h->t, (size_t)h->n, sizeof *h->t, by_name);
    }
    if (rc != PE_OK) lm_st_free(h);
    return rc;
}

float lm_bf16_to_f32(uint16_t x)
{
    uint32_t u = (uint32_t)x << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float lm_f16_to_f32(uint16_t x)
{
    uint32_t sign = (uint32_t)(x & 0x8000) << 16, exp = (x >> 10) & 0x1f, man = x & 0x3ff, u;
    if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            u = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
        }
    } else if (exp == 31) {
        u = sign | 0x7f800000u | man << 13;
    } else {
        u = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
