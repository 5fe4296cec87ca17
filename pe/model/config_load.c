/* config_load.c: a GGUF header or a config.json, by the file's first four bytes. */
#include "config_load.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gguf_meta.h"

int pe_config_load(const char *path, pe_hf_config *out, char *err, size_t errlen)
{
    /* a GGUF model (gigabytes) is read by its header alone; anything else, missing files
     * included, goes to the config.json reader and its messages */
    /* Only a regular file is sniffed: opening a FIFO would wait for a writer, and reading its
     * first bytes would take them from the config.json reader (pe_infile reads FIFOs without
     * blocking); everything else goes to that reader and its messages. */
    struct stat st;
    int regular = path && *path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    FILE *f = regular ? fopen(path, "rb") : NULL;
    char magic[4];
    int gguf = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "GGUF", 4) == 0;
    if (f) fclose(f);
    return gguf ? pe_gguf_read_config(path, out, err, errlen)
                : pe_hf_config_load(path, out, err, errlen);
}
