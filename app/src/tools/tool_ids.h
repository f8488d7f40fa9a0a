/*
 * Stable numeric ids of the built-in tools (docs/tools.md "Tool ids"): what a conversation's
 * turn records store beside each tool call's name. The table does not depend on Kconfig or
 * on the registry's order; an id is never reused for another tool.
 */
#ifndef AGENT_TOOL_IDS_H
#define AGENT_TOOL_IDS_H

#include <stdint.h>

#include "tool.h"

#define TOOL_ID_NONE 0u /* imported tool modules, and anything else not built in */

/** The id of @p def: 1..tool_id_count() for a built-in tool, TOOL_ID_NONE otherwise (an
 *  imported tool, group TOOL_GROUP_IMPORTED, even when it took a built-in's name). */
uint16_t tool_numeric_id(const struct tool_def *def);

/** The built-in tool named @p name's id, or TOOL_ID_NONE. */
uint16_t tool_id_of_name(const char *name);

/** The name of built-in tool @p id, or NULL for 0 and unassigned ids. */
const char *tool_id_name(uint16_t id);

/** The highest assigned id. */
uint16_t tool_id_count(void);

#endif /* AGENT_TOOL_IDS_H */
