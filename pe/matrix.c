/* matrix.c: one-allocation row-major float matrices. */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE, which POSIX does not define */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pe_internal.h"

/* Blocks of 2 MiB and more are aligned to 2 MiB and marked for transparent huge pages: a fresh
 * allocation otherwise takes one page fault per 4 KiB, which cost a 128 MiB table more time
 * than computing it (numpy's allocator gets huge pages the same way), and a real model's fresh
 * session a fifth of its prompt (perf record, GPT-2 shape, 128 tokens). Smaller ones are
 * 64-byte aligned (a cache line; aligned 512-bit loads). */
#define HUGE_BYTES ((size_t)2 << 20)

float *pe_floats_alloc(size_t count, int zero)
{
    if (count > SIZE_MAX / sizeof(float) - HUGE_BYTES) return NULL;
    size_t bytes = (count ? count : 1) * sizeof(float);
    void *p = NULL;
    if (posix_memalign(&p, bytes < HUGE_BYTES ? 64 : HUGE_BYTES, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    /* advice only: without transparent huge pages the block is simply made of small pages */
    if (bytes >= HUGE_BYTES) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    if (zero) memset(p, 0, bytes);
    return p;
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
        m->data = pe_floats_alloc(cells, zero);
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
