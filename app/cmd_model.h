/* cmd_model.h: the model subcommands. argv[0] is "train" / "eval"; returns the exit status. */
#ifndef PELAB_APP_CMD_MODEL_H
#define PELAB_APP_CMD_MODEL_H

int app_cmd_train(int argc, char **argv);
int app_cmd_eval(int argc, char **argv);

#endif
