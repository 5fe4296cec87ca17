/* view_list.h: the views' definitions (one file each under app/views/), registered in views.c. */
#ifndef PELAB_APP_VIEW_LIST_H
#define PELAB_APP_VIEW_LIST_H

#include "views.h"

extern const app_view app_view_heatmap;
extern const app_view app_view_similarity;
extern const app_view app_view_decay;
extern const app_view app_view_alibi;
extern const app_view app_view_rope;
extern const app_view app_view_wavelength;
extern const app_view app_view_frequencies;
extern const app_view app_view_extension;
extern const app_view app_view_resolution;
extern const app_view app_view_t5;
extern const app_view app_view_xpos;
extern const app_view app_view_xl;
extern const app_view app_view_attention;
extern const app_view app_view_compare;

extern const app_view app_view_extrapolation;

#endif
