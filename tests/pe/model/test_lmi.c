/* test_lmi: the model interface (pe/model/lmi.h) over the tiny transformer. The rows the
 * interface recomputes on demand from cached q and k are the very bits the step computed
 * (model_session_attn / score_parts at the time), for every token, layer and head of every
 * scheme; the content and position parts exist exactly where the scheme has them; the offset,
 * RoPE base and ALiBi scale setters change what they should and nothing else; the tokenizer's
 * byte spans cover the typed words; the registry probes and falls back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/lmi.h"
#include "model/lmi_archs.h"
#include "model/tiny/nn.h"
#include "tap.h"

enum { V = 13, N = 20 };

static tok_vocab voc;
static char dir[160]; /* $TMPDIR/pelab-test-lmi-XXXXXX, made in main */

/* A random model of scheme pe (weights perturbed so the attention is not uniform), written to a
 * checkpoint at path. */
static int make(model *m, int pe, const char *path)
{
    model_config c;
    model_config_default(&c, pe);
    c.layers = 2;
    c.dim = 16;
    c.heads = 4;
    c.hidden = 24;
    c.ctx = 8;
    c.vocab = V;
    c.seed = 3;
    c.pe.t5_buckets = 8;
    char err[256];
    if (model_init(m, &c, &voc, err, sizeof err)) return -1;
    pe_rng r;
    pe_rng_seed(&r, 77 + (uint64_t)pe);
    for (size_t i = 0; i < m->n_params; i++) m->params[i] += (float)(0.3 * pe_rng_normal(&r));
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int rc = model_write(m, f, err, sizeof err);
    return fclose(f) || rc ? -1 : 0;
}

static void seq(int *ids, int n, uint64_t seed)
{
    pe_rng r;
    pe_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) ids[i] = (int)(pe_rng_u64(&r) % V);
}

/* Feed ids into both; keep the model session's rows as the step made them; then compare every
 * (t, layer, head) row of the interface, computed afterwards. Returns the count of rows that
 * differ in any bit. */
static int rows_equal(model_session *ref, lmi_session *s, const int *ids, int n, int split,
                      int *parts_bad)
{
    const model_config *c = &ref->m->cfg;
    int L = c->layers, H = c->heads;
    float *keep = calloc((size_t)n * L * H * n * 3, sizeof *keep);
    char err[256];
    int bad = 0;
    *parts_bad = 0;
    for (int t = 0; t < n; t++) {
        model_session_step(ref, ids[t], NULL, err, sizeof err);
        lmi_step(s, ids[t], NULL, err, sizeof err);
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                float *k = keep + (((size_t)t * L + l) * H + h) * n * 3;
                memcpy(k, model_session_attn(ref, l, h), (size_t)(t + 1) * sizeof *k);
                const float *cp, *pp;
                if (split && model_session_score_parts(ref, l, h, &cp, &pp, err, sizeof err) == 0) {
                    memcpy(k + n, cp, (size_t)(t + 1) * sizeof *k);
                    memcpy(k + 2 * n, pp, (size_t)(t + 1) * sizeof *k);
                }
            }
    }
    float w[N], con[N], pos[N];
    for (int t = 0; t < n; t++)
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                const float *k = keep + (((size_t)t * L + l) * H + h) * n * 3;
                int rc = lmi_attn_row(s, l, h, t, w, split ? con : NULL, split ? pos : NULL, err,
                                      sizeof err);
                if (rc || memcmp(w, k, (size_t)(t + 1) * sizeof *w)) bad++;
                if (split && (rc || memcmp(con, k + n, (size_t)(t + 1) * sizeof *w) ||
                              memcmp(pos, k + 2 * n, (size_t)(t + 1) * sizeof *w)))
                    (*parts_bad)++;
            }
    free(keep);
    return bad;
}

/* Largest |row now - row kept| over every token, layer and head. */
static double rows_moved(const lmi_session *s, const float *kept)
{
    const lmi_info *in = &s->m->info;
    float w[N];
    char err[256];
    double worst = 0;
    for (int t = 0; t < s->len; t++)
        for (int l = 0; l < in->layers; l++)
            for (int h = 0; h < in->heads; h++) {
                lmi_attn_row(s, l, h, t, w, NULL, NULL, err, sizeof err);
                const float *k = kept + (((size_t)t * in->layers + l) * in->heads + h) * N;
                for (int j = 0; j <= t; j++) worst = fmax(worst, fabs((double)w[j] - k[j]));
            }
    return worst;
}

static float *rows_keep(const lmi_session *s)
{
    const lmi_info *in = &s->m->info;
    float *kept = calloc((size_t)N * in->layers * in->heads * N, sizeof *kept);
    char err[256];
    for (int t = 0; kept && t < s->len; t++)
        for (int l = 0; l < in->layers; l++)
            for (int h = 0; h < in->heads; h++)
                lmi_attn_row(s, l, h, t, kept + (((size_t)t * in->layers + l) * in->heads + h) * N,
                             NULL, NULL, err, sizeof err);
    return kept;
}

static void check(int pe)
{
    const char *name = model_pe_name(pe);
    char path[256], err[256] = "";
    snprintf(path, sizeof path, "%s/%s.pelab", dir, name);
    model m = {0};
    if (!TAP_OK(make(&m, pe, path) == 0, "%s: model written", name)) return;
    lmi_model lm = {0};
    if (!TAP_OK(lmi_open(&lm, path, err, sizeof err) == 0, "%s: lmi_open (%s)", name, err)) {
        model_free(&m);
        return;
    }
    const lmi_info *in = &lm.info;
    int split = pe == MODEL_PE_ALIBI || pe == MODEL_PE_T5 || pe == MODEL_PE_NOPE;
    TAP_OK(!strcmp(in->arch, "tiny") && !strcmp(in->pe_name, name) &&
               !strcmp(in->name, strrchr(path, '/') + 1) && in->layers == 2 && in->heads == 4 &&
               in->kv_heads == 4 && in->head_dim == 4 && in->dim == 16 && in->ctx == 8 &&
               in->vocab == V && in->eos == TOK_EOS && in->unk == TOK_UNK && in->bos == -1 &&
               in->max_pos == (pe == MODEL_PE_LEARNED ? 32 : 0),
           "%s: info (arch %s, name %s, %d layers, %d heads, head dim %d, ctx %d, max_pos %d)",
           name, in->arch, in->name, in->layers, in->heads, in->head_dim, in->ctx, in->max_pos);
    TAP_OK(!!(in->caps & LMI_CAN_SPLIT) == split && (in->caps & LMI_CAN_OFFSET) &&
               !!(in->caps & LMI_CAN_ROPE_BASE) == (pe == MODEL_PE_ROPE) &&
               !!(in->caps & LMI_CAN_ALIBI_SCALE) == (pe == MODEL_PE_ALIBI),
           "%s: capabilities 0x%x", name, in->caps);
    if (pe == MODEL_PE_ROPE)
        TAP_OK(in->rope_base == m.cfg.pe.base, "rope: trained base %g", in->rope_base);
    if (pe == MODEL_PE_ALIBI) {
        double want[16];
        pe_alibi_slopes(4, m.cfg.pe.slope_ratio, want, err, sizeof err);
        TAP_OK(in->alibi_slopes && !memcmp(in->alibi_slopes, want, 4 * sizeof *want),
               "alibi: trained slopes %g %g %g %g", want[0], want[1], want[2], want[3]);
    }

    /* rows on demand = the step's rows, bit for bit, every token, layer and head */
    int ids[N];
    seq(ids, N, 1 + (uint64_t)pe);
    model_session ref = {0};
    lmi_session s = {0};
    model_session_init(&ref, &m, N, err, sizeof err);
    TAP_OK(lmi_session_init(&s, &lm, N, err, sizeof err) == 0, "%s: session (%s)", name, err);
    int parts_bad, bad = rows_equal(&ref, &s, ids, N, split, &parts_bad);
    TAP_OK(bad == 0 && s.len == N,
           "%s: %d rows recomputed from cached q and k = the step's rows, "
           "bit for bit (%d differ)",
           name, N * 8, bad);
    if (split)
        TAP_OK(parts_bad == 0, "%s: content and position parts = the step's (%d differ)", name,
               parts_bad);
    float w[N], con[N], pos[N];
    int rc = lmi_attn_row(&s, 0, 0, 3, w, con, pos, err, sizeof err);
    if (!split)
        TAP_OK(rc == LMI_ENOSPLIT && strstr(err, "no separate position part"), "%s: no split: %s",
               name, err);
    else {
        double worst = 0; /* softmax(content + position) = weights */
        for (int t = 0; t < N; t++) {
            lmi_attn_row(&s, 1, 2, t, w, con, pos, err, sizeof err);
            double mx = -INFINITY, z = 0;
            for (int j = 0; j <= t; j++) mx = fmax(mx, con[j] + pos[j]);
            for (int j = 0; j <= t; j++) z += exp(con[j] + pos[j] - mx);
            for (int j = 0; j <= t; j++)
                worst = fmax(worst, fabs(exp(con[j] + pos[j] - mx) / z - w[j]));
        }
        TAP_OK(worst < 1e-6, "%s: softmax(content + position) = weights (%.1e)", name, worst);
    }
    TAP_OK(lmi_attn_row(&s, 2, 0, 0, w, NULL, NULL, err, sizeof err) == PE_EINVAL &&
               lmi_attn_row(&s, 0, 4, 0, w, NULL, NULL, err, sizeof err) == PE_EINVAL &&
               lmi_attn_row(&s, 0, 0, N, w, NULL, NULL, err, sizeof err) == PE_EINVAL &&
               strstr(err, "token 20"),
           "%s: rows out of range refused: %s", name, err);
    /* the logits are the model session's */
    TAP_OK(s.logits && !memcmp(s.logits, ref.logits, V * sizeof(float)), "%s: logits", name);

    /* the setters */
    float *kept = rows_keep(&s);
    rc = lmi_set_offset(&s, 7, err, sizeof err);
    double moved = rows_moved(&s, kept);
    int relative = pe != MODEL_PE_LEARNED && pe != MODEL_PE_SINUSOIDAL;
    TAP_OK(rc == 0 && s.offset == 7 && (relative ? moved < 1e-5 : moved > 1e-3),
           "%s: offset 7 %s the rows (moved %.1e)", name, relative ? "keeps" : "changes", moved);
    model_session_set_offset(&ref, 7, err, sizeof err);
    TAP_OK(s.logits && !memcmp(s.logits, ref.logits, V * sizeof(float)),
           "%s: after the offset the logits are the replayed session's", name);
    lmi_set_offset(&s, 0, err, sizeof err);
    moved = rows_moved(&s, kept);
    TAP_OK(moved == 0, "%s: offset back to 0 gives the same bits (%.1e)", name, moved);
    rc = lmi_set_rope_base(&s, 500, err, sizeof err);
    if (pe == MODEL_PE_ROPE) {
        moved = rows_moved(&s, kept);
        model_session_set_rope_base(&ref, 500, err, sizeof err);
        model_session_set_offset(&ref, 0, err, sizeof err);
        /* the model session replayed under base 500: its newest row is the interface's */
        lmi_attn_row(&s, 1, 3, N - 1, w, NULL, NULL, err, sizeof err);
        int diff = memcmp(w, model_session_attn(&ref, 1, 3), N * sizeof *w) != 0;
        TAP_OK(rc == 0 && s.rope_base == 500 && moved > 1e-3 && !diff,
               "rope: base 500 changes the rows (moved %.2f) as the model session's do", moved);
        TAP_OK(lmi_set_rope_base(&s, 1, err, sizeof err) == PE_EINVAL && s.rope_base == 500 &&
                   strstr(err, "must be > 1"),
               "rope: base 1 refused, 500 kept: %s", err);
        lmi_set_rope_base(&s, in->rope_base, err, sizeof err);
        TAP_OK(rows_moved(&s, kept) == 0, "rope: the trained base again gives the same bits");
    } else {
        TAP_OK(rc == LMI_ENOTSUP && strstr(err, "--rope-base") && s.rope_base == 0,
               "%s: no RoPE base to set: %s", name, err);
    }
    rc = lmi_set_alibi_scale(&s, 0.5, err, sizeof err);
    if (pe == MODEL_PE_ALIBI) {
        double worst = 0;
        for (int t = 0; t < N; t++) {
            lmi_attn_row(&s, 0, 1, t, w, con, pos, err, sizeof err);
            for (int j = 0; j <= t; j++)
                worst = fmax(worst, fabs(pos[j] - (-0.5 * in->alibi_slopes[1] * (t - j))));
        }
        TAP_OK(rc == 0 && s.alibi_scale == 0.5 && s.alibi_slopes[1] == 0.5 * in->alibi_slopes[1] &&
                   worst < 1e-6 && rows_moved(&s, kept) > 1e-3,
               "alibi: scale 0.5 halves the position part, -0.5 m_h (t - j) (%.1e), and moves "
               "the rows",
               worst);
        TAP_OK(lmi_set_alibi_scale(&s, -1, err, sizeof err) == PE_EINVAL && s.alibi_scale == 0.5,
               "alibi: scale -1 refused: %s", err);
        lmi_set_alibi_scale(&s, 1, err, sizeof err);
        TAP_OK(rows_moved(&s, kept) == 0, "alibi: scale 1 gives the same bits again");
    } else {
        TAP_OK(rc == LMI_ENOTSUP && strstr(err, "--alibi-scale") && !s.alibi_slopes,
               "%s: no ALiBi slopes to scale: %s", name, err);
    }
    if (pe == MODEL_PE_LEARNED) {
        lmi_session_reset(&s);
        rc = lmi_set_offset(&s, 30, err, sizeof err);
        int r1 = lmi_step(&s, 1, NULL, err, sizeof err);
        int r2 = lmi_step(&s, 1, NULL, err, sizeof err);
        int r3 = lmi_step(&s, 1, NULL, err, sizeof err);
        TAP_OK(rc == 0 && r1 == 0 && r2 == 0 && r3 == PE_ERANGE && s.len == 2 &&
                   strstr(err, "past the learned table"),
               "learned: position 32 = info.max_pos is refused: %s", err);
    }
    free(kept);
    model_session_free(&ref);
    lmi_session_free(&s);
    lmi_close(&lm);
    model_free(&m);
    remove(path);
}

static void tokenizer(void)
{
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/tok.pelab", dir);
    model m = {0};
    lmi_model lm = {0};
    if (make(&m, MODEL_PE_NOPE, path) || lmi_open(&lm, path, err, sizeof err)) {
        TAP_OK(0, "tokenizer model");
        return;
    }
    /* vocabulary: <unk> <eos> the a cat sat . , dog ran on mat ! */
    const char *text = "The  cat sat,\n\n  on a zebra.  Supercalifragilisticexpialidociousness!";
    lmi_token tk[16];
    int n = lmi_tokenize(&lm, text, strlen(text), tk, 16, err, sizeof err);
    const char *want[] = {"The", "cat", "sat",   ",", "\n\n  ",
                          "on",  "a",   "zebra", ".", "Supercalifragilisticexpialidociousness",
                          "!"};
    int ok = n == 11;
    char got[256] = "";
    size_t u = 0;
    for (int i = 0; ok && i < n; i++) {
        ok &= (size_t)(tk[i].end - tk[i].start) == strlen(want[i]) &&
              !memcmp(text + tk[i].start, want[i], strlen(want[i]));
        u += (size_t)snprintf(got + u, sizeof got - u, "[");
        for (int b = tk[i].start; b < tk[i].end && u < sizeof got - 4; b++)
            u += (size_t)snprintf(got + u, sizeof got - u, "%s",
                                  text[b] == '\n' ? "\\n" : (char[2]){text[b], 0});
        u += (size_t)snprintf(got + u, sizeof got - u, "]");
    }
    TAP_OK(ok, "spans: %s", got);
    int ids_ok = n == 11 && tk[0].id == tok_find(&voc, "the") && !tk[0].flags &&
                 tk[4].id == TOK_EOS && !tk[4].flags && tk[7].id == TOK_UNK &&
                 (tk[7].flags & LMI_TOK_UNKNOWN) && tk[9].id == TOK_UNK &&
                 (tk[9].flags & LMI_TOK_UNKNOWN) && tk[10].id == tok_find(&voc, "!");
    TAP_OK(ids_ok, "ids: The -> the, line breaks -> <eos>, zebra and the 38-byte word unknown");
    TAP_OK(lmi_tokenize(&lm, text, strlen(text), tk, 2, err, sizeof err) == 11 &&
               lmi_tokenize(&lm, text, 3, NULL, 0, err, sizeof err) == 1 &&
               lmi_tokenize(&lm, "", 0, tk, 16, err, sizeof err) == 0,
           "counts: all 11 with room for 2; 'The' alone is 1; empty is 0");
    char buf[32];
    TAP_OK(lmi_token_text(&lm, TOK_EOS, buf, sizeof buf) == 5 && !strcmp(buf, "<eos>") &&
               lmi_token_text(&lm, 4, buf, sizeof buf) == 3 && !strcmp(buf, "cat") &&
               lmi_token_text(&lm, V, buf, sizeof buf) == -1 && !buf[0] &&
               lmi_token_text(&lm, -1, buf, sizeof buf) == -1,
           "token texts: <eos>, cat; ids out of range -1");
    lmi_close(&lm);
    model_free(&m);
    remove(path);
}

static void registry(void)
{
    char path[256], err[256];
    TAP_OK(lmi_archs[0] == &lmi_arch_tiny && lmi_arch_find("tiny") == &lmi_arch_tiny &&
               !lmi_arch_find("nosuch") && !lmi_arch_find(NULL),
           "registry: tiny first, found by name");
    for (size_t i = 0; lmi_archs[i]; i++) {
        const lmi_arch *a = lmi_archs[i];
        TAP_OK(a->name && a->desc && a->probe && a->open && a->close && a->tokenize &&
                   a->token_text && a->session_init && a->session_free && a->session_reset &&
                   a->step && a->attn_row,
               "%s: every required op is there", a->name);
    }
    snprintf(path, sizeof path, "%s/junk.bin", dir);
    FILE *f = fopen(path, "wb");
    fputs("definitely not a model", f);
    fclose(f);
    lmi_model m;
    int rc = lmi_open(&m, path, err, sizeof err);
    TAP_OK(rc < 0 && strstr(err, "bad magic") && !m.arch && !m.impl,
           "a file nobody claims: the first architecture explains (%s)", err);
    remove(path);
    rc = lmi_open(&m, dir, err, sizeof err);
    TAP_OK(rc < 0 && strstr(err, "is a directory"), "a folder nobody claims: %s", err);
    lmi_model z = {0};
    lmi_close(&z);
    lmi_session zs = {0};
    lmi_session_free(&zs);
    TAP_OK(lmi_step(&zs, 0, NULL, err, sizeof err) == PE_EINVAL,
           "zeroed model and session: close, free and step are safe");
    float lg[6] = {0.5f, 2, 2, -1, 0.25f, 1};
    int a[6], b[6];
    float pa[6], pb[6];
    int na = lmi_topk(lg, 6, 4, a, pa), nb = model_topk(lg, 6, 4, b, pb);
    TAP_OK(na == 4 && nb == 4 && !memcmp(a, b, sizeof(int) * 4) &&
               !memcmp(pa, pb, 4 * sizeof *pa) && a[0] == 1 && a[1] == 2,
           "lmi_topk = model_topk (1 before 2 on a tie)");
}

int main(void)
{
    const char *w[V] = {"<unk>", "<eos>", "the", "a",  "cat", "sat", ".",
                        ",",     "dog",   "ran", "on", "mat", "!"};
    tok_vocab_init(&voc, w, V, NULL, 0);
    tap_tmp_path(dir, sizeof dir, "pelab-test-lmi-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    registry();
    for (int pe = 0; pe < MODEL_PE_COUNT; pe++) check(pe);
    tokenizer();
    rmdir(dir);
    tok_vocab_free(&voc);
    return tap_done();
}
