/* fuzz_checkpoint: the checkpoint reader on arbitrary bytes. Every input either loads into a
 * model that is freed, or is refused with a message; nothing else (a crash, a leak, undefined
 * behaviour, a read past the buffer) is allowed.
 *
 * Each input is read twice: as it is (the magic, version, size and checksum checks), and
 * repaired the way a forger would (issue 28): the size field set to the length and the CRC-32 at
 * the end recomputed, so a mutation inside the file reaches the field checks behind the
 * checksum instead of being refused by it every time. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/tiny/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* CRC-32 (IEEE, reflected), as model_write computes it: an independent bitwise version */
static uint32_t crc32_bits(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return c ^ 0xffffffffu;
}

static void load(const uint8_t *data, size_t size)
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load(data, size);
    /* magic (8) version (4) size (8) ... crc (4) */
    if (size < 28 || memcmp(data, "PELABMDL", 8) != 0) return 0;
    uint8_t *fix = malloc(size);
    if (!fix) return 0;
    memcpy(fix, data, size);
    for (int i = 0; i < 8; i++) fix[12 + i] = (uint8_t)((uint64_t)size >> (8 * i));
    uint32_t crc = crc32_bits(fix, size - 4);
    for (int i = 0; i < 4; i++) fix[size - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
    load(fix, size);
    free(fix);
    return 0;
}
