/* fuzz_prompt: a typed prompt, from the option to the terminal: --prompt is set (bad UTF-8
 * becomes U+FFFD, control characters \xNN), the tokenizer splits it for a shipped model, the
 * attention view runs the model over it and builds its scene, and the terminal rasteriser draws
 * that. The raw bytes also go to the tokenizer directly. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "model/tiny/model.h"
#include "options.h"
#include "textclean.h"
#include "views.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static app_state base;
static app_view_ctx ctx;
static int ready;

static void setup(void)
{
    char err[512];
    app_state_default(&base);
    if (app_option_set(&base, app_option_find("view"), "attention", err, sizeof err) < 0 ||
        app_option_set(&base, app_option_find("model"), "rope", err, sizeof err) < 0)
        abort(); /* the shipped model must be there (assets/models) */
    ready = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) setup();
    /* the model runs once per input over every token: inputs up to 4096 bytes ran at 18 a
     * second (issue 28); 256 bytes (at most ~128 tokens) reach the same code, and longer
     * prompts only repeat what the tokenizer and the view do for short ones (--prompt's length
     * limit has a bad-input row of its own) */
    if (size > 256) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char err[512];
    app_state st = base;
    if (app_option_set(&st, app_option_find("prompt"), text, err, sizeof err) == 0) {
        /* what the tokenizer and everything after it gets is valid UTF-8 */
        if (!text_is_clean(st.attn.prompt, strlen(st.attn.prompt), TEXT_KEEP_LINES))
            __builtin_trap();
        if (app_state_validate(&st, err, sizeof err) == 0) {
            scene s;
            scene_init(&s, 80, 48, 0);
            scene_target t = cellgrid_target(80, 24);
            if (app_view_build(&ctx, &st, &s, &t, err, sizeof err) == 0) {
                cellgrid g;
                if (cellgrid_init(&g, 80, 24, 0) == 0) {
                    cellgrid_render(&g, &s);
                    cellgrid_free(&g);
                }
            }
            scene_free(&s);
        }
    }
    free(text);
    return 0;
}
