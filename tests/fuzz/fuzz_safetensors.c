/* fuzz_safetensors: the safetensors header parser (pe/model/lm_safetensors.c) on arbitrary bytes
 * taken as a whole file. It either accepts a header whose every tensor lies inside the data, at
 * the size its shape and dtype need and overlapping no other, or refuses with one line that
 * names the file. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lm_st_header h;
    char err[512];
    err[0] = 0;
    if (lm_st_parse(data, size, size, "fuzz.safetensors", &h, err, sizeof err) != 0) {
        if (strncmp(err, "fuzz.safetensors: ", 18) != 0 || strchr(err, '\n'))
            __builtin_trap(); /* a refusal names the file, on one line */
        return 0;
    }
    for (int i = 0; i < h.n; i++) {
        if (h.t[i].end > h.data_len || h.t[i].begin > h.t[i].end) __builtin_trap();
        for (int j = 0; j < i; j++)
            if (h.t[i].begin < h.t[j].end && h.t[j].begin < h.t[i].end &&
                h.t[i].begin < h.t[i].end && h.t[j].begin < h.t[j].end)
                __builtin_trap(); /* overlap accepted */
    }
    lm_st_free(&h);
    return 0;
}
