/*
 * The one declarative registry: every tool compiled into this image, in a fixed order
 * (tool_registry.c). Tool families declare their definitions in their own headers.
 */
#ifndef AGENT_TOOL_REGISTRY_H
#define AGENT_TOOL_REGISTRY_H

#include <stddef.h>

#include "tool.h"

size_t tool_registry_count(void);
/** The @p index-th definition, or NULL past the end. */
const struct tool_def *tool_registry_get(size_t index);
/** The definition named @p name, or NULL. */
const struct tool_def *tool_registry_find(const char *name);
/**
 * Add a tool at run time (script and imported tools): it follows the compiled-in ones.
 * @p def must outlive its registration. 0, -EEXIST for a name already registered, -ENOMEM
 * when all CONFIG_AGENT_TOOL_DYNAMIC_SLOTS slots are taken, -EINVAL for a definition
 * without a name or executor, or with params tool_args_parse() cannot hold (more than
 * TOOL_PARAMS_MAX, more than one array, objects with more than TOOL_ITEM_FIELDS_MAX fields
 * or with array fields).
 */
int tool_registry_add(const struct tool_def *def);
/** How many more tools tool_registry_add() can take now. */
size_t tool_registry_room(void);
/** Remove a tool added with tool_registry_add(); -ENOENT when it is not there. */
int tool_registry_remove(const struct tool_def *def);

/**
 * Why @p def cannot run now, or NULL when it is available: its capability missing
 * (tool_capability.h), else its own check (struct tool_def.unavailable). Derived anew at
 * every call: offering, tool_search, `agent tools` and the executor all ask.
 */
const char *tool_unavailable_reason(const struct tool_def *def);

/** Whether @p def is available now (tool_unavailable_reason() is NULL). */
bool tool_available(const struct tool_def *def);

#endif /* AGENT_TOOL_REGISTRY_H */
