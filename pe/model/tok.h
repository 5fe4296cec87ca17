/* tok.h: the tokenizers of real models (llama2.c tokenizer.bin, Hugging Face tokenizer.json,
 * tiktoken ranks files), behind one interface.
 *
 *   pe_tok *t = pe_tok_open("model-folder/", err, sizeof err);  // or a tokenizer file
 *   pe_tok_ids ids = {0};
 *   pe_tok_encode(t, text, strlen(text), PE_TOK_BOS, &ids, err, sizeof err);
 *   // ids.ids[i] covers text bytes [ids.spans[i].start, ids.spans[i].end)
 *   pe_tok_ids_free(&ids); pe_tok_free(t);
 *
 * Formats (one file each, listed in tok_core.c's table):
 *   tokenizer.bin    llama2.c's export (run.c's encoder: scores, greedy merges, byte fallback)
 *   tokenizer.json   Hugging Face BPE: byte-level (GPT-2, Llama 3, Qwen2) or SentencePiece-style
 *                    (Llama 2, TinyLlama, Mistral)
 *   tokenizer.model  tiktoken ranks (Meta's Llama 3 original/tokenizer.model)
 * Like the rest of pe/, nothing here prints or exits: functions return 0 or a negative PE_E* /
 * PE_TOK_E* status and write one line into err (errlen bytes) when err is not NULL.
 */
#ifndef PELAB_TOK_H
#define PELAB_TOK_H

#include <stddef.h>

enum {
    PE_TOK_EFORMAT = -30,  /* the file is not a tokenizer pelab reads, or it is malformed */
    PE_TOK_EIO = -31,      /* a file could not be opened or read */
    PE_TOK_ENOTFOUND = -32 /* no tokenizer beside a model */
};

/* encode flags */
enum {
    PE_TOK_BOS = 1,        /* prepend BOS where the tokenizer's convention does (run.c always;
                            * tokenizer.json: its post-processor / tokenizer_config.json) */
    PE_TOK_NO_SPECIAL = 2, /* special tokens written in the text ("<|eot_id|>") stay plain text */
};

typedef struct pe_tok pe_tok;

/* Byte range [start, end) of the input that one token covers. The spans of one encoding are in
 * order and their concatenation is the whole input (when there is a token at all); a token that
 * covers no input (BOS, the dummy prefix when it stands alone) has start == end. */
typedef struct pe_tok_span {
    int start, end;
} pe_tok_span;

/* A growable list of ids and their spans; a zeroed struct is empty. Encoding appends. */
typedef struct pe_tok_ids {
    int n, cap;
    int *ids;
    pe_tok_span *spans;
} pe_tok_ids;
void pe_tok_ids_free(pe_tok_ids *v);

/* Open a tokenizer. path is a tokenizer file (the format is told by its content), a model folder,
 * or a file inside one (model.safetensors, config.json, a llama2.c model .bin): then the folder
 * is searched for tokenizer.json, tokenizer.model, original/tokenizer.model, tokenizer.bin, in
 * that order. tokenizer_config.json beside a tokenizer.json is read for add_bos_token. Returns
 * NULL with one line in err: a missing tokenizer names what was looked for and where. */
pe_tok *pe_tok_open(const char *path, char *err, size_t errlen);
/* The same from bytes in memory (a tokenizer file's content; fuzzing, tests). name is used in
 * messages. */
pe_tok *pe_tok_open_mem(const char *name, const void *data, size_t size, char *err, size_t errlen);
void pe_tok_free(pe_tok *t);

/* Encode len bytes of text (any bytes; invalid UTF-8 is kept as byte tokens or <unk>). Appends
 * to out. Returns the number of tokens appended, or a negative status. */
int pe_tok_encode(const pe_tok *t, const char *text, size_t len, int flags, pe_tok_ids *out,
                  char *err, size_t errlen);

/* Decode ids into text, as the tokenizer's decoder does (SentencePiece: "▁" is a space and the
 * first space of the text, the dummy prefix, is dropped; byte-level: the bytes; byte tokens
 * <0xXX>: the byte). Special tokens are written as their text. ids out of range: PE_EINVAL.
 * *out is malloc'ed and NUL-terminated (the text may hold NULs: *outlen). */
int pe_tok_decode(const pe_tok *t, const int *ids, int n, char **out, size_t *outlen, char *err,
                  size_t errlen);
/* run.c's streaming decode: the bytes token id adds after token prev (prev < 0: none). After BOS
 * a SentencePiece piece loses its leading space, as run.c prints it. Writes at most cap bytes
 * with a NUL; returns the length it needs (like snprintf), or -1 for an id out of range. */
int pe_tok_decode_next(const pe_tok *t, int prev, int id, char *buf, size_t cap);

/* The text one token shows (token strips, ticks, exports): "▁" and "Ġ" as spaces, byte tokens
 * as their byte, special tokens as written ("<s>"). Control characters and invalid UTF-8 are
 * left for the caller to escape. Writes at most cap bytes with a NUL; returns the length it
 * needs, or -1 for an id out of range. */
int pe_tok_token_text(const pe_tok *t, int id, char *buf, size_t cap);
/* The display texts of a sequence: like pe_tok_token_text, but byte tokens that together form
 * one UTF-8 character show that character on the first of them and "" on the rest. texts[i]
 * points into *pool (one malloc; free it). */
int pe_tok_display(const pe_tok *t, const int *ids, int n, const char **texts, char **pool,
                   char *err, size_t errlen);

int pe_tok_vocab_size(const pe_tok *t);         /* ids are 0 .. size-1 (added tokens included) */
int pe_tok_bos(const pe_tok *t);                /* BOS id, -1 if the tokenizer has none */
int pe_tok_eos(const pe_tok *t);                /* EOS id, -1 if none */
int pe_tok_adds_bos(const pe_tok *t);           /* 1: PE_TOK_BOS prepends BOS */
int pe_tok_is_special(const pe_tok *t, int id); /* control / added special token */
/* The id of a token written as the tokenizer stores it ("<s>", "▁the", "Ġthe"), or -1. */
int pe_tok_find(const pe_tok *t, const char *piece);
const char *pe_tok_format(const pe_tok *t); /* "llama2.c tokenizer.bin", ... */
const char *pe_tok_path(const pe_tok *t);   /* the file it was read from */

#endif
