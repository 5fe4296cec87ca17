/* tinyutil.h: internal to pe/model/tiny. Helpers every file of the tiny model uses; a header of
 * its own so that model.c (whose model.h the network's nn.h reads) includes no part of nn. */
#ifndef PELAB_MODEL_TINYUTIL_H
#define PELAB_MODEL_TINYUTIL_H

#include <stddef.h>

/* Write one line into err (when not NULL) and return status. */
__attribute__((format(printf, 4, 5))) int model_fail(char *err, size_t errlen, int status,
                                                     const char *fmt, ...);
int model_threads(int threads); /* 0 -> the CPUs free now (pool_cpus_free) */

#endif
