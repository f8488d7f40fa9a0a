/* Text checks and bounded JSON strings (storage_text.h). */
#include <stdbool.h>

#include "storage_text.h"
#include "utf8.h"

/* Length of the well-formed sequence at @p p (0: invalid; -1 as SIZE_MAX: cut by the end). */
static size_t sequence_len(const uint8_t *p, size_t avail)
{
	uint8_t lo;
	uint8_t hi;
	uint8_t need;

	if (p[0] < 0x80) {
		return 1;
	}
	need = utf8_lead(p[0], &lo, &hi);
	if (need == 0) {
		return 0;
	}
	for (size_t k = 1; k <= need; k++) {
		if (k >= avail) {
			return SIZE_MAX;
		}
		if (p[k] < lo || p[k] > hi) {
			return 0;
		}
		lo = 0x80;
		hi = 0xBF;
	}
	return (size_t)need + 1u;
}

size_t storage_text_scan(const uint8_t *buf, size_t len, enum storage_text_stop *stop)
{
	size_t i = 0;

	while (i < len) {
		size_t n;

		if (buf[i] == 0) {
			*stop = STORAGE_TEXT_NUL;
			return i;
		}
		n = sequence_len(buf + i, len - i);
		if (n == SIZE_MAX) {
			*stop = STORAGE_TEXT_CUT;
			return i;
		}
		if (n == 0) {
			*stop = STORAGE_TEXT_INVALID;
			return i;
		}
		i += n;
	}
	*stop = STORAGE_TEXT_END;
	return i;
}

/* What json_writer.c writes for one character; *used is its length in @p p. */
static size_t escaped_len(const uint8_t *p, size_t avail, size_t *used)
{
	uint8_t c = p[0];
	size_t n;

	*used = 1;
	if (c < 0x80) {
		if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' ||
		    c == '\t') {
			return 2;
		}
		return c < 0x20 ? 6 : 1;
	}
	n = sequence_len(p, avail);
	if (n == 0 || n == SIZE_MAX) {
		return 3; /* U+FFFD, at most one per byte */
	}
	*used = n;
	if (n == 3 && p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)) {
		return 6; /* \u2028, \u2029 */
	}
	return n;
}

size_t storage_json_fit(const char *text, size_t len, size_t budget)
{
	const uint8_t *p = (const uint8_t *)text;
	size_t cost = 2; /* the quotes */
	size_t i = 0;

	if (budget < cost) {
		return 0;
	}
	while (i < len) {
		size_t used;
		size_t c = escaped_len(p + i, len - i, &used);

		if (cost + c > budget) {
			break;
		}
		cost += c;
		i += used;
	}
	return i;
}

size_t storage_json_len(const char *text, size_t len)
{
	const uint8_t *p = (const uint8_t *)text;
	size_t cost = 2;
	size_t i = 0;

	while (i < len) {
		size_t used;

		cost += escaped_len(p + i, len - i, &used);
		i += used;
	}
	return cost;
}
