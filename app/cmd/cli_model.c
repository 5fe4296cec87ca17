/* cli_model.c: every command's options from the tables (see cli_model.h). */
#include "cli_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        o->n_choices = app_command_choices(co, o->choices, APP_CLI_MAX_CHOICES);
        if (co->files && strcmp(co->files, "lesson") == 0)
            for (int k = 0; k < m->n_lessons && o->n_choices < APP_CLI_MAX_CHOICES; k++)
                o->choices[o->n_choices++] = m->lessons[k];
        snprintf(o->help, sizeof o->help, "%s", co->help);
    }
    /* every command takes --help (app_command_parse) */
    app_cli_opt *h = add(m, "help");
    if (h && !h->help[0]) {
        h->short_name = 'h';
        snprintf(h->help, sizeof h->help, "this usage");
    }
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
