/* placeholder: being written */
#include "cmd_model.h"
int app_cmd_train(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 1;
}
int app_cmd_eval(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 1;
}
