/* attn_state.h: what the attention views (attention, compare, extrapolation) add to the state,
 * in one struct of their own so the rest of the state knows nothing of models: an option group
 * (options/option_groups.h), which app_state holds as st->attn and app_state_default starts with
 * app_attn_state_default; its rows (attn.c), keys and tick live with the views. */
#ifndef PELAB_APP_ATTN_STATE_H
#define PELAB_APP_ATTN_STATE_H

typedef enum { APP_SCALE_LINEAR = 0, APP_SCALE_LOG = 1, APP_SCALE_NOFIRST = 2 } app_attn_scale;

typedef struct app_attn_state {
    char model_name[512]; /* scheme name (nope learned sinusoidal alibi rope t5) or a path */
    char prompt[1024];    /* typed text; when empty the preset's text is used */
    int step, layer;      /* step: token index shown, -1 = the last; layer 0..layers-1 */
    app_attn_scale attn_scale;
    int shift;             /* positions shifted by k */
    char preset[64];       /* assets/prompts/<preset>.txt; "" = none */
    char compare[512];     /* the compare view's second model; "" = none */
    double rope_base;      /* rope models: frequency base in use, 0 = the trained one */
    double alibi_scale;    /* alibi models: slopes times this, 1 = the trained ones */
    int generate;          /* tokens generated past the prompt */
    double temperature;    /* generation: 0 = greedy, else sampled at this temperature */
    double sink_threshold; /* sinks view: alpha above this marks a sink head (0.3) */
    int gen_seed;          /* generation: seed of the sampler */
    int split;             /* show the scores' content and position parts */
    double play_speed;     /* autoplay: tokens per second */
    double step_frac;      /* autoplay: fraction of a step accumulated */
    char data_path[512];   /* extrapolation: a `pelab eval --extrapolate -o` CSV; "" = shipped */
    int weights_init;      /* the trained position values (0) or their seeded init (1): the table
                              view, and --pe learned / the t5 view's biases (issue 23) */
    int table_part;        /* table view: which part (APP_TABLE_PART_*; 0 = all) */
    char tokenizer[512];   /* a real model's tokenizer file instead of the one beside it; "" */
    char compare_tokenizer[512]; /* the same for --compare */
    char ids[1024]; /* token ids "1,2,3" given instead of a prompt; "" = tokenize text */
    /* the measure views (usage, distance, model-distance: views/attention/measures.h) */
    char text_path[512];   /* --text FILE: the prompts are its windows; "" = none */
    int per_head;          /* distance: one curve per head of --layer instead of per layer */
    int by_position;       /* distance: attention received by key position, not by distance */
    char reference[512];   /* model-distance: the model the others are measured against */
    char against[1024];    /* model-distance: comma-separated models; "" = the other shipped */
    double massive_lambda; /* usage: a dimension is massive above lambda x the mean (5) */
    int qk_side;           /* usage: 0 = q, 1 = k */
    int usage_show;        /* usage: 0 = the pair norms, 1 = the massive values' shares */
    /* sinks: "" = --model alone; "shipped" or a comma list: the table across them (Gu Table 3) */
    char sink_models[1024];
} app_attn_state;

/* The defaults: the rope model on the "toy" preset, compared with alibi, the last token. */
void app_attn_state_default(app_attn_state *a);

#endif
