/* tool_search: the discovery tool every request starts with (tool_search.c). */
#ifndef AGENT_TOOLS_BOOTSTRAP_H
#define AGENT_TOOLS_BOOTSTRAP_H

#include <stdbool.h>

#include "tool.h"

extern const struct tool_def tool_tool_search;

/** Whether @p text holds a path-like token ("mandel.py", "/config.lua"); NULL is false. */
bool tool_text_has_path(const char *text);

#endif /* AGENT_TOOLS_BOOTSTRAP_H */
