/* input.h: pelab's own input events. Backends translate ncurses and SDL input into these, so no
 * backend key code leaves its backend and app/ actions are testable by feeding events. */
#ifndef PELAB_INPUT_H
#define PELAB_INPUT_H

#include <stdint.h>

typedef enum {
    UI_EV_NONE = 0,
    UI_EV_KEY,    /* key: a Unicode code point or a UI_KEY_* value; mods */
    UI_EV_RESIZE, /* the canvas changed size: re-lay out */
    UI_EV_MOUSE,  /* button press/move/wheel at (x, y) in figure units */
    UI_EV_QUIT,   /* window closed, SIGINT/SIGTERM/SIGHUP */
    UI_EV_TICK,   /* a timeout elapsed (animation) */
} ui_ev_type;

/* Non-character keys live above the Unicode range. */
enum {
    UI_KEY_UP = 0x110000,
    UI_KEY_DOWN,
    UI_KEY_LEFT,
    UI_KEY_RIGHT,
    UI_KEY_PGUP,
    UI_KEY_PGDN,
    UI_KEY_HOME,
    UI_KEY_END,
    UI_KEY_ENTER,
    UI_KEY_ESC,
    UI_KEY_TAB,
    UI_KEY_BTAB, /* shift-tab */
    UI_KEY_BACKSPACE,
    UI_KEY_DELETE,
    UI_KEY_F1,
    UI_KEY_F11 = UI_KEY_F1 + 10,
};

enum { UI_MOD_SHIFT = 1, UI_MOD_CTRL = 2, UI_MOD_ALT = 4 };

typedef enum {
    UI_MOUSE_PRESS = 1,
    UI_MOUSE_RELEASE,
    UI_MOUSE_MOVE, /* motion (hover, or drag with button held) */
    UI_MOUSE_WHEEL_UP,
    UI_MOUSE_WHEEL_DOWN,
} ui_mouse_action;

typedef struct ui_event {
    ui_ev_type type;
    uint32_t key;  /* UI_EV_KEY */
    unsigned mods; /* UI_MOD_* */
    ui_mouse_action mouse;
    int button;  /* 1 left, 2 middle, 3 right; 0 none */
    double x, y; /* UI_EV_MOUSE, figure units */
} ui_event;

#endif
