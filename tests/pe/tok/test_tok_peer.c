/* test_tok_peer: Llama 2's tokenizer.bin (run.c's rule) and the SentencePiece-style
 * tokenizer.json rule against Google's SentencePiece itself (Debian python3-sentencepiece, run by
 * tests/peers/tok_sentencepiece.py on Llama 2's tokenizer.model): llama.cpp's strings, every
 * line of run.c's stories, and mixed lines built from them. Skipped (77) when the peer is not
 * installed (pelab.sh test installs it); failed when the fixtures are missing. Suite 'tok'. */
#include <cjson/cJSON.h>
#include <unistd.h>

#include "tok_test.h"

#define PY "/usr/bin/python3"

int main(void)
{
    if (system(PY " -c 'import sentencepiece' 2>/dev/null") != 0)
        return tap_skip_all("python3-sentencepiece is not installed (the peer)");
    const char *dir = realmodels();
    if (!dir) return tap_done();
    /* the strings: llama.cpp's vectors, the stories' lines, and pairs of them joined */
    cJSON *list = cJSON_CreateArray();
    vectors v;
    if (vectors_read(&v, dir, "llama-spm") < 0) return tap_done();
    for (int i = 0; i < v.n; i++) cJSON_AddItemToArray(list, cJSON_CreateString(v.text[i]));
    const char *stories[] = {"expected_runc_t0_n200.txt", "expected_runc_t0_n60_prompt_Zoo.txt"};
    for (int f = 0; f < 2; f++) {
        char p[2300];
        snprintf(p, sizeof p, "%s/stories260K/%s", dir, stories[f]);
        char *s = slurp(p, NULL);
        if (!TAP_OK(s, "%s read", stories[f])) continue;
        for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
            cJSON_AddItemToArray(list, cJSON_CreateString(line));
        free(s);
    }
    for (int i = 0; i + 1 < v.n; i++) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s %s%s", v.text[i], v.text[v.n - 1 - i], v.text[(i * 7) % v.n]);
        cJSON_AddItemToArray(list, cJSON_CreateString(buf));
    }
    char tmpl[160];
    tap_tmp_path(tmpl, sizeof tmpl, "pelab-tokpeer-XXXXXX");
    int fd = mkstemp(tmpl);
    char *json = cJSON_PrintUnformatted(list);
    int wrote = fd >= 0 && json && write(fd, json, strlen(json)) == (ssize_t)strlen(json);
    if (fd >= 0) close(fd);
    free(json);
    if (!TAP_OK(wrote, "the strings written to %s", tmpl)) return tap_done();
    const char *src = getenv("PELAB_SRC");
    char cmd[6000];
    snprintf(cmd, sizeof cmd,
             PY " '%s/tests/peers/tok_sentencepiece.py' "
                "'%s/llama2-tokenizer/tokenizer.model' '%s'",
             src ? src : ".", dir, tmpl);
    FILE *p = popen(cmd, "r");
    char bin[2300], err[512];
    snprintf(bin, sizeof bin, "%s/llama2-tokenizer/tokenizer.bin", dir);
    pe_tok *t = pe_tok_open(bin, err, sizeof err);
    int n = cJSON_GetArraySize(list), same = 0, lines = 0;
    static char line[1 << 16];
    for (int i = 0; p && t && i < n && fgets(line, sizeof line, p); i++, lines++) {
        const char *s = cJSON_GetArrayItem(list, i)->valuestring;
        pe_tok_ids ids = {0};
        int k = pe_tok_encode(t, s, strlen(s), 0, &ids, err, sizeof err), ok = k >= 0;
        char *q = line;
        for (int j = 0; ok && j < k; j++) {
            char *end;
            long id = strtol(q, &end, 10);
            if (end == q || id != ids.ids[j]) ok = 0;
            q = end;
        }
        while (*q == ' ' || *q == '\n') q++;
        ok = ok && *q == '\0';
        if (!ok) tap_diag("differs on \"%s\"", shown(s, strlen(s)));
        same += ok;
        pe_tok_ids_free(&ids);
    }
    int rc = p ? pclose(p) : -1;
    TAP_OK(t && rc == 0 && lines == n, "SentencePiece ran on %d strings (%d answered)", n, lines);
    TAP_OK(same == n, "pelab's tokenizer.bin gives SentencePiece's ids for all %d strings (%d)", n,
           same);
    pe_tok_free(t);
    unlink(tmpl);
    cJSON_Delete(list);
    vectors_free(&v);
    return tap_done();
}
