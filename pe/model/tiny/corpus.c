/* corpus.c: children's stories from a small grammar with variables (assets/story).
 *
 * A rule is a weighted choice of alternatives; an alternative is a sequence of literal words,
 * <rule> expansions, {list} picks, silent bindings X=elem (optionally !Y: must differ from Y)
 * and recalls $X. Bindings are what give the stories their memory: a name, a colour or an
 * order chosen in the first sentences is repeated in the last ones. After expansion the first
 * word of each sentence is capitalised and "a" becomes "an" before a vowel.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infile.h"
#include "model.h"

#define MAX_VARS  64
#define MAX_VALUE 8  /* words in one bound value */
#define MAX_DEPTH 64 /* rule nesting */
#define MAX_EXCL  4
#define MAX_FILE  (1u << 20)

enum { EL_WORD, EL_RULE, EL_LIST, EL_VAR };

typedef struct model_elem {
    int kind; /* EL_* */
    int ref;  /* word, rule, list or variable id */
    int bind; /* variable bound (silently) to the expansion, or -1 */
    int nexcl;
    int excl[MAX_EXCL]; /* variables the bound value must differ from */
} model_elem;

struct model_rule {
    char *name;
    int defined;
    int nalts;
    int *alt_start; /* (nalts + 1) into elems */
    double *weight; /* (nalts) */
    double total;
    model_elem *elems;
    int nelems;
};

struct model_list {
    char *name;
    int n;
    int *start; /* (n + 1) into words */
    int *words;
};

__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen, int status,
                                                      const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

static uint64_t fnv_bytes(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Grow *p (elements of size sz, capacity *cap) to hold need elements. */
static int grow(void *p, int *cap, int need, size_t sz)
{
    if (need <= *cap) return 0;
    int c = *cap ? *cap : 16;
    while (c < need) {
        if (c > (1 << 28)) return -1;
        c *= 2;
    }
    void *q = realloc(*(void **)p, (size_t)c * sz);
    if (!q) return -1;
    *(void **)p = q;
    *cap = c;
    return 0;
}

static int read_file(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
    /* infile.h: the type and the size checked before reading (a FIFO nobody writes, a device) */
    int rc = pe_infile_read(path, "", MAX_FILE, out, len, err, errlen);
    if (rc == PE_ENOMEM || rc == PE_ECANCELED) return rc;
    return rc == PE_OK ? 0 : MODEL_EFORMAT;
}

static int intern(model_grammar *g, const char *w, size_t l)
{
    for (int i = 0; i < g->nwords; i++)
        if (strlen(g->words[i]) == l && !memcmp(g->words[i], w, l)) return i;
    if (grow(&g->words, &g->words_cap, g->nwords + 1, sizeof *g->words)) return -1;
    char *s = malloc(l + 1);
    if (!s) return -1;
    memcpy(s, w, l);
    s[l] = 0;
    g->words[g->nwords] = s;
    return g->nwords++;
}

static int find_rule(model_grammar *g, const char *name, size_t l, int create)
{
    for (int i = 0; i < g->nrules; i++)
        if (strlen(g->rules[i].name) == l && !memcmp(g->rules[i].name, name, l)) return i;
    if (!create) return -1;
    struct model_rule *r = realloc(g->rules, (size_t)(g->nrules + 1) * sizeof *r);
    if (!r) return -1;
    g->rules = r;
    r += g->nrules;
    memset(r, 0, sizeof *r);
    r->name = malloc(l + 1);
    if (!r->name) return -1;
    memcpy(r->name, name, l);
    r->name[l] = 0;
    return g->nrules++;
}

static int find_var(model_grammar *g, const char *name, size_t l)
{
    for (int i = 0; i < g->nvars; i++)
        if (strlen(g->vars[i]) == l && !memcmp(g->vars[i], name, l)) return i;
    if (g->nvars >= MAX_VARS) return -1;
    char **v = realloc(g->vars, (size_t)(g->nvars + 1) * sizeof *v);
    if (!v) return -1;
    g->vars = v;
    if (!(v[g->nvars] = malloc(l + 1))) return -1;
    memcpy(v[g->nvars], name, l);
    v[g->nvars][l] = 0;
    return g->nvars++;
}

static int load_list(model_grammar *g, const char *dir, const char *name, size_t l, char *err,
                     size_t errlen)
{
    for (int i = 0; i < g->nlists; i++)
        if (strlen(g->lists[i].name) == l && !memcmp(g->lists[i].name, name, l)) return i;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%.*s.txt", dir, (int)l, name) >= (int)sizeof path)
        return fail(err, errlen, PE_EINVAL, "%s: path too long", dir);
    char *text;
    size_t len;
    int rc = read_file(path, &text, &len, err, errlen);
    if (rc) return rc;
    g->hash = fnv_bytes(g->hash, text, len);
    struct model_list *ls = realloc(g->lists, (size_t)(g->nlists + 1) * sizeof *ls);
    if (!ls) goto oom;
    g->lists = ls;
    struct model_list *L = &ls[g->nlists];
    memset(L, 0, sizeof *L);
    g->nlists++;
    if (!(L->name = malloc(l + 1))) goto oom;
    memcpy(L->name, name, l);
    L->name[l] = 0;
    int cap_start = 0, cap_words = 0, nw = 0;
    if (grow(&L->start, &cap_start, 1, sizeof(int))) goto oom;
    L->start[0] = 0;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        char *hash = memchr(line, '#', (size_t)(end - line));
        char *stop = hash ? hash : end;
        int before = nw;
        for (char *p = line; p < stop;) {
            while (p < stop && isspace((unsigned char)*p)) p++;
            char *b = p;
            while (p < stop && !isspace((unsigned char)*p)) p++;
            if (p == b) break;
            if ((size_t)(p - b) > TOK_MAX_WORD) {
                free(text);
                return fail(err, errlen, MODEL_EFORMAT, "%s: a word longer than %d bytes", path,
                            TOK_MAX_WORD);
            }
            int id = intern(g, b, (size_t)(p - b));
            if (id < 0 || grow(&L->words, &cap_words, nw + 1, sizeof(int))) goto oom;
            L->words[nw++] = id;
        }
        if (nw > before) {
            if (nw - before > MAX_VALUE) {
                free(text);
                return fail(err, errlen, MODEL_EFORMAT, "%s: an entry has more than %d words", path,
                            MAX_VALUE);
            }
            if (grow(&L->start, &cap_start, L->n + 2, sizeof(int))) goto oom;
            L->start[++L->n] = nw;
        }
        line = *end ? end + 1 : end;
    }
    free(text);
    if (L->n == 0) return fail(err, errlen, MODEL_EFORMAT, "%s: the list is empty", path);
    return g->nlists - 1;
oom:
    free(text);
    return fail(err, errlen, PE_ENOMEM, "%s: out of memory", path);
}

static int is_var_name(const char *s, size_t l)
{
    if (!l || !isupper((unsigned char)s[0])) return 0;
    for (size_t i = 1; i < l; i++)
        if (!isupper((unsigned char)s[i]) && !isdigit((unsigned char)s[i])) return 0;
    return 1;
}

/* Parse one element token [b, e) into el. */
static int parse_elem(model_grammar *g, const char *dir, const char *b, const char *e,
                      model_elem *el, int line, char *err, size_t errlen)
{
    char tok[128];
    size_t l = (size_t)(e - b);
    snprintf(tok, sizeof tok, "%.*s", (int)(l < 100 ? l : 100), b);
    memset(el, 0, sizeof *el);
    el->bind = -1;
    const char *eq = memchr(b, '=', l);
    if (eq && eq > b && is_var_name(b, (size_t)(eq - b))) {
        if ((el->bind = find_var(g, b, (size_t)(eq - b))) < 0)
            return fail(err, errlen, MODEL_EFORMAT, "grammar line %d: too many variables (%s)",
                        line, tok);
        b = eq + 1;
        const char *bang = memchr(b, '!', (size_t)(e - b));
        const char *vend = bang ? bang : e;
        while (bang) {
            const char *nb = memchr(bang + 1, '!', (size_t)(e - bang - 1));
            const char *ve = nb ? nb : e;
            int v = find_var(g, bang + 1, (size_t)(ve - bang - 1));
            if (!is_var_name(bang + 1, (size_t)(ve - bang - 1)) || v < 0 || el->nexcl >= MAX_EXCL)
                return fail(err, errlen, MODEL_EFORMAT, "grammar line %d: bad exclusion in %s",
                            line, tok);
            el->excl[el->nexcl++] = v;
            bang = nb;
        }
        e = vend;
        l = (size_t)(e - b);
        if (!l)
            return fail(err, errlen, MODEL_EFORMAT, "grammar line %d: nothing to bind in %s", line,
                        tok);
    }
    if (l >= 2 && b[0] == '<' && e[-1] == '>' && l > 2) {
        el->kind = EL_RULE;
        el->ref = find_rule(g, b + 1, l - 2, 1);
    } else if (l > 2 && b[0] == '{' && e[-1] == '}') {
        el->kind = EL_LIST;
        el->ref = load_list(g, dir, b + 1, l - 2, err, errlen);
        if (el->ref < 0) return el->ref; /* load_list wrote the message */
    } else if (l > 1 && b[0] == '$') {
        if (!is_var_name(b + 1, l - 1))
            return fail(err, errlen, MODEL_EFORMAT, "grammar line %d: %s is not a variable", line,
                        tok);
        el->kind = EL_VAR;
        el->ref = find_var(g, b + 1, l - 1);
    } else {
        if (l > TOK_MAX_WORD)
            return fail(err, errlen, MODEL_EFORMAT, "grammar line %d: word %s is too long", line,
                        tok);
        el->kind = EL_WORD;
        el->ref = intern(g, b, l);
    }
    if (el->ref < 0) return fail(err, errlen, PE_ENOMEM, "grammar line %d: out of memory", line);
    return 0;
}

/* Parse the body of one rule (the text after '='), possibly spanning lines. */
static int parse_rule(model_grammar *g, const char *dir, int ri, char *body, int line, char *err,
                      size_t errlen)
{
    struct model_rule *r = &g->rules[ri];
    if (r->defined)
        return fail(err, errlen, MODEL_EFORMAT, "grammar line %d: rule %s is defined twice", line,
                    r->name);
    r->defined = 1;
    int cap_e = 0, cap_a = 0, cap_w = 0;
    int nalts = 0, nel = 0;
    model_elem *elems = NULL;
    int *starts = NULL;
    double *weights = NULL;
    int rc = PE_ENOMEM;
    if (grow(&starts, &cap_a, 1, sizeof(int)) || grow(&weights, &cap_w, 1, sizeof(double)))
        goto out;
    starts[0] = 0;
    weights[0] = 1;
    int in_alt = 0;
    for (char *p = body;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        char *b = p;
        while (*p && !isspace((unsigned char)*p)) p++;
        int end = (p == b);
        if (end || (p - b == 1 && *b == '|')) {
            if (!in_alt && !end) {
                rc = fail(err, errlen, MODEL_EFORMAT,
                          "grammar line %d: rule %s has an empty alternative (write _)", line,
                          r->name);
                goto out;
            }
            if (!in_alt && end) {
                rc = fail(err, errlen, MODEL_EFORMAT, "grammar line %d: rule %s is empty", line,
                          r->name);
                goto out;
            }
            nalts++;
            if (grow(&starts, &cap_a, nalts + 1, sizeof(int)) ||
                grow(&weights, &cap_w, nalts + 1, sizeof(double)))
                goto out;
            starts[nalts] = nel;
            weights[nalts] = 1;
            in_alt = 0;
            if (end) break;
            continue;
        }
        if (!in_alt && *b == '@') {
            char *q;
            double w = strtod(b + 1, &q);
            if (q != p || !(w > 0 && w <= 1e6)) {
                rc = fail(err, errlen, MODEL_EFORMAT, "grammar line %d: bad weight in rule %s",
                          line, r->name);
                goto out;
            }
            weights[nalts] = w;
            continue;
        }
        in_alt = 1;
        if (p - b == 1 && *b == '_') continue; /* the empty alternative */
        if (grow(&elems, &cap_e, nel + 1, sizeof *elems)) goto out;
        rc = parse_elem(g, dir, b, p, &elems[nel], line, err, errlen);
        if (rc) goto out;
        nel++;
    }
    r = &g->rules[ri]; /* parse_elem may have moved the rules */
    r->elems = elems;
    r->nelems = nel;
    r->alt_start = starts;
    r->weight = weights;
    r->nalts = nalts;
    r->total = 0;
    for (int i = 0; i < nalts; i++) r->total += weights[i];
    return 0;
out:
    free(elems);
    free(starts);
    free(weights);
    if (rc == PE_ENOMEM && err && errlen) snprintf(err, errlen, "grammar: out of memory");
    return rc;
}

void model_grammar_free(model_grammar *g)
{
    for (int i = 0; i < g->nwords; i++) free(g->words[i]);
    free(g->words);
    free(g->cap_of);
    for (int i = 0; i < g->nrules; i++) {
        free(g->rules[i].name);
        free(g->rules[i].alt_start);
        free(g->rules[i].weight);
        free(g->rules[i].elems);
    }
    free(g->rules);
    for (int i = 0; i < g->nlists; i++) {
        free(g->lists[i].name);
        free(g->lists[i].start);
        free(g->lists[i].words);
    }
    free(g->lists);
    for (int i = 0; i < g->nvars; i++) free(g->vars[i]);
    free(g->vars);
    memset(g, 0, sizeof *g);
}

int model_grammar_load(model_grammar *g, const char *dir, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->hash = 1469598103934665603ull;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/grammar.txt", dir) >= (int)sizeof path)
        return fail(err, errlen, PE_EINVAL, "%s: path too long", dir);
    char *text;
    size_t len;
    int rc = read_file(path, &text, &len, err, errlen);
    if (rc) return rc;
    g->hash = fnv_bytes(g->hash, text, len);
    /* Cut comments, then join continuation lines (leading white space) to their rule. */
    int cur = -1, cur_line = 0;
    char *body = NULL;
    size_t body_len = 0;
    int line_no = 0;
    for (char *line = text; rc == 0;) {
        line_no++;
        char *end = strchr(line, '\n');
        int last = !end;
        if (!end) end = line + strlen(line);
        *end = 0;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *p = line;
        while (*p && isspace((unsigned char)*p)) p++;
        int starts_rule = *p && p == line;
        if (starts_rule || last) {
            if (last && *p && !starts_rule) { /* a continuation on the last line */
                size_t l = strlen(p);
                char *nb = realloc(body, body_len + l + 2);
                if (!nb) {
                    rc = PE_ENOMEM;
                    break;
                }
                body = nb;
                body[body_len++] = ' ';
                memcpy(body + body_len, p, l + 1);
                body_len += l;
            }
            if (cur >= 0) {
                rc = parse_rule(g, dir, cur, body ? body : (char *)"", cur_line, err, errlen);
                if (rc) break;
            }
            free(body);
            body = NULL;
            body_len = 0;
            cur = -1;
            if (starts_rule) {
                char *q = p;
                while (*q && (isalnum((unsigned char)*q) || *q == '_')) q++;
                char *name_end = q;
                while (*q && isspace((unsigned char)*q)) q++;
                if (name_end == p || *q != '=') {
                    rc = fail(err, errlen, MODEL_EFORMAT,
                              "%s line %d: expected \"name = alternatives\"", path, line_no);
                    break;
                }
                cur = find_rule(g, p, (size_t)(name_end - p), 1);
                if (cur < 0) {
                    rc = PE_ENOMEM;
                    break;
                }
                cur_line = line_no;
                size_t l = strlen(q + 1);
                if (!(body = malloc(l + 1))) {
                    rc = PE_ENOMEM;
                    break;
                }
                memcpy(body, q + 1, l + 1);
                body_len = l;
                if (last) {
                    rc = parse_rule(g, dir, cur, body, cur_line, err, errlen);
                    cur = -1;
                }
            }
        } else if (*p) {
            if (cur < 0) {
                rc = fail(err, errlen, MODEL_EFORMAT, "%s line %d: continuation without a rule",
                          path, line_no);
                break;
            }
            size_t l = strlen(p);
            char *nb = realloc(body, body_len + l + 2);
            if (!nb) {
                rc = PE_ENOMEM;
                break;
            }
            body = nb;
            body[body_len++] = ' ';
            memcpy(body + body_len, p, l + 1);
            body_len += l;
        }
        if (last) break;
        line = end + 1;
    }
    free(body);
    free(text);
    if (rc == PE_ENOMEM) fail(err, errlen, rc, "%s: out of memory", path);
    if (!rc) {
        for (int i = 0; i < g->nrules; i++)
            if (!g->rules[i].defined) {
                rc = fail(err, errlen, MODEL_EFORMAT,
                          "grammar: rule <%s> is used but never defined", g->rules[i].name);
                break;
            }
    }
    if (!rc && (g->start = find_rule(g, "story", 5, 0)) < 0)
        rc = fail(err, errlen, MODEL_EFORMAT, "%s: no rule named story", path);
    if (!rc) { /* capitalised forms and the articles */
        int n0 = g->nwords;
        int ids[4] = {intern(g, "a", 1), intern(g, "A", 1), intern(g, "an", 2), intern(g, "An", 2)};
        g->a = ids[0], g->a_cap = ids[1], g->an = ids[2], g->an_cap = ids[3];
        for (int i = 0; i < n0 && g->a >= 0; i++) {
            char c = g->words[i][0];
            if (islower((unsigned char)c)) {
                char tmp[TOK_MAX_WORD + 1];
                snprintf(tmp, sizeof tmp, "%s", g->words[i]);
                tmp[0] = (char)toupper((unsigned char)c);
                if (intern(g, tmp, strlen(tmp)) < 0) {
                    rc = PE_ENOMEM;
                    break;
                }
            }
        }
        if (g->a < 0 || g->a_cap < 0 || g->an < 0 || g->an_cap < 0) rc = PE_ENOMEM;
        if (!rc && !(g->cap_of = malloc((size_t)g->nwords * sizeof(int)))) rc = PE_ENOMEM;
        for (int i = 0; !rc && i < g->nwords; i++) {
            char tmp[TOK_MAX_WORD + 1];
            snprintf(tmp, sizeof tmp, "%s", g->words[i]);
            tmp[0] = (char)toupper((unsigned char)tmp[0]);
            g->cap_of[i] = intern(g, tmp, strlen(tmp));
        }
        if (rc == PE_ENOMEM) fail(err, errlen, rc, "%s: out of memory", path);
    }
    if (rc) model_grammar_free(g);
    return rc;
}

/* ---- generation ------------------------------------------------------------------------- */

typedef struct gen {
    const model_grammar *g;
    pe_rng rng;
    int *out;
    int n, cap;
    int val[MAX_VARS][MAX_VALUE];
    int vlen[MAX_VARS]; /* -1 = unbound */
    char *err;
    size_t errlen;
} gen;

static int push(gen *s, int w)
{
    if (grow(&s->out, &s->cap, s->n + 1, sizeof(int)))
        return fail(s->err, s->errlen, PE_ENOMEM, "story: out of memory");
    s->out[s->n++] = w;
    return 0;
}

static int expand_rule(gen *s, int ri, int depth);

static int produce(gen *s, const model_elem *e, int depth)
{
    const model_grammar *g = s->g;
    switch (e->kind) {
    case EL_WORD:
        return push(s, e->ref);
    case EL_RULE:
        return expand_rule(s, e->ref, depth + 1);
    case EL_LIST: {
        const struct model_list *L = &g->lists[e->ref];
        int k = (int)(pe_rng_uniform(&s->rng) * L->n);
        for (int i = L->start[k]; i < L->start[k + 1]; i++)
            if (push(s, L->words[i])) return PE_ENOMEM;
        return 0;
    }
    default:
        if (s->vlen[e->ref] < 0)
            return fail(s->err, s->errlen, MODEL_EFORMAT, "grammar: $%s is used before it is bound",
                        g->vars[e->ref]);
        for (int i = 0; i < s->vlen[e->ref]; i++)
            if (push(s, s->val[e->ref][i])) return PE_ENOMEM;
        return 0;
    }
}

static int same_value(const gen *s, int v, const int *w, int n)
{
    return s->vlen[v] == n && !memcmp(s->val[v], w, (size_t)n * sizeof *w);
}

static int expand_rule(gen *s, int ri, int depth)
{
    const struct model_rule *r = &s->g->rules[ri];
    if (depth > MAX_DEPTH)
        return fail(s->err, s->errlen, MODEL_EFORMAT,
                    "grammar: rules nest deeper than %d (a cycle?)", MAX_DEPTH);
    double u = pe_rng_uniform(&s->rng) * r->total;
    int a = 0;
    while (a < r->nalts - 1 && u >= r->weight[a]) u -= r->weight[a++];
    for (int i = r->alt_start[a]; i < r->alt_start[a + 1]; i++) {
        const model_elem *e = &r->elems[i];
        if (e->bind < 0) {
            int rc = produce(s, e, depth);
            if (rc) return rc;
            continue;
        }
        int start = s->n;
        for (int tries = 0;; tries++) {
            s->n = start;
            int rc = produce(s, e, depth);
            if (rc) return rc;
            int n = s->n - start, clash = 0;
            if (n > MAX_VALUE)
                return fail(s->err, s->errlen, MODEL_EFORMAT,
                            "grammar: a value bound to %s has more than %d words",
                            s->g->vars[e->bind], MAX_VALUE);
            for (int x = 0; x < e->nexcl; x++)
                clash |= same_value(s, e->excl[x], s->out + start, n);
            if (!clash || tries >= 64) {
                memcpy(s->val[e->bind], s->out + start, (size_t)n * sizeof(int));
                s->vlen[e->bind] = n;
                break;
            }
        }
        s->n = start;
    }
    return 0;
}

static int is_end(const char *w)
{
    return !strcmp(w, ".") || !strcmp(w, "!") || !strcmp(w, "?");
}

/* Story as grammar word ids in s->out[0..s->n). */
static int story_ids(gen *s, const model_grammar *g, uint64_t seed, uint64_t index)
{
    s->g = g;
    s->n = 0;
    for (int i = 0; i < MAX_VARS; i++) s->vlen[i] = -1;
    pe_rng_seed(&s->rng, seed ^ (index * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull));
    int rc = expand_rule(s, g->start, 0);
    if (rc) return rc;
    int cap_next = 1, quote_open = 0;
    for (int i = 0; i < s->n; i++) {
        int w = s->out[i];
        const char *t = g->words[w];
        if (w == g->a && i + 1 < s->n && strchr("aeiouAEIOU", g->words[s->out[i + 1]][0]))
            w = g->an;
        if (!strcmp(t, "\"")) {
            quote_open = !quote_open;
            if (quote_open) cap_next = 1;
        } else if (is_end(t)) {
            cap_next = 1;
        } else if (isalpha((unsigned char)t[0]) || isdigit((unsigned char)t[0])) {
            if (cap_next) w = g->cap_of[w];
            cap_next = 0;
        }
        s->out[i] = w;
    }
    return 0;
}

int model_story(const model_grammar *g, uint64_t seed, uint64_t index, const char **words, int cap,
                char *err, size_t errlen)
{
    gen s = {.err = err, .errlen = errlen};
    int rc = story_ids(&s, g, seed, index);
    if (!rc) {
        for (int i = 0; i < s.n && i < cap; i++) words[i] = g->words[s.out[i]];
        rc = s.n;
    }
    free(s.out);
    return rc;
}

/* Calls fn for every grammar word id of the stream (-1 = end of story) until n ids. */
static int stream(const model_grammar *g, uint64_t seed, size_t n, void (*fn)(void *, int, size_t),
                  void *user, char *err, size_t errlen)
{
    gen s = {.err = err, .errlen = errlen};
    size_t done = 0;
    int rc = 0;
    for (uint64_t idx = 0; done < n; idx++) {
        if ((rc = story_ids(&s, g, seed, idx))) break;
        for (int i = 0; i < s.n && done < n; i++) fn(user, s.out[i], done++);
        if (done < n) fn(user, -1, done++);
    }
    free(s.out);
    return rc;
}

typedef struct map_ctx {
    const int *map;
    int *ids;
    size_t unk;
} map_ctx;

static void map_one(void *user, int w, size_t i)
{
    map_ctx *c = user;
    int id = w < 0 ? TOK_EOS : c->map[w];
    if (id < 0) {
        id = TOK_UNK;
        c->unk++;
    }
    c->ids[i] = id;
}

int model_corpus(const model_grammar *g, const tok_vocab *v, uint64_t seed, size_t n, int *ids,
                 size_t *n_unk, char *err, size_t errlen)
{
    int *map = malloc((size_t)(g->nwords ? g->nwords : 1) * sizeof *map);
    if (!map) return fail(err, errlen, PE_ENOMEM, "corpus: out of memory");
    for (int i = 0; i < g->nwords; i++) map[i] = tok_find(v, g->words[i]);
    map_ctx c = {map, ids, 0};
    int rc = stream(g, seed, n, map_one, &c, err, errlen);
    free(map);
    if (n_unk) *n_unk = c.unk;
    return rc;
}

static void count_one(void *user, int w, size_t i)
{
    (void)i;
    size_t *counts = user;
    counts[w + 1]++;
}

/* Word order of the vocabulary: more frequent first, ties in byte order. */
static int before(const model_grammar *g, const size_t *counts, int x, int y)
{
    size_t cx = counts[x + 1], cy = counts[y + 1];
    if (cx != cy) return cx > cy;
    return strcmp(g->words[x], g->words[y]) < 0;
}

/* The vocabulary of the words counted in counts (counts[w + 1] for word w). */
static int vocab_from_counts(const model_grammar *g, const size_t *counts, tok_vocab *v, char *err,
                             size_t errlen)
{
    int *order = malloc(((size_t)g->nwords + 1) * sizeof *order);
    const char **words = malloc(((size_t)g->nwords + 2) * sizeof *words);
    int rc = PE_ENOMEM;
    if (!order || !words) {
        fail(err, errlen, rc, "vocabulary: out of memory");
        goto out;
    }
    int m = 0;
    for (int i = 0; i < g->nwords; i++)
        if (counts[i + 1]) order[m++] = i;
    for (int i = 1; i < m; i++) { /* insertion sort: a few hundred words */
        int x = order[i], j = i;
        for (; j > 0 && before(g, counts, x, order[j - 1]); j--) order[j] = order[j - 1];
        order[j] = x;
    }
    words[0] = "<unk>";
    words[1] = "<eos>";
    for (int i = 0; i < m; i++) words[i + 2] = g->words[order[i]];
    rc = tok_vocab_init(v, words, m + 2, err, errlen);
out:
    free(order);
    free(words);
    return rc;
}

int model_vocab_build(const model_grammar *g, uint64_t seed, size_t n, tok_vocab *v, char *err,
                      size_t errlen)
{
    size_t *counts = calloc((size_t)g->nwords + 1, sizeof *counts);
    if (!counts) return fail(err, errlen, PE_ENOMEM, "vocabulary: out of memory");
    int rc = stream(g, seed, n, count_one, counts, err, errlen);
    if (!rc) rc = vocab_from_counts(g, counts, v, err, errlen);
    free(counts);
    return rc;
}

typedef struct keep_ctx {
    size_t *counts;
    int *ids;
} keep_ctx;

static void keep_one(void *user, int w, size_t i)
{
    keep_ctx *c = user;
    c->counts[w + 1]++;
    c->ids[i] = w;
}

int model_corpus_vocab(const model_grammar *g, uint64_t seed, size_t n, tok_vocab *v, int *ids,
                       char *err, size_t errlen)
{
    size_t *counts = calloc((size_t)g->nwords + 1, sizeof *counts);
    int *map = malloc((size_t)(g->nwords ? g->nwords : 1) * sizeof *map);
    int rc = PE_ENOMEM;
    if (!counts || !map) {
        fail(err, errlen, rc, "corpus: out of memory");
        goto out;
    }
    keep_ctx c = {counts, ids};
    if ((rc = stream(g, seed, n, keep_one, &c, err, errlen)) ||
        (rc = vocab_from_counts(g, counts, v, err, errlen)))
        goto out;
    for (int i = 0; i < g->nwords; i++) map[i] = counts[i + 1] ? tok_find(v, g->words[i]) : -1;
    /* every word of the stream is in the vocabulary it made: no <unk> */
    for (size_t i = 0; i < n; i++) ids[i] = ids[i] < 0 ? TOK_EOS : map[ids[i]];
out:
    free(counts);
    free(map);
    return rc;
}

uint64_t model_heldout_seed(uint64_t data_seed)
{
    return data_seed ^ 0x5DEECE66DA3B1F29ull;
}
