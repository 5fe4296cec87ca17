/* textclean.c: see textclean.h. UTF-8 validity as RFC 3629 has it: no overlong forms, no
 * surrogates, nothing past U+10FFFF; each byte of a bad sequence becomes one U+FFFD, and so does
 * a noncharacter (U+FDD0..U+FDEF, U+nFFFE, U+nFFFF), which cairo refuses (issue 28). */
#include "textclean.h"

#include <stdio.h>
#include <string.h>

int text_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int len;
    unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0; /* overlong */
        if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90; /* overlong */
        if (c == 0xf4) hi = 0x8f; /* past U+10FFFF */
    } else
        return 0;
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n) return -1;
        unsigned b = s[i];
        if (i == 1 ? (b < lo || b > hi) : (b & 0xc0) != 0x80) return 0;
    }
    return len;
}

int text_is_nonchar(const unsigned char *s, size_t len)
{
    unsigned cp;
    if (len == 3)
        cp = (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
    else if (len == 4)
        cp = (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 | (s[3] & 0x3fu);
    else
        return 0;
    return (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe;
}

/* What one piece of input becomes: its length in src and the text to write. */
static size_t piece(const unsigned char *s, size_t n, unsigned flags, char out[8], size_t *used)
{
    unsigned c = s[0];
    if (c < 0x20 || c == 0x7f) {
        *used = 1;
        if ((flags & TEXT_KEEP_LINES) && (c == '\n' || c == '\r' || c == '\t')) {
            out[0] = (char)c;
            return 1;
        }
        return (size_t)snprintf(out, 8, "\\x%02x", c);
    }
    int len = text_utf8_len(s, n);
    if (len <= 0) { /* not UTF-8 (or cut short at the end): U+FFFD for this byte */
        *used = 1;
        memcpy(out, "\xef\xbf\xbd", 3);
        return 3;
    }
    if (text_is_nonchar(s, (size_t)len)) { /* cairo refuses a whole string holding one */
        *used = (size_t)len;
        memcpy(out, "\xef\xbf\xbd", 3);
        return 3;
    }
    *used = (size_t)len;
    if (len == 2 && c == 0xc2 && s[1] < 0xa0) /* C1 controls: CSI is U+009B */
        return (size_t)snprintf(out, 8, "\\u%04x", (unsigned)s[1]);
    memcpy(out, s, (size_t)len);
    return (size_t)len;
}

size_t text_clean(char *dst, size_t size, const char *src, size_t n, unsigned flags)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t need = 0, at = 0;
    int full = size == 0;
    while (at < n) {
        char out[8];
        size_t used, k = piece(s + at, n - at, flags, out, &used);
        if (!full) {
            if (need + k < size) {
                memcpy(dst + need, out, k);
            } else {
                full = 1; /* stop at a whole piece */
                dst[need] = 0;
            }
        }
        need += k;
        at += used;
    }
    if (!full) dst[need] = 0;
    return need;
}

int text_is_clean(const char *s, size_t n, unsigned flags)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t at = 0; at < n;) {
        unsigned c = u[at];
        if (c < 0x20 || c == 0x7f) {
            if (!((flags & TEXT_KEEP_LINES) && (c == '\n' || c == '\r' || c == '\t'))) return 0;
            at++;
            continue;
        }
        if (c < 0x80) {
            at++;
            continue;
        }
        int len = text_utf8_len(u + at, n - at);
        if (len <= 0 || (len == 2 && c == 0xc2 && u[at + 1] < 0xa0) ||
            text_is_nonchar(u + at, (size_t)len))
            return 0;
        at += (size_t)len;
    }
    return 1;
}
