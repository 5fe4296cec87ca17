/* tap.h: a tiny TAP producer for meson's `protocol: 'tap'` tests. Header-only.
 *
 *   TAP_OK(cond, "name %d", i);           one assertion
 *   TAP_CLOSE(got, want, rel, abs, "name") |got - want| <= abs + rel * |want|
 *   return tap_done();                    prints the plan, exit status 0 when all passed
 * A test that cannot run here calls tap_skip_all("why") and returns 77 (meson: skipped). */
#ifndef PELAB_TAP_H
#define PELAB_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n_, tap_failed_;

__attribute__((format(printf, 2, 3))) static inline int tap_ok_(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_n_++;
    printf("%sok %d - ", cond ? "" : "not ", tap_n_);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!cond) tap_failed_++;
    fflush(stdout);
    return cond;
}

#define TAP_OK(cond, ...) tap_ok_(!!(cond), __VA_ARGS__)

/* Checks closeness and prints the numbers when it fails. */
static inline int tap_close_(double got, double want, double rel, double abs_tol, const char *name,
                             const char *file, int line)
{
    double err = fabs(got - want);
    int ok = (isnan(want) && isnan(got)) || (isinf(want) && got == want) ||
             err <= abs_tol + rel * fabs(want);
    tap_ok_(ok, "%s", name);
    if (!ok) printf("# %s:%d: got %.12g want %.12g (|err| %.3g)\n", file, line, got, want, err);
    return ok;
}
#define TAP_CLOSE(got, want, rel, abs_tol, name)                                                   \
    tap_close_((got), (want), (rel), (abs_tol), (name), __FILE__, __LINE__)

static inline void tap_diag(const char *fmt, ...)
{
    /* Every line of a multi-line diagnostic is a TAP comment, or meson reports it as unknown. */
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (const char *p = buf;;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        if (len > 0 || !nl) printf("# %.*s\n", len, p);
        if (!nl) break;
        p = nl + 1;
    }
}

/* A temporary path $TMPDIR/NAME (TMPDIR unset or empty: /tmp) into out, for mkdtemp/mkstemp
 * (NAME ends in XXXXXX) or a plain file name: tests never hard-code a folder under /tmp. Returns
 * out. */
static inline char *tap_tmp_path(char *out, size_t n, const char *name)
{
    const char *base = getenv("TMPDIR");
    snprintf(out, n, "%s/%s", base && *base ? base : "/tmp", name);
    return out;
}

static inline int tap_done(void)
{
    printf("1..%d\n", tap_n_);
    return tap_failed_ ? 1 : 0;
}

static inline int tap_skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    return 77;
}

#endif
