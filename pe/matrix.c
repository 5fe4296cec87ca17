/* matrix.c: one-allocation row-major float matrices. */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE, which POSIX does not define */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pe_internal.h"

/* Tables of 2 MiB and more are aligned to 2 MiB and marked for transparent huge pages: a fresh
 * allocation otherwise takes one page fault per 4 KiB, which cost a 128 MiB table more time
 * than computing it (numpy's allocator gets huge pages the same way). */
#define HUGE_BYTES ((size_t)2 << 20)

static float *table_alloc(size_t cells, int zero)
{
    size_t bytes = cells * sizeof(float);
    if (bytes < HUGE_BYTES) return zero ? calloc(cells, sizeof(float)) : malloc(bytes);
    void *p = NULL;
    if (posix_memalign(&p, HUGE_BYTES, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    /* advice only: without transparent huge pages the table is simply made of small pages */
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    if (zero) memset(p, 0, bytes);
    return p;
}

/* The same for blocks that come and go (a real model's session, its packed weights), but mapped
 * on their own: from malloc, a freed 2 MiB-aligned block stays in the heap and in the process's
 * resident memory (glibc raises its mmap threshold after such a free), 9 MB after the real-model
 * bench's sessions of stories260K. A fresh session's first pass otherwise faulted a 4 KiB page at
 * a time: a fifth of the GPT-2 shape's 128-token prompt (perf record). */
static size_t map_bytes(size_t count)
{
    return ((count ? count : 1) * sizeof(float) + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
}

float *pe_floats_map(size_t count)
{
    if (count > (SIZE_MAX - 2 * HUGE_BYTES) / sizeof(float)) return NULL;
    size_t bytes = (count ? count : 1) * sizeof(float);
    if (bytes < HUGE_BYTES) {
        void *p = NULL;
        return posix_memalign(&p, 64, bytes) == 0 ? p : NULL;
    }
    size_t len = map_bytes(count), over = len + HUGE_BYTES;
    char *raw = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    char *p = (char *)(((uintptr_t)raw + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
    if (p > raw) munmap(raw, (size_t)(p - raw));
    if (raw + over > p + len) munmap(p + len, (size_t)(raw + over - (p + len)));
#ifdef MADV_HUGEPAGE
    (void)madvise(p, len, MADV_HUGEPAGE); /* advice only */
#endif
    return (float *)(void *)p;
}

void pe_floats_unmap(float *p, size_t count)
{
    if (!p) return;
    if ((count ? count : 1) * sizeof(float) < HUGE_BYTES)
        free(p);
    else
        munmap(p, map_bytes(count));
}

int pe_matrix_alloc(pe_matrix *m, size_t rows, size_t cols, int zero, char *err, size_t errlen)
{
    m->rows = 0;
    m->cols = 0;
    m->data = NULL;
    if (cols != 0 && rows > SIZE_MAX / cols)
        return pe_fail(err, errlen, PE_ERANGE,
                       "matrix %zu x %zu: the cell count overflows; the cap is %zu cells", rows,
                       cols, PE_MAX_CELLS);
    size_t cells = rows * cols;
    if (cells > PE_MAX_CELLS) /* the budget below is what bites first at any sane --max-memory */
        return pe_fail(err, errlen, PE_ERANGE,
                       "matrix %zu x %zu = %zu cells: more than one table can index (%zu)", rows,
                       cols, cells, PE_MAX_CELLS);
    if (cells > 0) {
        char what[96];
        snprintf(what, sizeof what, "a %zu x %zu matrix", rows, cols);
        int rc = pe_mem_reserve(cells * sizeof *m->data, what, err, errlen);
        if (rc != PE_OK) return rc;
        m->data = table_alloc(cells, zero);
        if (!m->data) {
            pe_mem_release(cells * sizeof *m->data);
            return pe_fail(err, errlen, PE_ENOMEM, "matrix %zu x %zu: out of memory", rows, cols);
        }
    }
    m->rows = rows;
    m->cols = cols;
    return PE_OK;
}

int pe_matrix_init(pe_matrix *m, size_t rows, size_t cols, char *err, size_t errlen)
{
    return pe_matrix_alloc(m, rows, cols, 1, err, errlen);
}

void pe_matrix_free(pe_matrix *m)
{
    if (m->data) pe_mem_release(m->rows * m->cols * sizeof *m->data);
    free(m->data);
    m->data = NULL;
    m->rows = 0;
    m->cols = 0;
}
