/* registry.c: the const table of position encodings. Adding an encoding is one file defining
 * `const pe_encoding pe_enc_<name>` and one X(<name>) line below. */
#include <ctype.h>
#include <string.h>

#include "pe_internal.h"

#define PE_ENCODINGS(X)                                                                            \
    X(sinusoidal)                                                                                  \
    X(learned)                                                                                     \
    X(binary)                                                                                      \
    X(alibi)                                                                                       \
    X(rope)                                                                                        \
    X(nope)                                                                                        \
    X(t5)                                                                                          \
    X(xl)                                                                                          \
    X(xpos)

#define PE_DECLARE(n) extern const pe_encoding pe_enc_##n;
PE_ENCODINGS(PE_DECLARE)
#undef PE_DECLARE

#define PE_ENTRY(n) &pe_enc_##n,
static const pe_encoding *const encodings[] = {PE_ENCODINGS(PE_ENTRY)};
#undef PE_ENTRY

size_t pe_encoding_count(void)
{
    return sizeof encodings / sizeof encodings[0];
}

const pe_encoding *pe_encoding_at(size_t i)
{
    return i < pe_encoding_count() ? encodings[i] : NULL;
}

const pe_encoding *pe_encoding_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < pe_encoding_count(); i++)
        if (strcmp(encodings[i]->name, name) == 0) return encodings[i];
    return NULL;
}

/* Strings longer than this are compared on their first PE_EDIT_MAX characters: enough for names
 * typed on a command line, and it keeps the distance free of allocation. */
#define PE_EDIT_MAX 128

/* Case-insensitive Levenshtein distance with one rolling row. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > PE_EDIT_MAX) na = PE_EDIT_MAX;
    if (nb > PE_EDIT_MAX) nb = PE_EDIT_MAX;
    size_t row[PE_EDIT_MAX + 1];
    for (size_t j = 0; j <= nb; j++) row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        int ca = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            int cb = tolower((unsigned char)b[j - 1]);
            size_t best = diag + (ca != cb);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

const char *pe_closest(const char *s, const char *const *cands, size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    if (!s) s = "";
    for (size_t i = 0; i < n; i++) {
        if (!cands[i]) continue;
        size_t d = edit_distance(s, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    /* only a near miss is a suggestion: '' or 'xyz' resemble nothing, whatever is closest */
    size_t len = strlen(s), most = len / 2 > 1 ? len / 2 : 1;
    return best_d <= most ? best : NULL;
}

const char *pe_encoding_suggest(const char *name)
{
    const char *names[sizeof encodings / sizeof encodings[0]];
    for (size_t i = 0; i < pe_encoding_count(); i++) names[i] = encodings[i]->name;
    return pe_closest(name, names, pe_encoding_count());
}

int pe_validate_values(const pe_encoding *e, const pe_params *p, char *err, size_t errlen)
{
    /* len enters the validators only through their table-size checks (pe_check_cells), so one
     * position checks every value; the real length is then checked against its own range */
    pe_params one = *p;
    one.len = 1;
    int rc = e && e->validate ? e->validate(&one, err, errlen) : PE_OK;
    return rc == PE_OK ? pe_check_len(p->len, err, errlen) : rc;
}
