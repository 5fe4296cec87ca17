/* fuzz_animate: --animate NAME=FROM:TO[:FRAMES][:log] on arbitrary bytes (issue 28). A spec is
 * refused with a message, or parsed into an option, two different finite ends and 2..1000
 * frames; then every frame's value is finite, the sweep is applied to the rope view's state
 * (which refuses values the option does not take, with a message), and the spec written back
 * parses to the same sweep. The animation kind of the bytes as a path is asked too. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "animate.h"
#include "format.h"
#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1024) return 0;
    char *spec = malloc(size + 1);
    if (!spec) return 0;
    memcpy(spec, data, size);
    spec[size] = 0;
    (void)app_format_of_as(spec, APP_FORMAT_ANIMATION); /* the format table (format.h) */
    app_anim a;
    app_anim_default(&a);
    char err[512];
    err[0] = 0;
    if (app_anim_parse(spec, &a, err, sizeof err) == 0) {
        if (!a.opt || a.frames < 2 || a.frames > 1000 || !isfinite(a.from) || !isfinite(a.to) ||
            a.from == a.to)
            __builtin_trap();
        app_state st;
        app_state_default(&st);
        char e2[512];
        if (app_option_set(&st, app_option_find("view"), "rope", e2, sizeof e2) < 0) abort();
        for (int i = 0; i<a.frames; i += a.frames> 8 ? a.frames / 8 : 1) {
            if (!isfinite(app_anim_value(&a, i))) __builtin_trap();
            app_state fr = st;
            e2[0] = 0;
            if (app_anim_apply(&fr, &a, i, e2, sizeof e2) < 0 && !e2[0]) __builtin_trap();
        }
        char back[512];
        app_anim_spec(&a, back, sizeof back);
        app_anim b;
        app_anim_default(&b);
        /* the spec as pelab writes it (the figure's metadata) reads back */
        if (app_anim_parse(back, &b, e2, sizeof e2) != 0 || b.opt != a.opt || b.frames != a.frames)
            __builtin_trap();
    } else if (!err[0]) {
        __builtin_trap(); /* a refusal always says why */
    }
    free(spec);
    return 0;
}
