/* fuzz_command: the explorer's ':' line (app_option_command) on arbitrary text. A command is
 * applied, leaving a state that validates, or refused with a message and the state untouched. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 2048) return 0;
    char *line = malloc(size + 1);
    if (!line) return 0;
    memcpy(line, data, size);
    line[size] = 0;
    app_state st, before;
    app_state_default(&st);
    before = st;
    char err[512];
    err[0] = 0;
    if (app_option_command(&st, line, err, sizeof err) == 0) {
        if (app_state_validate(&st, err, sizeof err) != 0) __builtin_trap();
    } else if (!err[0] || memcmp(&st, &before, sizeof st) != 0) {
        __builtin_trap(); /* refused: says why, changes nothing */
    }
    free(line);
    return 0;
}
