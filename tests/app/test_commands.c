/* test_commands.c: every command parses through its own rows (commands.h), and its rows are
 * what the man page and the bash completion show. For each command of the table:
 *   - each of its rows, and each figure option when it takes them, is accepted: the parse gets
 *     past it and stops at a word after it that no command knows;
 *   - each option name another command or the option table declares, and it does not, is
 *     refused as an unknown option, and so is the prefix of a name (getopt_long's abbreviation);
 *   - `pelab manpage` names each row, and the bash completion offers each row for that command.
 * The commands run in this process with stderr into a file: a parse error returns before any
 * work. TAP. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "options.h"
#include "tap.h"

#define UNKNOWN "--zz-no-such-option"

static char out_text[1 << 20], err_text[4096];

/* Run app_main on args (NULL-terminated, after "pelab"), stdout and stderr into files read back
 * into out_text and err_text. Returns the exit status. */
static int run(const char *const *args)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"pelab";
    for (; args[argc - 1] && argc < 15; argc++) argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    FILE *o = tmpfile(), *e = tmpfile();
    int so = dup(1), se = dup(2);
    dup2(fileno(o), 1);
    dup2(fileno(e), 2);
    int rc = app_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    rewind(o);
    rewind(e);
    size_t k = fread(out_text, 1, sizeof out_text - 1, o);
    out_text[k] = '\0';
    k = fread(err_text, 1, sizeof err_text - 1, e);
    err_text[k] = '\0';
    if (k && err_text[k - 1] == '\n') err_text[k - 1] = '\0';
    fclose(o);
    fclose(e);
    return rc;
}

/* Does command c declare option name (its rows, --help, the figure options when it takes them)? */
static int declares(const app_command *c, const char *name)
{
    if (strcmp(name, "help") == 0) return 1;
    for (const app_cmd_opt *o = c->opts; o && o->name; o++)
        if (strcmp(o->name, name) == 0) return 1;
    return c->figure_options && app_option_find(name) != NULL;
}

/* Run command c with option --name (and a value when it takes one), then UNKNOWN. */
static int try_option(const app_command *c, const char *name, const char *value)
{
    char opt[128];
    snprintf(opt, sizeof opt, "--%s", name);
    const char *args[6];
    int n = 0;
    /* `pelab --help` is pelab's summary; the explorer's own usage is `pelab tui --help` */
    args[n++] = c->name[0] ? c->name : "tui";
    args[n++] = opt;
    if (value) args[n++] = value;
    args[n++] = UNKNOWN;
    args[n] = NULL;
    return run(args);
}

/* The parse got past --name: it stopped at UNKNOWN, or at the value (a figure option whose
 * default text is no value it takes, like an empty --layer-type), never at the name. */
static int accepted(const app_command *c, const char *name, const char *value)
{
    int rc = try_option(c, name, value);
    char self[160];
    snprintf(self, sizeof self, "unknown option --%s", name);
    return rc == 2 && (strstr(err_text, "unknown option " UNKNOWN) != NULL ||
                       (!strstr(err_text, "unknown option") && !strstr(err_text, self)));
}

static int refused(const app_command *c, const char *name)
{
    char want[160];
    snprintf(want, sizeof want, "unknown option --%s", name);
    int rc = try_option(c, name, "1");
    return rc == 2 && strstr(err_text, want) != NULL;
}

/* The words bash offers after `pelab NAME -`: the compgen -W list of the command's case. */
static int bash_offers(const char *script, const app_command *c, const char *name)
{
    char head[96];
    if (c->name[0])
        snprintf(head, sizeof head, "\n        %s)\n", c->name);
    else
        snprintf(head, sizeof head, "\n        ''|tui");
    const char *p = strstr(script, head);
    if (!p) return 0;
    p = strstr(p, "if [[ $cur == -* ]]; then");
    if (!p || !(p = strstr(p, "compgen -W \""))) return 0;
    p += strlen("compgen -W \"");
    const char *end = strchr(p, '"');
    char word[128];
    snprintf(word, sizeof word, "--%s", name);
    size_t wl = strlen(word);
    for (const char *q = p; q && q < end; q = strchr(q, ' ')) {
        while (*q == ' ') q++;
        if (strncmp(q, word, wl) == 0 && (q[wl] == ' ' || q[wl] == '"')) return 1;
    }
    return 0;
}

/* Does the man page name --name (roff: \-\-name, each '-' escaped)? */
static int man_names(const char *man, const char *name)
{
    char want[256] = "\\-\\-";
    size_t u = strlen(want);
    for (const char *s = name; *s && u + 3 < sizeof want; s++) {
        if (*s == '-') want[u++] = '\\';
        want[u++] = *s;
    }
    want[u] = '\0';
    return strstr(man, want) != NULL;
}

int main(void)
{
    /* every option name anything declares: the negatives of each command */
    const char *all[512];
    size_t n_all = 0;
    for (size_t i = 0; i < app_option_count() && n_all < 512; i++)
        all[n_all++] = app_option_at(i)->name;
    for (size_t i = 0; i < app_command_count(); i++)
        for (const app_cmd_opt *o = app_command_at(i)->opts; o && o->name && n_all < 512; o++)
            all[n_all++] = o->name;

    run((const char *[]){"manpage", NULL});
    char *man = strdup(out_text);
    run((const char *[]){"completion", "bash", NULL});
    char *bash = strdup(out_text);
    TAP_OK(man && bash && strlen(man) > 1000 && strlen(bash) > 1000,
           "pelab manpage and pelab completion bash print their scripts");
    if (!man || !bash) return tap_done();

    app_state st;
    app_state_default(&st);
    for (size_t i = 0; i < app_command_count(); i++) {
        const app_command *c = app_command_at(i);
        const char *label = c->name[0] ? c->name : "(the explorer)";
        char bad[512] = "";
        size_t ub = 0;
        int rows = 0;
        for (const app_cmd_opt *o = c->opts; o && o->name; o++, rows++)
            if (!accepted(c, o->name, o->arg ? "1" : NULL) && ub < sizeof bad)
                ub += (size_t)snprintf(bad + ub, sizeof bad - ub, " --%s (%s)", o->name, err_text);
        if (!accepted(c, "help", NULL) && ub < sizeof bad)
            ub += (size_t)snprintf(bad + ub, sizeof bad - ub, " --help (%s)", err_text);
        for (size_t k = 0; c->figure_options && k < app_option_count(); k++) {
            const app_option *ao = app_option_at(k);
            char v[256];
            app_option_get(&st, ao, v, sizeof v);
            if (!accepted(c, ao->name, v) && ub < sizeof bad)
                ub += (size_t)snprintf(bad + ub, sizeof bad - ub, " --%s %s (%s)", ao->name, v,
                                       err_text);
        }
        TAP_OK(!bad[0], "pelab %s accepts each of its %d rows%s%s", label, rows,
               c->figure_options ? " and every figure option" : "", bad);

        bad[0] = '\0';
        ub = 0;
        int negatives = 0;
        for (size_t k = 0; k < n_all; k++) {
            if (declares(c, all[k])) continue;
            int dup = 0;
            for (size_t j = 0; j < k; j++) dup |= strcmp(all[j], all[k]) == 0;
            if (dup) continue;
            negatives++;
            if (!refused(c, all[k]) && ub < sizeof bad)
                ub += (size_t)snprintf(bad + ub, sizeof bad - ub, " --%s (%s)", all[k], err_text);
        }
        TAP_OK(!bad[0] && negatives > 0,
               "pelab %s refuses the %d option names it does not declare%s", label, negatives, bad);

        bad[0] = '\0';
        ub = 0;
        for (const app_cmd_opt *o = c->opts; o && o->name; o++)
            if ((!man_names(man, o->name) || !bash_offers(bash, c, o->name)) && ub < sizeof bad)
                ub +=
                    (size_t)snprintf(bad + ub, sizeof bad - ub, " --%s (man %d, bash %d)", o->name,
                                     man_names(man, o->name), bash_offers(bash, c, o->name));
        if (!bash_offers(bash, c, "help") && ub < sizeof bad)
            ub += (size_t)snprintf(bad + ub, sizeof bad - ub, " --help (bash)");
        TAP_OK(!bad[0], "pelab %s: the man page names its rows and bash offers them%s", label, bad);
    }
    free(man);
    free(bash);
    return tap_done();
}
