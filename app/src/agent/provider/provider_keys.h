/*
 * A quick test of the key of the value being read, before the adapters match its whole
 * path: most members of an event (ids, models, tool lists, output echoed back) end in a key
 * no path of the adapter ends in, and are passed over with a few byte compares instead of a
 * chain of json_stream_path_is() calls. Each adapter lists the last keys of its paths with the
 * depths of those paths ("a.b.c" ends in "c" at depth 3); a new path's last key and depth must
 * be added to the list, or the path never matches.
 */
#ifndef AGENT_PROVIDER_KEYS_H
#define AGENT_PROVIDER_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "json_stream.h"

struct provider_key {
	uint8_t len;
	uint16_t depths; /* bit d: the key ends a path of depth d (json_stream_depth()) */
	char name[21];
};

/* A last key @p s at the depths given as a mask of PROVIDER_AT() bits. */
#define PROVIDER_KEY(s, depths) {sizeof(s) - 1, (depths), s}
#define PROVIDER_AT(d)		(1u << (d))
#define ARRAY_SIZE_OF(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Which of @p keys the value being read is a member of (its key whole, at one of that key's
 * depths): its index in @p keys, or -1 (an array element, a cut key, or another key).
 */
static inline int provider_key_find(const struct json_stream *js,
				    const struct provider_key *keys, size_t n)
{
	int depth = json_stream_depth(js);
	size_t len;
	bool truncated;
	const char *key = depth < 16 ? json_stream_key_n(js, depth, &len, &truncated) : NULL;

	if (key == NULL || truncated || len == 0) {
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (keys[i].len == len && (keys[i].depths & PROVIDER_AT(depth)) != 0 &&
		    keys[i].name[0] == key[0] && memcmp(keys[i].name, key, len) == 0) {
			return (int)i;
		}
	}
	return -1;
}

static inline bool provider_key_among(const struct json_stream *js,
				      const struct provider_key *keys, size_t n)
{
	return provider_key_find(js, keys, n) >= 0;
}

#endif /* AGENT_PROVIDER_KEYS_H */
