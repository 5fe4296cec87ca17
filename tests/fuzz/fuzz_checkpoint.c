/* fuzz_checkpoint: the checkpoint reader on arbitrary bytes. Every input either loads into a
 * model that is freed, or is refused with a message; nothing else (a crash, a leak, undefined
 * behaviour, a read past the buffer) is allowed. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/tiny/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    model m;
    char err[512];
    err[0] = 0;
    int rc = model_load_mem(data, size, &m, err, sizeof err);
    if (rc == 0) {
        /* a loaded model is whole: its vocabulary and weights are there to use */
        if (m.vocab.n <= 0 || !m.params) __builtin_trap();
        model_free(&m);
    } else if (!err[0]) {
        __builtin_trap(); /* a refusal always says why */
    }
    return 0;
}
