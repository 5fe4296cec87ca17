/* cmd_model.h: the model subcommands. argv[0] is "train" / "eval"; returns the exit status. */
#ifndef PELAB_APP_CMD_MODEL_H
#define PELAB_APP_CMD_MODEL_H

#include <stdio.h>

int app_cmd_train(int argc, char **argv);
int app_cmd_eval(int argc, char **argv);
/* Their --help texts (also the man page's sections for them, and what their completions read). */
void app_train_usage(FILE *f);
void app_eval_usage(FILE *f);

/* `pelab generate` (cmd_generate.c): a real checkpoint run forward from --ids. */
int app_cmd_generate(int argc, char **argv);
void app_generate_usage(FILE *f);
/* "1,2,3" into a new array of n ids, each 0..vocab-1 (vocab <= 0: no upper bound); -1 after a
 * message on stderr naming cmd and the bad entry. */
int app_parse_ids(const char *cmd, const char *s, int vocab, int **out, int *n);

/* `pelab eval --model M --text FILE` (cmd_eval_lm.c): app_cmd_eval hands over to it. */
int app_cmd_eval_lm(int argc, char **argv);
void app_eval_lm_usage(FILE *f);

typedef struct model model;
/* Save a checkpoint through the output module (render/outfile.c): a unique temporary renamed
 * into place, a link's target replaced, a device written directly. Returns 0 or -1 with
 * "-o PATH: <reason>" in err. */
int app_model_save(model *m, const char *path, char *err, size_t errlen);

#endif
