/* config_load.h: --config FILE for any model description pelab reads: a GGUF file (by its
 * magic; only the header, gguf_meta.h) or a config.json (hf_config.h). */
#ifndef PELAB_PE_CONFIG_LOAD_H
#define PELAB_PE_CONFIG_LOAD_H

#include <stddef.h>

#include "hf_config.h"

/* PE_OK, PE_EINVAL or PE_ENOMEM; err gets one line naming the file. */
int pe_config_load(const char *path, pe_hf_config *out, char *err, size_t errlen);

#endif
