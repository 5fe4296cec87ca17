/* test_options.c: the option table: strict numbers, ranges, names, whole-state validation, and
 * the export command round trip (parse what `e` prints and get the same state back). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "tap.h"
#include "views.h"

static int set(app_state *st, const char *name, const char *v, char *err, size_t n)
{
    return app_option_set(st, app_option_find(name), v, err, n);
}

int main(void)
{
    char err[512];
    long i;
    double d;
    TAP_OK(app_parse_int("dim", "128", 1, 10, &i, err, sizeof err) < 0 &&
               strstr(err, "--dim 128") && strstr(err, "1..10"),
           "out of range names option, value and range: %s", err);
    TAP_OK(app_parse_int("dim", "12x", 1, 1000, &i, err, sizeof err) < 0 &&
               strstr(err, "not a whole number"),
           "trailing junk refused: %s", err);
    TAP_OK(app_parse_int("dim", "", 1, 1000, &i, err, sizeof err) < 0, "empty refused");
    TAP_OK(app_parse_int("dim", "99999999999999999999", 1, 1000, &i, err, sizeof err) < 0,
           "overflow refused: %s", err);
    TAP_OK(app_parse_double("base", "nan", 1, INFINITY, 1, &d, err, sizeof err) < 0 &&
               strstr(err, "finite"),
           "NaN refused: %s", err);
    TAP_OK(app_parse_double("base", "inf", 1, INFINITY, 1, &d, err, sizeof err) < 0,
           "inf refused: %s", err);
    TAP_OK(app_parse_double("base", "1", 1, INFINITY, 1, &d, err, sizeof err) < 0 &&
               strstr(err, "> 1"),
           "base 1 refused (must be > 1): %s", err);
    TAP_OK(app_parse_double("base", "1e4", 1, INFINITY, 1, &d, err, sizeof err) == 0 && d == 1e4,
           "1e4 accepted");

    app_state st;
    app_state_default(&st);
    TAP_OK(app_state_validate(&st, err, sizeof err) == 0, "defaults are valid");
    TAP_OK(set(&st, "pe", "sinusodal", err, sizeof err) < 0 && strstr(err, "sinusoidal"),
           "misspelt encoding suggests the right one: %s", err);
    TAP_OK(set(&st, "view", "heatmpa", err, sizeof err) < 0 && strstr(err, "heatmap"),
           "misspelt view suggests: %s", err);
    TAP_OK(set(&st, "pairing", "halfs", err, sizeof err) < 0 && strstr(err, "interleaved|half"),
           "choices are listed: %s", err);
    TAP_OK(set(&st, "cmap", "virdis", err, sizeof err) < 0 && strstr(err, "viridis"),
           "misspelt colormap suggests: %s", err);
    TAP_OK(set(&st, "curves", "rope,alibbi", err, sizeof err) < 0 && strstr(err, "alibi"),
           "misspelt curve suggests: %s", err);
    TAP_OK(set(&st, "head", "x", err, sizeof err) < 0 && strstr(err, "--head"), "bad head: %s",
           err);

    /* whole-state checks: odd d for a paired encoding, head beyond heads, pos beyond L */
    app_state_default(&st);
    set(&st, "dim", "7", err, sizeof err);
    TAP_OK(app_state_validate(&st, err, sizeof err) < 0 && strstr(err, "--dim 7"),
           "odd d refused for sinusoidal: %s", err);
    /* the message names the encoding the view draws, not the --pe default it does not show:
     * the rope view (and `:d 7` typed in it) says RoPE, the heatmap says sinusoidal */
    static const struct {
        const char *view, *want, *not_want;
    } odd[] = {
        {"rope", "for RoPE", "sinusoidal"},
        {"xpos", "RoPE", "sinusoidal"},
        {"xl", "Transformer-XL", "sinusoidal"},
        {"heatmap", "for sinusoidal", "RoPE"},
    };
    for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++) {
        app_state_default(&st);
        st.view = app_view_find(odd[k].view);
        int rc = app_option_command(&st, "d 7", err, sizeof err);
        TAP_OK(rc < 0 && strstr(err, "--dim 7") && strstr(err, odd[k].want) &&
                   !strstr(err, odd[k].not_want),
               "':d 7' in the %s view names %s: %s", odd[k].view, odd[k].want, err);
    }
    app_state_default(&st);
    set(&st, "heads", "4", err, sizeof err);
    set(&st, "head", "5", err, sizeof err);
    TAP_OK(app_state_validate(&st, err, sizeof err) < 0 && strstr(err, "--head 5"),
           "head beyond heads refused: %s", err);
    app_state_default(&st);
    set(&st, "len", "200000", err, sizeof err); /* x 4096: 3125 MiB */
    set(&st, "dim", "4096", err, sizeof err);
    /* issue 25: the state is valid (the views draw at their resolution); the whole table is
     * refused by the memory budget when it is built */
    TAP_OK(app_state_validate(&st, err, sizeof err) == 0,
           "L*d over the memory budget is a valid "
           "state (%s)",
           err);
    pe_matrix big = {0};
    TAP_OK(st.enc->table(&st.p, &big, err, sizeof err) != PE_OK && strstr(err, "memory budget") &&
               strstr(err, "--max-memory"),
           "its whole table is refused by the memory budget: %s", err);
    pe_matrix_free(&big);
    app_state_default(&st);
    set(&st, "view", "heatmap", err, sizeof err);
    set(&st, "pe", "alibi", err, sizeof err);
    TAP_OK(app_state_validate(&st, err, sizeof err) < 0 && strstr(err, "alibi"),
           "heatmap of alibi refused with a reason: %s", err);

    /* app_option_command leaves the state unchanged on failure */
    app_state_default(&st);
    app_state before = st;
    TAP_OK(app_option_command(&st, "len 0", err, sizeof err) < 0 &&
               memcmp(&st, &before, sizeof st) == 0,
           "a refused ':len 0' changes nothing: %s", err);
    TAP_OK(app_option_command(&st, "--base=500000", err, sizeof err) == 0 && st.p.base == 5e5,
           "'--base=500000' form accepted");

    /* issue 28: a title holding ESC ] 2 ; ... BEL (which sets a terminal's title) and bytes that
     * are not UTF-8 go into the command as $'\xNN': the same bytes when a shell reads it back,
     * and no raw control character on the terminal that shows it */
    {
        app_state t;
        app_state_default(&t);
        set(&t, "title", "X\x1b]2;PWNED\aY \xff it's", err, sizeof err);
        char c[2048];
        app_export_command(&t, "o\x1b.png", c, sizeof c);
        int raw = 0;
        for (const char *q = c; *q; q++) raw |= (unsigned char)*q < 0x20 || *q == 0x7f;
        TAP_OK(!raw && strstr(c, "--title 'X'$'\\x1b'']2;PWNED'$'\\x07''Y '$'\\xff'' it'\\''s'") &&
                   strstr(c, "-o 'o'$'\\x1b''.png'"),
               "control characters and bad bytes quoted as $'\\xNN': %s", c);
    }

    /* the export command round trip */
    app_state_default(&st);
    set(&st, "view", "alibi", err, sizeof err);
    set(&st, "heads", "12", err, sizeof err);
    set(&st, "head", "3", err, sizeof err);
    set(&st, "slope-ratio", "0.5", err, sizeof err);
    set(&st, "cmap", "magma", err, sizeof err);
    set(&st, "theme", "dark", err, sizeof err);
    char cmd[2048];
    app_export_command(&st, "a b.png", cmd, sizeof cmd);
    TAP_OK(strstr(cmd, "-o 'a b.png'") != NULL, "paths with spaces are quoted: %s", cmd);
    /* split the command on spaces (no quoted values besides -o here) and parse it back */
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", cmd);
    char *argv[64];
    int argc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok && argc < 64; tok = strtok_r(NULL, " ", &save))
        argv[argc++] = tok;
    /* argv: pelab export alibi --... -o 'a b.png' ; drop the output part */
    while (argc > 0 && strcmp(argv[argc - 1], "-o") != 0) argc--;
    if (argc > 0) argc--;
    app_state back;
    app_state_default(&back);
    set(&back, "view", argv[2], err, sizeof err);
    app_cli_args args;
    int rc = app_cli_parse(&back, argc - 2, argv + 2, NULL, 0, &args, err, sizeof err);
    TAP_OK(rc == 0, "the printed command parses (%s)", rc ? err : "ok");
    TAP_OK(back.view == st.view && back.p.heads == 12 && back.head == 3 &&
               back.p.slope_ratio == 0.5 && back.map == st.map && back.dark == 1,
           "and gives back the same state");

    /* --config is the starting point and the other options refine it, in either order */
    char cfg[1024];
    snprintf(cfg, sizeof cfg, "%s/assets/configs/llama-3.1-8b.json",
             getenv("PELAB_SRC") ? getenv("PELAB_SRC") : ".");
    const app_cli_extra cx[] = {{.name = "config", .code = 'C'}};
    char *cfg_first[] = {"x", "--factor", "16", "--len", "300", "--config", cfg};
    char *cfg_last[] = {"x", "--config", cfg, "--factor", "16", "--len", "300"};
    char *cfg_only[] = {"x", "--config", cfg};
    char **lines[] = {cfg_first, cfg_last, cfg_only};
    int counts[] = {7, 7, 3};
    for (int k = 0; k < 3; k++) {
        app_state c;
        app_state_default(&c);
        rc = app_cli_parse(&c, counts[k], lines[k], cx, 1, &args, err, sizeof err);
        double want = k < 2 ? 16 : 8;
        int len = k < 2 ? 300 : st.p.len;
        TAP_OK(rc == 0 && c.p.base == 500000 && c.p.scaling.type == PE_SCALING_LLAMA3 &&
                   c.p.scaling.factor == want && c.p.len == len,
               "--config %s: base %g, factor %g (want %g), len %d (want %d) %s",
               k == 0   ? "after --factor/--len"
               : k == 1 ? "before --factor/--len"
                        : "alone",
               c.p.base, c.p.scaling.factor, want, c.p.len, len, rc ? err : "");
    }
    char *missing[] = {"x", "--config", "/nonexistent/config.json"};
    app_state c;
    app_state_default(&c);
    rc = app_cli_parse(&c, 3, missing, cx, 1, &args, err, sizeof err);
    TAP_OK(rc < 0 && strstr(err, "/nonexistent/config.json"), "a missing config is named: %s", err);
    /* e with --config (issue 22): the printed command names the file, quoted for the shell
     * (a path with a space and a quote), and only the options that differ from what the file
     * sets; read back it gives the same parameters, LongRoPE lists included (no option spells
     * them, so without --config the command could not even run) */
    {
        char dir[1024], path[1200], src[1024];
        snprintf(dir, sizeof dir, "%s/pelab-opt-XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        snprintf(src, sizeof src, "%s/assets/configs/phi-3-vision-128k-instruct.json",
                 getenv("PELAB_SRC") ? getenv("PELAB_SRC") : ".");
        int made = mkdtemp(dir) != NULL;
        snprintf(path, sizeof path, "%s/phi 3's config.json", dir);
        FILE *in = made ? fopen(src, "rb") : NULL, *out = in ? fopen(path, "wb") : NULL;
        char chunk[4096];
        size_t got;
        while (out && (got = fread(chunk, 1, sizeof chunk, in)) > 0) fwrite(chunk, 1, got, out);
        if (in) fclose(in);
        int wrote = out && fclose(out) == 0;
        char *line[] = {"x",        "--view", "frequencies", "--factor", "64",
                        "--config", path,     "--len",       "300"};
        app_state a;
        app_state_default(&a);
        rc = wrote ? app_cli_parse(&a, 9, line, cx, 1, &args, err, sizeof err) : -1;
        TAP_OK(rc == 0 && a.p.scaling.type == PE_SCALING_LONGROPE && a.p.scaling.n_factors > 0,
               "--config of a longrope model (a copy at a path with a space and a quote) %s",
               rc ? err : "");
        char pc[4096], want[1400];
        app_export_command(&a, "f.png", pc, sizeof pc);
        snprintf(want, sizeof want,
                 "pelab export frequencies --config '%s/phi 3'\\''s config.json'", dir);
        TAP_OK(strncmp(pc, want, strlen(want)) == 0 && strstr(pc, " --factor 64") &&
                   strstr(pc, " --len 300") && !strstr(pc, "--scaling") && !strstr(pc, "--base") &&
                   !strstr(pc, "--dim ") && !strstr(pc, "--orig-ctx") && !strstr(pc, "--seq-len"),
               "e prints --config first, quoted, then only what differs from the file: %s", pc);
        /* split as a POSIX shell does for '...' and \' (all this command uses) and parse back */
        char words[4096], *wv[64];
        int wc = 0;
        size_t k = 0;
        for (const char *q = pc; *q && wc < 64;) {
            while (*q == ' ') q++;
            if (!*q) break;
            wv[wc++] = words + k;
            while (*q && *q != ' ') {
                if (*q == '\'') {
                    for (q++; *q && *q != '\''; q++) words[k++] = *q;
                    if (*q) q++;
                } else if (*q == '\\' && q[1]) {
                    words[k++] = q[1];
                    q += 2;
                } else {
                    words[k++] = *q++;
                }
            }
            words[k++] = '\0';
        }
        while (wc > 0 && strcmp(wv[wc - 1], "-o") != 0) wc--;
        if (wc > 0) wc--;
        app_state b;
        app_state_default(&b);
        set(&b, "view", wc > 2 ? wv[2] : "", err, sizeof err);
        rc = wc > 2 ? app_cli_parse(&b, wc - 2, wv + 2, cx, 1, &args, err, sizeof err) : -1;
        const pe_rope_scaling *sa = &a.p.scaling, *sb = &b.p.scaling;
        TAP_OK(rc == 0 && b.view == a.view && !strcmp(b.config_path, path) &&
                   b.p.base == a.p.base && b.p.dim == a.p.dim && b.p.len == 300 &&
                   sb->type == sa->type && sb->factor == 64 &&
                   sb->original_ctx == sa->original_ctx && sb->seq_len == sa->seq_len &&
                   sb->attention_factor == sa->attention_factor && sb->n_factors == sa->n_factors &&
                   !memcmp(sb->short_factor, sa->short_factor,
                           (size_t)sa->n_factors * sizeof *sa->short_factor) &&
                   !memcmp(sb->long_factor, sa->long_factor,
                           (size_t)sa->n_factors * sizeof *sa->long_factor) &&
                   b.target_len == a.target_len,
               "read back: the same view, file and parameters, the factor lists included (%s)",
               rc ? err : "ok");
        char pc2[4096];
        app_export_command(&b, "f.png", pc2, sizeof pc2);
        TAP_OK(strcmp(pc, pc2) == 0, "and e prints the same command again");
        /* a changed option that the file set is printed once, with the new value */
        app_state c2 = a;
        rc = app_option_command(&c2, "base 20000", err, sizeof err);
        app_export_command(&c2, NULL, pc2, sizeof pc2);
        const char *bs = strstr(pc2, " --base ");
        TAP_OK(rc == 0 && bs && !strstr(bs + 1, " --base ") && strstr(pc2, " --base 20000"),
               "a base changed after the file: --base 20000 once: %s", pc2);
        if (made) {
            unlink(path);
            rmdir(dir);
        }
    }
    /* option groups (option_groups.h): each module's rows address its own storage, every row
     * comes from exactly one group, and the names are unique */
    size_t rows = 0, stray = 0, groups_with_storage = 0;
    char stray_names[256] = "";
    for (size_t g = 0; g < app_option_group_count(); g++) {
        const app_option_group *gr = app_option_group_at(g);
        groups_with_storage += gr->size > 0;
        for (const app_option *o = gr->rows; o->name; o++, rows++) {
            if (!gr->size || o->kind == APP_OPT_CUSTOM) continue;
            if (o->off < gr->off || o->off >= gr->off + gr->size) {
                stray++;
                size_t u = strlen(stray_names);
                snprintf(stray_names + u, sizeof stray_names - u, " %s", o->name);
            }
        }
    }
    TAP_OK(groups_with_storage >= 5 && rows == app_option_count() && !stray,
           "%zu groups (%zu with storage of their own) hold the %zu rows; rows outside their "
           "group's storage:%s",
           app_option_group_count(), groups_with_storage, rows, stray ? stray_names : " none");
    int dup = 0;
    for (size_t a = 0; a < app_option_count(); a++)
        for (size_t b = a + 1; b < app_option_count(); b++)
            dup += strcmp(app_option_at(a)->name, app_option_at(b)->name) == 0;
    TAP_OK(!dup, "each option name once across the groups (%d twice)", dup);
    return tap_done();
}
