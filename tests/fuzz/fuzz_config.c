/* fuzz_config: the Hugging Face config.json reader on arbitrary text (the same function
 * pe_hf_config_load calls once the file is read). It either fills a config or refuses with a
 * message naming the source. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hf_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] =
        0; /* a NUL inside is refused by pe_hf_config_load before parsing; here it ends it */
    pe_hf_config c;
    char err[512];
    err[0] = 0;
    if (pe_hf_config_parse(text, "fuzz.json", &c, err, sizeof err) != 0 &&
        strncmp(err, "fuzz.json: ", 11) != 0)
        __builtin_trap(); /* a refusal names the file */
    free(text);
    return 0;
}
