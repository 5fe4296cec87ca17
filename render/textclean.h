/* textclean.h: user-given text made safe to show. Control characters are written out as
 * \xNN (C1 controls as \u0080..\u009f), so a file name holding ESC [ 2 J cannot clear the screen;
 * bytes that are not UTF-8 and noncharacters become U+FFFD, so cairo, ncurses and a terminal get
 * valid text. Used for the scene's text (figures, the terminal), stderr, and the prompt before
 * tokenizing. */
#ifndef PELAB_TEXTCLEAN_H
#define PELAB_TEXTCLEAN_H

#include <stddef.h>

enum {
    TEXT_KEEP_LINES = 1, /* '\n', '\r' and '\t' pass as they are (messages, prompts) */
};

/* Clean the n bytes of src into dst (size bytes, always terminated when size > 0; only whole
 * characters and escapes are written). Returns the length the whole result needs, like
 * snprintf, so a caller can allocate and call again. */
size_t text_clean(char *dst, size_t size, const char *src, size_t n, unsigned flags);
/* 1 when text_clean would change nothing. */
int text_is_clean(const char *s, size_t n, unsigned flags);
/* The length of a valid UTF-8 sequence at s (n bytes available): 1..4, 0 when s does not start
 * one, -1 when it starts one that n cuts short (more bytes may complete it). */
int text_utf8_len(const unsigned char *s, size_t n);
/* 1 when the valid sequence of len bytes at s is a noncharacter (U+FDD0..U+FDEF, U+FFFE and
 * U+FFFF of any plane): never text to show; cairo refuses a whole string holding one. */
int text_is_nonchar(const unsigned char *s, size_t len);

#endif
