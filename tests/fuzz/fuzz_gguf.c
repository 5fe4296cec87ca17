/* fuzz_gguf: the GGUF header reader (pe_gguf_parse_config, what --config model.gguf runs on a
 * file's header) on arbitrary bytes. It either fills a config or refuses with one line naming
 * the source; it never reads outside the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes, so ASan catches any read past the end */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    pe_hf_config c;
    char err[512];
    err[0] = 0;
    if (pe_gguf_parse_config(copy, size, "fuzz.gguf", &c, err, sizeof err) != 0 &&
        (strncmp(err, "fuzz.gguf: ", 11) != 0 || strchr(err, '\n')))
        __builtin_trap(); /* a refusal is one line naming the file */
    free(copy);
    return 0;
}
