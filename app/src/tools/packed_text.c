/* The texts of the tool definitions (packed_text.h), read with the build's dictionary. */
#include "packed_text.h"

void packed_text_open(struct reference_reader *r, const struct packed_text *t)
{
	r->codec = t->codes != 0 ? &packed_text_codec : NULL;
	r->src = t->data;
	r->next = 0;
	r->left = t->len;
	r->src_left = t->codes != 0 ? t->codes : t->len;
	r->depth = 0;
	r->corrupt = false;
}

const char *packed_text_str(const struct packed_text *t, char *buf, size_t size)
{
	struct reference_reader r;
	size_t n;

	if (t->codes == 0) {
		return t->data; /* plain text is followed by a NUL */
	}
	packed_text_open(&r, t);
	n = size > 0 ? reference_read(&r, buf, size - 1) : 0;
	if (size > 0) {
		buf[n] = '\0';
	}
	return buf;
}
