/*
 * The full-screen layout of the chat frontend on an ANSI terminal (docs/chat.md):
 *
 *   rows 1 .. R-2   the transcript, a scroll region; Page Up / Page Down page through a
 *                   bounded scrollback (CONFIG_AGENT_CHAT_SCROLLBACK_SIZE bytes)
 *   row R-1         the input line: "NAME> " and what is being typed
 *   row R           the status bar: the latest input, output and total token counts
 *                   (abbreviated I, O, T on narrow terminals); it never scrolls
 *
 * One screen at a time. Every function may be called from the request worker and from the
 * console's input at once: a lock orders them. Text is UTF-8; control characters other than
 * newline and tab are dropped, tabs become spaces; every code point is one column wide.
 */
#ifndef AGENT_SCREEN_H
#define AGENT_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"

#define SCREEN_COLS_MIN 20
#define SCREEN_ROWS_MIN 6
#define SCREEN_COLS_MAX 255
#define SCREEN_ROWS_MAX 200
/* Narrower than this, the status bar abbreviates its labels as I, O and T. */
#define SCREEN_NARROW_COLS 60

enum screen_style {
	SCREEN_PLAIN,
	SCREEN_BOLD, /* labels of the agent */
};

/**
 * Take over the console: clear it, set the scroll region, draw the status bar and an empty
 * input line. Sizes outside the MIN/MAX bounds are clamped. Empties the scrollback.
 * -EBUSY when a screen is open already.
 */
int screen_open(struct agent_console *console, uint16_t cols, uint16_t rows);

/** Give the console back: reset the scroll region, clear, home the cursor. */
void screen_close(void);

/** Add text to the transcript (shown at once unless the view is paged back). */
void screen_append(const char *text, size_t len, enum screen_style style);

/** Start a new transcript line unless the transcript already ends with one. */
void screen_end_line(void);

/** The latest token counts, shown in the status bar. */
void screen_set_usage(uint32_t input, uint32_t output, uint32_t total);

/** A short state word at the right of the status bar ("" for none), e.g. "waiting". */
void screen_set_state(const char *state);

/** Redraw the input line: @p label (the user name) then "> " then @p text. */
void screen_set_input(const char *label, const char *text, size_t len);

/** Page the transcript: @p pages > 0 back (Page Up), < 0 forward (Page Down). */
void screen_page(int pages);

/** The transcript's size on the open screen (or the last one): columns and rows. */
void screen_transcript_size(uint16_t *cols, uint16_t *rows);

#endif /* AGENT_SCREEN_H */
