/* cmd_model.h: what the model commands lend others: saving a checkpoint, as `pelab train` does
 * (cmd_model.c; tests save with it), and reading --ids (cmd_generate.c). */
#ifndef PELAB_APP_CMD_MODEL_H
#define PELAB_APP_CMD_MODEL_H

#include <stdio.h>

/* "1,2,3" into a new array of n ids, each 0..vocab-1 (vocab <= 0: no upper bound); -1 after a
 * message on stderr naming cmd and the bad entry (cmd_generate.c). */
int app_parse_ids(const char *cmd, const char *s, int vocab, int **out, int *n);

typedef struct model model;
/* Save a checkpoint through the output module (render/outfile.c): a unique temporary renamed
 * into place, a link's target replaced, a device written directly. Returns 0 or -1 with
 * "-o PATH: <reason>" in err. */
int app_model_save(model *m, const char *path, char *err, size_t errlen);

#endif
