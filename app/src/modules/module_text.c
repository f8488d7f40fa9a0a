/* Text helpers of the module parser (module_text.h). */
#include "module_text.h"

#include <stdint.h>
#include <string.h>

#include "utf8.h"

const char *module_show(struct module_shown *buf, const char *text, size_t len)
{
	size_t shown = utf8_shown(buf->s, MODULE_SHOWN_MAX + 1u, text, len, MODULE_SHOWN_MAX);

	if (shown < len) {
		strcat(buf->s, "...");
	}
	return buf->s;
}

size_t module_utf8_bad(const char *text, size_t len)
{
	const uint8_t *p = (const uint8_t *)text;
	size_t i = 0;

	while (i < len) {
		uint8_t lo;
		uint8_t hi;
		uint8_t need = p[i] < 0x80u ? 0u : utf8_lead(p[i], &lo, &hi);

		if (p[i] >= 0x80u && need == 0u) {
			return i;
		}
		if (need > 0u) {
			if (len - i <= need || p[i + 1] < lo || p[i + 1] > hi) {
				return i;
			}
			for (uint8_t k = 2; k <= need; k++) {
				if (p[i + k] < 0x80u || p[i + k] > 0xBFu) {
					return i;
				}
			}
		}
		i += 1u + need;
	}
	return len;
}
