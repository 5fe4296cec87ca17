/* work.c: long computations report how far they are and learn whether to stop. The caller (the
 * exporter's progress bar, the explorer's worker) installs a hook for its thread; without one a
 * report costs a test of a pointer. */
#include "pe_internal.h"

static _Thread_local pe_work_fn hook;
static _Thread_local void *hook_ctx;

void pe_work_set(pe_work_fn fn, void *ctx)
{
    hook = fn;
    hook_ctx = ctx;
}

int pe_work(double frac)
{
    return hook ? hook(hook_ctx, frac) : 0;
}

int pe_work_cancelled(char *err, size_t errlen)
{
    return pe_fail(err, errlen, PE_ECANCELED, "cancelled");
}
