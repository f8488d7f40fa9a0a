/*
 * The registry table. Each family keeps its definitions in its own file and declares them
 * in its header; this table fixes which are compiled in (Kconfig) and their order, which is
 * the order of `agent tools` and of tool_search's ties.
 */
#include <string.h>

#include "tool_registry.h"
#include "tools_bootstrap.h"
/* Family headers (one line each, gated like their entries below). */

static const struct tool_def *const registry[] = {
	/* Bootstrap: offered at the start of every request. */
	/* system_status (tools_system.h) */
	/* firmware_reference (tools_reference.h, CONFIG_AGENT_TOOLS_REFERENCE) */
	&tool_tool_search,
	/* Discoverable through tool_search. */
	/* storage_* (tools_storage.h, CONFIG_AGENT_TOOLS_STORAGE) */
	/* jobs_list (tools_jobs.h, CONFIG_AGENT_TOOLS_JOBS) */
	/* hardware_describe ... sensors_read (tools_hardware.h, CONFIG_AGENT_TOOLS_HARDWARE) */
};

size_t tool_registry_count(void)
{
	return sizeof(registry) / sizeof(registry[0]);
}

const struct tool_def *tool_registry_get(size_t index)
{
	return index < tool_registry_count() ? registry[index] : NULL;
}

const struct tool_def *tool_registry_find(const char *name)
{
	for (size_t i = 0; i < tool_registry_count(); i++) {
		if (strcmp(registry[i]->name, name) == 0) {
			return registry[i];
		}
	}
	return NULL;
}

bool tool_available(const struct tool_def *def)
{
	return def->available == NULL || def->available();
}
