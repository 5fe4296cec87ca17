/* mem.c: one memory budget for the whole process. The large allocations (matrices here, the
 * views' caches and exported data in app/) reserve their bytes first, so a size that would pass
 * the budget is refused with a message naming the sizes instead of growing the process until the
 * system gives out. Atomic: a worker thread computes views while the input thread runs. */
#include <stdatomic.h>
#include <stdio.h>

#include "pe_internal.h"

static _Atomic size_t budget = PE_MEM_DEFAULT, used, peak;

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

static double mib(size_t b)
{
    return (double)b / 1048576.0;
}

int pe_mem_reserve(size_t bytes, const char *what, char *err, size_t errlen)
{
    size_t cur = atomic_load(&used), lim = atomic_load(&budget);
    for (;;) {
        if (bytes > lim || cur > lim - bytes)
            return pe_fail(err, errlen, PE_ERANGE,
                           "%s needs %.0f MiB, and %.0f MiB of the memory budget of %.0f MiB are "
                           "in use (--max-memory MIB raises it; a smaller --len or --dim needs "
                           "less)",
                           what, mib(bytes), mib(cur), mib(lim));
        if (atomic_compare_exchange_weak(&used, &cur, cur + bytes)) break;
    }
    size_t now = cur + bytes, pk = atomic_load(&peak);
    while (now > pk && !atomic_compare_exchange_weak(&peak, &pk, now)) {
    }
    return PE_OK;
}

void pe_mem_release(size_t bytes)
{
    atomic_fetch_sub(&used, bytes);
}
