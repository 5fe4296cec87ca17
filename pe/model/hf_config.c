/* hf_config.c: Hugging Face config.json -> pe_hf_config (see hf_config.h for the field mapping). */
#include "hf_config.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Where messages go and what they are prefixed with. */
typedef struct cfg_ctx {
    const char *src; /* file name as the user gave it */
    char *err;
    size_t errlen;
} cfg_ctx;

/* The JSON object fields are read from, and the path naming it in messages ("", "text_config."). */
typedef struct cfg_obj {
    const cJSON *json;
    const char *path;
} cfg_obj;

/* "su" is Phi-3's first name for longrope; transformers' Phi3Config renames it. */
static const char *const rope_types[] = {"default", "linear", "dynamic",  "ntk",
                                         "yarn",    "llama3", "longrope", "su"};
#define N_ROPE_TYPES       (sizeof rope_types / sizeof rope_types[0])
#define ROPE_TYPES_ALLOWED "default, linear, dynamic, ntk, yarn, llama3, longrope"

/* Rope types transformers knows that pelab has no model of; named as such instead of being
 * "corrected" to the nearest supported spelling. */
static const char *const rope_types_unsupported[] = {"mrope"};

__attribute__((format(printf, 2, 3))) static int cfg_fail(const cfg_ctx *c, const char *fmt, ...)
{
    if (c->err && c->errlen > 0) {
        int n = snprintf(c->err, c->errlen, "%s: ", c->src);
        if (n >= 0 && (size_t)n < c->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return PE_EINVAL;
}

/* Copy at most size-1 bytes of s, replacing control characters so that a message stays on one
 * line, without cutting a UTF-8 sequence in half. Marks a shortened string with "...". */
static void copy_clean(char *dst, size_t size, const char *s, int mark_cut)
{
    size_t n = strlen(s), room = size - 1;
    int cut = n > room;
    if (cut) {
        n = mark_cut && room > 3 ? room - 3 : room;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        dst[i] = ch < 0x20 || ch == 0x7F ? '?' : (char)ch;
    }
    if (cut && mark_cut && room > 3) {
        memcpy(dst + n, "...", 3);
        n += 3;
    }
    dst[n] = '\0';
}

/* A user-supplied string shortened for a message. */
typedef struct shown {
    char s[48];
} shown;

static shown show(const char *s)
{
    shown r;
    copy_clean(r.s, sizeof r.s, s, 1);
    return r;
}

static const char *json_kind(const cJSON *item)
{
    if (cJSON_IsString(item)) return "a string";
    if (cJSON_IsNumber(item)) return "a number";
    if (cJSON_IsObject(item)) return "an object";
    if (cJSON_IsArray(item)) return "an array";
    if (cJSON_IsBool(item)) return "a boolean";
    if (cJSON_IsNull(item)) return "null";
    return "an invalid value";
}

/* The member key of o, or NULL when absent or null (transformers writes null for "not set"). */
static const cJSON *member(const cfg_obj *o, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o->json, key);
    return item && !cJSON_IsNull(item) ? item : NULL;
}

/* *present = 0 when the field is absent or null; otherwise *v holds a finite number. */
static int get_number(const cfg_ctx *c, const cfg_obj *o, const char *key, double *v, int *present)
{
    const cJSON *item = member(o, key);
    *present = 0;
    if (!item) return PE_OK;
    if (!cJSON_IsNumber(item))
        return cfg_fail(c, "%s%s: expected a number, got %s", o->path, key, json_kind(item));
    if (!isfinite(item->valuedouble))
        return cfg_fail(c, "%s%s: the number is out of range", o->path, key);
    *v = item->valuedouble;
    *present = 1;
    return PE_OK;
}

/* As get_number, for a whole number that fits an int. */
static int get_int(const cfg_ctx *c, const cfg_obj *o, const char *key, int *v, int *present)
{
    double d = 0;
    int rc = get_number(c, o, key, &d, present);
    if (rc != PE_OK || !*present) return rc;
    if (d != floor(d) || d < INT_MIN || d > INT_MAX)
        return cfg_fail(c, "%s%s: expected an integer, got %.10g", o->path, key, d);
    *v = (int)d;
    return PE_OK;
}

/* *present = 0 when the field is absent or null; otherwise *v is 0 or 1. */
static int get_bool(const cfg_ctx *c, const cfg_obj *o, const char *key, int *v, int *present)
{
    const cJSON *item = member(o, key);
    *present = 0;
    if (!item) return PE_OK;
    if (!cJSON_IsBool(item))
        return cfg_fail(c, "%s%s: expected true or false, got %s", o->path, key, json_kind(item));
    *v = cJSON_IsTrue(item) ? 1 : 0;
    *present = 1;
    return PE_OK;
}

/* *s = NULL when the field is absent or null; a non-string is an error. */
static int get_string(const cfg_ctx *c, const cfg_obj *o, const char *key, const char **s)
{
    const cJSON *item = member(o, key);
    *s = NULL;
    if (!item) return PE_OK;
    if (!cJSON_IsString(item) || !item->valuestring)
        return cfg_fail(c, "%s%s: expected a string, got %s", o->path, key, json_kind(item));
    *s = item->valuestring;
    return PE_OK;
}

/* The first present field among a name and its alias; *used names the one found. */
static int get_number_alias(const cfg_ctx *c, const cfg_obj *o, const char *key, const char *alias,
                            double *v, int *present, const char **used)
{
    int rc = get_number(c, o, key, v, present);
    *used = key;
    if (rc != PE_OK || *present) return rc;
    *used = alias;
    return get_number(c, o, alias, v, present);
}

/* "line 3, column 14" of the byte at pos in text, counting columns in bytes from 1. */
static void text_position(const char *text, const char *pos, int *line, int *col)
{
    *line = 1;
    const char *bol = text;
    for (const char *p = text; p < pos; p++) {
        if (*p == '\n') {
            (*line)++;
            bol = p + 1;
        }
    }
    *col = (int)(pos - bol) + 1;
}

static int malformed(const cfg_ctx *c, const char *text, const char *pos)
{
    size_t len = strlen(text);
    if (!pos || pos < text || pos > text + len) pos = text + len;
    size_t end = len; /* one past the last non-space byte */
    while (end > 0 && strchr(" \t\r\n", text[end - 1])) end--;
    int line, col;
    /* cJSON places the error of a text that stops early at its terminating NUL; report it just
     * after the last visible byte. */
    if ((size_t)(pos - text) >= end) {
        text_position(text, text + end, &line, &col);
        return cfg_fail(c,
                        "malformed JSON at line %d, column %d: the text ends before the JSON "
                        "is complete (truncated file?)",
                        line, col);
    }
    text_position(text, pos, &line, &col);
    char near[24];
    size_t n = 0;
    while (n < sizeof near - 1 && pos[n] && pos[n] != '\n' && pos[n] != '\r') n++;
    memcpy(near, pos, n);
    near[n] = '\0';
    return cfg_fail(c, "malformed JSON at line %d, column %d, near '%s'", line, col, show(near).s);
}

/* pe's own checks as a last line of defence; their messages name pe options, so the config
 * field comes first. */
static int pe_check(const cfg_ctx *c, const char *field, int rc, const char *msg)
{
    if (rc == PE_OK) return PE_OK;
    return cfg_fail(c, "%s: %s", field, msg);
}

/* One LongRoPE factor list: numbers > 0, at most PE_LONGROPE_MAX of them; *n gets the count. */
static int get_factor_list(const cfg_ctx *c, const cfg_obj *o, const char *key, double *out, int *n)
{
    const cJSON *item = member(o, key);
    if (!item)
        return cfg_fail(c, "%s%s: missing; rope type 'longrope' needs short_factor and long_factor",
                        o->path, key);
    if (!cJSON_IsArray(item))
        return cfg_fail(c, "%s%s: expected an array of numbers, got %s", o->path, key,
                        json_kind(item));
    int count = cJSON_GetArraySize(item);
    if (count < 1 || count > PE_LONGROPE_MAX)
        return cfg_fail(c, "%s%s: %d numbers; pelab takes 1..%d (one per rotated pair)", o->path,
                        key, count, PE_LONGROPE_MAX);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, item)
    {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || !(e->valuedouble > 0))
            return cfg_fail(c, "%s%s[%d]: expected a number > 0, got %s", o->path, key, i,
                            cJSON_IsNumber(e) ? "a number out of range" : json_kind(e));
        out[i++] = e->valuedouble;
    }
    *n = count;
    return PE_OK;
}

/* LongRoPE as transformers' _compute_longrope_parameters reads it: with
 * original_max_position_embeddings (in rope_scaling, or at the top level as Phi-3 has it), L0 is
 * that and f = max_position_embeddings / L0; otherwise L0 = max_position_embeddings and f =
 * factor. The model is evaluated at seq_len = max_position_embeddings (the long factors); the
 * short ones are --seq-len L0 or less. */
static int read_longrope(const cfg_ctx *c, const cfg_obj *model, const cfg_obj *o, pe_hf_config *m,
                         const char *type)
{
    pe_rope_scaling *s = &m->params.scaling;
    int rc, ns = 0, nl = 0, have = 0, l0 = 0, have_l0 = 0;
    if ((rc = get_factor_list(c, o, "short_factor", s->short_factor, &ns)) != PE_OK) return rc;
    if ((rc = get_factor_list(c, o, "long_factor", s->long_factor, &nl)) != PE_OK) return rc;
    if (ns != nl)
        return cfg_fail(c, "%sshort_factor has %d numbers, long_factor %d: they must match",
                        o->path, ns, nl);
    s->n_factors = ns;
    if (m->max_position == 0)
        return cfg_fail(c,
                        "%smax_position_embeddings: missing; rope type '%s' takes the context "
                        "from it",
                        model->path, type);
    const cfg_obj *l0_obj = o;
    if ((rc = get_int(c, o, "original_max_position_embeddings", &l0, &have_l0)) != PE_OK) return rc;
    if (!have_l0) {
        l0_obj = model;
        if ((rc = get_int(c, model, "original_max_position_embeddings", &l0, &have_l0)) != PE_OK)
            return rc;
    }
    double factor = 0;
    if (have_l0) {
        if (l0 < 1 || l0 > PE_MAX_LEN)
            return cfg_fail(c, "%soriginal_max_position_embeddings %d: must be 1..%d", l0_obj->path,
                            l0, PE_MAX_LEN);
        factor = (double)m->max_position / l0;
    } else {
        l0 = m->max_position;
        if ((rc = get_number(c, o, "factor", &factor, &have)) != PE_OK) return rc;
        if (!have)
            return cfg_fail(c,
                            "%sfactor: missing; longrope without original_max_position_embeddings "
                            "takes its factor from rope_scaling",
                            o->path);
    }
    if (!(factor >= 1))
        return cfg_fail(c, "%sfactor %g: must be >= 1 (max_position_embeddings %d over L0 %d)",
                        o->path, factor, m->max_position, l0);
    s->factor = factor;
    s->original_ctx = l0;
    s->seq_len = m->max_position;
    double v = 0;
    if ((rc = get_number(c, o, "attention_factor", &v, &have)) != PE_OK) return rc;
    if (have) {
        if (!(v > 0)) return cfg_fail(c, "%sattention_factor %g: must be > 0", o->path, v);
        s->attention_factor = v;
    }
    return PE_OK;
}

static int read_scaling(const cfg_ctx *c, const cfg_obj *model, const cfg_obj *o, pe_hf_config *m)
{
    pe_rope_scaling *s = &m->params.scaling;
    const char *type = NULL;
    const char *type_key = "rope_type";
    int rc = get_string(c, o, "rope_type", &type);
    if (rc == PE_OK && !type) {
        type_key = "type";
        rc = get_string(c, o, "type", &type);
    }
    if (rc != PE_OK) return rc;
    if (!type)
        return cfg_fail(c, "%.*s: no rope_type (or type) given; allowed: " ROPE_TYPES_ALLOWED,
                        (int)strlen(o->path) - 1, o->path); /* without the trailing dot */

    size_t t = 0;
    while (t < N_ROPE_TYPES && strcmp(type, rope_types[t]) != 0) t++;
    if (t == N_ROPE_TYPES) {
        for (size_t u = 0; u < sizeof rope_types_unsupported / sizeof *rope_types_unsupported; u++)
            if (strcmp(type, rope_types_unsupported[u]) == 0)
                return cfg_fail(c,
                                "%s%s '%s': not supported by pelab; allowed: " ROPE_TYPES_ALLOWED,
                                o->path, type_key, type);
        const char *near = pe_closest(type, rope_types, N_ROPE_TYPES);
        return cfg_fail(
            c, "%s%s '%s': unknown rope type; allowed: " ROPE_TYPES_ALLOWED "; did you mean '%s'?",
            o->path, type_key, show(type).s, near ? near : "default");
    }
    copy_clean(m->scaling_type, sizeof m->scaling_type, type, 0);
    static const pe_scaling_type kinds[] = {
        PE_SCALING_NONE, PE_SCALING_LINEAR, PE_SCALING_DYNAMIC,  PE_SCALING_NTK,
        PE_SCALING_YARN, PE_SCALING_LLAMA3, PE_SCALING_LONGROPE, PE_SCALING_LONGROPE};
    s->type = kinds[t];
    if (s->type == PE_SCALING_NONE) return PE_OK;
    if (s->type == PE_SCALING_LONGROPE) return read_longrope(c, model, o, m, type);

    int have = 0;
    double factor = 0;
    if ((rc = get_number(c, o, "factor", &factor, &have)) != PE_OK) return rc;
    if (!have)
        return cfg_fail(c, "%sfactor: missing; rope type '%s' needs a scaling factor", o->path,
                        type);
    if (!(factor >= 1))
        return cfg_fail(c, "%sfactor %g: must be >= 1 (a factor stretches the context)", o->path,
                        factor);
    s->factor = factor;

    /* L0: transformers takes it from max_position_embeddings for linear and dynamic, from
     * rope_scaling for llama3 (required) and YaRN (falling back to max_position_embeddings). */
    int l0 = 0, have_l0 = 0;
    if (s->type == PE_SCALING_YARN || s->type == PE_SCALING_LLAMA3) {
        rc = get_int(c, o, "original_max_position_embeddings", &l0, &have_l0);
        if (rc != PE_OK) return rc;
        if (have_l0 && (l0 < 1 || l0 > PE_MAX_LEN))
            return cfg_fail(c, "%soriginal_max_position_embeddings %d: must be 1..%d", o->path, l0,
                            PE_MAX_LEN);
        if (!have_l0 && s->type == PE_SCALING_LLAMA3)
            return cfg_fail(c,
                            "%soriginal_max_position_embeddings: missing; rope type 'llama3' "
                            "needs the pre-training context length",
                            o->path);
    }
    if (!have_l0) {
        if (m->max_position == 0)
            return cfg_fail(c,
                            "%smax_position_embeddings: missing; rope type '%s' takes the "
                            "original context length from it",
                            model->path, type);
        l0 = m->max_position;
    }
    s->original_ctx = l0;

    if (s->type == PE_SCALING_DYNAMIC) {
        /* The context the factor was chosen for: where dynamic NTK has its full effect. */
        double seq = factor * l0;
        s->seq_len = seq > PE_MAX_LEN ? PE_MAX_LEN : (int)lround(seq);
    }

    if (s->type == PE_SCALING_YARN) {
        double v = 0;
        if ((rc = get_number(c, o, "beta_fast", &v, &have)) != PE_OK) return rc;
        if (have) s->beta_fast = v;
        if ((rc = get_number(c, o, "beta_slow", &v, &have)) != PE_OK) return rc;
        if (have) s->beta_slow = v;
        if (!(s->beta_slow > 0) || !(s->beta_fast > s->beta_slow))
            return cfg_fail(c, "%sbeta_fast %g, beta_slow %g: need beta_fast > beta_slow > 0",
                            o->path, s->beta_fast, s->beta_slow);
        /* DeepSeek-style mscale pair, as transformers' _compute_yarn_parameters reads it: the
         * attention factor is their get_mscale ratio when both are given (pe computes it). */
        double ms = 0, ms_all = 0;
        int have_ms = 0, have_ms_all = 0;
        if ((rc = get_number(c, o, "mscale", &ms, &have_ms)) != PE_OK) return rc;
        if ((rc = get_number(c, o, "mscale_all_dim", &ms_all, &have_ms_all)) != PE_OK) return rc;
        if ((have_ms && !(ms >= 0)) || (have_ms_all && !(ms_all >= 0)))
            return cfg_fail(c, "%smscale %g, mscale_all_dim %g: must be >= 0", o->path, ms, ms_all);
        if (have_ms) s->mscale = ms;
        if (have_ms_all) s->mscale_all_dim = ms_all;
        /* gpt-oss ships "truncate": false: the ramp ends stay fractional */
        int tr = 1;
        if ((rc = get_bool(c, o, "truncate", &tr, &have)) != PE_OK) return rc;
        if (have) s->yarn_truncate = tr;
    }

    if (s->type == PE_SCALING_LLAMA3) {
        double v = 0;
        if ((rc = get_number(c, o, "low_freq_factor", &v, &have)) != PE_OK) return rc;
        if (have) s->low_freq_factor = v;
        if ((rc = get_number(c, o, "high_freq_factor", &v, &have)) != PE_OK) return rc;
        if (have) s->high_freq_factor = v;
        if (!(s->low_freq_factor > 0) || !(s->high_freq_factor > s->low_freq_factor))
            return cfg_fail(c, "%slow_freq_factor %g, high_freq_factor %g: need high > low > 0",
                            o->path, s->low_freq_factor, s->high_freq_factor);
    }

    /* llama3 is not here: transformers' _compute_llama3_parameters always returns 1.0 and
     * ignores an attention_factor key. */
    if (s->type == PE_SCALING_YARN) {
        double v = 0;
        if ((rc = get_number(c, o, "attention_factor", &v, &have)) != PE_OK) return rc;
        if (have) {
            if (!(v > 0)) return cfg_fail(c, "%sattention_factor %g: must be > 0", o->path, v);
            s->attention_factor = v;
        }
    }
    return PE_OK;
}

/* The file name without directories and a trailing ".json", for a config that names nothing. */
static void name_from_source(char *dst, size_t size, const char *src)
{
    const char *slash = strrchr(src, '/');
    const char *base = slash ? slash + 1 : src;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0) n -= 5;
    char tmp[256];
    if (n >= sizeof tmp) n = sizeof tmp - 1;
    memcpy(tmp, base, n);
    tmp[n] = '\0';
    copy_clean(dst, size, tmp, 1);
}

static int fill(const cfg_ctx *c, const cJSON *root, pe_hf_config *m)
{
    int rc, have = 0;
    const cfg_obj top = {root, ""};
    cfg_obj o = top;

    /* Multimodal wrappers (LLaVA, Gemma 3, Mistral 3) keep the language model in text_config. */
    if (!member(&top, "num_attention_heads") && !member(&top, "hidden_size") &&
        !member(&top, "head_dim")) {
        const cJSON *inner = member(&top, "text_config");
        if (inner && !cJSON_IsObject(inner))
            return cfg_fail(c, "text_config: expected an object, got %s", json_kind(inner));
        if (inner) {
            o.json = inner;
            o.path = "text_config.";
            m->from_text_config = 1;
        }
    }

    const char *s = NULL;
    if ((rc = get_string(c, &top, "_name_or_path", &s)) != PE_OK) return rc;
    const char *type_top = NULL, *type_inner = NULL;
    if ((rc = get_string(c, &top, "model_type", &type_top)) != PE_OK) return rc;
    if (o.json != top.json && (rc = get_string(c, &o, "model_type", &type_inner)) != PE_OK)
        return rc;
    const char *type = type_inner ? type_inner : type_top;
    if (type) copy_clean(m->model_type, sizeof m->model_type, type, 0);
    if (s && *s)
        copy_clean(m->name, sizeof m->name, s, 1);
    else if (type_top && *type_top)
        copy_clean(m->name, sizeof m->name, type_top, 1);
    else
        name_from_source(m->name, sizeof m->name, c->src);

    /* Heads and the head dimension. */
    if ((rc = get_int(c, &o, "num_attention_heads", &m->num_heads, &have)) != PE_OK) return rc;
    if (!have)
        return cfg_fail(c,
                        "%snum_attention_heads: missing; a config must give the number of "
                        "attention heads",
                        o.path);
    if (m->num_heads < 1 || m->num_heads > PE_MAX_HEADS)
        return cfg_fail(c, "%snum_attention_heads %d: must be 1..%d", o.path, m->num_heads,
                        PE_MAX_HEADS);
    m->num_kv_heads = m->num_heads;
    if ((rc = get_int(c, &o, "num_key_value_heads", &m->num_kv_heads, &have)) != PE_OK) return rc;
    if (have && (m->num_kv_heads < 1 || m->num_heads % m->num_kv_heads != 0))
        return cfg_fail(c, "%snum_key_value_heads %d: must divide num_attention_heads %d", o.path,
                        m->num_kv_heads, m->num_heads);

    int have_hidden = 0, have_head_dim = 0;
    if ((rc = get_int(c, &o, "hidden_size", &m->hidden_size, &have_hidden)) != PE_OK) return rc;
    if (have_hidden && m->hidden_size < 1)
        return cfg_fail(c, "%shidden_size %d: must be >= 1", o.path, m->hidden_size);
    if ((rc = get_int(c, &o, "head_dim", &m->head_dim, &have_head_dim)) != PE_OK) return rc;
    const char *dim_field = "head_dim ";
    if (!have_head_dim) {
        if (!have_hidden)
            return cfg_fail(c,
                            "%shidden_size: missing, and no head_dim either; one of them is "
                            "required",
                            o.path);
        if (m->hidden_size % m->num_heads != 0)
            return cfg_fail(c,
                            "%shidden_size %d: not divisible by num_attention_heads %d (give "
                            "head_dim)",
                            o.path, m->hidden_size, m->num_heads);
        m->head_dim = m->hidden_size / m->num_heads;
        dim_field = "hidden_size / num_attention_heads = ";
    }
    if (m->head_dim < 2 || m->head_dim > PE_MAX_DIM || m->head_dim % 2 != 0)
        return cfg_fail(c,
                        "%s%s%d: the head dimension must be even and 2..%d (RoPE rotates "
                        "pairs)",
                        o.path, dim_field, m->head_dim, PE_MAX_DIM);

    if ((rc = get_int(c, &o, "max_position_embeddings", &m->max_position, &have)) != PE_OK)
        return rc;
    if (have && (m->max_position < 1 || m->max_position > PE_MAX_LEN))
        return cfg_fail(c, "%smax_position_embeddings %d: pelab handles 1..%d positions", o.path,
                        m->max_position, PE_MAX_LEN);
    if (!have) m->max_position = 0;

    /* rope_parameters is transformers' newer home for rope_theta and the scaling fields. */
    const cJSON *scaling = member(&o, "rope_scaling");
    const char *scaling_key = "rope_scaling";
    if (!scaling) {
        scaling = member(&o, "rope_parameters");
        scaling_key = "rope_parameters";
    }
    if (scaling && !cJSON_IsObject(scaling))
        return cfg_fail(c, "%s%s: expected an object or null, got %s", o.path, scaling_key,
                        json_kind(scaling));
    char scaling_path[64];
    snprintf(scaling_path, sizeof scaling_path, "%s%s.", o.path, scaling_key);
    const cfg_obj so = {scaling, scaling_path};

    const char *used = NULL;
    m->rope_theta = 10000.0;
    double v = 0;
    if ((rc = get_number_alias(c, &o, "rope_theta", "rotary_emb_base", &v, &have, &used)) != PE_OK)
        return rc;
    const char *theta_path = o.path;
    if (!have && scaling && strcmp(scaling_key, "rope_parameters") == 0) {
        used = "rope_theta";
        theta_path = so.path;
        if ((rc = get_number(c, &so, "rope_theta", &v, &have)) != PE_OK) return rc;
    }
    if (have) {
        if (!(v > 1))
            return cfg_fail(c, "%s%s %g: the frequency base must be > 1", theta_path, used, v);
        m->rope_theta = v;
    }

    m->partial_rotary_factor = 1.0;
    if ((rc = get_number_alias(c, &o, "partial_rotary_factor", "rotary_pct", &v, &have, &used)) !=
        PE_OK)
        return rc;
    if (have) {
        if (!(v > 0 && v <= 1)) return cfg_fail(c, "%s%s %g: must be in (0, 1]", o.path, used, v);
        if (v * m->head_dim < 2)
            return cfg_fail(c, "%s%s %g: rotates fewer than 2 of the %d head dimensions", o.path,
                            used, v, m->head_dim);
        m->partial_rotary_factor = v;
    }

    pe_params *p = &m->params;
    p->dim = m->head_dim;
    p->base = m->rope_theta;
    p->rotary_frac = m->partial_rotary_factor;
    p->heads = m->num_heads;
    if (m->max_position > 0) p->len = m->max_position;
    p->pairing = PE_PAIRING_HALF;
    p->scaling.type = PE_SCALING_NONE;
    copy_clean(m->scaling_type, sizeof m->scaling_type, "none", 0);
    if (scaling && (rc = read_scaling(c, &o, &so, m)) != PE_OK) return rc;

    char msg[256];
    if ((rc = pe_check(c, "head dimension", pe_check_dim(p->dim, 1, msg, sizeof msg), msg)))
        return rc;
    if ((rc = pe_check(c, "max_position_embeddings", pe_check_len(p->len, msg, sizeof msg), msg)))
        return rc;
    if ((rc = pe_check(c, "rope_theta", pe_check_base(p->base, msg, sizeof msg), msg))) return rc;
    if ((rc = pe_check(c, "num_attention_heads", pe_check_heads(p->heads, msg, sizeof msg), msg)))
        return rc;
    const pe_encoding *rope = pe_encoding_find("rope");
    if (rope && rope->validate &&
        (rc = pe_check(c, "rope", rope->validate(p, msg, sizeof msg), msg)))
        return rc;
    return PE_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A key given twice in one object: cJSON would take the first, Python's json the last, so the
 * file means different things to different readers; refused, naming the key. Sorting the names
 * keeps a hostile object of many keys at n log n. Nested objects and arrays are walked; depth is
 * bounded by cJSON's own nesting limit. */
static int duplicate_key(const cfg_ctx *c, const cJSON *item, const char *path)
{
    if (!cJSON_IsObject(item) && !cJSON_IsArray(item)) return PE_OK;
    size_t n = 0;
    for (const cJSON *ch = item->child; ch; ch = ch->next) n++;
    if (cJSON_IsObject(item) && n > 1) {
        const char **names = malloc(n * sizeof *names);
        if (!names) return cfg_fail(c, "out of memory checking the keys");
        size_t k = 0;
        for (const cJSON *ch = item->child; ch; ch = ch->next)
            names[k++] = ch->string ? ch->string : "";
        qsort(names, n, sizeof *names, by_name);
        for (size_t i = 1; i < n; i++)
            if (strcmp(names[i - 1], names[i]) == 0) {
                int rc = cfg_fail(c,
                                  "key '%s%s' appears twice; JSON readers disagree on which one "
                                  "counts, so give it once",
                                  path, show(names[i]).s);
                free(names);
                return rc;
            }
        free(names);
    }
    for (const cJSON *ch = item->child; ch; ch = ch->next) {
        char sub[256];
        if (cJSON_IsObject(item))
            snprintf(sub, sizeof sub, "%s%s.", path, show(ch->string ? ch->string : "").s);
        else
            snprintf(sub, sizeof sub, "%s", path);
        int rc = duplicate_key(c, ch, sub);
        if (rc != PE_OK) return rc;
    }
    return PE_OK;
}

int pe_hf_json_unique_keys(const cJSON *root, const char *source_name, char *err, size_t errlen)
{
    const cfg_ctx c = {source_name && *source_name ? source_name : "config.json", err, errlen};
    return duplicate_key(&c, root, "");
}

int pe_hf_config_parse(const char *json_text, const char *source_name, pe_hf_config *out, char *err,
                       size_t errlen)
{
    const cfg_ctx c = {source_name && *source_name ? source_name : "config.json", err, errlen};
    if (err && errlen) err[0] = '\0';
    if (!json_text || !out) return cfg_fail(&c, "no text to parse");

    const char *t = json_text;
    if (strncmp(t, "\xEF\xBB\xBF", 3) == 0) t += 3; /* cJSON skips a UTF-8 BOM too */
    while (*t && strchr(" \t\r\n", *t)) t++;
    if (!*t) return cfg_fail(&c, "empty, expected a JSON object");

    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(json_text, &end, 1);
    if (!root) return malformed(&c, json_text, end);
    if (!cJSON_IsObject(root)) {
        int rc = cfg_fail(&c, "expected a JSON object at the top level, got %s", json_kind(root));
        cJSON_Delete(root);
        return rc;
    }

    int rc = duplicate_key(&c, root, "");
    if (rc != PE_OK) {
        cJSON_Delete(root);
        return rc;
    }
    pe_hf_config m;
    memset(&m, 0, sizeof m);
    pe_params_default(&m.params);
    rc = fill(&c, root, &m);
    cJSON_Delete(root);
    if (rc == PE_OK) *out = m;
    return rc;
}

int pe_hf_config_load(const char *path, pe_hf_config *out, char *err, size_t errlen)
{
    const cfg_ctx c = {path && *path ? path : "(no path)", err, errlen};
    if (err && errlen) err[0] = '\0';
    if (!path || !*path) return cfg_fail(&c, "no config file given");

    FILE *f = fopen(path, "rb");
    if (!f) return cfg_fail(&c, "cannot open: %s", strerror(errno));
    struct stat st;
    int rc = PE_OK;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (fstat(fileno(f), &st) != 0) {
        rc = cfg_fail(&c, "cannot read: %s", strerror(errno));
        goto done;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = cfg_fail(&c, "is a directory, expected a config.json file");
        goto done;
    }
    if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > PE_HF_CONFIG_MAX_BYTES) {
        rc = cfg_fail(&c, "%jd bytes; config files over 4 MiB are refused", (intmax_t)st.st_size);
        goto done;
    }
    /* Read to the end rather than trusting st_size: pipes have none, and files can grow. The
     * spare byte beyond st_size notices growth without a second allocation. */
    cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 2 : 65536;
    buf = malloc(cap);
    if (!buf) goto nomem;
    for (;;) {
        if (len > PE_HF_CONFIG_MAX_BYTES) {
            rc = cfg_fail(&c, "more than 4 MiB; config files that large are refused");
            goto done;
        }
        if (len + 1 == cap) {
            size_t ncap = cap > PE_HF_CONFIG_MAX_BYTES / 2 ? PE_HF_CONFIG_MAX_BYTES + 2 : cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) goto nomem;
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        rc = cfg_fail(&c, "cannot read: %s", strerror(errno));
        goto done;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        rc = cfg_fail(&c, "NUL byte at offset %zu; a config.json is text", strlen(buf));
        goto done;
    }
    rc = pe_hf_config_parse(buf, path, out, err, errlen);
    goto done;
nomem:
    rc = PE_ENOMEM;
    cfg_fail(&c, "out of memory reading the file");
done:
    free(buf);
    fclose(f);
    return rc;
}
