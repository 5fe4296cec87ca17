/* test_option_numbers.c (issue 21): options are numbers. For every numeric option of the table:
 * its number is the value its text says; setting a number checks it as the text would be checked
 * (the same message for a value out of range or not whole); add and multiply step from the
 * current value; and a key step, now set as a number, leaves the state where the old way (the
 * value printed with %.10g and parsed back) left it. TAP. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "views.h"
#include "tap.h"

/* The old key step: the text of the value, x2 or +by, printed with %.10g, applied as text. */
static int old_step(app_state *st, const app_option *o, int dir, char *msg, size_t n)
{
    char val[128];
    app_option_get(st, o, val, sizeof val);
    double v = atof(val), by = o->by > 0 ? o->by : 1;
    v = o->step == APP_STEP_X2 ? (dir > 0 ? v * 2 : v / 2) : v + dir * by;
    if (o->kind == APP_OPT_INT) v = dir > 0 ? ceil(v) : floor(v);
    if (v > o->hi) v = o->hi;
    if (o->lo_open ? v <= o->lo : v < o->lo) {
        if (o->lo_open) return -1;
        v = o->lo;
    }
    snprintf(val, sizeof val, "%.10g", v);
    if (o->clamp) {
        app_state trial = *st;
        if (app_option_set(&trial, o, val, msg, n) < 0) return -1;
        o->clamp(&trial);
        if (app_state_validate(&trial, msg, n) < 0) return -1;
        *st = trial;
        return 0;
    }
    return app_option_apply(st, o->name, val, msg, n);
}

int main(void)
{
    app_state def;
    app_state_default(&def);
    int numeric = 0, bad_get = 0, bad_same = 0, bad_msg = 0, bad_step = 0, steps = 0;
    char why[2048] = "";
    size_t uw = 0;
    for (size_t i = 0; i < app_option_count(); i++) {
        const app_option *o = app_option_at(i);
        if (!app_option_numeric(o)) continue;
        numeric++;
        double v;
        char text[128];
        app_option_get(&def, o, text, sizeof text);
        /* a value whose text is a word (--head's "all") is the number lo the row says it is */
        double said = o->at_lo && strcmp(text, o->at_lo) == 0 ? o->lo : strtod(text, NULL);
        if (app_option_get_num(&def, o, &v) < 0 || v != said) {
            bad_get++;
            uw += (size_t)snprintf(why + uw, uw < sizeof why ? sizeof why - uw : 0, " get:%s",
                                   o->name);
        }
        app_state a = def;
        char err[512], err2[512];
        if (app_option_set_num(&a, o, v, err, sizeof err) < 0 || memcmp(&a, &def, sizeof a) != 0) {
            bad_same++;
            uw += (size_t)snprintf(why + uw, uw < sizeof why ? sizeof why - uw : 0, " same:%s",
                                   o->name);
        }
        /* below the range (and, for a whole number, a fraction): refused in the text's words */
        if (isfinite(o->lo) && o->lo > -1e9) {
            double low = o->lo - 1;
            char t[64];
            snprintf(t, sizeof t, "%.10g", low);
            app_state b = def, c = def;
            int rn = app_option_set_num(&b, o, low, err, sizeof err);
            int rt = app_option_set(&c, o, t, err2, sizeof err2);
            if (rn >= 0 || rt >= 0 || strcmp(err, err2) != 0) {
                bad_msg++;
                uw += (size_t)snprintf(why + uw, uw < sizeof why ? sizeof why - uw : 0,
                                       " msg:%s(%s|%s)", o->name, err, err2);
            }
        }
        if (o->kind == APP_OPT_INT) {
            app_state b = def;
            if (app_option_set_num(&b, o, o->lo + 0.5, err, sizeof err) >= 0 ||
                !strstr(err, "not a whole number")) {
                bad_msg++;
                uw += (size_t)snprintf(why + uw, uw < sizeof why ? sizeof why - uw : 0, " half:%s",
                                       o->name);
            }
        }
        /* keys: 12 steps up, then 12 down, the new way and the old, from the defaults */
        if (o->step != APP_STEP_X2 && o->step != APP_STEP_ADD) continue;
        app_state nw = def, old = def;
        for (int k = 0; k < 24; k++) {
            int dir = k < 12 ? 1 : -1;
            char m1[512], m2[512];
            int r1 = app_option_step(&nw, o, dir, m1, sizeof m1);
            int r2 = old_step(&old, o, dir, m2, sizeof m2);
            double x1 = 0, x2 = 0;
            app_option_get_num(&nw, o, &x1);
            app_option_get_num(&old, o, &x2);
            steps++;
            if ((r1 < 0) != (r2 < 0) || x1 != x2 || memcmp(&nw, &old, sizeof nw) != 0) {
                bad_step++;
                uw += (size_t)snprintf(why + uw, uw < sizeof why ? sizeof why - uw : 0,
                                       " step:%s#%d(%.17g vs %.17g)", o->name, k, x1, x2);
                break;
            }
        }
    }
    TAP_OK(numeric > 20, "%d numeric options in the table", numeric);
    TAP_OK(!bad_get, "each one's number is what its text says (%d not)%s", bad_get, why);
    TAP_OK(!bad_same, "setting its own number changes nothing (%d not)", bad_same);
    TAP_OK(!bad_msg, "a number out of range or not whole is refused in the text's words (%d not)",
           bad_msg);
    TAP_OK(!bad_step && steps > 100,
           "%d key steps set as numbers leave the state where the text round trip did (%d not)",
           steps, bad_step);

    app_state st = def;
    const app_option *base = app_option_find("base");
    double b0, b1;
    char err[256];
    app_option_get_num(&st, base, &b0);
    int rc = app_option_multiply(&st, base, 2, err, sizeof err);
    app_option_get_num(&st, base, &b1);
    TAP_OK(rc == 0 && b1 == 2 * b0, "multiply: base %g x 2 = %g", b0, b1);
    rc = app_option_add(&st, base, -b0, err, sizeof err);
    app_option_get_num(&st, base, &b1);
    TAP_OK(rc == 0 && b1 == b0, "add: back to %g", b1);
    const app_option *dim = app_option_find("dim");
    rc = app_option_apply_value(&st, dim, 64, 1, err, sizeof err);
    TAP_OK(rc == 0 && st.p.dim == 64 && strcmp(err, "dim = 64") == 0, "apply a number: dim 64 (%s)",
           err);
    st.view = app_view_find("rope"); /* an odd d: refused by the whole state, nothing changes */
    app_state before = st;
    rc = app_option_apply_value(&st, dim, 9, 1, err, sizeof err);
    TAP_OK(rc < 0 && memcmp(&st, &before, sizeof st) == 0 && strstr(err, "9"),
           "the whole state decides: d 9 in the rope view is refused (%s)", err);
    TAP_CLOSE(app_round_sig(0.1 + 0.2, 10), 0.3, 0, 0, "round_sig(0.1 + 0.2, 10) is 0.3 exactly");

    /* --head: "all" is the number -1, so its key steps a number (all, 0, 1, 2, all with 3
     * heads; and back), and the text still reads and writes the word */
    const app_option *head = app_option_find("head");
    st = def;
    st.view = app_view_find("alibi");
    st.p.heads = 3;
    double h;
    int seq_ok = app_option_numeric(head) && app_option_get_num(&st, head, &h) == 0 && h == -1;
    static const int up[] = {0, 1, 2, -1}, down[] = {2, 1, 0, -1};
    for (int k = 0; k < 4; k++)
        seq_ok &= app_option_step(&st, head, 1, err, sizeof err) == 0 && st.head == up[k];
    TAP_OK(seq_ok && strcmp(err, "head = all") == 0, "a: all, 0, 1, 2, all as numbers (%s)", err);
    seq_ok = 1;
    for (int k = 0; k < 4; k++)
        seq_ok &= app_option_step(&st, head, -1, err, sizeof err) == 0 && st.head == down[k];
    TAP_OK(seq_ok, "a step down: all, 2, 1, 0, all (%s)", err);
    char text[32];
    rc = app_option_set(&st, head, "2", err, sizeof err);
    app_option_get(&st, head, text, sizeof text);
    TAP_OK(rc == 0 && st.head == 2 && strcmp(text, "2") == 0 &&
               app_option_set(&st, head, "all", err, sizeof err) == 0 && st.head == -1,
           "--head 2, then --head all on the command line");
    app_option_get(&st, head, text, sizeof text);
    TAP_OK(strcmp(text, "all") == 0, "-1 reads as 'all' (%s)", text);
    return tap_done();
}
