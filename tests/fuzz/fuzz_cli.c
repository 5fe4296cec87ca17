/* fuzz_cli: the command-line parser every subcommand shares (app_cli_parse), on an argv made of
 * the input's NUL-separated pieces, with export's extras (but not --config, which would read
 * whatever file the input names). The result is a state that validates or a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[APP_CLI_MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "export";
    for (size_t at = 0; at <= size && argc < APP_CLI_MAX_ARGS + 1;) {
        argv[argc++] = buf + at;
        at += strlen(buf + at) + 1;
    }
    argv[argc] = NULL;
    static const app_cli_extra extra[] = {
        {.name = "output", .code = 'o'}, {.name = "width", .code = 'W'},
        {.name = "height", .code = 'H'}, {.name = "dpi", .code = 'D'},
        {.name = "format", .code = 'F'}, {.name = "help", .code = '?'}};
    app_state st;
    app_state_default(&st);
    app_cli_args args;
    char err[512];
    err[0] = 0;
    if (app_cli_parse(&st, argc, argv, extra, sizeof extra / sizeof extra[0], &args, err,
                      sizeof err) == 0) {
        if (args.n < 0 || args.n > APP_CLI_MAX_ARGS || args.n_positional < 0 ||
            args.n_positional > APP_CLI_MAX_ARGS)
            __builtin_trap();
        app_state_validate(&st, err, sizeof err);
    } else if (!err[0]) {
        __builtin_trap();
    }
    free(buf);
    return 0;
}
