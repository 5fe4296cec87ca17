/* cmd_model.h: saving a checkpoint, as `pelab train` does (cmd_model.c); tests save with it. */
#ifndef PELAB_APP_CMD_MODEL_H
#define PELAB_APP_CMD_MODEL_H

#include <stdio.h>

typedef struct model model;
/* Save a checkpoint through the output module (render/outfile.c): a unique temporary renamed
 * into place, a link's target replaced, a device written directly. Returns 0 or -1 with
 * "-o PATH: <reason>" in err. */
int app_model_save(model *m, const char *path, char *err, size_t errlen);

#endif
