/* mem.c: one memory budget for the whole process. The large allocations (matrices here, the
 * views' caches and exported data in app/) reserve their bytes first, so a size that would pass
 * the budget is refused with a message naming the sizes instead of growing the process until the
 * system gives out. Atomic: a worker thread computes views while the input thread runs. */
#include <stdatomic.h>
#include <stdio.h>

#include "pe_internal.h"

static _Atomic size_t budget = PE_MEM_DEFAULT, used, peak, refusals;

void pe_mem_set_budget(size_t bytes)
{
    atomic_store(&budget, bytes);
}

size_t pe_mem_budget(void)
{
    return atomic_load(&budget);
}

size_t pe_mem_used(void)
{
    return atomic_load(&used);
}

size_t pe_mem_peak(void)
{
    return atomic_load(&peak);
}

size_t pe_mem_refusals(void)
{
    return atomic_load(&refusals);
}

/* b as "N MiB", or "N KiB" below 1 MiB (a small size is not rounded to "0 MiB"). */
static const char *size_str(size_t b, char *buf, size_t n)
{
    if (b < 1048576)
        snprintf(buf, n, "%.0f KiB", (double)b / 1024.0);
    else
        snprintf(buf, n, "%.0f MiB", (double)b / 1048576.0);
    return buf;
}

int pe_mem_reserve(size_t bytes, const char *what, char *err, size_t errlen)
{
    return pe_mem_reserve_hint(bytes, what, "a smaller --len, --dim or --heads needs less", err,
                               errlen);
}

int pe_mem_reserve_hint(size_t bytes, const char *what, const char *hint, char *err, size_t errlen)
{
    size_t cur = atomic_load(&used), lim = atomic_load(&budget);
    for (;;) {
        if (bytes > lim || cur > lim - bytes) {
            atomic_fetch_add(&refusals, 1);
            char nb[32], fb[32], lb[32], ub[32];
            size_str(bytes, nb, sizeof nb);
            size_str(lim, lb, sizeof lb);
            if (cur == 0)
                return pe_fail(err, errlen, PE_ERANGE,
                               "%s needs %s, more than the memory budget of %s (--max-memory MIB "
                               "raises it; %s)",
                               what, nb, lb, hint);
            /* what is already held (the figure's own matrices, caches) counts against it */
            return pe_fail(
                err, errlen, PE_ERANGE,
                "%s needs %s more, but only %s of the memory budget of %s are free "
                "(%s are already held: computed numbers, caches, images; --max-memory MIB raises "
                "it; %s)",
                what, nb, size_str(cur < lim ? lim - cur : 0, fb, sizeof fb), lb,
                size_str(cur, ub, sizeof ub), hint);
        }
        if (atomic_compare_exchange_weak(&used, &cur, cur + bytes)) break;
    }
    size_t now = cur + bytes, pk = atomic_load(&peak);
    while (now > pk && !atomic_compare_exchange_weak(&peak, &pk, now)) {
    }
    return PE_OK;
}

void pe_mem_hold(size_t bytes)
{
    size_t now = atomic_fetch_add(&used, bytes) + bytes, pk = atomic_load(&peak);
    while (now > pk && !atomic_compare_exchange_weak(&peak, &pk, now)) {
    }
}

void pe_mem_release(size_t bytes)
{
    atomic_fetch_sub(&used, bytes);
}
