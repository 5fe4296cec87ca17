/* config.c: --config through pe's reader (see config.h). */
#include "config.h"

int app_config_load(const char *path, app_model_config *out, char *err, size_t errlen)
{
    return pe_config_load(path, out, err, errlen);
}

int app_config_parse(const char *json_text, const char *source_name, app_model_config *out,
                     char *err, size_t errlen)
{
    return pe_hf_config_parse(json_text, source_name, out, err, errlen);
}
