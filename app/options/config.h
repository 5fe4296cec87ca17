/* config.h: --config FILE, a model's config.json or GGUF header, as pelab's parameters.
 *
 * The reading itself is pe's (pe/model/hf_config.h: what is read, warned about and refused, and
 * how L0 and the target context follow from each rope type), so the real-model loaders use the
 * same numbers; this file keeps the app's names for it. */
#ifndef PELAB_APP_CONFIG_H
#define PELAB_APP_CONFIG_H

#include <stddef.h>

#include "config_load.h"
#include "hf_config.h"
#include "pe.h"

#define APP_CONFIG_MAX_BYTES PE_HF_CONFIG_MAX_BYTES

typedef pe_hf_config app_model_config;

/* pe_config_load: a config.json, or a GGUF file's header. */
int app_config_load(const char *path, app_model_config *out, char *err, size_t errlen);

/* pe_hf_config_parse. */
int app_config_parse(const char *json_text, const char *source_name, app_model_config *out,
                     char *err, size_t errlen);

#endif
