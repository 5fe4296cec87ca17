/* pool.h: internal to pe/model. A small thread pool for the training and evaluation kernels.
 *
 * Why not OpenMP: its threads spin while they wait, so on a machine where another process keeps
 * a core busy two threads ran 3-6x slower than one. Here the helpers spin for a few tens of
 * microseconds and then sleep on a condition variable, and the work is handed out in chunks
 * taken from one atomic counter, so a thread that the kernel has descheduled simply takes fewer
 * chunks instead of holding the others back.
 *
 * Determinism: which thread runs a chunk never changes what the chunk computes; callers make
 * every output element the work of one chunk in a fixed order, so results do not depend on the
 * number of threads or on the timing.
 */
#ifndef PELAB_MODEL_POOL_H
#define PELAB_MODEL_POOL_H

#include <stddef.h>

/* The work of items [i0, i1) of a loop; ctx is the caller's. */
typedef void (*pool_fn)(void *ctx, size_t i0, size_t i1);

/* Run fn over items 0..n-1 in chunks of grain items (>= 1) on up to nt threads, the caller
 * included, and return when every chunk is done. With nt <= 1, a single chunk, or another
 * caller already using the pool, fn runs on the calling thread over the whole range. */
void pool_run(int nt, size_t n, size_t grain, pool_fn fn, void *ctx);

/* Largest useful thread count: the CPUs this process may run on. */
int pool_cpus(void);

/* CPUs free right now: the CPUs minus the busy share measured from /proc/stat over a few
 * milliseconds, rounded, at least 1 (pool_cpus() when /proc/stat cannot be read). */
int pool_cpus_free(void);

/* Thread count for a run of repeated, equal units of work (training steps, batches of
 * evaluation windows). More threads are not always faster: when other processes keep the CPUs
 * busy, a helper thread waits for a time slice and the caller waits for it. Two signals decide:
 * - the load: over each unit the tuner reads how many CPUs the machine kept busy (/proc/stat)
 *   and subtracts this process's own CPU time; while other processes leave fewer than 1.5 CPUs
 *   free it uses one thread and does not even try more, since a single slow try costs more in
 *   a short run than it could win;
 * - the time: otherwise it keeps a running estimate of a unit on one thread and on max, uses
 *   the faster and retries the other every 16th unit, so a change is followed within a few.
 * The first unit runs on one thread and is not timed (fresh memory, the helpers' start).
 * Results never depend on the choice. Zeroed fields except max. */
typedef struct pool_tuner {
    int max;       /* the most threads to use (>= 1) */
    int units;     /* units timed so far */
    int cur;       /* 0: one thread, 1: max, for the current unit */
    double est[2]; /* seconds per unit, 0 until measured */
    double t0;
    /* the load: a /proc/stat reading and this process's CPU time when it was taken (held until
     * enough clock ticks passed to mean something), and the CPUs other processes kept busy
     * (running mean, -1 before the first reading) */
    int have_snap;
    double snap_busy, snap_total, snap_cpu;
    double others;
} pool_tuner;

/* Threads for the next unit; call pool_tuner_end after it. */
int pool_tuner_begin(pool_tuner *t);
void pool_tuner_end(pool_tuner *t);
/* The choice alone, given the CPUs other processes keep busy (negative: not known); begin is
 * this with the measured load. Exposed for tests. */
int pool_tuner_pick(pool_tuner *t, double others);

#endif
