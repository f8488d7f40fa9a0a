/* system_status: the bootstrap status tool (tools_system.c). */
#ifndef AGENT_TOOLS_SYSTEM_H
#define AGENT_TOOLS_SYSTEM_H

#include "agent_mem.h"
#include "tool.h"

extern const struct tool_def tool_system_status;

/**
 * One memory class of agent_mem.h as JSON: {free_bytes, largest_free_block_bytes, heap
 * ({total_bytes, free_bytes, largest_free_block_bytes, allocated_bytes, max_allocated_bytes}
 * or null), pool_free_bytes, pools}. system_status and jobs_list write the same.
 */
void tools_write_memory_class(struct json_writer *out, const struct agent_mem_figures *m);

#endif /* AGENT_TOOLS_SYSTEM_H */
