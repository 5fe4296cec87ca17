/* tok_json.c: Hugging Face tokenizer.json with a BPE model, in its two common families.
 *
 *   byte-level (GPT-2, Llama 3, Qwen2): pre-tokenizer ByteLevel (GPT-2's split pattern) or a
 *     Sequence of Split patterns then ByteLevel; every byte of a piece is one symbol (GPT-2's
 *     byte-to-unicode map: " " is "Ġ"); merges by rank; ignore_merges (Llama 3) takes a piece
 *     that is a whole token as is.
 *   SentencePiece-style (Llama 2, TinyLlama, Mistral): normalizer Prepend("▁") + Replace(" ",
 *     "▁") or pre-tokenizer Metaspace; every character is a symbol, else its bytes as <0xXX>
 *     (byte_fallback), else <unk>; merges by rank.
 * Added tokens are split out of the text first (tok_core.c). BOS comes from the post-processor's
 * template (TemplateProcessing: "<s> $A"), overridden by tokenizer_config.json's add_bos_token;
 * EOS from tokenizer_config.json, config.json, or the usual names.
 * Refused in one line: other model types (WordPiece, Unigram, WordLevel), normalizers and
 * pre-tokenizers outside the list below. NFC is accepted and not applied (text is taken as
 * already composed), which only matters for decomposed input.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pe.h"
#include "infile.h"
#include "tok_internal.h"

#define META "\xE2\x96\x81" /* "▁" U+2581 */

enum step_kind { STEP_REGEX, STEP_DIGITS, STEP_META_SPLIT };

typedef struct step {
    enum step_kind kind;
    void *re;       /* STEP_REGEX */
    int individual; /* STEP_DIGITS: each digit alone (else runs of digits) */
} step;

enum norm_kind { NORM_PREPEND, NORM_REPLACE };

typedef struct norm {
    enum norm_kind kind;
    char *a, *b; /* PREPEND: a; REPLACE: a -> b */
    int alen, blen;
} norm;

typedef struct json_priv {
    int byte_level;   /* symbols are bytes through GPT-2's map */
    int byte_prefix;  /* ByteLevel add_prefix_space: a space before a piece without one */
    int meta;         /* Metaspace pre-tokenizer: " " -> "▁", prepend per scheme */
    int meta_prepend; /* 0 never, 1 first, 2 always */
    int byte_fallback, ignore_merges, fuse_unk;
    norm *norms;
    int n_norms;
    step *steps;
    int n_steps;
    int byte_sym[256]; /* byte-level: the token of each byte's character */
} json_priv;

static int json_probe(const unsigned char *data, size_t size)
{
    size_t i = 0;
    if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) i = 3; /* BOM */
    while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
        i++;
    return i < size && data[i] == '{';
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *type_of(const cJSON *o)
{
    const char *s = cJSON_IsObject(o) ? str_of(o, "type") : NULL;
    return s ? s : "";
}

static int bool_of(const cJSON *o, const char *key, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v);
    return dflt;
}

/* A bos_token / eos_token of tokenizer_config.json: a string or {"content": ...}. */
static const char *token_name(const cJSON *v)
{
    if (cJSON_IsString(v)) return v->valuestring;
    if (cJSON_IsObject(v)) return str_of(v, "content");
    return NULL;
}

/* The pattern of a Split: {"Regex": "..."} or {"String": "..."} (a literal, quoted). */
static char *split_pattern(const cJSON *pat)
{
    const char *re = str_of(pat, "Regex");
    if (re) return strdup(re);
    const char *lit = str_of(pat, "String");
    if (!lit) return NULL;
    char *q = malloc(strlen(lit) + 5);
    if (q) sprintf(q, "\\Q%s\\E", lit);
    return q;
}

static int add_step(pe_tok *t, json_priv *j, step s, char *err, size_t errlen)
{
    step *n = realloc(j->steps, ((size_t)j->n_steps + 1) * sizeof *n);
    if (!n) {
        tok_regex_free(s.re);
        return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    }
    j->steps = n;
    j->steps[j->n_steps++] = s;
    return 0;
}

static int add_regex(pe_tok *t, json_priv *j, const char *pattern, char *err, size_t errlen)
{
    step s = {STEP_REGEX, tok_regex_new(pattern, t->path, err, errlen), 0};
    if (!s.re) return PE_TOK_EFORMAT;
    return add_step(t, j, s, err, errlen);
}

static int pre_tokenizer(pe_tok *t, json_priv *j, const cJSON *p, int first, char *err,
                         size_t errlen)
{
    const char *ty = type_of(p);
    if (cJSON_IsNull(p) || !p) return 0;
    if (!strcmp(ty, "Sequence")) {
        const cJSON *e, *list = cJSON_GetObjectItemCaseSensitive(p, "pretokenizers");
        int i = 0, st;
        cJSON_ArrayForEach(e, list)
        {
            if ((st = pre_tokenizer(t, j, e, first && i == 0, err, errlen)) < 0) return st;
            i++;
        }
        return 0;
    }
    if (!strcmp(ty, "ByteLevel")) {
        j->byte_level = 1;
        j->byte_prefix = bool_of(p, "add_prefix_space", 1);
        if (bool_of(p, "use_regex", 1)) return add_regex(t, j, TOK_PAT_GPT2, err, errlen);
        return 0;
    }
    if (!strcmp(ty, "Split")) {
        const char *beh = str_of(p, "behavior");
        if (!beh || strcmp(beh, "Isolated") || bool_of(p, "invert", 0))
            return tok_fail(err, errlen, PE_TOK_EFORMAT,
                            "%s: a Split pre-tokenizer with behavior %s%s (pelab reads "
                            "Isolated, not inverted)",
                            t->path, beh ? beh : "(none)",
                            bool_of(p, "invert", 0) ? ", inverted" : "");
        char *pat = split_pattern(cJSON_GetObjectItemCaseSensitive(p, "pattern"));
        if (!pat)
            return tok_fail(err, errlen, PE_TOK_EFORMAT, "%s: a Split without a pattern", t->path);
        int st = add_regex(t, j, pat, err, errlen);
        free(pat);
        return st;
    }
    if (!strcmp(ty, "Digits"))
        return add_step(t, j, (step){STEP_DIGITS, NULL, bool_of(p, "individual_digits", 0)}, err,
                        errlen);
    if (!strcmp(ty, "Metaspace")) {
        if (!first)
            return tok_fail(err, errlen, PE_TOK_EFORMAT,
                            "%s: a Metaspace pre-tokenizer after another one is not read", t->path);
        const char *rep = str_of(p, "replacement");
        if (rep && strcmp(rep, META))
            return tok_fail(err, errlen, PE_TOK_EFORMAT,
                            "%s: Metaspace with replacement \"%s\" (pelab reads \"" META "\")",
                            t->path, rep);
        j->meta = 1;
        const char *scheme = str_of(p, "prepend_scheme");
        if (scheme)
            j->meta_prepend = !strcmp(scheme, "always") ? 2 : !strcmp(scheme, "first");
        else
            j->meta_prepend = bool_of(p, "add_prefix_space", 1) ? 2 : 0;
        if (bool_of(p, "split", 1))
            return add_step(t, j, (step){STEP_META_SPLIT, NULL, 0}, err, errlen);
        return 0;
    }
    return tok_fail(err, errlen, PE_TOK_EFORMAT,
                    "%s: pre-tokenizer %s is not supported (pelab reads ByteLevel, Split, "
                    "Digits, Metaspace and Sequences of them)",
                    t->path, ty[0] ? ty : "(no type)");
}

static int add_norm(json_priv *j, norm n)
{
    norm *v = realloc(j->norms, ((size_t)j->n_norms + 1) * sizeof *v);
    if (!v) return PE_ENOMEM;
    j->norms = v;
    j->norms[j->n_norms++] = n;
    return 0;
}

static int normalizer(pe_tok *t, json_priv *j, const cJSON *p, char *err, size_t errlen)
{
    const char *ty = type_of(p);
    if (!p || cJSON_IsNull(p) || !strcmp(ty, "NFC")) return 0;
    if (!strcmp(ty, "Sequence")) {
        const cJSON *e, *list = cJSON_GetObjectItemCaseSensitive(p, "normalizers");
        cJSON_ArrayForEach(e, list)
        {
            int st = normalizer(t, j, e, err, errlen);
            if (st < 0) return st;
        }
        return 0;
    }
    if (!strcmp(ty, "Prepend")) {
        const char *s = str_of(p, "prepend");
        if (!s) return tok_fail(err, errlen, PE_TOK_EFORMAT, "%s: Prepend without text", t->path);
        norm n = {NORM_PREPEND, strdup(s), NULL, (int)strlen(s), 0};
        if (!n.a || add_norm(j, n)) {
            free(n.a);
            return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        }
        return 0;
    }
    if (!strcmp(ty, "Replace")) {
        const char *a = str_of(cJSON_GetObjectItemCaseSensitive(p, "pattern"), "String");
        const char *b = str_of(p, "content");
        if (!a || !b || !*a)
            return tok_fail(err, errlen, PE_TOK_EFORMAT,
                            "%s: a Replace normalizer pelab reads replaces a String (not a "
                            "Regex) with a content",
                            t->path);
        norm n = {NORM_REPLACE, strdup(a), strdup(b), (int)strlen(a), (int)strlen(b)};
        if (!n.a || !n.b || add_norm(j, n)) {
            free(n.a);
            free(n.b);
            return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
        }
        return 0;
    }
    return tok_fail(err, errlen, PE_TOK_EFORMAT,
                    "%s: normalizer %s is not supported (pelab reads Prepend, Replace, NFC and "
                    "Sequences of them)",
                    t->path, ty[0] ? ty : "(no type)");
}

/* The first special token of a post-processor's single template, or -1. */
static int template_bos(const pe_tok *t, const cJSON *p)
{
    const char *ty = type_of(p);
    if (!strcmp(ty, "Sequence")) {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(p, "processors"))
        {
            int id = template_bos(t, e);
            if (id >= 0) return id;
        }
        return -1;
    }
    if (strcmp(ty, "TemplateProcessing")) return -1;
    const cJSON *single = cJSON_GetObjectItemCaseSensitive(p, "single");
    const cJSON *first = cJSON_GetArrayItem(single, 0);
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(first, "SpecialToken");
    const char *name = str_of(sp, "id");
    if (!name) return -1;
    const cJSON *def = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(p, "special_tokens"), name);
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(def, "ids");
    const cJSON *id = cJSON_GetArrayItem(ids, 0);
    if (cJSON_IsNumber(id) && id->valuedouble >= 0 && id->valuedouble < t->n_vocab)
        return (int)id->valuedouble;
    return pe_tok_find(t, name);
}

static cJSON *read_json_beside(const char *dir, const char *name)
{
    if (!dir) return NULL;
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    /* through pe_infile: a FIFO or a device named tokenizer_config.json never blocks */
    char *buf = NULL;
    size_t n = 0;
    if (access(p, F_OK) != 0 || pe_infile_read(p, "", (size_t)64 << 20, &buf, &n, NULL, 0) != 0) {
        free(buf);
        return NULL;
    }
    cJSON *j = buf ? cJSON_ParseWithLength(buf, n) : NULL;
    free(buf);
    return j;
}

static int id_of_json(const pe_tok *t, const cJSON *v)
{
    if (cJSON_IsArray(v)) v = cJSON_GetArrayItem(v, 0);
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < t->n_vocab)
        return (int)v->valuedouble;
    return -1;
}

/* BOS, EOS and whether BOS is added: the template, then tokenizer_config.json, config.json, and
 * the usual names. */
static void special_ids(pe_tok *t, const cJSON *root, const char *dir)
{
    int tb = template_bos(t, cJSON_GetObjectItemCaseSensitive(root, "post_processor"));
    if (tb >= 0) t->bos = tb, t->adds_bos = 1;
    cJSON *cfg = read_json_beside(dir, "config.json");
    if (cfg) {
        int b = id_of_json(t, cJSON_GetObjectItemCaseSensitive(cfg, "bos_token_id"));
        int e = id_of_json(t, cJSON_GetObjectItemCaseSensitive(cfg, "eos_token_id"));
        if (t->bos < 0 && b >= 0) t->bos = b;
        if (e >= 0) t->eos = e;
        cJSON_Delete(cfg);
    }
    cJSON *tc = read_json_beside(dir, "tokenizer_config.json");
    if (tc) {
        const char *b = token_name(cJSON_GetObjectItemCaseSensitive(tc, "bos_token"));
        const char *e = token_name(cJSON_GetObjectItemCaseSensitive(tc, "eos_token"));
        if (b && pe_tok_find(t, b) >= 0) t->bos = pe_tok_find(t, b);
        if (e && pe_tok_find(t, e) >= 0) t->eos = pe_tok_find(t, e);
        const cJSON *add = cJSON_GetObjectItemCaseSensitive(tc, "add_bos_token");
        if (cJSON_IsBool(add)) t->adds_bos = cJSON_IsTrue(add);
        cJSON_Delete(tc);
    }
    static const char *const bos_names[] = {"<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>"};
    static const char *const eos_names[] = {"</s>", "<|end_of_text|>", "<|endoftext|>", "<eos>"};
    for (int i = 0; t->bos < 0 && i < 4; i++) t->bos = pe_tok_find(t, bos_names[i]);
    for (int i = 0; t->eos < 0 && i < 4; i++) t->eos = pe_tok_find(t, eos_names[i]);
    if (t->bos >= 0) t->special[t->bos] = 1;
    if (t->eos >= 0) t->special[t->eos] = 1;
}

/* The bytes a vocabulary entry decodes to. */
static int out_bytes(const json_priv *j, const char *key, int len, char *out)
{
    int k = 0;
    if (j->byte_level) {
        for (int i = 0; i < len;) {
            unsigned cp;
            int n = tok_utf8_get((const unsigned char *)key + i, (size_t)(len - i), &cp);
            int b = n ? tok_cp_byte(cp) : -1;
            if (b >= 0) {
                out[k++] = (char)b;
                i += n;
            } else { /* not from the map: kept as written */
                n = n ? n : 1;
                memcpy(out + k, key + i, (size_t)n);
                k += n;
                i += n;
            }
        }
        return k;
    }
    if (j->byte_fallback && len == 6 && !memcmp(key, "<0x", 3) && key[5] == '>') {
        unsigned v;
        char hex[3] = {key[3], key[4], 0};
        if (sscanf(hex, "%2X", &v) == 1) {
            out[0] = (char)v;
            return 1;
        }
    }
    for (int i = 0; i < len;) { /* "▁" is a space */
        if (len - i >= 3 && !memcmp(key + i, META, 3)) {
            out[k++] = ' ';
            i += 3;
        } else {
            out[k++] = key[i++];
        }
    }
    return k;
}

static int json_load(pe_tok *t, const unsigned char *data, size_t size, const char *dir, char *err,
                     size_t errlen)
{
    json_priv *j = calloc(1, sizeof *j);
    if (!j) return tok_fail(err, errlen, PE_ENOMEM, "out of memory");
    t->priv = j;
    cJSON *root = cJSON_ParseWithLength((const char *)data, size);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= (const char *)data && at <= (const char *)data + size
                       ? (long)(at - (const char *)data)
                       : -1;
        return tok_fail(err, errlen, PE_TOK_EFORMAT, "%s: not valid JSON (near byte %ld)", t->path,
                        off);
    }
    int st = PE_TOK_EFORMAT;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    const char *mty = type_of(model);
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (!cJSON_IsObject(model)) {
        st = tok_fail(err, errlen, PE_TOK_EFORMAT, "%s: no \"model\" object: not a tokenizer.json",
                      t->path);
        goto done;
    }
    if (strcmp(mty, "BPE") && !(mty[0] == 0 && merges)) {
        st = tok_fail(err, errlen, PE_TOK_EFORMAT,
                      "%s: model type %s is not supported (pelab reads BPE tokenizers)", t->path,
                      mty[0] ? mty : "(none)");
        goto done;
    }
    if (!cJSON_IsObject(vocab) || !cJSON_IsArray(merges)) {
        st = tok_fail(err, errlen, PE_TOK_EFORMAT,
                      "%s: the BPE model needs a vocab object and a merges list", t->path);
        goto done;
    }
    const char *cont = str_of(model, "continuing_subword_prefix");
    const char *eow = str_of(model, "end_of_word_suffix");
    if ((cont && *cont) || (eow && *eow)) {
        st = tok_fail(err, errlen, PE_TOK_EFORMAT,
                      "%s: BPE with a continuing_subword_prefix or end_of_word_suffix is not "
                      "supported",
                      t->path);
        goto done;
    }
    if ((st = normalizer(t, j, cJSON_GetObjectItemCaseSensitive(root, "normalizer"), err, errlen)) <
        0)
        goto done;
    if ((st = pre_tokenizer(t, j, cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"), 1, err,
                            errlen)) < 0)
        goto done;
    /* a ByteLevel decoder decodes through the byte map even without a ByteLevel pre-tokenizer */
    if (!strcmp(type_of(cJSON_GetObjectItemCaseSensitive(root, "decoder")), "ByteLevel"))
        j->byte_level = 1;
    j->byte_fallback = bool_of(model, "byte_fallback", 0);
    j->ignore_merges = bool_of(model, "ignore_merges", 0);
    j->fuse_unk = bool_of(model, "fuse_unk", 0);
    /* ids: the vocabulary and the added tokens; holes stay empty */
    int maxid = -1;
    const cJSON *e;
    cJSON_ArrayForEach(e, vocab)
    {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= (1 << 24)) {
            st = tok_fail(err, errlen, PE_TOK_EFORMAT,
                          "%s: vocab entry \"%.40s\" has no id in 0..2^24", t->path,
                          e->string ? e->string : "");
            goto done;
        }
        if ((int)e->valuedouble > maxid) maxid = (int)e->valuedouble;
    }
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    cJSON_ArrayForEach(e, added)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= (1 << 24) ||
            !str_of(e, "content")) {
            st = tok_fail(err, errlen, PE_TOK_EFORMAT,
                          "%s: an added token without an id in 0..2^24 or a "
                          "content",
                          t->path);
            goto done;
        }
        if ((int)id->valuedouble > maxid) maxid = (int)id->valuedouble;
    }
    if (maxid < 0) {
        st = tok_fail(err, errlen, PE_TOK_EFORMAT, "%s: an empty vocabulary", t->path);
        goto done;
    }
    t->n_vocab = maxid + 1;
    if (tok_strs_set(&t->key, maxid, "", 0) < 0 || tok_strs_set(&t->out, maxid, "", 0) < 0)
        goto nomem;
    unsigned char *in_vocab = calloc((size_t)t->n_vocab, 1);
    if (!in_vocab) goto nomem;
    char *ob = NULL;
    size_t ob_cap = 0;
    cJSON_ArrayForEach(e, vocab)
    {
        int id = (int)e->valuedouble, len = (int)strlen(e->string);
        if ((size_t)len + 1 > ob_cap) {
            ob_cap = (size_t)len * 2 + 16;
            char *n = realloc(ob, ob_cap);
            if (!n) goto nomem2;
            ob = n;
        }
        if (tok_strs_set(&t->key, id, e->string, len) < 0) goto nomem2;
        if (tok_strs_set(&t->out, id, ob, out_bytes(j, e->string, len, ob)) < 0) goto nomem2;
        in_vocab[id] = 1;
    }
    t->special = calloc((size_t)t->n_vocab, 1);
    int na = cJSON_GetArraySize(added);
    t->added = calloc((size_t)na + 1, sizeof *t->added);
    if (!t->special || !t->added) goto nomem2;
    cJSON_ArrayForEach(e, added)
    {
        int id = (int)cJSON_GetObjectItemCaseSensitive(e, "id")->valuedouble;
        const char *c = str_of(e, "content");
        int len = (int)strlen(c);
        tok_added *a = &t->added[t->n_added];
        a->id = id;
        a->len = len;
        a->content = strdup(c);
        if (!a->content) goto nomem2;
        t->n_added++;
        a->special = (unsigned char)bool_of(e, "special", 0);
        a->lstrip = (unsigned char)bool_of(e, "lstrip", 0);
        a->rstrip = (unsigned char)bool_of(e, "rstrip", 0);
        a->single_word = (unsigned char)bool_of(e, "single_word", 0);
        a->normalized = (unsigned char)bool_of(e, "normalized", 0);
        if (!in_vocab[id] &&
            (tok_strs_set(&t->key, id, c, len) < 0 || tok_strs_set(&t->out, id, c, len) < 0))
            goto nomem2;
        if (in_vocab[id]) { /* a control token in the vocabulary shows as written */
            if (tok_strs_set(&t->out, id, c, len) < 0) goto nomem2;
        }
    }
    free(in_vocab);
    in_vocab = NULL;
    free(ob);
    ob = NULL;
    if (tok_map_build(&t->map, &t->key) < 0) goto nomem;
    /* merges: "a b" strings or ["a", "b"] pairs, by rank */
    int rank = 0;
    cJSON_ArrayForEach(e, merges)
    {
        const char *a = NULL, *b = NULL;
        size_t al = 0, bl = 0;
        if (cJSON_IsString(e)) {
            const char *sp = strchr(e->valuestring, ' ');
            if (sp) a = e->valuestring, al = (size_t)(sp - a), b = sp + 1, bl = strlen(b);
        } else if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 &&
                   cJSON_IsString(cJSON_GetArrayItem(e, 0)) &&
                   cJSON_IsString(cJSON_GetArrayItem(e, 1))) {
            a = cJSON_GetArrayItem(e, 0)->valuestring, al = strlen(a);
            b = cJSON_GetArrayItem(e, 1)->valuestring, bl = strlen(b);
        }
        if (!a) {
            st = tok_fail(err, errlen, PE_TOK_EFORMAT,
                          "%s: merge %d is neither \"a b\" nor [\"a\", \"b\"]", t->path, rank);
            goto done;
        }
        int l = tok_map_get(&t->map, &t->key, a, al), r = tok_map_get(&t->map, &t->key, b, bl);
        char *ab = malloc(al + bl + 1);
        if (!ab) goto nomem;
        memcpy(ab, a, al);
        memcpy(ab + al, b, bl);
        int m = tok_map_get(&t->map, &t->key, ab, al + bl);
        free(ab);
        if (l < 0 || r < 0 || m < 0) {
            st = tok_fail(err, errlen, PE_TOK_EFORMAT,
                          "%s: merge %d (\"%.*s\" + \"%.*s\") names a token not in the "
                          "vocabulary",
                          t->path, rank, (int)(al > 40 ? 40 : al), a, (int)(bl > 40 ? 40 : bl), b);
            goto done;
        }
        if (tok_pairs_add(&t->pairs, l, r, m, rank) < 0) goto nomem;
        rank++;
    }
    const char *unk = str_of(model, "unk_token");
    if (unk) t->unk = tok_map_get(&t->map, &t->key, unk, strlen(unk));
    /* the decoder: SentencePiece-style ones drop the text's first space */
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "decoder");
    if (!strcmp(type_of(dec), "Metaspace")) t->strip_space = j->meta_prepend > 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(dec, "decoders"))
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "content");
        const cJSON *start = cJSON_GetObjectItemCaseSensitive(e, "start");
        if (!strcmp(type_of(e), "Strip") && cJSON_IsString(c) && !strcmp(c->valuestring, " ") &&
            cJSON_IsNumber(start) && start->valuedouble >= 1)
            t->strip_space = 1;
        if (!strcmp(type_of(e), "Metaspace")) t->strip_space = j->meta_prepend > 0;
    }
    if (j->byte_level) {
        for (int b = 0; b < 256; b++) {
            char u[4];
            int n = tok_utf8_put(tok_byte_cp(b), u);
            j->byte_sym[b] = tok_map_get(&t->map, &t->key, u, (size_t)n);
        }
    }
    special_ids(t, root, dir);
    snprintf(t->name, sizeof t->name, "tokenizer.json (%s BPE)",
             j->byte_level ? "byte-level" : "SentencePiece-style");
    st = 0;
    goto done;
nomem2:
    free(in_vocab);
    free(ob);
nomem:
    st = tok_fail(err, errlen, PE_ENOMEM, "out of memory");
done:
    cJSON_Delete(root);
    return st;
}

/* ---- encoding --------------------------------------------------------------------------- */

/* The text after the normalizer: bytes, and for each byte the input range it came from. */
typedef struct ntext {
    char *s;
    int *o0, *o1;
    size_t n, cap;
} ntext;

static int nt_put(ntext *t, const char *p, size_t n, int o0, int o1)
{
    if (t->n + n > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        while (cap < t->n + n) cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) return PE_ENOMEM;
        t->s = s;
        int *a = realloc(t->o0, cap * sizeof *a);
        if (!a) return PE_ENOMEM;
        t->o0 = a;
        int *b = realloc(t->o1, cap * sizeof *b);
        if (!b) return PE_ENOMEM;
        t->o1 = b;
        t->cap = cap;
    }
    for (size_t i = 0; i < n; i++) {
        t->s[t->n + i] = p[i];
        t->o0[t->n + i] = o0 < 0 ? o1 : o0;
        t->o1[t->n + i] = o1;
    }
    t->n += n;
    return 0;
}

static void nt_free(ntext *t)
{
    free(t->s);
    free(t->o0);
    free(t->o1);
}

/* Replace a with b everywhere in src (keeping each piece's input range), into dst. */
static int nt_replace(const ntext *src, ntext *dst, const char *a, int al, const char *b, int bl)
{
    for (size_t i = 0; i < src->n;) {
        if (src->n - i >= (size_t)al && !memcmp(src->s + i, a, (size_t)al)) {
            if (nt_put(dst, b, (size_t)bl, src->o0[i], src->o1[i + (size_t)al - 1]) < 0)
                return PE_ENOMEM;
            i += (size_t)al;
        } else {
            if (nt_put(dst, src->s + i, 1, src->o0[i], src->o1[i]) < 0) return PE_ENOMEM;
            i++;
        }
    }
    return 0;
}

static int nt_prepend(ntext *t, const char *p, int n, int at)
{
    ntext d = {0};
    if (nt_put(&d, p, (size_t)n, -1, at) < 0) {
        nt_free(&d);
        return PE_ENOMEM;
    }
    for (size_t i = 0; i < t->n; i++)
        if (nt_put(&d, t->s + i, 1, t->o0[i], t->o1[i]) < 0) {
            nt_free(&d);
            return PE_ENOMEM;
        }
    nt_free(t);
    *t = d;
    return 0;
}

typedef struct range {
    size_t a, b;
} range;

typedef struct ranges {
    range *v;
    int n, cap;
} ranges;

static int rg_push(ranges *r, size_t a, size_t b)
{
    if (b <= a) return 0;
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 64;
        range *v = realloc(r->v, (size_t)cap * sizeof *v);
        if (!v) return PE_ENOMEM;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (range){a, b};
    return 0;
}

typedef struct split_ctx {
    ranges *dst;
    size_t base;
} split_ctx;

static int split_piece(void *ctx, size_t s, size_t e)
{
    split_ctx *c = ctx;
    return rg_push(c->dst, c->base + s, c->base + e);
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int apply_step(const step *s, const ntext *nt, const ranges *src, ranges *dst, char *err,
                      size_t errlen)
{
    for (int i = 0; i < src->n; i++) {
        size_t a = src->v[i].a, b = src->v[i].b;
        int st = 0;
        if (s->kind == STEP_REGEX) {
            split_ctx c = {dst, a};
            st = tok_regex_split(s->re, nt->s + a, b - a, split_piece, &c, err, errlen);
        } else if (s->kind == STEP_DIGITS) {
            size_t p = a;
            while (p < b && !st) {
                size_t q = p + 1;
                if (is_digit(nt->s[p])) {
                    if (!s->individual)
                        while (q < b && is_digit(nt->s[q])) q++;
                } else {
                    while (q < b && !is_digit(nt->s[q])) q++;
                }
                st = rg_push(dst, p, q);
                p = q;
            }
        } else { /* Metaspace split: each "▁" starts a piece (MergedWithNext) */
            size_t p = a;
            for (size_t q = a + 1; q < b && !st; q++)
                if (b - q >= 3 && !memcmp(nt->s + q, META, 3)) st = rg_push(dst, p, q), p = q;
            if (!st) st = rg_push(dst, p, b);
        }
        if (st < 0) return st;
    }
    return 0;
}

/* Symbols of one piece nt[a..b): bytes (byte-level) or characters with byte fallback. */
static int piece_syms(const pe_tok *t, const json_priv *j, const ntext *nt, size_t a, size_t b,
                      int base, tok_sym *s, char *err, size_t errlen)
{
    int n = 0;
    const unsigned char *p = (const unsigned char *)nt->s;
    if (j->byte_level) {
        for (size_t i = a; i < b; i++) {
            int id = j->byte_sym[p[i]];
            if (id < 0)
                return tok_fail(err, errlen, PE_EINVAL,
                                "%s: byte 0x%02X has no token in this byte-level vocabulary",
                                t->path, p[i]);
            s[n++] = (tok_sym){id, base + nt->o0[i], base + nt->o1[i]};
        }
        return n;
    }
    for (size_t i = a; i < b;) {
        int len = tok_utf8_valid(p + i, b - i);
        if (len == 0) len = 1; /* an invalid byte: its own symbol */
        int id = tok_map_get(&t->map, &t->key, nt->s + i, (size_t)len);
        int o0 = base + nt->o0[i], o1 = base + nt->o1[i + (size_t)len - 1];
        if (id >= 0) {
            s[n++] = (tok_sym){id, o0, o1};
        } else if (j->byte_fallback) {
            for (int k = 0; k < len; k++) {
                char hex[8];
                snprintf(hex, sizeof hex, "<0x%02X>", p[i + (size_t)k]);
                int bid = tok_map_get(&t->map, &t->key, hex, 6);
                if (bid < 0) bid = t->unk;
                if (bid < 0)
                    return tok_fail(err, errlen, PE_EINVAL,
                                    "%s: byte 0x%02X has no <0x%02X> token and there is no "
                                    "unk_token",
                                    t->path, p[i + (size_t)k], p[i + (size_t)k]);
                s[n++] = (tok_sym){bid, base + nt->o0[i + (size_t)k], base + nt->o1[i + (size_t)k]};
            }
        } else if (t->unk >= 0) {
            if (j->fuse_unk && n > 0 && s[n - 1].id == t->unk)
                s[n - 1].end = o1;
            else
                s[n++] = (tok_sym){t->unk, o0, o1};
        } else {
            return tok_fail(err, errlen, PE_EINVAL,
                            "%s: the character at byte %d is not in the vocabulary and there "
                            "is no unk_token",
                            t->path, o0);
        }
        i += (size_t)len;
    }
    return n;
}

static int json_encode(const pe_tok *t, const char *text, size_t len, int base, pe_tok_ids *out,
                       char *err, size_t errlen)
{
    const json_priv *j = t->priv;
    ntext nt = {0}, tmp = {0};
    ranges r1 = {0}, r2 = {0};
    tok_sym *s = NULL;
    int st = 0;
    for (size_t i = 0; i < len && !st; i++) st = nt_put(&nt, text + i, 1, (int)i, (int)i + 1);
    for (int k = 0; k < j->n_norms && !st && nt.n; k++) {
        const norm *m = &j->norms[k];
        if (m->kind == NORM_PREPEND) {
            st = nt_prepend(&nt, m->a, m->alen, 0);
        } else {
            tmp.n = 0;
            st = nt_replace(&nt, &tmp, m->a, m->alen, m->b, m->blen);
            ntext x = nt;
            nt = tmp;
            tmp = x;
        }
    }
    if (!st && j->meta && nt.n) {
        tmp.n = 0;
        st = nt_replace(&nt, &tmp, " ", 1, META, 3);
        ntext x = nt;
        nt = tmp;
        tmp = x;
        if (!st && (j->meta_prepend == 2 || (j->meta_prepend == 1 && base == 0)) &&
            !(nt.n >= 3 && !memcmp(nt.s, META, 3)))
            st = nt_prepend(&nt, META, 3, 0);
    }
    if (!st && j->byte_prefix && nt.n && nt.s[0] != ' ') st = nt_prepend(&nt, " ", 1, 0);
    if (!st) st = rg_push(&r1, 0, nt.n);
    for (int k = 0; k < j->n_steps && !st; k++) {
        r2.n = 0;
        st = apply_step(&j->steps[k], &nt, &r1, &r2, err, errlen);
        ranges x = r1;
        r1 = r2;
        r2 = x;
    }
    if (!st && nt.n) {
        s = malloc(nt.n * sizeof *s);
        if (!s) st = PE_ENOMEM;
    }
    for (int i = 0; i < r1.n && !st; i++) {
        size_t a = r1.v[i].a, b = r1.v[i].b;
        if (j->ignore_merges) {
            /* a whole piece that is a token is taken as is (Llama 3) */
            int id = -1;
            if (j->byte_level) {
                char buf[1024];
                size_t k = 0;
                for (size_t q = a; q < b && k + 4 < sizeof buf; q++)
                    k += (size_t)tok_utf8_put(tok_byte_cp((unsigned char)nt.s[q]), buf + k);
                if (b - a < sizeof buf / 4) id = tok_map_get(&t->map, &t->key, buf, k);
            } else {
                id = tok_map_get(&t->map, &t->key, nt.s + a, b - a);
            }
            if (id >= 0) {
                st = tok_push(out, id, base + nt.o0[a], base + nt.o1[b - 1]);
                continue;
            }
        }
        int n = piece_syms(t, j, &nt, a, b, base, s, err, errlen);
        if (n < 0) {
            st = n;
            break;
        }
        n = tok_merge(&t->pairs, s, n);
        if (n < 0) st = n;
        for (int k = 0; k < n && !st; k++) st = tok_push(out, s[k].id, s[k].start, s[k].end);
    }
    /* an input byte the normalizer dropped would leave a gap: spans stay contiguous */
    free(s);
    nt_free(&nt);
    nt_free(&tmp);
    free(r1.v);
    free(r2.v);
    if (st == PE_ENOMEM) tok_fail(err, errlen, PE_TOK_EFORMAT, "out of memory");
    return st;
}

static void json_free(pe_tok *t)
{
    json_priv *j = t->priv;
    if (!j) return;
    for (int i = 0; i < j->n_norms; i++) free(j->norms[i].a), free(j->norms[i].b);
    free(j->norms);
    for (int i = 0; i < j->n_steps; i++) tok_regex_free(j->steps[i].re);
    free(j->steps);
    free(j);
    t->priv = NULL;
}

const tok_format tok_format_json = {
    .name = "tokenizer.json",
    .probe = json_probe,
    .load = json_load,
    .encode = json_encode,
    .free_priv = json_free,
};
