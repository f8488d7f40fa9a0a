/*
 * Untrusted text (model output, tool arguments) made safe to show on a terminal: C0 control
 * characters other than newline are dropped, a tab becomes a space, DEL is dropped, and so
 * are the C1 controls U+0080..U+009F (UTF-8 0xc2 0x80..0x9f; U+009B is a one-character CSI
 * for UTF-8 terminals). Nothing a model writes can move the cursor, clear the screen or
 * fake a line. Text may arrive in pieces split anywhere: the filter keeps its state.
 */
#ifndef AGENT_TEXT_H
#define AGENT_TEXT_H

#include <stdbool.h>
#include <stddef.h>

struct agent_text_filter {
	bool c2_held; /* a 0xc2 byte not yet passed on: the next byte decides */
};

typedef void (*agent_text_put_fn)(void *user, char c);

/** Pass the shown bytes of @p text to @p put, in order. */
void agent_text_filter(struct agent_text_filter *f, const char *text, size_t len,
		       agent_text_put_fn put, void *user);

/** Forget a held byte (a new piece of text starts). */
void agent_text_filter_reset(struct agent_text_filter *f);

#endif /* AGENT_TEXT_H */
