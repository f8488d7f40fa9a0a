/* The terminal-safe text filter (agent_text.h). */
#include "agent_text.h"

void agent_text_filter(struct agent_text_filter *f, const char *text, size_t len,
		       agent_text_put_fn put, void *user)
{
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (f->c2_held) {
			f->c2_held = false;
			if ((unsigned char)c >= 0x80 && (unsigned char)c <= 0x9f) {
				continue; /* a C1 control */
			}
			put(user, '\xc2');
		}
		if (c == '\xc2') {
			f->c2_held = true;
			continue;
		}
		if (c == '\t') {
			c = ' ';
		}
		if (((unsigned char)c < 0x20 && c != '\n') || c == 0x7f) {
			continue;
		}
		put(user, c);
	}
}

void agent_text_filter_reset(struct agent_text_filter *f)
{
	f->c2_held = false;
}
