/* test_textclean: control characters written out, bytes that are not UTF-8 as U+FFFD, valid
 * text (every length of sequence) unchanged, truncation at whole pieces, the needed length;
 * noncharacters (U+FFFE, U+FFFF, U+FDD0..U+FDEF and U+nFFFE/F of every plane) as U+FFFD, since
 * cairo refuses a whole string holding one (issue 28). */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "textclean.h"

static int is(const char *in, size_t n, unsigned flags, const char *want)
{
    char out[256];
    size_t need = text_clean(out, sizeof out, in, n, flags);
    int ok = strcmp(out, want) == 0 && need == strlen(want);
    if (!ok) tap_diag("got '%s' (%zu), want '%s'", out, need, want);
    return ok;
}

int main(void)
{
    TAP_OK(is("plain text", 10, 0, "plain text") && text_is_clean("plain text", 10, 0),
           "ASCII passes");
    TAP_OK(is("x\x1b[2J.pelab", 11, 0, "x\\x1b[2J.pelab"), "ESC is written \\x1b");
    TAP_OK(!text_is_clean("a\x1b", 2, 0), "text_is_clean sees ESC");
    TAP_OK(is("a\nb\tc\r", 6, 0, "a\\x0ab\\x09c\\x0d"), "line breaks escaped by default");
    TAP_OK(is("a\nb\tc\r", 6, TEXT_KEEP_LINES, "a\nb\tc\r") &&
               text_is_clean("a\nb\tc\r", 6, TEXT_KEEP_LINES),
           "TEXT_KEEP_LINES keeps them");
    TAP_OK(is("\x7f", 1, 0, "\\x7f"), "DEL escaped");
    TAP_OK(is("\xc2\x9b"
              "2J",
              4, 0, "\\u009b2J"),
           "C1 CSI (U+009B) escaped");
    TAP_OK(is("\xff\xfe once upon", 12, 0, "\xef\xbf\xbd\xef\xbf\xbd once upon"),
           "invalid bytes become U+FFFD each");
    TAP_OK(is("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc2\xa0", 11, 0,
              "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc2\xa0") &&
               text_is_clean("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, 0),
           "valid 2-, 3- and 4-byte sequences and NBSP pass");
    TAP_OK(is("\xc0\xaf", 2, 0, "\xef\xbf\xbd\xef\xbf\xbd"), "overlong '/' refused");
    TAP_OK(is("\xed\xa0\x80", 3, 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"), "a surrogate refused");
    TAP_OK(is("\xf4\x90\x80\x80", 4, 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"),
           "past U+10FFFF refused");
    TAP_OK(is("ab\xe2\x82", 4, 0, "ab\xef\xbf\xbd\xef\xbf\xbd"), "a sequence cut at the end");
    TAP_OK(text_utf8_len((const unsigned char *)"\xe2\x82", 2) == -1 &&
               text_utf8_len((const unsigned char *)"\xe2\x82\xac", 3) == 3 &&
               text_utf8_len((const unsigned char *)"\x80", 1) == 0,
           "text_utf8_len: short, whole, stray continuation");
    /* noncharacters: each a U+FFFD, their neighbours kept */
    TAP_OK(is("once \xef\xbf\xbe upon", 13, 0, "once \xef\xbf\xbd upon") &&
               !text_is_clean("\xef\xbf\xbe", 3, 0),
           "U+FFFE becomes U+FFFD");
    TAP_OK(is("\xef\xbf\xbf", 3, 0, "\xef\xbf\xbd"), "U+FFFF becomes U+FFFD");
    TAP_OK(is("\xef\xb7\x90\xef\xb7\xaf", 6, 0, "\xef\xbf\xbd\xef\xbf\xbd"),
           "U+FDD0 and U+FDEF become U+FFFD");
    TAP_OK(is("\xef\xb7\x8f\xef\xb7\xb0", 6, 0, "\xef\xb7\x8f\xef\xb7\xb0"),
           "U+FDCF and U+FDF0 (either side of the range) pass");
    TAP_OK(is("\xf0\x9f\xbf\xbe\xf4\x8f\xbf\xbf", 8, 0, "\xef\xbf\xbd\xef\xbf\xbd"),
           "U+1FFFE and U+10FFFF become U+FFFD");
    TAP_OK(is("\xef\xbf\xbd\xef\xbf\xbc", 6, 0, "\xef\xbf\xbd\xef\xbf\xbc") &&
               text_is_clean("\xef\xbf\xbd", 3, 0),
           "U+FFFD and U+FFFC themselves pass");
    TAP_OK(text_is_nonchar((const unsigned char *)"\xef\xbf\xbe", 3) &&
               !text_is_nonchar((const unsigned char *)"\xe2\x82\xac", 3) &&
               !text_is_nonchar((const unsigned char *)"a", 1),
           "text_is_nonchar");
    char small[6];
    size_t need = text_clean(small, sizeof small,
                             "ab\x1b"
                             "cd",
                             5, 0);
    TAP_OK(need == 8 && strcmp(small, "ab") == 0, "truncated at a whole escape (%s, %zu)", small,
           need);
    need = text_clean(small, sizeof small, "a\xe2\x82\xac\xe2\x82\xac", 7, 0);
    TAP_OK(need == 7 && strcmp(small, "a\xe2\x82\xac") == 0, "truncated at a whole character");
    TAP_OK(text_clean(NULL, 0, "\x01", 1, 0) == 4, "size 0 only measures");
    return tap_done();
}
