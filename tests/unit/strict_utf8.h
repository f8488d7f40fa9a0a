/*
 * Strict UTF-8 (RFC 3629) for tests, written apart from the firmware's own tables
 * (app/src/agent/wire/utf8.c): decode each code point and refuse overlong forms, surrogates,
 * code points above U+10FFFF and stray bytes. Used by test_mgmt and fuzz_utf8_repair.
 */
#ifndef STRICT_UTF8_H
#define STRICT_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool strict_utf8(const uint8_t *s, size_t n)
{
	static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
	size_t i = 0;

	while (i < n) {
		uint8_t c = s[i];
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
				      : (c & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp;

		if (len == 0 || i + len > n) {
			return false;
		}
		cp = len == 1 ? c : (uint32_t)(c & (0x7f >> len));
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80) {
				return false;
			}
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((len > 1 && cp < least[len]) || (cp >= 0xd800 && cp <= 0xdfff) ||
		    cp > 0x10ffff) {
			return false;
		}
		i += len;
	}
	return true;
}

#endif /* STRICT_UTF8_H */
