/* lm_hf.c: Hugging Face model folders. config.json says the architecture and the sizes (the
 * RoPE fields are read by hf_config.c, the same reader --config uses); the tensors come from
 * model.safetensors or from the shards model.safetensors.index.json lists. Every tensor is
 * looked up and checked against the config's shapes before anything is mapped. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "hf_config.h"
#include "infile.h"
#include "lm_internal.h"

#define MAX_SHARDS 256

typedef struct shard {
    char path[1100];
    uint64_t size;
    lm_st_header h;
    const unsigned char *data; /* start of the tensor data once mapped */
    int map;                   /* index into m->maps, -1 before mapping */
    int in_place;              /* some tensor is used from the map directly */
} shard;

typedef struct hf_ctx {
    lm_model *m;
    const char *dir;
    shard *sh;
    int n_sh;
    int pass;           /* 0: find and check, count bytes; 1: point or convert */
    size_t copy_floats; /* pass 0: floats to allocate for converted tensors */
    const char *prefix; /* GPT-2: "" or "transformer." */
    char *err;
    size_t errlen;
} hf_ctx;

/* ---- config.json -------------------------------------------------------------------------- */

/* config.json and the index through pe_infile (infile.h): a FIFO is read as it comes and never
 * waited for, a device or a folder is refused, 4 MiB at most. */
static int read_text(const char *path, char **out, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t got = 0;
    int rc = pe_infile_read(path, "", PE_HF_CONFIG_MAX_BYTES, &buf, &got, err, errlen);
    if (rc == PE_OK && strlen(buf) != got)
        rc = pe_fail(err, errlen, PE_EINVAL, "%s: a NUL byte in a JSON text", path);
    if (rc != PE_OK) {
        free(buf);
        return rc;
    }
    *out = buf;
    return PE_OK;
}

static const cJSON *member(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return it && !cJSON_IsNull(it) ? it : NULL;
}

/* An int field (first of two names present), *v untouched when both are absent. */
static int get_int2(const cJSON *o, const char *k1, const char *k2, int lo, int hi, int *v,
                    int required, const char *src, char *err, size_t errlen)
{
    const cJSON *it = member(o, k1);
    const char *k = k1;
    if (!it && k2) it = member(o, k2), k = k2;
    if (!it) {
        if (required)
            return pe_fail(err, errlen, PE_EINVAL, "%s: %s: missing (a whole number is needed)",
                           src, k1);
        return PE_OK;
    }
    if (!cJSON_IsNumber(it) || it->valuedouble != (double)(long long)it->valuedouble ||
        it->valuedouble < lo || it->valuedouble > hi)
        return pe_fail(err, errlen, PE_EINVAL, "%s: %s: must be a whole number %d..%d", src, k, lo,
                       hi);
    *v = (int)it->valuedouble;
    return PE_OK;
}

static int get_bool(const cJSON *o, const char *k, int *v, const char *src, char *err,
                    size_t errlen)
{
    const cJSON *it = member(o, k);
    if (!it) return PE_OK;
    if (!cJSON_IsBool(it))
        return pe_fail(err, errlen, PE_EINVAL, "%s: %s: expected true or false", src, k);
    *v = cJSON_IsTrue(it);
    return PE_OK;
}

/* A token id, or the first of a list of them (eos_token_id may be a list). */
static void get_token(const cJSON *o, const char *k, int *v)
{
    const cJSON *it = member(o, k);
    if (it && cJSON_IsArray(it)) it = it->child;
    if (it && cJSON_IsNumber(it) && it->valuedouble >= 0 && it->valuedouble < LM_MAX_VOCAB)
        *v = (int)it->valuedouble;
}

static const char *const llama_archs[] = {"LlamaForCausalLM", "MistralForCausalLM",
                                          "Qwen2ForCausalLM"};
static const char *const llama_types[] = {"llama", "mistral", "qwen2"};

static int parse_config(lm_model *m, const char *dir, char *err, size_t errlen)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *text = NULL;
    int rc = read_text(path, &text, err, errlen);
    if (rc) return rc;
    cJSON *root = cJSON_Parse(text);
    lm_config *c = &m->c;
    if (!root || !cJSON_IsObject(root)) {
        rc = pe_fail(err, errlen, PE_EINVAL, "%s: not a JSON object", path);
        goto done;
    }
    if ((rc = pe_hf_json_unique_keys(root, path, err, errlen))) goto done;
    const cJSON *archs = member(root, "architectures"), *mt = member(root, "model_type");
    const char *arch = archs && cJSON_IsArray(archs) && cJSON_IsString(archs->child)
                           ? archs->child->valuestring
                           : "";
    const char *type = mt && cJSON_IsString(mt) ? mt->valuestring : "";
    /* shown in messages: control characters would break the one line */
    for (const char *q = arch; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f) arch = "(control characters)";
    for (const char *q = type; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f) type = "(control characters)";
    int llama = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(arch, llama_archs[i]) == 0 || (!*arch && strcmp(type, llama_types[i]) == 0))
            llama = i;
    int gpt2 = strcmp(arch, "GPT2LMHeadModel") == 0 || (!*arch && strcmp(type, "gpt2") == 0);
    if (llama < 0 && !gpt2) {
        rc = pe_fail(err, errlen, PE_EINVAL,
                     "%s: architectures [%.60s], model_type \"%.40s\": not supported (pelab runs "
                     "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel)",
                     path, *arch ? arch : "none given", type);
        goto done;
    }
    snprintf(c->arch_name, sizeof c->arch_name, "%s",
             *arch  ? arch
             : gpt2 ? "GPT2LMHeadModel"
                    : llama_archs[llama]);
    snprintf(c->model_type, sizeof c->model_type, "%s", type);
    c->format = LM_FORMAT_HF;
    c->bos_id = c->eos_id = -1;
    get_token(root, "bos_token_id", &c->bos_id);
    get_token(root, "eos_token_id", &c->eos_id);
    if (gpt2) {
        c->arch = LM_ARCH_GPT2;
        c->tied = 1;
        c->norm_eps = 1e-5;
        if ((rc = get_int2(root, "n_embd", "hidden_size", 1, LM_MAX_DIM, &c->dim, 1, path, err,
                           errlen)) ||
            (rc = get_int2(root, "n_layer", "num_hidden_layers", 1, LM_MAX_LAYERS, &c->n_layers, 1,
                           path, err, errlen)) ||
            (rc = get_int2(root, "n_head", "num_attention_heads", 1, PE_MAX_HEADS, &c->n_heads, 1,
                           path, err, errlen)) ||
            (rc = get_int2(root, "n_positions", "max_position_embeddings", 1, LM_MAX_CTX,
                           &c->seq_len, 1, path, err, errlen)) ||
            (rc = get_int2(root, "vocab_size", NULL, 1, LM_MAX_VOCAB, &c->vocab, 1, path, err,
                           errlen)))
            goto done;
        c->hidden_dim = 4 * c->dim;
        if ((rc = get_int2(root, "n_inner", NULL, 1, 4 * LM_MAX_DIM, &c->hidden_dim, 0, path, err,
                           errlen)) ||
            (rc = get_bool(root, "tie_word_embeddings", &c->tied, path, err, errlen)))
            goto done;
        const cJSON *eps = member(root, "layer_norm_epsilon");
        if (eps && (!cJSON_IsNumber(eps) || !(eps->valuedouble > 0 && eps->valuedouble < 1))) {
            rc = pe_fail(err, errlen, PE_EINVAL, "%s: layer_norm_epsilon: must be in (0, 1)", path);
            goto done;
        }
        if (eps) c->norm_eps = eps->valuedouble;
        const cJSON *act = member(root, "activation_function");
        if (act && (!cJSON_IsString(act) || (strcmp(act->valuestring, "gelu_new") != 0 &&
                                             strcmp(act->valuestring, "gelu_pytorch_tanh") != 0))) {
            rc = pe_fail(err, errlen, PE_EINVAL,
                         "%s: activation_function %.30s: not supported (gelu_new, the tanh "
                         "GELU, is)",
                         path, cJSON_IsString(act) ? act->valuestring : "(not a string)");
            goto done;
        }
        int inv_layer = 0, scale = 1;
        if ((rc = get_bool(root, "scale_attn_by_inverse_layer_idx", &inv_layer, path, err,
                           errlen)) ||
            (rc = get_bool(root, "scale_attn_weights", &scale, path, err, errlen)))
            goto done;
        if (inv_layer || !scale) {
            rc = pe_fail(err, errlen, PE_EINVAL,
                         "%s: scale_attn_by_inverse_layer_idx / scale_attn_weights: only GPT-2's "
                         "1/sqrt(head_dim) scaling is supported",
                         path);
            goto done;
        }
        if (c->dim % c->n_heads != 0) {
            rc = pe_fail(err, errlen, PE_EINVAL, "%s: n_embd %d is not divisible by n_head %d",
                         path, c->dim, c->n_heads);
            goto done;
        }
        c->n_kv_heads = c->n_heads;
        c->head_dim = c->dim / c->n_heads;
    } else {
        c->arch = LM_ARCH_LLAMA;
        c->norm_eps = 1e-6;       /* LlamaConfig, MistralConfig and Qwen2Config's default */
        c->qkv_bias = llama == 2; /* Qwen2's attention always has q/k/v biases */
        pe_hf_config hc;
        if ((rc = pe_hf_config_parse(text, path, &hc, err, errlen))) goto done;
        c->n_heads = hc.num_heads;
        c->n_kv_heads = hc.num_kv_heads;
        c->head_dim = hc.head_dim;
        c->rope = hc.params;
        if ((rc = get_int2(root, "hidden_size", NULL, 1, LM_MAX_DIM, &c->dim, 1, path, err,
                           errlen)) ||
            (rc = get_int2(root, "intermediate_size", NULL, 1, 4 * LM_MAX_DIM, &c->hidden_dim, 1,
                           path, err, errlen)) ||
            (rc = get_int2(root, "num_hidden_layers", NULL, 1, LM_MAX_LAYERS, &c->n_layers, 1, path,
                           err, errlen)) ||
            (rc = get_int2(root, "vocab_size", NULL, 1, LM_MAX_VOCAB, &c->vocab, 1, path, err,
                           errlen)) ||
            (rc = get_int2(root, "max_position_embeddings", NULL, 1, LM_MAX_CTX, &c->seq_len, 1,
                           path, err, errlen)) ||
            (rc = get_bool(root, "tie_word_embeddings", &c->tied, path, err, errlen)) ||
            (rc = get_bool(root, "mlp_bias", &c->mlp_bias, path, err, errlen)))
            goto done;
        if (llama != 2) {
            if ((rc = get_bool(root, "attention_bias", &c->qkv_bias, path, err, errlen))) goto done;
            c->o_bias = c->qkv_bias;
        }
        const cJSON *eps = member(root, "rms_norm_eps");
        if (eps && (!cJSON_IsNumber(eps) || !(eps->valuedouble > 0 && eps->valuedouble < 1))) {
            rc = pe_fail(err, errlen, PE_EINVAL, "%s: rms_norm_eps: must be in (0, 1)", path);
            goto done;
        }
        if (eps) c->norm_eps = eps->valuedouble;
        const cJSON *act = member(root, "hidden_act");
        if (act && (!cJSON_IsString(act) || strcmp(act->valuestring, "silu") != 0)) {
            rc = pe_fail(err, errlen, PE_EINVAL,
                         "%s: hidden_act %.30s: not supported (the Llama family's silu is)", path,
                         cJSON_IsString(act) ? act->valuestring : "(not a string)");
            goto done;
        }
        c->rope.len = c->seq_len;
        /* sliding windows: Mistral's on every layer when sliding_window is a number (null or
         * absent: none); Qwen2's only with use_sliding_window, from max_window_layers on */
        int use_sw = llama == 1;
        if (llama == 2 && (rc = get_bool(root, "use_sliding_window", &use_sw, path, err, errlen)))
            goto done;
        const cJSON *sw = member(root, "sliding_window");
        if (use_sw && sw && !cJSON_IsNull(sw)) {
            if ((rc = get_int2(root, "sliding_window", NULL, 1, LM_MAX_CTX, &c->window, 1, path,
                               err, errlen)))
                goto done;
            c->window_from = 0;
            if (llama == 2) {
                c->window_from = 28; /* Qwen2Config's default max_window_layers */
                if ((rc = get_int2(root, "max_window_layers", NULL, 0, LM_MAX_LAYERS,
                                   &c->window_from, 0, path, err, errlen)))
                    goto done;
            }
        }
    }
done:
    cJSON_Delete(root);
    free(text);
    return rc;
}

/* ---- shards ------------------------------------------------------------------------------- */

static int add_shard(hf_ctx *x, const char *file)
{
    for (int i = 0; i < x->n_sh; i++)
        if (strcmp(lm_base_name(x->sh[i].path), file) == 0) return PE_OK;
    if (x->n_sh == MAX_SHARDS)
        return pe_fail(x->err, x->errlen, PE_EINVAL, "%s: more than %d shards", x->dir, MAX_SHARDS);
    size_t n = strlen(file);
    if (!*file || strchr(file, '/') || file[0] == '.' || n < 12 ||
        strcmp(file + n - 12, ".safetensors") != 0 || n > 200)
        return pe_fail(x->err, x->errlen, PE_EINVAL,
                       "%s/model.safetensors.index.json: shard \"%.60s\" must be a .safetensors "
                       "file name in the same folder",
                       x->dir, file);
    shard *s = &x->sh[x->n_sh];
    memset(s, 0, sizeof *s);
    s->map = -1;
    snprintf(s->path, sizeof s->path, "%s/%s", x->dir, file);
    x->n_sh++;
    return PE_OK;
}

static int read_shard_header(hf_ctx *x, shard *s)
{
    unsigned char first[8];
    size_t got;
    int rc = lm_read_head(s->path, first, 8, &got, &s->size, x->err, x->errlen);
    if (rc) return rc;
    uint64_t n = 0;
    for (int i = 7; i >= 0 && got == 8; i--) n = n << 8 | first[i];
    size_t want = n <= LM_ST_MAX_HEADER && got == 8 ? (size_t)n + 8 : 8;
    unsigned char *buf = malloc(want);
    if (!buf) return pe_fail(x->err, x->errlen, PE_ENOMEM, "out of memory");
    rc = lm_read_head(s->path, buf, want, &got, &s->size, x->err, x->errlen);
    if (rc == PE_OK)
        rc = lm_st_parse(buf, got, s->size, lm_base_name(s->path), &s->h, x->err, x->errlen);
    free(buf);
    return rc;
}

static int find_shards(hf_ctx *x)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", x->dir);
    char *text = NULL;
    int rc;
    struct stat st;
    if (stat(path, &st) == 0) { /* there: read_text says what is wrong with it */
        if ((rc = read_text(path, &text, x->err, x->errlen))) return rc;
        cJSON *root = cJSON_Parse(text);
        const cJSON *wm = root ? cJSON_GetObjectItemCaseSensitive(root, "weight_map") : NULL;
        rc = PE_OK;
        if (!cJSON_IsObject(wm))
            rc = pe_fail(x->err, x->errlen, PE_EINVAL, "%s: needs a weight_map object", path);
        for (const cJSON *it = wm ? wm->child : NULL; it && rc == PE_OK; it = it->next) {
            if (!cJSON_IsString(it))
                rc = pe_fail(x->err, x->errlen, PE_EINVAL,
                             "%s: weight_map: every value must be a file name", path);
            else
                rc = add_shard(x, it->valuestring);
        }
        if (rc == PE_OK && x->n_sh == 0)
            rc = pe_fail(x->err, x->errlen, PE_EINVAL, "%s: weight_map lists no files", path);
        cJSON_Delete(root);
        free(text);
        if (rc) return rc;
    } else {
        snprintf(path, sizeof path, "%s/model.safetensors", x->dir);
        if (stat(path, &st) != 0)
            return pe_fail(x->err, x->errlen, PE_EINVAL,
                           "%s: no model.safetensors or model.safetensors.index.json (pelab reads "
                           "safetensors weights, not pytorch_model.bin)",
                           x->dir);
        if ((rc = add_shard(x, "model.safetensors"))) return rc;
    }
    for (int i = 0; i < x->n_sh; i++)
        if ((rc = read_shard_header(x, &x->sh[i]))) return rc;
    return PE_OK;
}

static int tensor_cmp(const void *a, const void *b)
{
    return strcmp(((const lm_st_tensor *)a)->name, ((const lm_st_tensor *)b)->name);
}

static const lm_st_tensor *find_tensor(hf_ctx *x, const char *name, int *which)
{
    for (int i = 0; i < x->n_sh; i++) {
        lm_st_tensor key;
        snprintf(key.name, sizeof key.name, "%s", name);
        const lm_st_tensor *t =
            bsearch(&key, x->sh[i].h.t, (size_t)x->sh[i].h.n, sizeof key, tensor_cmp);
        if (t) {
            *which = i;
            return t;
        }
    }
    return NULL;
}

/* One tensor of shape (s0) or (s0, s1): pass 0 finds and checks it, pass 1 points *dst at it. */
static int bind(hf_ctx *x, const char *name, int64_t s0, int64_t s1, const float **dst)
{
    int w = 0;
    const lm_st_tensor *t = find_tensor(x, name, &w);
    if (!t)
        return pe_fail(x->err, x->errlen, PE_EINVAL,
                       "%s: tensor %s is missing (config.json names %s)", x->dir, name,
                       x->m->c.arch_name);
    shard *s = &x->sh[w];
    int nd = s1 > 0 ? 2 : 1;
    if (t->ndim != nd || t->shape[0] != s0 || (nd == 2 && t->shape[1] != s1)) {
        char got[80] = "";
        for (int i = 0; i < t->ndim; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? ", " : "",
                     (long long)t->shape[i]);
        if (nd == 2)
            return pe_fail(x->err, x->errlen, PE_EINVAL,
                           "%s: tensor %s has shape [%s], config.json says [%lld, %lld]",
                           lm_base_name(s->path), name, got, (long long)s0, (long long)s1);
        return pe_fail(x->err, x->errlen, PE_EINVAL,
                       "%s: tensor %s has shape [%s], config.json says [%lld]",
                       lm_base_name(s->path), name, got, (long long)s0);
    }
    if (t->dtype != LM_DT_F32 && t->dtype != LM_DT_F16 && t->dtype != LM_DT_BF16)
        return pe_fail(x->err, x->errlen, PE_EINVAL,
                       "%s: tensor %s: dtype not supported (pelab reads F32, F16, BF16)",
                       lm_base_name(s->path), name);
    uint64_t abs = 8 + s->h.header_len + t->begin;
    size_t count = (size_t)((t->end - t->begin) / (uint64_t)lm_st_dtype_size(t->dtype));
    int in_place = t->dtype == LM_DT_F32 && abs % 4 == 0;
    if (x->pass == 0) {
        if (in_place)
            s->in_place = 1;
        else
            x->copy_floats += count;
        return PE_OK;
    }
    const unsigned char *src = s->data + t->begin;
    if (in_place) {
        *dst = (const float *)(const void *)src;
        return PE_OK;
    }
    float *b = lm_buf_add(x->m, count, x->err, x->errlen);
    if (!b) return PE_ENOMEM;
    for (size_t i = 0; i < count; i++) {
        if (t->dtype == LM_DT_F32) {
            memcpy(&b[i], src + 4 * i, 4);
        } else {
            uint16_t h = (uint16_t)(src[2 * i] | src[2 * i + 1] << 8);
            b[i] = t->dtype == LM_DT_F16 ? lm_f16_to_f32(h) : lm_bf16_to_f32(h);
        }
    }
    *dst = b;
    return PE_OK;
}

static int bind_linear(hf_ctx *x, const char *w, const char *b, int out, int in, lm_linear *L)
{
    L->in = in;
    L->out = out;
    L->ld = (size_t)in;
    L->t = 0;
    int rc = bind(x, w, out, in, &L->w);
    if (rc == PE_OK && b) rc = bind(x, b, out, 0, &L->b);
    return rc;
}

static int bind_llama(hf_ctx *x)
{
    lm_model *m = x->m;
    const lm_config *c = &m->c;
    int D = c->dim, Q = c->n_heads * c->head_dim, KV = c->n_kv_heads * c->head_dim,
        F = c->hidden_dim;
    int rc = bind(x, "model.embed_tokens.weight", c->vocab, D, &m->tok_emb);
    if (rc == PE_OK) rc = bind(x, "model.norm.weight", D, 0, &m->norm_f);
    if (rc == PE_OK && !c->tied) rc = bind(x, "lm_head.weight", c->vocab, D, &m->cls);
    if (c->tied) m->cls = m->tok_emb;
    char n[6][160];
    for (int l = 0; l < c->n_layers && rc == PE_OK; l++) {
        lm_layer *ly = &m->layers[l];
        char p[64];
        snprintf(p, sizeof p, "model.layers.%d.", l);
#define NM(i, s) (snprintf(n[i], sizeof n[i], "%s%s", p, s), n[i])
        rc = bind(x, NM(0, "input_layernorm.weight"), D, 0, &ly->norm1);
        if (rc == PE_OK) rc = bind(x, NM(0, "post_attention_layernorm.weight"), D, 0, &ly->norm2);
        if (rc == PE_OK)
            rc = bind_linear(x, NM(0, "self_attn.q_proj.weight"),
                             c->qkv_bias ? NM(1, "self_attn.q_proj.bias") : NULL, Q, D, &ly->q);
        if (rc == PE_OK)
            rc = bind_linear(x, NM(0, "self_attn.k_proj.weight"),
                             c->qkv_bias ? NM(1, "self_attn.k_proj.bias") : NULL, KV, D, &ly->k);
        if (rc == PE_OK)
            rc = bind_linear(x, NM(0, "self_attn.v_proj.weight"),
                             c->qkv_bias ? NM(1, "self_attn.v_proj.bias") : NULL, KV, D, &ly->v);
        if (rc == PE_OK)
            rc = bind_linear(x, NM(0, "self_attn.o_proj.weight"),
                             c->o_bias ? NM(1, "self_attn.o_proj.bias") : NULL, D, Q, &ly->o);
        if (rc == PE_OK)
            rc = bind_linear(x, NM(0, "mlp.gate_proj.weight"),
                             c->mlp_bias ? NM(1, "mlp.gate_proj.bias") : NULL, F, D, &ly->gate);
        if (rc == PE_OK)
            rc = bind_linear(x, NM(0, "mlp.up_proj.weight"),
                             c->mlp_bias ? NM(1, "mlp.up_proj.bias") : NULL, F, D, &ly->up);
        if (rc == PE_OK)
            rc = bind_linear(x, NM(0, "mlp.down_proj.weight"),
                             c->mlp_bias ? NM(1, "mlp.down_proj.bias") : NULL, D, F, &ly->down);
#undef NM
    }
    return rc;
}

/* GPT-2's Conv1D stores (in, out): a view of columns [c0, c0 + out) of an (in, ld) matrix. */
static lm_linear conv_view(const float *w, const float *b, int in, int out, size_t ld, int c0)
{
    return (lm_linear){
        .w = w ? w + c0 : NULL, .b = b ? b + c0 : NULL, .in = in, .out = out, .ld = ld, .t = 1};
}

static int bind_gpt2(hf_ctx *x)
{
    lm_model *m = x->m;
    const lm_config *c = &m->c;
    int D = c->dim, F = c->hidden_dim, w = 0;
    x->prefix = find_tensor(x, "wte.weight", &w) ? "" : "transformer.";
    char n[2][160];
#define NM(i, s) (snprintf(n[i], sizeof n[i], "%s%s", x->prefix, s), n[i])
    int rc = bind(x, NM(0, "wte.weight"), c->vocab, D, &m->tok_emb);
    if (rc == PE_OK) rc = bind(x, NM(0, "wpe.weight"), c->seq_len, D, &m->pos_emb);
    if (rc == PE_OK) rc = bind(x, NM(0, "ln_f.weight"), D, 0, &m->norm_f);
    if (rc == PE_OK) rc = bind(x, NM(0, "ln_f.bias"), D, 0, &m->norm_f_b);
    if (rc == PE_OK && !c->tied) rc = bind(x, "lm_head.weight", c->vocab, D, &m->cls);
    if (c->tied) m->cls = m->tok_emb;
#undef NM
    for (int l = 0; l < c->n_layers && rc == PE_OK; l++) {
        lm_layer *ly = &m->layers[l];
        char p[80];
        snprintf(p, sizeof p, "%sh.%d.", x->prefix, l);
#define NM(i, s) (snprintf(n[i], sizeof n[i], "%s%s", p, s), n[i])
        const float *aw = NULL, *ab = NULL, *pw = NULL, *pb = NULL, *fw = NULL, *fb = NULL,
                    *mw = NULL, *mb = NULL;
        rc = bind(x, NM(0, "ln_1.weight"), D, 0, &ly->norm1);
        if (rc == PE_OK) rc = bind(x, NM(0, "ln_1.bias"), D, 0, &ly->norm1_b);
        if (rc == PE_OK) rc = bind(x, NM(0, "ln_2.weight"), D, 0, &ly->norm2);
        if (rc == PE_OK) rc = bind(x, NM(0, "ln_2.bias"), D, 0, &ly->norm2_b);
        if (rc == PE_OK) rc = bind(x, NM(0, "attn.c_attn.weight"), D, 3 * D, &aw);
        if (rc == PE_OK) rc = bind(x, NM(0, "attn.c_attn.bias"), 3 * D, 0, &ab);
        if (rc == PE_OK) rc = bind(x, NM(0, "attn.c_proj.weight"), D, D, &pw);
        if (rc == PE_OK) rc = bind(x, NM(0, "attn.c_proj.bias"), D, 0, &pb);
        if (rc == PE_OK) rc = bind(x, NM(0, "mlp.c_fc.weight"), D, F, &fw);
        if (rc == PE_OK) rc = bind(x, NM(0, "mlp.c_fc.bias"), F, 0, &fb);
        if (rc == PE_OK) rc = bind(x, NM(0, "mlp.c_proj.weight"), F, D, &mw);
        if (rc == PE_OK) rc = bind(x, NM(0, "mlp.c_proj.bias"), D, 0, &mb);
#undef NM
        if (rc == PE_OK && x->pass == 1) {
            ly->q = conv_view(aw, ab, D, D, 3 * (size_t)D, 0);
            ly->k = conv_view(aw, ab, D, D, 3 * (size_t)D, D);
            ly->v = conv_view(aw, ab, D, D, 3 * (size_t)D, 2 * D);
            ly->o = conv_view(pw, pb, D, D, (size_t)D, 0);
            ly->up = conv_view(fw, fb, D, F, (size_t)F, 0);
            ly->down = conv_view(mw, mb, F, D, (size_t)D, 0);
        }
    }
    return rc;
}

int lm_load_hf(lm_model *m, const char *dir, char *err, size_t errlen)
{
    int rc = parse_config(m, dir, err, errlen);
    if (rc) return rc;
    hf_ctx x = {.m = m, .dir = dir, .err = err, .errlen = errlen};
    x.sh = calloc(MAX_SHARDS, sizeof *x.sh);
    m->layers = calloc((size_t)m->c.n_layers, sizeof *m->layers);
    if (!x.sh || !m->layers) {
        rc = pe_fail(err, errlen, PE_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = find_shards(&x))) goto done;
    /* pass 0: every tensor found and checked, the bytes counted; then the budget */
    rc = m->c.arch == LM_ARCH_GPT2 ? bind_gpt2(&x) : bind_llama(&x);
    if (rc) goto done;
    size_t need = x.copy_floats * sizeof(float);
    for (int i = 0; i < x.n_sh; i++)
        if (x.sh[i].in_place) need += (size_t)x.sh[i].size;
    if ((rc = lm_reserve(m, need, err, errlen))) goto done;
    for (int i = 0; i < x.n_sh && rc == PE_OK; i++) {
        const void *base;
        rc = lm_map_add(m, x.sh[i].path, x.sh[i].size, &base, err, errlen);
        if (rc == PE_OK) {
            x.sh[i].map = m->n_maps - 1;
            x.sh[i].data = (const unsigned char *)base + 8 + x.sh[i].h.header_len;
        }
    }
    if (rc) goto done;
    x.pass = 1;
    rc = m->c.arch == LM_ARCH_GPT2 ? bind_gpt2(&x) : bind_llama(&x);
    if (rc) goto done;
    /* A shard whose tensors were all converted is not needed any more: unmapped, so its pages
     * leave the process (the budget never counted it). Maps are kept in order; unmapped ones
     * are left with size 0. */
    for (int i = 0; i < x.n_sh; i++) {
        lm_map *mp = &m->maps[x.sh[i].map];
        if (!x.sh[i].in_place && mp->size) {
            munmap(mp->base, mp->size);
            mp->size = 0;
        }
    }
done:
    for (int i = 0; x.sh && i < x.n_sh; i++) lm_st_free(&x.sh[i].h);
    free(x.sh);
    return rc;
}
