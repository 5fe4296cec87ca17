/* main.c: pelab's entry point. The commands are a table (commands.c); each is a function taking
 * (argc, argv) with argv[0] the command, returning the exit status: 0 fine, 1 runtime error, 2
 * usage error. */
#include <locale.h>

#include "commands.h"

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C"); /* numbers are read and written with '.' whatever the locale */
    return app_main(argc, argv);
}
