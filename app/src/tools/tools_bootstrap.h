/* tool_search: the discovery tool every request starts with (tool_search.c). */
#ifndef AGENT_TOOLS_BOOTSTRAP_H
#define AGENT_TOOLS_BOOTSTRAP_H

#include "tool.h"

extern const struct tool_def tool_tool_search;

#endif /* AGENT_TOOLS_BOOTSTRAP_H */
