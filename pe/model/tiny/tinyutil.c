/* tinyutil.c: helpers every file of the tiny model uses (tinyutil.h). */
#include "tinyutil.h"

#include <stdarg.h>
#include <stdio.h>

#include "pool.h"

int model_fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

int model_threads(int threads)
{
    return threads > 0 ? threads : pool_cpus_free();
}
