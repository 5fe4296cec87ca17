/* test_lm_bad: forged and broken checkpoints are refused with one line that names the problem:
 * safetensors headers (truncated, a header claiming a gigabyte, offsets past the end or
 * overlapping, unknown dtypes, sizes that disagree with the shape), shapes that disagree with
 * config.json, llama2.c headers with impossible sizes, unknown architectures, missing files.
 * The real stories260K.bin is cut and patched for the llama2.c cases (fails when
 * ../shared/realmodels is missing). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lm.h"
#include "pe.h"
#include "tap.h"
#include "writer.h"

static char tmp_dir[4096];

/* lm_st_parse over a file made of an 8-byte length, the JSON and data_len bytes of data. */
static int st_json(const char *json, uint64_t claim, size_t data_len, char *err, size_t errlen)
{
    size_t n = strlen(json);
    unsigned char *buf = calloc(8 + n + data_len + 1, 1);
    uint64_t len = claim ? claim : n;
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(len >> (8 * i));
    memcpy(buf + 8, json, n);
    lm_st_header h;
    int rc =
        lm_st_parse(buf, 8 + n + data_len, 8 + n + data_len, "forged.safetensors", &h, err, errlen);
    if (rc == PE_OK) lm_st_free(&h);
    free(buf);
    return rc;
}

static void test_safetensors_headers(void)
{
    char err[512];
    struct {
        const char *json;
        uint64_t claim;
        size_t data;
        const char *want; /* in the message */
    } bad[] = {
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", (uint64_t)1 << 30, 8,
         "claims 1073741824 bytes"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4000, 8,
         "the file has"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 0, 8, "past the end"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
         0, 16, "overlap"},
        {"{\"a\":{\"dtype\":\"Q4_K\",\"shape\":[2],\"data_offsets\":[0,8]}}", 0, 8,
         "unknown dtype \"Q4_K\""},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,8]}}", 0, 8,
         "shape and dtype need 6"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 0, 8,
         "shape entries"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 0, 8, "begin <= end"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 0, 8, "data_offsets"},
        {"[1,2,3]", 0, 0, "not a JSON object"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
         0, 16, "listed twice"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1],\"data_offsets\":[0,4]}}", 0, 4,
         "dimensions"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 0,
         8, "shape"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int rc = st_json(bad[i].json, bad[i].claim, bad[i].data, err, sizeof err);
        TAP_OK(rc == PE_EINVAL && strstr(err, bad[i].want) && !strchr(err, '\n'),
               "safetensors: %s (%s)", bad[i].want, err);
    }
    unsigned char four[4] = {1, 2, 3, 4};
    lm_st_header h;
    TAP_OK(lm_st_parse(four, 4, 4, "short", &h, err, sizeof err) == PE_EINVAL &&
               strstr(err, "truncated"),
           "a 4-byte file is truncated (%s)", err);
    TAP_OK(st_json("{\"__metadata__\":{\"x\":\"y\"},\"a\":{\"dtype\":\"F32\",\"shape\":[0],"
                   "\"data_offsets\":[0,0]}}",
                   0, 0, err, sizeof err) == PE_OK,
           "metadata and an empty tensor are accepted");
}

/* A Hugging Face folder with this config.json and the random GPT-2 tensors, changed by edit. */
static int gpt2_folder(const char *name, const char *config, const char *drop, const char *dtype,
                       char *dir, size_t size)
{
    snprintf(dir, size, "%s/%s", tmp_dir, name);
    mkdir(dir, 0700);
    char p[4400];
    snprintf(p, sizeof p, "%s/config.json", dir);
    if (config && wr_text(p, config) != 0) return -1;
    enum { D = 8, V = 11, P = 4 };
    static float zeros[3 * D * 4 * D];
    wr_tensor t[] = {
        {"wte.weight", 2, {V, D}, zeros},
        {"wpe.weight", 2, {P, D}, zeros},
        {"h.0.ln_1.weight", 1, {D, 1}, zeros},
        {"h.0.ln_1.bias", 1, {D, 1}, zeros},
        {"h.0.attn.c_attn.weight", 2, {D, 3 * D}, zeros},
        {"h.0.attn.c_attn.bias", 1, {3 * D, 1}, zeros},
        {"h.0.attn.c_proj.weight", 2, {D, D}, zeros},
        {"h.0.attn.c_proj.bias", 1, {D, 1}, zeros},
        {"h.0.ln_2.weight", 1, {D, 1}, zeros},
        {"h.0.ln_2.bias", 1, {D, 1}, zeros},
        {"h.0.mlp.c_fc.weight", 2, {D, 4 * D}, zeros},
        {"h.0.mlp.c_fc.bias", 1, {4 * D, 1}, zeros},
        {"h.0.mlp.c_proj.weight", 2, {4 * D, D}, zeros},
        {"h.0.mlp.c_proj.bias", 1, {D, 1}, zeros},
        {"ln_f.weight", 1, {D, 1}, zeros},
        {"ln_f.bias", 1, {D, 1}, zeros},
    };
    wr_tensor keep[32];
    int n = 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!drop || strcmp(drop, t[i].name) != 0) keep[n++] = t[i];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    return wr_safetensors(p, keep, n, dtype, 1);
}

#define GPT2_CFG_(embd, head, layer, extra)                                                        \
    "{\"architectures\": [\"GPT2LMHeadModel\"], \"model_type\": \"gpt2\", \"n_embd\": " embd       \
    ", \"n_head\": " head ", \"n_layer\": " layer ", \"vocab_size\": 11, \"n_positions\": 4" extra \
    "}"
#define GPT2_CFG(extra) GPT2_CFG_("8", "2", "1", extra)

static void test_folders(void)
{
    char dir[4300], err[512];
    lm_model *m = NULL;
    TAP_OK(gpt2_folder("good", GPT2_CFG(""), NULL, "F32", dir, sizeof dir) == 0 &&
               lm_open(dir, &m, err, sizeof err) == PE_OK,
           "the small GPT-2 folder opens (%s)", err);
    lm_close(m);
    struct {
        const char *name, *config, *drop, *dtype, *want;
    } bad[] = {
        {"wide", GPT2_CFG_("16", "2", "1", ""), NULL, "F32", "config.json says [11, 16]"},
        {"twice", GPT2_CFG(", \"n_embd\": 16"), NULL, "F32", "'n_embd' appears twice"},
        {"vocab",
         "{\"architectures\": [\"GPT2LMHeadModel\"], \"n_embd\": 8, \"n_head\": 2, "
         "\"n_layer\": 1, \"vocab_size\": 12, \"n_positions\": 4}",
         NULL, "F32", "wte.weight has shape [11, 8], config.json says [12, 8]"},
        {"missing", GPT2_CFG(""), "h.0.mlp.c_fc.bias", "F32", "h.0.mlp.c_fc.bias is missing"},
        {"bert", "{\"architectures\": [\"BertForMaskedLM\"], \"model_type\": \"bert\"}", NULL,
         "F32", "architectures [BertForMaskedLM], model_type \"bert\": not supported"},
        {"mamba", "{\"model_type\": \"mamba\"}", NULL, "F32", "model_type \"mamba\""},
        {"act", GPT2_CFG(", \"activation_function\": \"relu\""), NULL, "F32", "relu"},
        {"noconfig", NULL, NULL, "F32", "config.json"},
        {"notjson", "{\"n_embd\": ", NULL, "F32", "not a JSON object"},
        {"heads", GPT2_CFG_("8", "3", "1", ""), NULL, "F32", "not divisible"},
        {"layers", GPT2_CFG_("8", "2", "0", ""), NULL, "F32", "n_layer"},
        {"llamaheads",
         "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 8, "
         "\"num_attention_heads\": 2, \"num_key_value_heads\": 3, \"intermediate_size\": 8, "
         "\"num_hidden_layers\": 1, \"vocab_size\": 11, \"max_position_embeddings\": 4}",
         NULL, "F32", "num_key_value_heads"},
        {"llamamissing",
         "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 8, "
         "\"num_attention_heads\": 2, \"intermediate_size\": 8, \"num_hidden_layers\": 1, "
         "\"vocab_size\": 11, \"max_position_embeddings\": 4}",
         NULL, "F32", "model.embed_tokens.weight is missing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        gpt2_folder(bad[i].name, bad[i].config, bad[i].drop, bad[i].dtype, dir, sizeof dir);
        int rc = lm_open(dir, &m, err, sizeof err);
        TAP_OK(rc == PE_EINVAL && m == NULL && strstr(err, bad[i].want) && !strchr(err, '\n'),
               "folder %s: %s (%s)", bad[i].name, bad[i].want, err);
    }
    /* an index naming a file outside the folder */
    gpt2_folder("escape", GPT2_CFG(""), NULL, "F32", dir, sizeof dir);
    char p[4400];
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
    wr_text(p, "{\"weight_map\": {\"wte.weight\": \"../good/model.safetensors\"}}");
    TAP_OK(lm_open(dir, &m, err, sizeof err) == PE_EINVAL && strstr(err, "same folder"),
           "an index naming another folder is refused (%s)", err);
    TAP_OK(lm_open("/nonexistent/model.bin", &m, err, sizeof err) == PE_EINVAL &&
               strstr(err, "no such file"),
           "a missing file (%s)", err);
    TAP_OK(lm_open("", &m, err, sizeof err) == PE_EINVAL, "an empty path (%s)", err);
}

/* llama2.c: the real file cut and patched */
static void test_llama2c(void)
{
    const char *src = getenv("PELAB_SRC");
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/../shared/realmodels/stories260K/stories260K.bin",
             src ? src : ".");
    FILE *f = fopen(path, "rb");
    if (!TAP_OK(f != NULL, "stories260K.bin is there (%s)", path)) return;
    unsigned char *buf = malloc(1100000);
    size_t n = fread(buf, 1, 1100000, f);
    fclose(f);
    char out[4300];
    snprintf(out, sizeof out, "%s/x.bin", tmp_dir);
    struct {
        int field; /* int32 index to patch, -1: none */
        int32_t value;
        long size_delta; /* bytes cut (negative) or added */
        const char *want;
    } bad[] = {
        {0, 0, 0, "dim 0 is impossible"},
        {3, 7, 0, "must split into 7 heads"},
        {4, 3, 0, "not a multiple of n_kv_heads 3"},
        {4, 9, 0, "n_kv_heads 9 is impossible"},
        {5, INT32_MIN, 0, "vocab_size"},
        {2, 1000000, 0, "n_layers 1000000"},
        {6, 0, 0, "seq_len 0"},
        {1, 2000000000, 0, "hidden_dim"},
        {-1, 0, -1, "needs 1056540 bytes, the file has 1056539"},
        {-1, 0, 4, "the file has 1056544"},
        {5, -512, 0, "untied"},
        {-1, 0, -(long)n + 20, "too short"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned char *b = malloc(n + 8);
        memcpy(b, buf, n);
        memset(b + n, 0, 8);
        if (bad[i].field >= 0) memcpy(b + 4 * bad[i].field, &bad[i].value, 4);
        FILE *w = fopen(out, "wb");
        fwrite(b, 1, (size_t)((long)n + bad[i].size_delta), w);
        fclose(w);
        free(b);
        lm_model *m = NULL;
        err[0] = 0;
        int rc = lm_open(out, &m, err, sizeof err);
        TAP_OK(rc == PE_EINVAL && !m && strstr(err, bad[i].want) && !strchr(err, '\n'),
               "llama2.c: %s (%s)", bad[i].want, err);
    }
    /* the versioned header: version 2 is refused, a v1 file made from the legacy one opens */
    unsigned char hdr[256] = {0};
    uint32_t magic = 0x616b3432;
    int32_t ver = 2;
    memcpy(hdr, &magic, 4);
    memcpy(hdr + 4, &ver, 4);
    memcpy(hdr + 8, buf, 28);
    hdr[36] = 1;
    FILE *w = fopen(out, "wb");
    fwrite(hdr, 1, 256, w);
    fwrite(buf + 28, 1, n - 28, w);
    fclose(w);
    lm_model *m = NULL;
    TAP_OK(lm_open(out, &m, err, sizeof err) == PE_EINVAL && strstr(err, "version 2"),
           "ak42 version 2 is refused (%s)", err);
    free(buf);
}

int main(void)
{
    snprintf(tmp_dir, sizeof tmp_dir, "%s/pelab-lmbad-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp_dir)) return TAP_OK(0, "temp dir"), tap_done();
    test_safetensors_headers();
    test_folders();
    test_llama2c();
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0) tap_diag("could not remove %s", tmp_dir);
    return tap_done();
}
