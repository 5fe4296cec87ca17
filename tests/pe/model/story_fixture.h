/* story_fixture.h: the stories the model tests train and measure on (test_train, test_race):
 * the grammar of assets/story (from $PELAB_SRC), its vocabulary over 20000 tokens of data seed 1,
 * n training ids and nh held-out ids (the held-out seed), as `pelab train` makes them. */
#ifndef PELAB_TEST_STORY_FIXTURE_H
#define PELAB_TEST_STORY_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "model/tiny/model.h"
#include "tap.h"

typedef struct story_fixture {
    model_grammar g;
    tok_vocab v;
    int *ids, *held;
    size_t n, nh;
} story_fixture;

/* 0, or -1 after a failed TAP line (the test then ends). */
static int story_fixture_make(story_fixture *f, size_t n, size_t nh)
{
    const char *src = getenv("PELAB_SRC");
    char dir[4096], err[256] = "";
    snprintf(dir, sizeof dir, "%s/assets/story", src ? src : ".");
    if (!TAP_OK(model_grammar_load(&f->g, dir, err, sizeof err) == 0, "grammar (%s)", err))
        return -1;
    model_vocab_build(&f->g, 1, 20000, &f->v, err, sizeof err);
    f->n = n;
    f->nh = nh;
    f->ids = malloc(n * sizeof *f->ids);
    f->held = malloc(nh * sizeof *f->held);
    if (!TAP_OK(f->ids && f->held &&
                    model_corpus(&f->g, &f->v, 1, n, f->ids, NULL, err, sizeof err) == 0 &&
                    model_corpus(&f->g, &f->v, model_heldout_seed(1), nh, f->held, NULL, err,
                                 sizeof err) == 0,
                "stories: %zu training and %zu held-out ids (%s)", n, nh, err))
        return -1;
    return 0;
}

static void story_fixture_free(story_fixture *f)
{
    free(f->ids);
    free(f->held);
    tok_vocab_free(&f->v);
    model_grammar_free(&f->g);
}

#endif
