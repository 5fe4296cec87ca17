/* test_subtitle.c: a figure's parameters line comes from the option rows (app_option.sub): each
 * row says how it reads and when, and a view's subtitle is the rows its figure depends on. The
 * exact lines of the cases below, then the views' declarations (what they leave out is what they
 * list). */
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "tap.h"
#include "views.h"

static char err[512];

static void expect(const char *view, const char *const *opts, const char *want, const char *why)
{
    app_state st;
    app_state_default(&st);
    int ok = app_option_set(&st, app_option_find("view"), view, err, sizeof err) == 0;
    for (int i = 0; ok && opts && opts[i]; i += 2)
        ok = app_option_set(&st, app_option_find(opts[i]), opts[i + 1], err, sizeof err) == 0;
    char sub[512] = "";
    if (ok) app_subtitle(&st, sub, sizeof sub);
    TAP_OK(ok && strcmp(sub, want) == 0, "%s %s: '%s' (want '%s') %s", view, why, sub, want,
           ok ? "" : err);
}

#define O(...) ((const char *const[]){__VA_ARGS__, NULL})

int main(void)
{
    expect("heatmap", NULL, "d=128  L=256  base=10,000  interleaved", "sinusoidal: base, layout");
    expect("heatmap", O("pe", "learned"), "d=128  L=256  seed=0",
           "learned: the seed, no base or layout");
    expect("heatmap", O("pe", "rope", "scaling", "yarn"),
           "d=128  L=256  base=10,000  interleaved pairs  YaRN  f=4  L\xe2\x82\x80=4096",
           "rope with YaRN: pairs and the method's f, L0");
    expect("heatmap", O("freq", "fairseq", "layout", "concat", "len", "100000", "base", "1e6"),
           "d=128  L=100,000  base=10\xe2\x81\xb6  concat  fairseq freqs",
           "numbers for people, fairseq frequencies");
    expect("similarity", O("seed", "7", "pe", "learned"), "d=128  L=256  seed=7",
           "learned: the seed as it is");
    expect("similarity", O("layout", "concat"), "d=128  L=256  base=10,000",
           "the layout does not change a dot product");
    expect("rope", NULL, "d=128  base=10,000  interleaved pairs", "no L (it bounds m, n)");
    expect("rope", O("scaling", "linear", "factor", "2", "pairing", "half", "rotary-frac", "0.5"),
           "d=128  base=10,000  half-split pairs  rotary 0.5  linear  f=2", "linear reads no L0");
    expect("rope", O("factor", "8"), "d=128  base=10,000  interleaved pairs",
           "scaling none: no factor");
    expect("wavelength", O("pe", "rope", "scaling", "llama3", "orig-ctx", "8192"),
           "d=128  L=256  base=10,000  llama3  f=4  L\xe2\x82\x80=8K", "rope: the method");
    expect("decay", O("scaling", "yarn", "pe", "learned"),
           "d=128  L=256  base=10,000  YaRN  f=4  L\xe2\x82\x80=4096",
           "the RoPE curves' scaling; --pe is not the decay view's");
    expect("extension", NULL, "d=128  base=10,000  L\xe2\x82\x80=4096  T=16K",
           "T auto = f x L0 (f is in the title)");
    expect("resolution", O("target-len", "100000"),
           "d=128  base=10,000  f=4  L\xe2\x82\x80=4096  T=100,000", "a target given");
    expect("frequencies", O("scaling", "yarn", "dim", "16"), "d=16  base=10,000",
           "the title names the method, f, L0 and T");
    expect("alibi", O("alibi", "symmetric", "slope-ratio", "0.5"),
           "L=256  heads=8  symmetric \xe2\x88\x92m|i\xe2\x88\x92j|  slopes r^(h+1)",
           "the bias and the slopes");
    /* the wavelength view draws the sinusoid's frequencies for a table encoding: base acts */
    expect("wavelength", O("pe", "learned"), "d=128  L=256  base=10,000",
           "learned: the sinusoid's wavelengths, so its base");
    expect("wavelength", O("pe", "learned", "freq", "fairseq", "scaling", "yarn"),
           "d=128  L=256  base=10,000  fairseq freqs", "learned: fairseq acts, YaRN does not");
    /* t5: the trained model's bucketing, or with --weights init the options' and the seed */
    expect("t5", NULL, "L=256  colour: per head  trained values",
           "trained: no buckets, max distance or seed of the options");
    expect("t5", O("weights", "init", "buckets", "16", "t5", "bidirectional", "seed", "3"),
           "L=256  colour: per head  buckets=16  max_distance=128  bidirectional  seed=3  "
           "values seeded, as at init",
           "init: the options' bucketing and the seed");
    expect("t5", O("scale", "shared"), "L=256  colour: shared scale (all heads)  trained values",
           "one colour scale");
    expect("xl", NULL, "d=128  L=256  base=10,000  seed=0", "the seed of its random q, k");

    /* what a view leaves out of its subtitle is an option it lists */
    for (size_t v = 0; v < app_view_count(); v++) {
        const app_view *vw = app_view_at(v);
        const char *p = vw->not_in_subtitle;
        int ok = 1;
        char bad[64] = "";
        while (p && *p) {
            p += strspn(p, " ");
            size_t w = strcspn(p, " ");
            /* copied by hand: gcc -O2 with ASan misreads a %.*s of a pointer that moves */
            size_t cut = w < sizeof bad ? w : sizeof bad - 1;
            memcpy(bad, p, cut);
            bad[cut] = '\0';
            if (w && (!app_view_uses(vw, bad) || !app_option_find(bad))) {
                ok = 0;
                break;
            }
            p += w;
        }
        if (vw->not_in_subtitle || !ok)
            TAP_OK(ok, "%s: leaves out of its subtitle only options it lists%s%s", vw->name,
                   ok ? "" : ": ", ok ? "" : bad);
    }
    return tap_done();
}
