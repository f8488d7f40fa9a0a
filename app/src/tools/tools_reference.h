/* firmware_reference: the reference registry for the model (reference_tool.c). */
#ifndef AGENT_TOOLS_REFERENCE_H
#define AGENT_TOOLS_REFERENCE_H

#include <stddef.h>

#include "json_writer.h"
#include "reference.h"
#include "tool.h"

extern const struct tool_def tool_firmware_reference;

/** The coding guidance every firmware_reference result carries (packed_text_str() reads it). */
extern const struct packed_text *const reference_guidance;

/**
 * The executor's work, over any page table (tests use their own): the best
 * CONFIG_AGENT_REFERENCE_MATCHES_MAX pages for @p query as one JSON object in @p out,
 * within tool_result_room(); contracts that do not fit are cut, with "truncated": true.
 * No match is an empty list with a "hint". Always 0.
 */
int reference_tool_answer(const struct reference_index *index, const char *query, size_t len,
			  struct json_writer *out);

#endif /* AGENT_TOOLS_REFERENCE_H */
