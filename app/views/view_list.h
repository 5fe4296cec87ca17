/* view_list.h: the views, in the order of the explorer's number keys (the first nine get 1..9;
 * Tab and `:view NAME` reach every one). Adding a view is one file under app/views/ defining
 * `const app_view app_view_<name>`, one X(<name>) line here, and the file in app/meson.build.
 * Only the list: views.h includes it and declares every app_view_<name>. */
#ifndef PELAB_APP_VIEW_LIST_H
#define PELAB_APP_VIEW_LIST_H

#define APP_VIEWS(X)                                                                               \
    X(heatmap)                                                                                     \
    X(similarity)                                                                                  \
    X(decay)                                                                                       \
    X(alibi)                                                                                       \
    X(rope)                                                                                        \
    X(wavelength)                                                                                  \
    X(frequencies)                                                                                 \
    X(extension)                                                                                   \
    X(resolution)                                                                                  \
    X(t5)                                                                                          \
    X(xpos)                                                                                        \
    X(xl)                                                                                          \
    X(attention)                                                                                   \
    X(compare)                                                                                     \
    X(extrapolation)                                                                               \
    X(sinks)                                                                                       \
    X(usage)                                                                                       \
    X(distance)                                                                                    \
    X(model_distance)                                                                              \
    X(table)

#endif
