/*
 * The storage tools (CONFIG_AGENT_TOOLS_STORAGE): listing, status, reading, writing,
 * content search, ranged reads with the file's SHA-256 and byte-offset patches, over the
 * port's filesystem. docs/tools-storage.md describes each one.
 */
#ifndef AGENT_TOOLS_STORAGE_H
#define AGENT_TOOLS_STORAGE_H

#include "tool.h"

extern const struct tool_def tool_storage_list, tool_storage_stat, tool_storage_read,
	tool_storage_write, tool_storage_search, tool_storage_read_range, tool_storage_patch;

#endif /* AGENT_TOOLS_STORAGE_H */
