/*
 * Bounded lists in a tool result: each element is written into a scratch writer first and
 * copied into the result only when it fits the room tool_result_room() leaves, so a list
 * stops at a whole element and the caller can still close it with "truncated": true.
 */
#ifndef AGENT_TOOLS_LISTING_H
#define AGENT_TOOLS_LISTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_writer.h"
#include "tool.h"

/* Largest list element the hardware and jobs tools write. */
#define TOOLS_ITEM_MAX 512

/*
 * Append the finished element @p item (a writer over the caller's scratch buffer) to @p out
 * when it fits with @p keep_back bytes to spare for members written after the list. False
 * when it does not fit or the element itself overflowed its scratch buffer.
 */
bool tools_item_append(struct json_writer *out, struct json_writer *item, size_t keep_back);

/*
 * Close a list result: the list's `]`, then `"COUNT_KEY": count` when @p count_key is not
 * NULL, `"truncated": ...` and the result's `}`. Returns 0, the executor's status.
 */
int tools_list_end(struct json_writer *out, const char *count_key, int64_t count,
		   bool truncated);

/* A string member, or null when @p text is empty (the port's "unknown" or "none"). */
static inline void tools_key_string_or_null(struct json_writer *w, const char *key,
					    const char *text)
{
	jw_key(w, key);
	if (text == NULL || text[0] == '\0') {
		jw_null(w);
	} else {
		jw_string(w, text);
	}
}

#endif /* AGENT_TOOLS_LISTING_H */
