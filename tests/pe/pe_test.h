/* pe_test.h: helpers shared by the pe tests. */
#ifndef PELAB_PE_TEST_H
#define PELAB_PE_TEST_H

#include <math.h>
#include <string.h>

#include "pe.h"
#include "tap.h"

/* Reference numbers are printed with 10 decimals, so an absolute 1e-10 covers their rounding. */
#define REL_F  1e-6  /* float outputs */
#define REL_D  1e-9  /* double functions */
#define ABS_10 1e-10 /* printed rounding of a 10-decimal reference */

/* Status and message of a call that must fail: status as expected and err names opt. */
static inline int expect_fail(int rc, int want_rc, const char *err, const char *opt,
                              const char *name)
{
    int ok = rc == want_rc && strstr(err, opt) != NULL && strchr(err, '\n') == NULL;
    TAP_OK(ok, "%s -> %d, message names %s", name, want_rc, opt);
    if (!ok) tap_diag("got %d: \"%s\"", rc, err);
    return ok;
}

/* The float vector x matches want (n entries) to REL_F; one assertion. */
static inline int close_vec_f(const float *x, const double *want, int n, double abs_tol,
                              const char *name)
{
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (fabs((double)x[i] - want[i]) > abs_tol + REL_F * fabs(want[i])) bad = i;
    TAP_OK(bad < 0, "%s", name);
    if (bad >= 0) tap_diag("entry %d: got %.10f want %.10f", bad, (double)x[bad], want[bad]);
    return bad < 0;
}

/* The double vector x matches want to rel, plus abs_tol; one assertion. */
static inline int close_vec_d(const double *x, const double *want, int n, double rel,
                              double abs_tol, const char *name)
{
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (!(fabs(x[i] - want[i]) <= abs_tol + rel * fabs(want[i]))) bad = i;
    TAP_OK(bad < 0, "%s", name);
    if (bad >= 0) tap_diag("entry %d: got %.12g want %.12g", bad, x[bad], want[bad]);
    return bad < 0;
}

#endif
