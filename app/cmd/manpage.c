/* manpage.c: `pelab manpage`: the manual page pelab.1 in roff, generated from the command,
 * option, view and key tables, so it names every option and every key the program has. The
 * build runs it to make pelab.1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_model.h"
#include "commands.h"
#include "explorer.h"
#include "options.h"
#include "pelab_build.h"
#include "views.h"

/* Text for a roff line: '-' and '\' escaped, non-ASCII as \[uXXXX], a leading '.' or '\'' kept
 * literal. */
static void roff(FILE *fp, const char *s)
{
    if (*s == '.' || *s == '\'') fputs("\\&", fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '-')
            fputs("\\-", fp);
        else if (*p == '\\')
            fputs("\\e", fp);
        else if (*p < 0x80)
            fputc(*p, fp);
        else {
            /* decode one UTF-8 sequence */
            unsigned cp = 0;
            int extra = *p >= 0xf0 ? 3 : *p >= 0xe0 ? 2 : 1;
            cp = *p & (0x3f >> extra);
            for (int k = 0; k < extra && p[1]; k++) cp = cp << 6 | (*++p & 0x3f);
            fprintf(fp, "\\[u%04X]", cp);
        }
    }
}

static void line(FILE *fp, const char *s)
{
    roff(fp, s);
    fputc('\n', fp);
}

/* "--name ARG" as bold and italic */
static void opt_head(FILE *fp, const app_cli_opt *o)
{
    fputs(".TP\n", fp);
    if (o->short_name) fprintf(fp, "\\fB\\-%c\\fR, ", o->short_name);
    fputs("\\fB\\-\\-", fp);
    roff(fp, o->name);
    fputs("\\fR", fp);
    if (o->arg) {
        fputs(" \\fI", fp);
        roff(fp, o->arg);
        fputs("\\fR", fp);
    }
    fputc('\n', fp);
}

/* Which views use option name, as "heatmap, decay" (none: every view or the command line). */
static void views_using(const char *name, char *buf, size_t n)
{
    size_t u = 0;
    buf[0] = '\0';
    for (size_t v = 0; v < app_view_count() && u < n; v++)
        if (app_view_uses(app_view_at(v), name))
            u += (size_t)snprintf(buf + u, n - u, "%s%s", u ? ", " : "", app_view_at(v)->name);
}

static void figure_options(FILE *fp, const app_cli_cmd *m)
{
    for (size_t i = 0; i < app_option_count(); i++) {
        const app_option *ao = app_option_at(i);
        const app_cli_opt *o = NULL;
        for (size_t k = 0; k < m->n; k++)
            if (strcmp(m->opts[k].name, ao->name) == 0) o = &m->opts[k];
        if (!o) continue;
        opt_head(fp, o);
        roff(fp, ao->help);
        fputs(".\n", fp);
        if (o->n_choices) {
            fputs("Values: ", fp);
            for (size_t c = 0; c < o->n_choices; c++) {
                fputs(c ? ", \\fB" : "\\fB", fp);
                roff(fp, o->choices[c]);
                fputs("\\fR", fp);
            }
            fputs(".\n", fp);
        }
        char views[512];
        views_using(ao->name, views, sizeof views);
        if (views[0]) {
            fputs("Views: ", fp);
            roff(fp, views);
            fputs(".\n", fp);
        }
        if (ao->keys) {
            fputs("Keys: \\fB", fp);
            char k[2] = {ao->keys[0], 0};
            roff(fp, k);
            if (ao->keys[1]) {
                k[0] = ao->keys[1];
                fputs("\\fR / \\fB", fp);
                roff(fp, k);
            }
            fputs("\\fR (", fp);
            roff(fp, app_option_step_help(ao));
            fputs(").\n", fp);
        }
    }
}

/* The options of a command that are its own (not the option table's). */
static void own_options(FILE *fp, const app_cli_cmd *m)
{
    for (size_t k = 0; k < m->n; k++) {
        const app_cli_opt *o = &m->opts[k];
        if (app_option_find(o->name) && m->cmd->figure_options) continue;
        opt_head(fp, o);
        roff(fp, o->help);
        fputs(".\n", fp);
        if (o->n_choices && !o->files) {
            fputs("Values: ", fp);
            for (size_t c = 0; c < o->n_choices; c++) {
                fputs(c ? ", \\fB" : "\\fB", fp);
                roff(fp, o->choices[c]);
                fputs("\\fR", fp);
            }
            fputs(".\n", fp);
        }
    }
}

/* A command's notes (its --help's prose after the options), one roff line each. */
static void notes(FILE *fp, const char *text)
{
    fputs(".PP\n", fp);
    for (const char *s = text; *s;) {
        size_t n = strcspn(s, "\n");
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf - 1 ? n : sizeof buf - 1), s);
        line(fp, buf);
        s += n;
        if (*s) {
            s++;
            if (*s) fputs(".br\n", fp);
        }
    }
}

static void keys_of(FILE *fp, const app_explorer *x, int scope_lo, int scope_hi)
{
    app_key_help help[APP_HELP_MAX];
    size_t n = app_explorer_help(x, help, APP_HELP_MAX);
    for (size_t i = 0; i < n; i++) {
        if (help[i].scope < scope_lo || help[i].scope > scope_hi) continue;
        fputs(".TP\n\\fB", fp);
        roff(fp, help[i].keys);
        fputs("\\fR\n", fp);
        line(fp, help[i].what);
    }
}

static void keys(FILE *fp)
{
    app_explorer *x = calloc(1, sizeof *x);
    if (!x) return;
    app_state st;
    app_state_default(&st);
    app_explorer_init(x, &st, 0);
    fputs(".SH KEYS\nIn the explorer (\\fBpelab\\fR, \\fBpelab gui\\fR), keys follow the view: a "
          "view's own keys come first, then the keys of the options it uses, then these, which "
          "work in every view.\n",
          fp);
    keys_of(fp, x, APP_HELP_GLOBAL, APP_HELP_GLOBAL);
    for (size_t v = 0; v < app_view_count(); v++) {
        x->st.view = (int)v;
        const app_view *vw = app_view_at(v);
        fputs(".SS ", fp);
        roff(fp, vw->name);
        fputs("\n", fp);
        roff(fp, vw->description);
        fputs(".\n", fp);
        if (v < 9)
            fprintf(fp, "Key \\fB%zu\\fR reaches it; Tab and \\fB:view\\fR reach every view.\n",
                    v + 1);
        fputs("Its options: ", fp);
        roff(fp, vw->options ? vw->options : "none");
        fputs(".\n", fp);
        keys_of(fp, x, APP_HELP_VIEW, APP_HELP_OPTION);
    }
    app_explorer_free(x);
    free(x);
}

static int cmd_manpage(int argc, char **argv)
{
    app_cli_args args;
    int prc = app_command_parse(&app_command_manpage, NULL, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    if (args.n_positional > 0) {
        fprintf(stderr, "pelab manpage: takes no arguments (got '%s')\n", args.positional[0]);
        return 2;
    }
    FILE *fp = stdout;
    fprintf(fp, ".TH PELAB 1 \"\" \"pelab %s\" \"User Commands\"\n", PELAB_VERSION_STRING);
    fputs(".SH NAME\npelab \\- a position\\-embedding lab\n.SH SYNOPSIS\n", fp);
    for (size_t i = 0; i < app_command_count(); i++) {
        const app_command *c = app_command_at(i);
        fputs(".B pelab", fp);
        if (c->name[0]) {
            fputc(' ', fp);
            roff(fp, c->name);
        }
        fputc('\n', fp);
        if (c->synopsis[0]) line(fp, c->synopsis);
        fputs(".br\n", fp);
    }
    fputs(".SH DESCRIPTION\n"
          "pelab makes position embeddings visible: sinusoidal, learned, ALiBi, RoPE (with the "
          "context\\-extension methods), T5, Transformer\\-XL, xPos and NoPE, live in the terminal "
          "or a window, as figures (PNG, SVG, PDF) with the numbers behind them (CSV, NPY), and "
          "through small transformers pelab trains itself, one per scheme.\n"
          ".SH COMMANDS\n",
          fp);
    app_cli_cmd *models[32];
    size_t nm = 0;
    for (size_t i = 0; i < app_command_count() && nm < 32; i++) {
        const app_command *c = app_command_at(i);
        app_cli_cmd *m = app_cli_model(c);
        if (!m) break;
        models[nm++] = m;
        fputs(".TP\n\\fBpelab", fp);
        if (c->name[0]) {
            fputc(' ', fp);
            roff(fp, c->name);
        }
        fputs("\\fR ", fp);
        line(fp, c->synopsis);
        roff(fp, c->summary);
        fputs(".\n", fp);
    }
    fputs(".SH OPTIONS\n"
          "The figure options, taken by \\fBpelab\\fR, \\fBpelab gui\\fR and \\fBpelab export\\fR "
          "(and typed in the explorer after \\fB:\\fR, without the dashes); the views that use "
          "an option show it on their status line.\n",
          fp);
    if (nm > 0) figure_options(fp, models[0]);
    for (size_t i = 0; i < nm; i++) {
        const app_command *c = models[i]->cmd;
        if (!c->opts || !c->opts[0].name) continue;
        fputs(".SS pelab", fp);
        if (c->name[0]) {
            fputc(' ', fp);
            roff(fp, c->name);
        }
        fputc('\n', fp);
        own_options(fp, models[i]);
        if (c->notes) notes(fp, c->notes);
    }
    for (size_t i = 0; i < nm; i++) app_cli_model_free(models[i]);
    keys(fp);
    fputs(".SH ENVIRONMENT\n"
          ".TP\n.B PELAB_ASSETS\nThe assets folder (colormaps, story grammar, models, configs, "
          "prompts), when not the installed one.\n"
          ".TP\n.B NO_COLOR\nWhen set, the terminal explorer draws without colour.\n"
          ".TP\n.B COLORTERM\n\\fBtruecolor\\fR or \\fB24bit\\fR: direct colour in the terminal; "
          "else 256, 16 or 8 colours as terminfo says.\n"
          ".TP\n.B TERM\nThe terminal type (terminfo).\n"
          ".TP\n.BR LANG \", \" LC_ALL\nA non\\-UTF\\-8 locale gets ASCII glyphs.\n"
          ".TP\n.BR DISPLAY \", \" WAYLAND_DISPLAY \", \" SDL_VIDEODRIVER\nWhere \\fBpelab "
          "gui\\fR opens its window.\n"
          ".SH FILES\n.TP\n",
          fp);
    roff(fp, PELAB_ASSETS_INSTALLED);
    fputs("\nThe installed assets: \\fBmodels/\\fR (the shipped models, \\fB\\-\\-model\\fR "
          "NAME), \\fBconfigs/\\fR (Hugging Face config.json files for \\fB\\-\\-config\\fR), "
          "\\fBprompts/\\fR (\\fB\\-\\-preset\\fR NAME), \\fBstory/\\fR (the training grammar), "
          "colormaps.\n"
          ".TP\n.I pelab\\-VIEW\\-N.png\nWhat \\fBs\\fR saves in the current folder.\n"
          ".SH EXIT STATUS\n"
          ".TP\n.B 0\nDone.\n"
          ".TP\n.B 1\nA runtime error (a file that cannot be written, no display, no terminal).\n"
          ".TP\n.B 2\nA usage error: one line names the option, the value and what is allowed.\n"
          ".SH EXAMPLES\n.nf\n"
          "pelab \\-\\-view rope \\-\\-pairing half\n"
          "pelab gui \\-\\-view compare \\-\\-model alibi \\-\\-compare learned\n"
          "pelab export heatmap \\-\\-dim 128 \\-\\-len 256 \\-o pe.png\n"
          "pelab export frequencies \\-\\-config llama\\-3.1\\-8b.json \\-o llama3.png\n"
          "pelab export alibi \\-\\-heads 8 \\-\\-head 0 \\-\\-len 16 \\-o alibi\\-h0.csv\n"
          "pelab train \\-\\-pe rope \\-o my\\-rope.pelab\n"
          "pelab eval \\-\\-extrapolate my\\-rope.pelab\n"
          "source <(pelab completion bash)\n"
          ".fi\n"
          ".SH SEE ALSO\n"
          "\\fBpelab list\\fR names the encodings, views and colormaps.\n",
          fp);
    return fflush(fp) == 0 ? 0 : 1;
}

const app_command app_command_manpage = {.name = "manpage",
                                         .synopsis = "",
                                         .summary = "this manual in roff (man -l <(pelab manpage))",
                                         .fn = cmd_manpage};
