/*
 * One value of a board file (posix_board_file.h): text, integers, yes/no, names and sets of
 * names, decimals and IP addresses, each checked with an error naming the key.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_port.h"
#include "posix_board_file.h"

static void join_names(char *buf, size_t len, const char *const *names, size_t count)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < count && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i > 0 ? ", " : "", names[i]);

		if (n < 0) {
			return;
		}
		used += (size_t)n;
	}
}

bool posix_board_copy_text(struct posix_board_line *ctx, const char *key, const char *value,
			   char *dst, size_t cap, bool allow_empty)
{
	size_t len;

	if (value == NULL) {
		dst[0] = '\0';
		return true;
	}
	len = strlen(value);
	if (len == 0 && !allow_empty) {
		return posix_board_fail(ctx, "%s is empty", key);
	}
	if (len >= cap) {
		return posix_board_fail(ctx, "%s is longer than %zu bytes", key, cap - 1);
	}
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f) {
			return posix_board_fail(ctx, "%s holds a control character", key);
		}
	}
	memcpy(dst, value, len + 1);
	return true;
}

bool posix_board_parse_long(struct posix_board_line *ctx, const char *key, const char *value,
			    long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (value[0] == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
		return posix_board_fail(ctx, "%s must be an integer from %ld to %ld, not '%s'", key,
					min, max, value);
	}
	*out = v;
	return true;
}

bool posix_board_parse_u32(struct posix_board_line *ctx, const char *key, const char *value,
			   uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (value[0] < '0' || value[0] > '9') {
		return posix_board_fail(ctx, "%s must be a whole number from 0 to %u, not '%s'",
					key, (unsigned int)max, value);
	}
	v = strtoull(value, &end, 10);
	if (*end != '\0' || errno != 0 || v > max) {
		return posix_board_fail(ctx, "%s must be a whole number from 0 to %u, not '%s'",
					key, (unsigned int)max, value);
	}
	*out = (uint32_t)v;
	return true;
}

bool posix_board_parse_bool(struct posix_board_line *ctx, const char *key, const char *value,
			    bool *out)
{
	if (strcmp(value, "yes") == 0 || strcmp(value, "true") == 0) {
		*out = true;
		return true;
	}
	if (strcmp(value, "no") == 0 || strcmp(value, "false") == 0) {
		*out = false;
		return true;
	}
	return posix_board_fail(ctx, "%s must be yes or no, not '%s'", key, value);
}

bool posix_board_parse_enum(struct posix_board_line *ctx, const char *key, const char *value,
			    const char *const *names, size_t count, int *out)
{
	char list[160];

	for (size_t i = 0; i < count; i++) {
		if (strcmp(value, names[i]) == 0) {
			*out = (int)i;
			return true;
		}
	}
	join_names(list, sizeof(list), names, count);
	return posix_board_fail(ctx, "unknown %s '%s' (one of: %s)", key, value, list);
}

/* "a,b,c" of names from @p names into a bit set; "" is the empty set. */
bool posix_board_parse_set(struct posix_board_line *ctx, const char *key, const char *value,
			   const char *const *names, size_t count, uint32_t *out)
{
	const char *p = value;

	*out = 0;
	while (*p != '\0') {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		char item[32];
		int bit = 0;

		if (len == 0 || len >= sizeof(item)) {
			return posix_board_fail(ctx, "%s: empty or overlong item in '%s'", key,
						value);
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (!posix_board_parse_enum(ctx, key, item, names, count, &bit)) {
			return false;
		}
		if ((*out & (1u << bit)) != 0u) {
			return posix_board_fail(ctx, "%s: '%s' given twice", key, item);
		}
		*out |= 1u << bit;
		p += len;
		if (*p == ',') {
			p++;
			if (*p == '\0') {
				return posix_board_fail(ctx, "%s ends with a comma", key);
			}
		}
	}
	return true;
}

/* A decimal such as "-12.5" or "3.912" (at most six decimals) times 1 000 000. */
bool posix_board_parse_micro(struct posix_board_line *ctx, const char *key, const char *value,
			     int64_t *out)
{
	const char *p = value;
	bool negative = false;
	int64_t whole = 0;
	int64_t frac = 0;
	int frac_digits = 0;
	bool digits = false;

	if (*p == '-') {
		negative = true;
		p++;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (INT64_MAX / 1000000 - 9) / 10) {
			return posix_board_fail(ctx, "%s is too large: '%s'", key, value);
		}
		whole = whole * 10 + (*p - '0');
		digits = true;
	}
	if (*p == '.') {
		p++;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (frac_digits == 6) {
				return posix_board_fail(ctx, "%s has more than six decimals: '%s'",
							key, value);
			}
			frac = frac * 10 + (*p - '0');
			frac_digits++;
			digits = true;
		}
	}
	if (!digits || *p != '\0') {
		return posix_board_fail(ctx, "%s must be a decimal number, not '%s'", key, value);
	}
	while (frac_digits++ < 6) {
		frac *= 10;
	}
	*out = (whole * 1000000 + frac) * (negative ? -1 : 1);
	return true;
}

static bool valid_address(const char *text)
{
	for (const char *p = text; *p != '\0'; p++) {
		if (!isxdigit((unsigned char)*p) && *p != '.' && *p != ':') {
			return false;
		}
	}
	return true;
}

bool posix_board_copy_address(struct posix_board_line *ctx, const char *key, const char *value,
			      char *dst)
{
	if (value != NULL && !valid_address(value)) {
		return posix_board_fail(ctx, "%s is not an IP address: '%s'", key, value);
	}
	return posix_board_copy_text(ctx, key, value, dst, AGENT_BOARD_ADDR_MAX + 1, false);
}
