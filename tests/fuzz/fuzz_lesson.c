/* fuzz_lesson: a lesson file on arbitrary bytes (issue 28), through lesson_load as
 * `pelab lesson --check` runs it: every input is either a lesson whose slides all have a view
 * and a caption, or is refused with at least one problem reported; never a crash, a leak or a
 * hang. Models named by a view line load from assets/models (the shipped ones). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lesson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[600];
static FILE *diag;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        const char *tmp = getenv("TMPDIR"); /* the file is rewritten for every input */
        snprintf(path, sizeof path, "%s/pelab-fuzz-lesson-%d.lesson", tmp && *tmp ? tmp : "/tmp",
                 (int)getpid());
        diag = fopen("/dev/null", "w");
        if (!diag) abort();
    }
    if (size > 65536) return 0;
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    lesson l;
    int problems = lesson_load(&l, path, NULL, diag);
    if (problems == 0) {
        if (l.n < 1) __builtin_trap();
        for (int i = 0; i < l.n; i++)
            if (!l.slides[i].view_args[0] || !l.slides[i].caption[0]) __builtin_trap();
        lesson_free(&l);
    }
    unlink(path);
    return 0;
}
