/* command_list.h: pelab's commands, in the order `pelab --help`, the man page and the
 * completions list them. Adding a command is one file under app/cmd/ defining
 * `const app_command app_command_<id>` (commands.h), one X(<id>) line here, and the file in
 * app/meson.build. Only the list: commands.h includes it and declares every entry. */
#ifndef PELAB_APP_COMMAND_LIST_H
#define PELAB_APP_COMMAND_LIST_H

#define APP_COMMANDS(X)                                                                            \
    X(explore)                                                                                     \
    X(gui)                                                                                         \
    X(export)                                                                                      \
    X(train)                                                                                       \
    X(eval)                                                                                        \
    X(race)                                                                                        \
    X(generate)                                                                                    \
    X(tokenize)                                                                                    \
    X(bench)                                                                                       \
    X(list)                                                                                        \
    X(lesson)                                                                                      \
    X(completion)                                                                                  \
    X(manpage)                                                                                     \
    X(help)                                                                                        \
    X(version)

#endif
