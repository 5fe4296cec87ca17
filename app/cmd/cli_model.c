/* cli_model.c: every command's options from the tables (see cli_model.h). */
#include "cli_model.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "lesson.h"
#include "options.h"
#include "views.h"

const char *const app_cli_shells[] = {"bash", "zsh", "fish", NULL};

static app_cli_opt *add(app_cli_cmd *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->opts[i].name, name) == 0) return &m->opts[i];
    if (m->n >= APP_CLI_MAX_OPTS) return NULL;
    app_cli_opt *o = &m->opts[m->n++];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", name);
    return o;
}

static void figure_options(app_cli_cmd *m)
{
    for (size_t i = 0; i < app_option_count(); i++) {
        const app_option *ao = app_option_at(i);
        app_cli_opt *o = add(m, ao->name);
        if (!o) return;
        o->arg = ao->kind == APP_OPT_INT      ? "N"
                 : ao->kind == APP_OPT_DOUBLE ? "X"
                 : ao->files && !ao->choices  ? "FILE"
                                              : "VALUE";
        snprintf(o->help, sizeof o->help, "%s", ao->help);
        o->n_choices = app_option_choices(ao, o->choices, APP_CLI_MAX_CHOICES);
        o->files = ao->files;
    }
}

/* Train and eval parse their own options; their --help text names every one ("--steps N",
 * "-o, --output FILE", "--tied"), so that text is what is read here. */
static void usage_options(app_cli_cmd *m, void (*usage)(FILE *fp))
{
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    if (!fp) return;
    usage(fp);
    fclose(fp);
    for (const char *p = text; p && (p = strstr(p, "--")) != NULL;) {
        p += 2;
        size_t w = 0;
        while (isalnum((unsigned char)p[w]) || p[w] == '-') w++;
        if (w == 0 || w >= sizeof m->opts[0].name) continue;
        char name[40];
        memcpy(name, p, w); /* w < sizeof name, checked above */
        name[w] = '\0';
        app_cli_opt *o = add(m, name);
        if (!o) break;
        const char *q = p + w;
        /* "--name ARG": an upper-case word right after */
        if (q[0] == ' ' && isupper((unsigned char)q[1]) && !o->arg) {
            static const char *const args[] = {"NAME", "FILE", "DIR", "N", "X", "P"};
            for (size_t k = 0; k < sizeof args / sizeof args[0]; k++)
                if (strncmp(q + 1, args[k], strlen(args[k])) == 0 &&
                    !isalpha((unsigned char)q[1 + strlen(args[k])]))
                    o->arg = args[k];
            if (!o->arg) o->arg = "VALUE";
        }
        /* "-o, --output" */
        if (p - text >= 6 && p[-3] == ' ' && p[-4] == ',' && p[-6] == '-' &&
            isalpha((unsigned char)p[-5]))
            o->short_name = p[-5];
        if (o->arg && strcmp(o->arg, "FILE") == 0) o->files = "";
        if (o->arg && strcmp(o->arg, "DIR") == 0) o->files = "/";
        /* train's --pe NAME takes a model scheme */
        if (strcmp(name, "pe") == 0 && o->arg)
            for (; app_attn_model_names[o->n_choices]; o->n_choices++)
                o->choices[o->n_choices] = app_attn_model_names[o->n_choices];
        p = q;
    }
    free(text);
}

app_cli_cmd *app_cli_model(const app_command *c)
{
    app_cli_cmd *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->cmd = c;
    if (c->figure_options) figure_options(m);
    /* a lesson is a shipped name or a .lesson file */
    m->n_lessons = lesson_names(&m->lessons);
    for (const app_cmd_opt *co = c->opts; co && co->name; co++) {
        app_cli_opt *o = add(m, co->name);
        if (!o) break;
        o->short_name = co->short_name;
        o->arg = co->arg;
        o->files = co->files;
        for (size_t k = 0; co->choices && co->choices[k] && k < APP_CLI_MAX_CHOICES; k++)
            o->choices[o->n_choices++] = co->choices[k];
        if (co->files && strcmp(co->files, "lesson") == 0)
            for (int k = 0; k < m->n_lessons && o->n_choices < APP_CLI_MAX_CHOICES; k++)
                o->choices[o->n_choices++] = m->lessons[k];
        snprintf(o->help, sizeof o->help, "%s", co->help);
    }
    if (c->usage) usage_options(m, c->usage);
    if (c->words && strcmp(c->words, "view") == 0)
        for (size_t i = 0; i < app_view_count() && m->n_words < APP_CLI_MAX_CHOICES; i++)
            m->words[m->n_words++] = app_view_at(i)->name;
    if (c->words && strcmp(c->words, "shell") == 0)
        for (size_t i = 0; app_cli_shells[i]; i++) m->words[m->n_words++] = app_cli_shells[i];
    if (c->words && strcmp(c->words, "model file") == 0) m->word_files = "pelab";
    if (c->words && strcmp(c->words, "lesson") == 0) {
        for (int k = 0; k < m->n_lessons && m->n_words < APP_CLI_MAX_CHOICES; k++)
            m->words[m->n_words++] = m->lessons[k];
        m->word_files = "lesson";
    }
    return m;
}

void app_cli_model_free(app_cli_cmd *m)
{
    if (!m) return;
    if (m->lessons) lesson_names_free(m->lessons, m->n_lessons);
    free(m);
}
