/* hf_config.c: Hugging Face config.json -> pe_hf_config (see hf_config.h for what is read,
 * warned about and refused). */
#include "hf_config.h"

#include "infile.h"

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

#include "pe_internal.h"

/* A config's context becomes the figure's L when a d-wide table of it stays this small (64 Mi
 * cells): the app keeps the user's L anyway; pe's callers get a length they can draw whole. */
#define HF_DRAW_CELLS ((size_t)1 << 26)

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

/* Rope types transformers knows, and what pelab makes of them. "su" is Phi-3's first name for
 * longrope; "mrope" (Qwen2-VL) is plain RoPE for text positions, its sections warned about;
 * "proportional" is p-RoPE (Gemma 4): pe's rope_proportional flag, with a linear factor. */
static const char *const rope_type_names[] = {"default", "linear",      "dynamic",  "ntk",
                                              "yarn",    "llama3",      "longrope", "su",
                                              "mrope",   "proportional"};
static const pe_scaling_type rope_type_kinds[] = {
    PE_SCALING_NONE,   PE_SCALING_LINEAR,   PE_SCALING_DYNAMIC,  PE_SCALING_NTK,  PE_SCALING_YARN,
    PE_SCALING_LLAMA3, PE_SCALING_LONGROPE, PE_SCALING_LONGROPE, PE_SCALING_NONE, PE_SCALING_NONE};
#define N_ROPE_TYPES (sizeof rope_type_names / sizeof rope_type_names[0])
#define ROPE_TYPES_ALLOWED                                                                         \
    "default, linear, dynamic, ntk, yarn, llama3, longrope, proportional, mrope"

/* Add one name to the comma list of fields read but not modelled (once). */
static void note_unmodelled(pe_hf_config *m, const char *what)
{
    size_t n = strlen(m->unmodelled), w = strlen(what);
    const char *p = m->unmodelled;
    while ((p = strstr(p, what)) != NULL) {
        if ((p == m->unmodelled || p[-1] == ' ') && (p[w] == ',' || p[w] == '\0')) return;
        p += w;
    }
    if (n + w + 3 >= sizeof m->unmodelled) return;
    if (n > 0) {
        memcpy(m->unmodelled + n, ", ", 2);
        n += 2;
    }
    memcpy(m->unmodelled + n, what, w + 1);
}

/* What one layer kind's reading starts from: the values outside its rope dict. */
typedef struct kind_in {
    const char *name;       /* "all", "full_attention", ... */
    const cfg_obj *rope;    /* the kind's rope dict (json may be NULL) */
    double theta;           /* rope_theta from the top level or a class default */
    const char *theta_path; /* where theta came from, for messages ("", "rope_local_base_freq") */
    double prf;             /* partial_rotary_factor from the top level; 1 when absent */
    int head_dim;
} kind_in;

/* LongRoPE as transformers reads it: with original_max_position_embeddings (in the dict, or at
 * the top level as Phi-3 has it), L0 is that and f = max_position_embeddings / L0; otherwise
 * L0 = max_position_embeddings and f = factor. Evaluated at seq_len = max_position_embeddings
 * (the long factors); the short ones are --seq-len L0 or less. */
static int read_longrope(const cfg_ctx *c, const pe_hf_config *m, const cfg_obj *model,
                         const cfg_obj *o, pe_params *p, const char *type, int *l0_out)
{
    pe_rope_scaling *s = &p->scaling;
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
    if (l0 > PE_MAX_LEN)
        return cfg_fail(c, "%smax_position_embeddings %d: longrope's L0 must be 1..%d", model->path,
                        l0, PE_MAX_LEN);
    s->factor = factor;
    s->original_ctx = l0;
    s->seq_len = m->max_position;
    double v = 0;
    if ((rc = get_number(c, o, "attention_factor", &v, &have)) != PE_OK) return rc;
    if (have) {
        if (!(v > 0)) return cfg_fail(c, "%sattention_factor %g: must be > 0", o->path, v);
        s->attention_factor = v;
    }
    *l0_out = l0;
    return PE_OK;
}

/* The rope type of a dict: rope_type, else type, else "default" (Transformers v5 reads a dict
 * without one as default). *t indexes rope_type_names. */
static int read_rope_type(const cfg_ctx *c, const cfg_obj *o, size_t *t, const char **type)
{
    const char *key = "rope_type";
    int rc = get_string(c, o, "rope_type", type);
    if (rc == PE_OK && !*type) {
        key = "type";
        rc = get_string(c, o, "type", type);
    }
    if (rc != PE_OK) return rc;
    if (!*type) *type = "default";
    size_t i = 0;
    while (i < N_ROPE_TYPES && strcmp(*type, rope_type_names[i]) != 0) i++;
    if (i == N_ROPE_TYPES) {
        const char *near = pe_closest(*type, rope_type_names, N_ROPE_TYPES);
        return cfg_fail(
            c, "%s%s '%s': unknown rope type; allowed: " ROPE_TYPES_ALLOWED "; did you mean '%s'?",
            o->path, key, show(*type).s, near ? near : "default");
    }
    *t = i;
    return PE_OK;
}

/* One layer kind: its base, rotary fraction, rope type, scaling fields, L0 and target.
 *
 * L0 and the target context, per rope type, as transformers reads the fields:
 *   default, mrope, proportional: L0 = target = max_position_embeddings;
 *   linear: L0 = original_max_position_embeddings when given, else max_position_embeddings /
 *     factor (transformers has no L0 for it; released files, Gemma 3 among them, give the
 *     extended context as max_position_embeddings), target = factor x L0;
 *   dynamic, ntk: L0 = max_position_embeddings (dynamic's own reference length in
 *     transformers), target = factor x L0;
 *   yarn: L0 = original_max_position_embeddings (the dict's, the top level's, else
 *     max_position_embeddings), target = the larger of max_position_embeddings and factor x L0
 *     (DeepSeek-V3 163840 = 40 x 4096; Qwen's recipe keeps max 32768 and factor 4);
 *   llama3, longrope: L0 = original_max_position_embeddings, target = max_position_embeddings
 *     (Llama 3.1: 131072, not 8 x 8192), or factor x L0 when that is not larger than L0. */
static int read_kind(const cfg_ctx *c, pe_hf_config *m, const cfg_obj *model, const kind_in *in,
                     pe_hf_layer_type *lt)
{
    const cfg_obj *o = in->rope;
    int rc, have = 0;
    double v = 0;
    memset(lt, 0, sizeof *lt);
    copy_clean(lt->name, sizeof lt->name, in->name, 1);
    lt->head_dim = in->head_dim;

    /* Transformers v5: rope_theta inside rope_parameters wins over the top-level one. */
    lt->rope_theta = in->theta;
    const char *theta_path = in->theta_path, *theta_key = "rope_theta";
    if (o->json) {
        if ((rc = get_number(c, o, "rope_theta", &v, &have)) != PE_OK) return rc;
        if (have) {
            lt->rope_theta = v;
            theta_path = o->path;
        }
    }
    if (strcmp(theta_path, "rope_local_base_freq") == 0) {
        theta_key = theta_path;
        theta_path = model->path;
    } else if (strcmp(theta_path, "rotary_emb_base") == 0) {
        theta_key = theta_path;
        theta_path = model->path;
    }
    if (!(lt->rope_theta > 1))
        return cfg_fail(c, "%s%s %g: the frequency base must be > 1", theta_path, theta_key,
                        lt->rope_theta);

    lt->partial_rotary_factor = in->prf;
    if (o->json) {
        if ((rc = get_number(c, o, "partial_rotary_factor", &v, &have)) != PE_OK) return rc;
        if (have) {
            if (!(v > 0 && v <= 1))
                return cfg_fail(c, "%spartial_rotary_factor %g: must be in (0, 1]", o->path, v);
            if (v * lt->head_dim < 2)
                return cfg_fail(c,
                                "%spartial_rotary_factor %g: rotates fewer than 2 of the %d head "
                                "dimensions",
                                o->path, v, lt->head_dim);
            lt->partial_rotary_factor = v;
        }
    }

    pe_params *p = &lt->params;
    pe_params_default(p);
    p->dim = lt->head_dim;
    p->base = lt->rope_theta;
    p->rotary_frac = lt->partial_rotary_factor;
    p->heads = m->num_heads;
    /* DeepSeek's MLA rotates interleaved pairs (its view_as_complex; HF's rope_interleave) */
    p->pairing = m->mla ? PE_PAIRING_INTERLEAVED : PE_PAIRING_HALF;
    /* the figure length: the model's context when pe can draw it whole (the app sets its own) */
    if (m->max_position > 0 && m->max_position <= PE_MAX_LEN &&
        (size_t)m->max_position * (size_t)p->dim <= HF_DRAW_CELLS)
        p->len = m->max_position;
    pe_rope_scaling *s = &p->scaling;
    s->type = PE_SCALING_NONE;
    copy_clean(lt->rope_type, sizeof lt->rope_type, "none", 0);

    int l0 = m->max_position > 0 ? m->max_position : s->original_ctx;
    double target = l0;
    if (o->json) {
        size_t t = 0;
        const char *type = NULL;
        if ((rc = read_rope_type(c, o, &t, &type)) != PE_OK) return rc;
        copy_clean(lt->rope_type, sizeof lt->rope_type, type, 0);
        s->type = rope_type_kinds[t];
        if (member(o, "mrope_section")) note_unmodelled(m, "mrope_section");
        if (member(o, "llama_4_scaling_beta")) note_unmodelled(m, "llama_4_scaling_beta");
        int proportional = strcmp(type, "proportional") == 0;
        if (proportional) {
            p->rope_proportional = 1;
            double f = 1;
            if ((rc = get_number(c, o, "factor", &f, &have)) != PE_OK) return rc;
            if (have && !(f >= 1))
                return cfg_fail(c, "%sfactor %g: must be >= 1 (a factor stretches the context)",
                                o->path, f);
            if (have && f > 1) {
                s->type = PE_SCALING_LINEAR;
                s->factor = f;
            }
        }
        if (s->type == PE_SCALING_LONGROPE) {
            if ((rc = read_longrope(c, m, model, o, p, type, &l0)) != PE_OK) return rc;
            target = m->max_position > l0 ? m->max_position : s->factor * l0;
        } else if (s->type != PE_SCALING_NONE && !proportional) {
            double factor = 0;
            int have_factor = 0;
            if ((rc = get_number(c, o, "factor", &factor, &have_factor)) != PE_OK) return rc;

            /* L0 as transformers reads it for each type (see above) */
            int have_l0 = 0;
            const cfg_obj *l0_obj = o;
            if (s->type == PE_SCALING_YARN || s->type == PE_SCALING_LLAMA3 ||
                s->type == PE_SCALING_LINEAR) {
                if ((rc = get_int(c, o, "original_max_position_embeddings", &l0, &have_l0)) !=
                    PE_OK)
                    return rc;
                if (!have_l0) {
                    l0_obj = model;
                    rc = get_int(c, model, "original_max_position_embeddings", &l0, &have_l0);
                    if (rc != PE_OK) return rc;
                }
                if (have_l0 && (l0 < 1 || l0 > PE_MAX_LEN))
                    return cfg_fail(c, "%soriginal_max_position_embeddings %d: must be 1..%d",
                                    l0_obj->path, l0, PE_MAX_LEN);
            }
            if (!have_l0) {
                if (m->max_position == 0)
                    return cfg_fail(c,
                                    "%smax_position_embeddings: missing; rope type '%s' takes the "
                                    "original context length from it",
                                    model->path, type);
                l0 = m->max_position;
            }
            /* v5's YaRN: no factor means max_position_embeddings / L0 */
            if (!have_factor && s->type == PE_SCALING_YARN && have_l0 && m->max_position > 0) {
                factor = (double)m->max_position / l0;
                have_factor = 1;
            }
            if (!have_factor)
                return cfg_fail(c, "%sfactor: missing; rope type '%s' needs a scaling factor",
                                o->path, type);
            if (!(factor >= 1))
                return cfg_fail(c, "%sfactor %g: must be >= 1 (a factor stretches the context)",
                                o->path, factor);
            s->factor = factor;
            if (s->type == PE_SCALING_LINEAR && !have_l0) {
                /* transformers' linear scaling has no L0; the released files (Gemma 3,
                 * LongChat, LLongMA-2, hfl's 16K Llama 2) give the extended context as
                 * max_position_embeddings, so L0 is that over the factor */
                int pre = (int)floor((double)l0 / factor);
                l0 = pre < 1 ? 1 : pre;
            }
            if (l0 > PE_MAX_LEN)
                return cfg_fail(c,
                                "%smax_position_embeddings %d: as rope type '%s''s original "
                                "context it must be 1..%d",
                                model->path, l0, type, PE_MAX_LEN);
            if (s->type == PE_SCALING_YARN) {
                target = factor * l0;
                if (m->max_position > target) target = m->max_position;
            } else if (s->type == PE_SCALING_LLAMA3) {
                target = m->max_position > l0 ? m->max_position : factor * l0;
            } else if (s->type == PE_SCALING_LINEAR) {
                target = factor * l0;
                if (m->max_position > target) target = m->max_position;
            } else {
                target = factor * l0;
            }
            if (s->type == PE_SCALING_DYNAMIC) {
                /* the context the factor was chosen for: where dynamic NTK has its full effect */
                double seq = factor * l0;
                s->seq_len = seq > PE_MAX_LEN ? PE_MAX_LEN : (int)lround(seq);
            }
            if (s->type == PE_SCALING_YARN) {
                if ((rc = get_number(c, o, "beta_fast", &v, &have)) != PE_OK) return rc;
                if (have) s->beta_fast = v;
                if ((rc = get_number(c, o, "beta_slow", &v, &have)) != PE_OK) return rc;
                if (have) s->beta_slow = v;
                /* HF accepts equal betas (Kimi-K2 ships 1 and 1) */
                if (!(s->beta_slow > 0) || !(s->beta_fast >= s->beta_slow))
                    return cfg_fail(c,
                                    "%sbeta_fast %g, beta_slow %g: need beta_fast >= beta_slow > 0",
                                    o->path, s->beta_fast, s->beta_slow);
                double ms = 0, ms_all = 0;
                int have_ms = 0, have_ms_all = 0;
                if ((rc = get_number(c, o, "mscale", &ms, &have_ms)) != PE_OK) return rc;
                if ((rc = get_number(c, o, "mscale_all_dim", &ms_all, &have_ms_all)) != PE_OK)
                    return rc;
                if ((have_ms && !(ms >= 0)) || (have_ms_all && !(ms_all >= 0)))
                    return cfg_fail(c, "%smscale %g, mscale_all_dim %g: must be >= 0", o->path, ms,
                                    ms_all);
                if (have_ms) s->mscale = ms;
                if (have_ms_all) s->mscale_all_dim = ms_all;
                /* DeepSeek's attention also multiplies its softmax scale by
                 * get_mscale(f, mscale_all_dim)^2, outside the rope utilities */
                if (have_ms_all && ms_all > 0 && m->mla) note_unmodelled(m, "softmax mscale");
                int tr = 1;
                if ((rc = get_bool(c, o, "truncate", &tr, &have)) != PE_OK) return rc;
                if (have) s->yarn_truncate = tr;
                if ((rc = get_number(c, o, "attention_factor", &v, &have)) != PE_OK) return rc;
                if (have) {
                    if (!(v > 0))
                        return cfg_fail(c, "%sattention_factor %g: must be > 0", o->path, v);
                    s->attention_factor = v;
                }
            }
            if (s->type == PE_SCALING_LLAMA3) {
                if ((rc = get_number(c, o, "low_freq_factor", &v, &have)) != PE_OK) return rc;
                if (have) s->low_freq_factor = v;
                if ((rc = get_number(c, o, "high_freq_factor", &v, &have)) != PE_OK) return rc;
                if (have) s->high_freq_factor = v;
                /* HF accepts equal factors (Llama 4 Scout ships 1 and 1); llama3 ignores an
                 * attention_factor (transformers' _compute_llama3_parameters returns 1.0) */
                if (!(s->low_freq_factor > 0) || !(s->high_freq_factor >= s->low_freq_factor))
                    return cfg_fail(c,
                                    "%slow_freq_factor %g, high_freq_factor %g: need high >= low "
                                    "> 0",
                                    o->path, s->low_freq_factor, s->high_freq_factor);
            }
        }
    }
    s->original_ctx = l0 <= PE_MAX_LEN ? l0 : PE_MAX_LEN; /* pe's range; the model's L0 is kept */
    lt->original_ctx = l0;
    lt->target_ctx = target;

    char msg[256];
    if ((rc = pe_check(c, "head dimension", pe_check_dim(p->dim, 1, msg, sizeof msg), msg)))
        return rc;
    if ((rc = pe_check(c, "rope_theta", pe_check_base(p->base, msg, sizeof msg), msg))) return rc;
    if ((rc = pe_check(c, "num_attention_heads", pe_check_heads(p->heads, msg, sizeof msg), msg)))
        return rc;
    if ((rc = pe_check(c, "rope", pe_rope_validate_freq(p, msg, sizeof msg), msg))) return rc;
    return PE_OK;
}

static void use_kind(pe_hf_config *m, int k)
{
    const pe_hf_layer_type *lt = &m->layer_types[k];
    m->layer_type = k;
    m->head_dim = lt->head_dim;
    m->rope_theta = lt->rope_theta;
    m->partial_rotary_factor = lt->partial_rotary_factor;
    copy_clean(m->scaling_type, sizeof m->scaling_type, lt->rope_type, 0);
    m->original_ctx = lt->original_ctx;
    m->target_ctx = lt->target_ctx;
    m->params = lt->params;
}

int pe_hf_config_select(pe_hf_config *m, const char *name, char *err, size_t errlen)
{
    for (int k = 0; k < m->n_layer_types; k++)
        if (strcmp(m->layer_types[k].name, name) == 0) {
            use_kind(m, k);
            return PE_OK;
        }
    char list[160] = "";
    size_t n = 0;
    for (int k = 0; k < m->n_layer_types && n < sizeof list; k++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "",
                              m->layer_types[k].name);
    if (err && errlen)
        snprintf(err, errlen, "--layer-type %s: %s has the layer types %s", show(name).s, m->name,
                 list);
    return PE_EINVAL;
}

/* Gemma 2/3 class defaults (transformers' Gemma2Config / Gemma3TextConfig) for what a file
 * leaves out; Gemma 3 4B/12B/27B ship text_config without heads, head_dim or bases. */
typedef struct class_defaults {
    const char *model_type;
    int heads, kv_heads, head_dim, max_position;
    double theta, local_theta; /* local_theta 0: one base for every layer */
} class_defaults;

static const class_defaults gemma_defaults[] = {
    {"gemma2", 8, 4, 256, 8192, 10000.0, 0},
    {"gemma3_text", 8, 4, 256, 131072, 1000000.0, 10000.0},
    {"gemma3", 8, 4, 256, 131072, 1000000.0, 10000.0},
};

/* A nested rope dict: every member an object keyed by a layer kind. */
static int is_per_layer(const cJSON *rope)
{
    if (!rope || !cJSON_IsObject(rope) || !rope->child) return 0;
    for (const cJSON *ch = rope->child; ch; ch = ch->next)
        if (!cJSON_IsObject(ch) && !cJSON_IsNull(ch)) return 0;
    return 1;
}

static int fill(const cfg_ctx *c, const cJSON *root, pe_hf_config *m)
{
    int rc, have = 0;
    const cfg_obj top = {root, ""};
    cfg_obj o = top;

    /* Multimodal wrappers (LLaVA, Gemma 3, Mistral 3, Llama 4, Qwen3.5) keep the language model
     * in text_config. */
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

    /* ChatGLM / GLM-4 (remote code): rotary over half of each head's kv_channels, its own pair
     * layout and rope_ratio; reading it as Llama-style RoPE would give wrong pairs silently. */
    if ((type_top && strcmp(type_top, "chatglm") == 0) || (type && strcmp(type, "chatglm") == 0))
        return cfg_fail(c, "model_type 'chatglm': ChatGLM's remote code rotates half of each head "
                           "in its own interleaved layout (rope_ratio, kv_channels), which pelab "
                           "does not model; refused rather than read as Llama-style RoPE");

    const class_defaults *cd = NULL;
    for (size_t i = 0; type && i < sizeof gemma_defaults / sizeof *gemma_defaults; i++)
        if (strcmp(type, gemma_defaults[i].model_type) == 0) cd = &gemma_defaults[i];

    /* Heads and the head dimension. */
    if ((rc = get_int(c, &o, "num_attention_heads", &m->num_heads, &have)) != PE_OK) return rc;
    if (!have && cd) {
        m->num_heads = cd->heads;
        m->class_defaults = have = 1;
    }
    if (!have)
        return cfg_fail(c,
                        "%snum_attention_heads: missing; a config must give the number of "
                        "attention heads",
                        o.path);
    if (m->num_heads < 1 || m->num_heads > PE_MAX_HEADS)
        return cfg_fail(c, "%snum_attention_heads %d: must be 1..%d", o.path, m->num_heads,
                        PE_MAX_HEADS);
    m->num_kv_heads = cd && !member(&o, "num_key_value_heads") ? cd->kv_heads : m->num_heads;
    if ((rc = get_int(c, &o, "num_key_value_heads", &m->num_kv_heads, &have)) != PE_OK) return rc;
    if (m->num_kv_heads < 1 || m->num_heads % m->num_kv_heads != 0)
        return cfg_fail(c, "%snum_key_value_heads %d: must divide num_attention_heads %d", o.path,
                        m->num_kv_heads, m->num_heads);

    int have_hidden = 0, have_head_dim = 0, rope_head = 0, have_rope_head = 0;
    if ((rc = get_int(c, &o, "hidden_size", &m->hidden_size, &have_hidden)) != PE_OK) return rc;
    if (have_hidden && m->hidden_size < 1)
        return cfg_fail(c, "%shidden_size %d: must be >= 1", o.path, m->hidden_size);
    if ((rc = get_int(c, &o, "head_dim", &m->head_dim, &have_head_dim)) != PE_OK) return rc;
    /* MLA: the rotary part of each query/key head is qk_rope_head_dim (HF sets head_dim to it) */
    if ((rc = get_int(c, &o, "qk_rope_head_dim", &rope_head, &have_rope_head)) != PE_OK) return rc;
    const char *dim_field = "head_dim ";
    if (have_rope_head) {
        m->head_dim = rope_head;
        m->mla = 1;
        dim_field = "qk_rope_head_dim ";
    } else if (!have_head_dim && cd && !have_hidden) {
        m->head_dim = cd->head_dim;
        m->class_defaults = 1;
    } else if (!have_head_dim && cd) {
        m->head_dim = cd->head_dim; /* Gemma's head_dim is not hidden / heads (2560 / 8 = 320) */
        m->class_defaults = 1;
    } else if (!have_head_dim) {
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
    if (have && (m->max_position < 1 || m->max_position > PE_HF_MAX_CONTEXT))
        return cfg_fail(c, "%smax_position_embeddings %d: pelab reads contexts of 1..%d positions",
                        o.path, m->max_position, PE_HF_MAX_CONTEXT);
    if (!have) {
        m->max_position = cd ? cd->max_position : 0;
        if (cd) m->class_defaults = 1;
    }

    /* rope_scaling wins over rope_parameters (transformers: rope_scaling or rope_parameters). */
    const cJSON *rope = member(&o, "rope_scaling");
    const char *rope_key = "rope_scaling";
    if (!rope) {
        rope = member(&o, "rope_parameters");
        rope_key = "rope_parameters";
    }
    if (rope && !cJSON_IsObject(rope))
        return cfg_fail(c, "%s%s: expected an object or null, got %s", o.path, rope_key,
                        json_kind(rope));

    /* Top-level base and rotary fraction (the rope dict's own win, read per kind). */
    const char *used = NULL;
    double theta = cd ? cd->theta : 10000.0, v = 0;
    const char *theta_path = o.path;
    if ((rc = get_number_alias(c, &o, "rope_theta", "rotary_emb_base", &v, &have, &used)) != PE_OK)
        return rc;
    if (have) {
        theta = v;
        if (strcmp(used, "rotary_emb_base") == 0) theta_path = "rotary_emb_base";
    }
    double prf = 1.0;
    if ((rc = get_number_alias(c, &o, "partial_rotary_factor", "rotary_pct", &v, &have, &used)) !=
        PE_OK)
        return rc;
    if (have) {
        if (!(v > 0 && v <= 1)) return cfg_fail(c, "%s%s %g: must be in (0, 1]", o.path, used, v);
        if (v * m->head_dim < 2)
            return cfg_fail(c, "%s%s %g: rotates fewer than 2 of the %d head dimensions", o.path,
                            used, v, m->head_dim);
        prf = v;
    }
    double local_theta = cd ? cd->local_theta : 0;
    if ((rc = get_number(c, &o, "rope_local_base_freq", &v, &have)) != PE_OK) return rc;
    if (have) local_theta = v;
    int global_head = 0, have_global_head = 0;
    if ((rc = get_int(c, &o, "global_head_dim", &global_head, &have_global_head)) != PE_OK)
        return rc;
    if (have_global_head && (global_head < 2 || global_head > PE_MAX_DIM || global_head % 2 != 0))
        return cfg_fail(c, "%sglobal_head_dim %d: the head dimension must be even and 2..%d",
                        o.path, global_head, PE_MAX_DIM);

    /* Fields about positions pelab reads but does not model: one warning names them all. */
    static const char *const unmodelled_keys[] = {
        "no_rope_layers", "nope_layer_interval", "attn_temperature_tuning", "floor_scale",
        "attn_scale",     "mrope_section",       "llama_4_scaling_beta"};
    for (size_t i = 0; i < sizeof unmodelled_keys / sizeof *unmodelled_keys; i++)
        if (member(&o, unmodelled_keys[i])) note_unmodelled(m, unmodelled_keys[i]);

    char rope_path[96];
    snprintf(rope_path, sizeof rope_path, "%s%s.", o.path, rope_key);
    if (is_per_layer(rope)) {
        /* Transformers v5: one rope dict per layer kind */
        for (const cJSON *ch = rope->child; ch; ch = ch->next) {
            if (cJSON_IsNull(ch)) continue;
            if (m->n_layer_types == PE_HF_MAX_LAYER_TYPES)
                return cfg_fail(c, "%s: more than %d layer types; pelab reads at most %d", rope_key,
                                PE_HF_MAX_LAYER_TYPES, PE_HF_MAX_LAYER_TYPES);
            char path[160];
            snprintf(path, sizeof path, "%s%s.", rope_path, show(ch->string ? ch->string : "").s);
            const cfg_obj ko = {ch, path};
            int full = ch->string && strcmp(ch->string, "full_attention") == 0;
            kind_in in = {ch->string ? ch->string : "",
                          &ko,
                          theta,
                          o.path,
                          prf,
                          full && have_global_head ? global_head : m->head_dim};
            if (!full && local_theta > 0) { /* a class's local base for the other kinds */
                in.theta = local_theta;
                in.theta_path = "rope_local_base_freq";
            }
            rc = read_kind(c, m, &o, &in, &m->layer_types[m->n_layer_types]);
            if (rc != PE_OK) return rc;
            m->n_layer_types++;
        }
        if (m->n_layer_types == 0)
            return cfg_fail(c, "%s: no layer type has RoPE parameters", rope_key);
    } else {
        const cfg_obj ro = {rope, rope_path};
        kind_in in = {
            local_theta > 0 ? "full_attention" : "all", &ro, theta, theta_path, prf, m->head_dim};
        if ((rc = read_kind(c, m, &o, &in, &m->layer_types[0])) != PE_OK) return rc;
        m->n_layer_types = 1;
        if (local_theta > 0) {
            /* Gemma 3: sliding-window layers at their own base, without the global factor */
            const cfg_obj none = {NULL, rope_path};
            kind_in loc = {"sliding_attention",    &none, local_theta,
                           "rope_local_base_freq", prf,   m->head_dim};
            if ((rc = read_kind(c, m, &o, &loc, &m->layer_types[1])) != PE_OK) return rc;
            m->n_layer_types = 2;
        }
    }
    int pick = 0;
    for (int k = 0; k < m->n_layer_types; k++)
        if (strcmp(m->layer_types[k].name, "full_attention") == 0) pick = k;
    use_kind(m, pick);
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
    pe_hf_config *m = calloc(1, sizeof *m);
    if (!m) {
        cJSON_Delete(root);
        cfg_fail(&c, "out of memory");
        return PE_ENOMEM;
    }
    rc = fill(&c, root, m);
    cJSON_Delete(root);
    if (rc == PE_OK) *out = *m;
    free(m);
    return rc;
}

int pe_hf_config_finish_simple(pe_hf_config *m, const char *src, const char *rope_type,
                               double factor, int l0, double attn_factor, char *err, size_t errlen)
{
    /* The GGUF header's fields as a config.json would carry them, parsed by the same rules;
     * the architecture is the model_type, so the Gemma classes' defaults (llama.cpp's too: the
     * sliding layers of gemma3 at base 10000) apply. */
    char json[1024], type_plain[64];
    size_t tn = 0;
    for (const char *q = m->model_type; *q && tn + 1 < sizeof type_plain; q++)
        if ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')
            type_plain[tn++] = *q;
    type_plain[tn] = '\0';
    int n = snprintf(json, sizeof json,
                     "{\"model_type\": \"%s\", \"num_attention_heads\": %d, "
                     "\"num_key_value_heads\": %d, \"head_dim\": %d, \"rope_theta\": %.17g, "
                     "\"partial_rotary_factor\": %.17g",
                     type_plain, m->num_heads, m->num_kv_heads, m->head_dim, m->rope_theta,
                     m->partial_rotary_factor);
    if (m->max_position > 0)
        n += snprintf(json + n, sizeof json - (size_t)n, ", \"max_position_embeddings\": %d",
                      m->max_position);
    if (rope_type && strcmp(rope_type, "none") != 0) {
        n += snprintf(json + n, sizeof json - (size_t)n,
                      ", \"rope_scaling\": {\"rope_type\": \"%s\", \"factor\": %.17g", rope_type,
                      factor);
        if (l0 > 0)
            n += snprintf(json + n, sizeof json - (size_t)n,
                          ", \"original_max_position_embeddings\": %d", l0);
        if (attn_factor > 0 && strcmp(rope_type, "yarn") == 0)
            n += snprintf(json + n, sizeof json - (size_t)n, ", \"attention_factor\": %.17g",
                          attn_factor);
        n += snprintf(json + n, sizeof json - (size_t)n, "}");
    }
    snprintf(json + n, sizeof json - (size_t)n, "}");
    pe_hf_config parsed;
    int rc = pe_hf_config_parse(json, src, &parsed, err, errlen);
    if (rc != PE_OK) return rc;
    copy_clean(parsed.name, sizeof parsed.name, m->name, 1);
    copy_clean(parsed.model_type, sizeof parsed.model_type, m->model_type, 0);
    parsed.hidden_size = m->hidden_size;
    *m = parsed;
    return PE_OK;
}

int pe_hf_config_load(const char *path, pe_hf_config *out, char *err, size_t errlen)
{
    const cfg_ctx c = {path && *path ? path : "(no path)", err, errlen};
    if (err && errlen) err[0] = '\0';
    if (!path || !*path) return cfg_fail(&c, "no config file given");

    /* the type and size are checked before reading: /dev/zero, a FIFO nobody writes or a
     * folder are refused at once (infile.h) */
    char *buf = NULL;
    size_t len = 0;
    int rc = pe_infile_read(path, "--config", PE_HF_CONFIG_MAX_BYTES, &buf, &len, err, errlen);
    if (rc != PE_OK) return rc == PE_ENOMEM || rc == PE_ECANCELED ? rc : PE_EINVAL;
    buf[len] = '\0';
    if (strlen(buf) != len) {
        rc = cfg_fail(&c, "NUL byte at offset %zu; a config.json is text", strlen(buf));
        goto done;
    }
    rc = pe_hf_config_parse(buf, path, out, err, errlen);
done:
    free(buf);
    return rc;
}
