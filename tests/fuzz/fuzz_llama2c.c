/* fuzz_llama2c: the llama2.c .bin header check (pe/model/lm_load.c) on arbitrary bytes taken as
 * a whole file. Accepted headers describe exactly the file's size with sizes in range; anything
 * else is refused with one line naming the file. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lm_config c;
    size_t off = 0;
    char err[512];
    err[0] = 0;
    if (lm_llama2c_parse(data, size, size, "fuzz.bin", &c, &off, err, sizeof err) != 0) {
        if (strncmp(err, "fuzz.bin: ", 10) != 0 || strchr(err, '\n')) __builtin_trap();
        return 0;
    }
    if (off > size || c.dim < 1 || c.dim > LM_MAX_DIM || c.n_heads < 1 || c.dim % c.n_heads != 0 ||
        c.n_heads % c.n_kv_heads != 0 || c.vocab < 1 || c.seq_len < 1 ||
        lm_param_count(&c) * 4 > size)
        __builtin_trap();
    return 0;
}
