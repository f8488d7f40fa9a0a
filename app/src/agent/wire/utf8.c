#include "utf8.h"

#include <stdbool.h>

uint8_t utf8_lead(uint8_t lead, uint8_t *lo, uint8_t *hi)
{
	*lo = 0x80;
	*hi = 0xBF;
	if (lead >= 0xC2 && lead <= 0xDF) {
		return 1;
	}
	if (lead >= 0xE0 && lead <= 0xEF) {
		if (lead == 0xE0) {
			*lo = 0xA0; /* no overlong forms */
		} else if (lead == 0xED) {
			*hi = 0x9F; /* no UTF-16 surrogates */
		}
		return 2;
	}
	if (lead >= 0xF0 && lead <= 0xF4) {
		if (lead == 0xF0) {
			*lo = 0x90;
		} else if (lead == 0xF4) {
			*hi = 0x8F; /* nothing above U+10FFFF */
		}
		return 3;
	}
	return 0;
}

size_t utf8_encode(uint32_t cp, uint8_t *out)
{
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xC0 | (cp >> 6));
		out[1] = (uint8_t)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (uint8_t)(0xE0 | (cp >> 12));
		out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (uint8_t)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (uint8_t)(0xF0 | (cp >> 18));
	out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (uint8_t)(0x80 | (cp & 0x3F));
	return 4;
}

size_t utf8_prefix(const char *text, size_t len, size_t max)
{
	const uint8_t *p = (const uint8_t *)text;

	if (len <= max) {
		return len;
	}
	/* Step back over continuation bytes so that no character is cut. */
	while (max > 0u && (p[max] & 0xC0u) == 0x80u) {
		max--;
	}
	return max;
}

/*
 * The character or ill-formed sequence that starts at @p i: returns where it ends and sets
 * @p whole when it is a well-formed character; an ill-formed one is its maximal subpart (a
 * byte that cannot start a character, or a start with the continuation bytes that fit it).
 */
static size_t next_unit(const uint8_t *p, size_t i, size_t len, bool *whole)
{
	uint8_t lo = 0x80;
	uint8_t hi = 0xBF;
	uint8_t need = p[i] < 0x80 ? 0 : utf8_lead(p[i], &lo, &hi);
	size_t j = i + 1;
	size_t got = 0;

	while (got < need && j < len && p[j] >= lo && p[j] <= hi) {
		lo = 0x80;
		hi = 0xBF;
		got++;
		j++;
	}
	*whole = p[i] < 0x80 || (need > 0 && got == need);
	return j;
}

size_t utf8_repair(const char *text, size_t len, uint8_t *out, size_t *replaced)
{
	static const uint8_t fffd[3] = {0xEF, 0xBF, 0xBD};
	const uint8_t *p = (const uint8_t *)text;
	size_t bad = 0;
	size_t n = 0;
	size_t i = 0;

	while (i < len) {
		bool whole;
		size_t j = next_unit(p, i, len, &whole);

		if (whole) {
			if (out != NULL) {
				for (size_t k = i; k < j; k++) {
					out[n + k - i] = p[k];
				}
			}
			n += j - i;
		} else {
			if (out != NULL) {
				out[n] = fffd[0];
				out[n + 1] = fffd[1];
				out[n + 2] = fffd[2];
			}
			n += 3;
			bad++;
		}
		i = j;
	}
	if (replaced != NULL) {
		*replaced = bad;
	}
	return n;
}

size_t utf8_shown(char *out, size_t cap, const char *text, size_t len, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = (const uint8_t *)text;
	size_t n = 0;
	size_t i = 0;

	if (cap == 0u) {
		return 0;
	}
	while (i < len) {
		bool whole;
		size_t j = next_unit(p, i, len, &whole);
		/* A C0 control, DEL or a C1 control (U+0080..U+009F: C2 80..C2 9F). */
		bool control = p[i] < 0x20u || p[i] == 0x7Fu ||
			       (whole && p[i] == 0xC2u && p[i + 1] < 0xA0u);
		uint8_t unit[6];
		size_t w;

		if (control) {
			uint8_t c = p[i] == 0xC2u ? p[i + 1] : p[i];

			unit[0] = '\\';
			unit[1] = 'u';
			unit[2] = '0';
			unit[3] = '0';
			unit[4] = (uint8_t)hex[c >> 4];
			unit[5] = (uint8_t)hex[c & 0xFu];
			w = 6;
		} else if (whole) {
			w = j - i;
			for (size_t k = 0; k < w; k++) {
				unit[k] = p[i + k];
			}
		} else {
			unit[0] = 0xEF;
			unit[1] = 0xBF;
			unit[2] = 0xBD;
			w = 3;
		}
		if (j > max || n + w >= cap) {
			break; /* the next unit is past @max or does not fit: cut before it */
		}
		for (size_t k = 0; k < w; k++) {
			out[n + k] = (char)unit[k];
		}
		n += w;
		i = j;
	}
	out[n] = '\0';
	return i;
}
