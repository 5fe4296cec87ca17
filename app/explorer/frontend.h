/* frontend.h: the explorer's two front ends. Each moves events into an app_explorer and its
 * frames out, until quit; cmd_explore.c picks one. Returns the exit status. */
#ifndef PELAB_APP_FRONTEND_H
#define PELAB_APP_FRONTEND_H

#include "explorer.h"

int app_run_tui(app_explorer *x, int frames); /* explorer_tui.c */
int app_run_gui(app_explorer *x, int frames); /* explorer_gui.c */

/* The window's frame for target t: the explorer's frame left of the slider panel, and the
 * panel (one slider per option of the view that has a slider range). */
void app_gui_frame(app_explorer *x, scene *s, const scene_target *t);

#endif
