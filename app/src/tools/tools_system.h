/* system_status: the bootstrap status tool (tools_system.c). */
#ifndef AGENT_TOOLS_SYSTEM_H
#define AGENT_TOOLS_SYSTEM_H

#include "tool.h"

extern const struct tool_def tool_system_status;

#endif /* AGENT_TOOLS_SYSTEM_H */
