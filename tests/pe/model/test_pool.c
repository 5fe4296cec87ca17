/* test_pool: the thread pool of pe/model runs every item of a loop exactly once whatever the
 * thread count, chunk size and number of jobs in a row; a loop started from inside another runs
 * on the calling thread; the CPU counts and the thread tuner stay in range. */
#include <stdatomic.h>
#include <stdlib.h>

#include "model/tiny/pool.h"
#include "tap.h"

typedef struct visit {
    atomic_int *seen;
    atomic_long inner;
} visit;

static void count_items(void *ctx, size_t i0, size_t i1)
{
    visit *v = ctx;
    for (size_t i = i0; i < i1; i++) atomic_fetch_add(&v->seen[i], 1);
}

static void add_inner(void *ctx, size_t i0, size_t i1)
{
    atomic_fetch_add((atomic_long *)ctx, (long)(i1 - i0));
}

static void nested_chunk(void *ctx, size_t i0, size_t i1)
{
    visit *v = ctx;
    count_items(ctx, i0, i1);
    pool_run(4, 100, 3, add_inner, &v->inner); /* the pool is busy: runs here */
}

int main(void)
{
    enum { N = 1000 };
    atomic_int *seen = calloc(N, sizeof *seen);
    int sizes[] = {0, 1, 2, 7, 64, 999, 1000};
    int grains[] = {1, 3, 64, 5000};
    int threads[] = {1, 2, 3, 8};
    int all_once = 1, cases = 0;
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
        for (size_t b = 0; b < sizeof grains / sizeof *grains; b++)
            for (size_t c = 0; c < sizeof threads / sizeof *threads; c++) {
                int n = sizes[a];
                for (int i = 0; i < N; i++) atomic_store(&seen[i], 0);
                visit v = {seen, 0};
                pool_run(threads[c], (size_t)n, (size_t)grains[b], count_items, &v);
                for (int i = 0; i < N; i++)
                    if (atomic_load(&seen[i]) != (i < n ? 1 : 0)) {
                        all_once = 0;
                        printf("# n %d grain %d threads %d: item %d seen %d times\n", n, grains[b],
                               threads[c], i, atomic_load(&seen[i]));
                        break;
                    }
                cases++;
            }
    TAP_OK(all_once, "every item exactly once in %d loops (sizes, chunk sizes, 1..8 threads)",
           cases);

    /* many short jobs in a row: helpers that wake late must not run a chunk twice */
    for (int i = 0; i < N; i++) atomic_store(&seen[i], 0);
    visit v = {seen, 0};
    int jobs = 20000;
    for (int j = 0; j < jobs; j++) pool_run(2 + j % 3, N, 1 + (size_t)(j % 17), count_items, &v);
    int exact = 1;
    for (int i = 0; i < N; i++) exact &= atomic_load(&seen[i]) == jobs;
    TAP_OK(exact, "%d jobs in a row: every item counted %d times", jobs, jobs);

    for (int i = 0; i < N; i++) atomic_store(&seen[i], 0);
    visit w = {seen, 0};
    pool_run(2, N, 10, nested_chunk, &w);
    int once = 1;
    for (int i = 0; i < N; i++) once &= atomic_load(&seen[i]) == 1;
    TAP_OK(once && atomic_load(&w.inner) == 100L * (N / 10),
           "a loop inside a loop runs on its thread (%ld inner items)", atomic_load(&w.inner));

    int cpus = pool_cpus(), free_now = pool_cpus_free();
    TAP_OK(cpus >= 1 && free_now >= 1 && free_now <= cpus, "CPUs %d, free now %d", cpus, free_now);

    pool_tuner one = {.max = 1};
    int ok1 = 1;
    for (int i = 0; i < 20; i++) {
        ok1 &= pool_tuner_begin(&one) == 1;
        pool_tuner_end(&one);
    }
    TAP_OK(ok1, "tuner with one thread always picks 1");
    /* the choice given the load (pool_tuner_pick), so the test does not depend on what else
     * runs on the machine: quiet, it tries both and estimates both */
    pool_tuner t = {.max = 4};
    int first = pool_tuner_pick(&t, 0), n1 = 0, n4 = 0, other = 0;
    pool_tuner_end(&t);
    for (int i = 0; i < 100; i++) {
        int k = pool_tuner_pick(&t, i % 2 ? 0.0 : -1.0); /* quiet, or not known */
        n1 += k == 1;
        n4 += k == 4;
        other += k != 1 && k != 4;
        pool_tuner_end(&t);
    }
    TAP_OK(first == 1 && other == 0 && n1 > 0 && n4 > 0 && t.est[0] > 0 && t.est[1] > 0,
           "tuner with 4 on a quiet machine: the first unit on one thread, then tries both (%d x "
           "1, %d x 4), estimates both",
           n1, n4);
    /* another process keeps a core busy: two threads are never tried, not even once */
    pool_tuner b = {.max = 2};
    int wide = 0;
    for (int i = 0; i < 100; i++) {
        wide += pool_tuner_pick(&b, 0.9 + 0.002 * i) != 1;
        pool_tuner_end(&b);
    }
    TAP_OK(wide == 0 && b.est[1] == 0,
           "tuner with 2 beside a busy core: 1 thread in all 100 units");
    /* the load goes away: it tries two threads within the next few units */
    int tried = 0;
    for (int i = 0; i < 4; i++) {
        tried |= pool_tuner_pick(&b, 0.1) == 2;
        pool_tuner_end(&b);
    }
    TAP_OK(tried, "tuner with 2 tries two threads once the other process stops");
    /* the real thing: begin/end read /proc/stat; whatever the load, only 1 or max */
    pool_tuner r = {.max = 3};
    int bad = 0;
    for (int i = 0; i < 50; i++) {
        int k = pool_tuner_begin(&r);
        bad += k != 1 && k != 3;
        pool_tuner_end(&r);
    }
    TAP_OK(bad == 0 && pool_tuner_begin(&r) >= 1, "tuner with the measured load picks 1 or max");
    pool_tuner_end(&r);
    free(seen);
    return tap_done();
}
