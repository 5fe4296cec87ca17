/* pool.c: the thread pool of pe/model (see pool.h).
 *
 * One job at a time. The job's state is one 64-bit ticket, (generation << 32) | next chunk: a
 * thread claims a chunk with a compare-and-swap on it, which also proves the job it read about
 * is still the current one, so a helper that wakes late can never run a chunk of a job that has
 * already finished. Job descriptions alternate between two slots; a slot is rewritten only two
 * jobs later, after every chunk of its job has been counted done.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define POOL_MAX 64
/* Polls before a waiting thread sleeps: some tens of microseconds, longer than the serial code
 * between two parallel loops of a training step, far shorter than a scheduler time slice. */
#define POOL_SPIN 20000

typedef struct pool_job {
    pool_fn fn;
    void *ctx;
    size_t n, grain;
    atomic_uint chunks; /* read before a claim, so atomic */
    atomic_int nt;
    atomic_uint done;
} pool_job;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t work, fin;
    pthread_mutex_t run; /* one caller at a time */
    _Atomic uint64_t ticket;
    pool_job slot[2];
    atomic_int waiting; /* the caller sleeps on fin */
    int helpers;        /* started, guarded by run */
} P = {.mu = PTHREAD_MUTEX_INITIALIZER,
       .work = PTHREAD_COND_INITIALIZER,
       .fin = PTHREAD_COND_INITIALIZER,
       .run = PTHREAD_MUTEX_INITIALIZER};

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Run chunks of job g until none is left. id < 0 is the caller; helper id joins only jobs of
 * more than id + 1 threads. */
static void run_chunks(uint32_t g, int id)
{
    pool_job *j = &P.slot[g & 1];
    uint64_t t = atomic_load_explicit(&P.ticket, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(t >> 32) != g) return;
        uint32_t idx = (uint32_t)t;
        uint32_t chunks = atomic_load_explicit(&j->chunks, memory_order_relaxed);
        if (idx >= chunks || id + 1 >= atomic_load_explicit(&j->nt, memory_order_relaxed)) return;
        if (!atomic_compare_exchange_weak_explicit(&P.ticket, &t, t + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue; /* t now holds the current ticket */
        /* The chunk is ours and its job cannot finish before we count it done, so the slot
         * holds this job's description. */
        size_t i0 = (size_t)idx * j->grain, i1 = i0 + j->grain;
        j->fn(j->ctx, i0, i1 < j->n ? i1 : j->n);
        if (atomic_fetch_add(&j->done, 1) + 1 == chunks && atomic_load(&P.waiting)) {
            pthread_mutex_lock(&P.mu);
            pthread_cond_signal(&P.fin);
            pthread_mutex_unlock(&P.mu);
        }
        t = atomic_load_explicit(&P.ticket, memory_order_acquire);
    }
}

static uint32_t gen_now(void)
{
    return (uint32_t)(atomic_load_explicit(&P.ticket, memory_order_acquire) >> 32);
}

static void *helper(void *arg)
{
    int id = (int)(intptr_t)arg;
    uint32_t seen = gen_now();
    for (;;) {
        for (int i = 0; i < POOL_SPIN && gen_now() == seen; i++) relax();
        if (gen_now() == seen) {
            pthread_mutex_lock(&P.mu);
            while (gen_now() == seen) pthread_cond_wait(&P.work, &P.mu);
            pthread_mutex_unlock(&P.mu);
        }
        seen = gen_now();
        run_chunks(seen, id);
    }
    return NULL;
}

/* Start helpers up to want (called with run held); returns how many there are. */
static int grow(int want)
{
    if (want > POOL_MAX - 1) want = POOL_MAX - 1;
    while (P.helpers < want) {
        pthread_attr_t a;
        pthread_t th;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&th, &a, helper, (void *)(intptr_t)P.helpers);
        pthread_attr_destroy(&a);
        if (rc) break; /* run with the helpers there are */
        P.helpers++;
    }
    return P.helpers;
}

void pool_run(int nt, size_t n, size_t grain, pool_fn fn, void *ctx)
{
    if (grain < 1) grain = 1;
    size_t chunks = (n + grain - 1) / grain;
    if (nt <= 1 || chunks <= 1 || chunks > UINT32_MAX || pthread_mutex_trylock(&P.run)) {
        if (n) fn(ctx, 0, n);
        return;
    }
    int h = grow(nt - 1);
    if (h < 1) {
        pthread_mutex_unlock(&P.run);
        fn(ctx, 0, n);
        return;
    }
    uint32_t g = gen_now() + 1;
    pool_job *j = &P.slot[g & 1];
    j->fn = fn;
    j->ctx = ctx;
    j->n = n;
    j->grain = grain;
    atomic_store_explicit(&j->chunks, (uint32_t)chunks, memory_order_relaxed);
    atomic_store_explicit(&j->nt, h + 1 < nt ? h + 1 : nt, memory_order_relaxed);
    atomic_store_explicit(&j->done, 0, memory_order_relaxed);
    atomic_store_explicit(&P.ticket, (uint64_t)g << 32, memory_order_release);
    pthread_mutex_lock(&P.mu);
    pthread_cond_broadcast(&P.work);
    pthread_mutex_unlock(&P.mu);
    run_chunks(g, -1);
    /* wait for chunks that helpers still hold; sleep if that takes long (a helper descheduled
     * by a busy machine), which also frees this core for it */
    for (int i = 0; i < POOL_SPIN && atomic_load(&j->done) < chunks; i++) relax();
    if (atomic_load(&j->done) < chunks) {
        pthread_mutex_lock(&P.mu);
        atomic_store(&P.waiting, 1);
        while (atomic_load(&j->done) < chunks) pthread_cond_wait(&P.fin, &P.mu);
        atomic_store(&P.waiting, 0);
        pthread_mutex_unlock(&P.mu);
    }
    pthread_mutex_unlock(&P.run);
}

int pool_cpus(void)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
    if (n < 1) n = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > POOL_MAX ? POOL_MAX : n;
}

/* Busy and total jiffies of all CPUs from /proc/stat's first line. */
static int cpu_times(double *busy, double *total)
{
    FILE *fp = fopen("/proc/stat", "r");
    if (!fp) return -1;
    unsigned long long v[8] = {0};
    int k = fscanf(fp, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(fp);
    if (k < 4) return -1;
    double all = 0;
    for (int i = 0; i < 8; i++) all += (double)v[i];
    *total = all;
    *busy = all - (double)v[3] - (double)v[4]; /* minus idle and iowait */
    return 0;
}

int pool_cpus_free(void)
{
    int n = pool_cpus();
    int online = (int)sysconf(_SC_NPROCESSORS_ONLN);
    double b0, t0, b1, t1;
    if (n <= 1 || cpu_times(&b0, &t0)) return n;
    /* /proc/stat counts in clock ticks (usually 100 Hz): 50 ms is 5 ticks per CPU */
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    if (cpu_times(&b1, &t1) || t1 <= t0) return n;
    double busy = (b1 - b0) / (t1 - t0) * (online > 0 ? online : n);
    int free_cpus = (int)((online > 0 ? online : n) - busy + 0.5);
    if (free_cpus > n) free_cpus = n;
    return free_cpus < 1 ? 1 : free_cpus;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The CPUs other processes kept busy since the tuner's snapshot, folded into t->others once
 * the snapshot is at least 4 ticks per CPU old (/proc/stat counts 100 ticks a second: a 40 ms
 * training step would otherwise read as 0 or 2 CPUs). */
static void tuner_load(pool_tuner *t)
{
    double busy, total, cpu = cpu_s();
    if (cpu_times(&busy, &total) != 0) return;
    int online = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1) online = 1;
    if (!t->have_snap) {
        t->have_snap = 1;
        t->snap_busy = busy, t->snap_total = total, t->snap_cpu = cpu;
        return;
    }
    double ticks = total - t->snap_total;
    if (ticks < 4.0 * online) return;
    double hz = (double)sysconf(_SC_CLK_TCK);
    if (hz <= 0) hz = 100;
    double wall = ticks / online / hz; /* seconds the reading spans */
    double all = (busy - t->snap_busy) / ticks * online, own = (cpu - t->snap_cpu) / wall;
    double o = all - own;
    if (o < 0) o = 0;
    t->others = t->others < 0 ? o : 0.5 * t->others + 0.5 * o;
    t->snap_busy = busy, t->snap_total = total, t->snap_cpu = cpu;
}

int pool_tuner_pick(pool_tuner *t, double others)
{
    if (t->max <= 1) return 1;
    if (t->units == 0 || (others >= 0 && t->max - others < 1.5))
        t->cur = 0; /* the first unit, or too few CPUs free for a second thread to help */
    else if (t->est[1] == 0)
        t->cur = 1;
    else if (t->est[0] == 0)
        t->cur = 0;
    else {
        int best = t->est[1] <= t->est[0];
        t->cur = t->units % 16 == 0 ? !best : best;
    }
    t->t0 = now_s();
    return t->cur ? t->max : 1;
}

int pool_tuner_begin(pool_tuner *t)
{
    if (t->max <= 1) return 1;
    if (t->units == 0) t->others = -1;
    tuner_load(t);
    return pool_tuner_pick(t, t->others);
}

void pool_tuner_end(pool_tuner *t)
{
    if (t->max <= 1) return;
    double dt = now_s() - t->t0;
    if (t->units++ == 0) return;
    double *e = &t->est[t->cur];
    *e = *e == 0 ? dt : 0.7 * *e + 0.3 * dt;
}
