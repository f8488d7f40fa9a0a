/*
 * The memory tools (CONFIG_AGENT_TOOLS_MEMORY): memory_write and memory_recall over the
 * embedding pass (memory_embed.h) and the note store (memory_store.h). docs/memory.md.
 */
#ifndef AGENT_TOOLS_MEMORY_H
#define AGENT_TOOLS_MEMORY_H

#include "tool.h"

extern const struct tool_def tool_memory_write, tool_memory_recall;

#endif /* AGENT_TOOLS_MEMORY_H */
