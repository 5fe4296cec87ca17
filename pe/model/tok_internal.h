/* tok_internal.h: what the tokenizer formats share (not for app/): the pe_tok struct, the format
 * table entry, the string and pair hash maps, the BPE merge engine, the added-token splitter and
 * the PCRE2 split patterns. */
#ifndef PELAB_TOK_INTERNAL_H
#define PELAB_TOK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tok.h"

/* A list of byte strings, one per id, in one pool. */
typedef struct tok_strs {
    int n, cap;
    size_t *off;
    int *len;
    char *pool;
    size_t used, pool_cap;
} tok_strs;
int tok_strs_add(tok_strs *s, const char *p, int len);        /* returns the index or PE_ENOMEM */
int tok_strs_set(tok_strs *s, int i, const char *p, int len); /* grows to i+1; empty holes */
void tok_strs_free(tok_strs *s);
static inline const char *tok_str(const tok_strs *s, int i)
{
    return s->pool + s->off[i];
}

/* String -> id (open addressing over the strings of a tok_strs; the first id added wins). */
typedef struct tok_map {
    int *slot; /* -1 empty */
    size_t mask;
} tok_map;
int tok_map_build(tok_map *m, const tok_strs *s);
int tok_map_get(const tok_map *m, const tok_strs *s, const char *p, size_t len);
void tok_map_free(tok_map *m);

/* (left id, right id) -> merged id and its priority (lower merges first). */
typedef struct tok_pair {
    uint64_t key; /* left << 32 | right; UINT64_MAX empty */
    int merged;
    double prio;
} tok_pair;
typedef struct tok_pairs {
    tok_pair *slot;
    size_t mask, n;
} tok_pairs;
/* Adds (l, r); an existing pair keeps the lower priority. */
int tok_pairs_add(tok_pairs *p, int l, int r, int merged, double prio);
const tok_pair *tok_pairs_get(const tok_pairs *p, int l, int r);
void tok_pairs_free(tok_pairs *p);
/* Every split of every key string into two keys that exist: (left, right) -> the string, with
 * prio_of(id). run.c's merge rule and tiktoken's ranks both are this table. */
int tok_pairs_from_vocab(tok_pairs *p, const tok_strs *keys, const tok_map *map,
                         double (*prio_of)(const pe_tok *t, int id), const pe_tok *t);

/* One symbol of a word being merged: a token id and the input bytes it covers. */
typedef struct tok_sym {
    int id, start, end;
} tok_sym;
/* Merge adjacent symbols, the pair of lowest priority first and the leftmost among equals, until
 * no pair merges. Compacts s and returns the new count, or PE_ENOMEM. */
int tok_merge(const tok_pairs *p, tok_sym *s, int n);

/* An added token (tokenizer.json added_tokens, tiktoken's specials). */
typedef struct tok_added {
    int id;
    char *content;
    int len;
    unsigned char special, lstrip, rstrip, single_word, normalized;
} tok_added;

typedef struct tok_format tok_format;

struct pe_tok {
    const tok_format *fmt;
    char path[1024];
    char name[64];          /* pe_tok_format's text */
    int n_vocab;            /* ids 0 .. n_vocab-1 */
    tok_strs key;           /* each id as the model stores it ("▁the", "Ġthe", raw bytes) */
    tok_strs out;           /* the bytes each id decodes to */
    unsigned char *special; /* (n_vocab) 1: control or special added token */
    tok_map map;            /* key -> id */
    tok_pairs pairs;        /* merges */
    tok_added *added;       /* added tokens, longest first */
    int n_added;
    int bos, eos, unk; /* -1: none */
    int adds_bos;      /* PE_TOK_BOS prepends bos */
    int strip_space;   /* decoding drops the text's first space (SentencePiece's dummy prefix) */
    int runc;          /* run.c's decode_next rule: a piece after BOS loses its leading space */
    void *priv;        /* the format's own state */
};

struct tok_format {
    const char *name; /* "tokenizer.json" */
    /* 1 when data looks like this format (decided on content, not on the file name) */
    int (*probe)(const unsigned char *data, size_t size);
    /* fill t (zeroed but for path) from the file's bytes; dir: its folder, for side files
     * (tokenizer_config.json), or NULL */
    int (*load)(pe_tok *t, const unsigned char *data, size_t size, const char *dir, char *err,
                size_t errlen);
    /* encode one segment of text between added tokens; offsets in spans are relative to
     * base (the segment's offset in the whole input) */
    int (*encode)(const pe_tok *t, const char *text, size_t len, int base, pe_tok_ids *out,
                  char *err, size_t errlen);
    void (*free_priv)(pe_tok *t);
};

extern const tok_format tok_format_bin, tok_format_json, tok_format_tiktoken;

int tok_fail(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tok_push(pe_tok_ids *out, int id, int start, int end);
/* Length of the UTF-8 sequence that starts with byte c (1 for a stray or invalid byte). */
int tok_utf8_len(unsigned char c);
/* Number of bytes of a valid UTF-8 character at p (at most n), or 0 if it is not one. */
int tok_utf8_valid(const unsigned char *p, size_t n);
/* Sort the added tokens longest first and mark their ids special where they are. */
int tok_added_finish(pe_tok *t, char *err, size_t errlen);

/* A split pattern (PCRE2, UTF + UCP, invalid UTF-8 never matches); NULL with err set. */
void *tok_regex_new(const char *pattern, const char *path, char *err, size_t errlen);
/* Calls piece() for every match and every gap between matches of text[0..len) (HF's Split with
 * behaviour Isolated). Stops at the first negative status and returns it. */
int tok_regex_split(void *re, const char *text, size_t len,
                    int (*piece)(void *ctx, size_t start, size_t end), void *ctx, char *err,
                    size_t errlen);
void tok_regex_free(void *re);

/* The patterns of the known pre-tokenizers. */
#define TOK_PAT_GPT2                                                                               \
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
#define TOK_PAT_LLAMA3                                                                             \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "                     \
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* GPT-2's byte-to-unicode map: the code point that stands for byte b ("Ġ" for ' '). */
unsigned tok_byte_cp(int b);
/* The byte a code point stands for in that map, or -1. */
int tok_cp_byte(unsigned cp);
int tok_utf8_put(unsigned cp, char *out); /* writes 1-4 bytes, returns the count */
/* Decode one code point at p (n bytes left); returns its length, 0 if invalid. */
int tok_utf8_get(const unsigned char *p, size_t n, unsigned *cp);

#endif
