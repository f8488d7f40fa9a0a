/*
 * The registry table. Each family keeps its definitions in its own file and declares them
 * in its header; this table fixes which are compiled in (Kconfig) and their order, which is
 * the order of `agent tools` and of tool_search's ties.
 */
#include <errno.h>
#include <string.h>

#include "tool_capability.h"
#include "tool_registry.h"
#include "tools_bootstrap.h"
/* Family headers (one line each, gated like their entries below). */
#if defined(CONFIG_AGENT_TOOLS_STORAGE)
#include "tools_storage.h"
#endif
#include "tools_system.h"
#if defined(CONFIG_AGENT_TOOLS_JOBS)
#include "tools_jobs.h"
#endif
#if defined(CONFIG_AGENT_TOOLS_HARDWARE)
#include "tools_hardware.h"
#endif
#if defined(CONFIG_AGENT_TOOLS_REFERENCE)
#include "tools_reference.h"
#endif
#if defined(CONFIG_AGENT_TOOLS_MEMORY)
#include "tools_memory.h"
#endif

static const struct tool_def *const registry[] = {
	/* Bootstrap: offered at the start of every request. */
	&tool_system_status,
#if defined(CONFIG_AGENT_TOOLS_REFERENCE)
	&tool_firmware_reference,
#endif
	&tool_tool_search,
	/* Discoverable through tool_search. */
	/* storage_* (tools_storage.h, CONFIG_AGENT_TOOLS_STORAGE) */
#if defined(CONFIG_AGENT_TOOLS_STORAGE)
	&tool_storage_stat,
	&tool_storage_list,
	&tool_storage_read,
	&tool_storage_write,
	&tool_storage_search,
	&tool_storage_read_range,
	&tool_storage_patch,
#endif
#if defined(CONFIG_AGENT_TOOLS_MEMORY)
	&tool_memory_recall,
	&tool_memory_write,
#endif
#if defined(CONFIG_AGENT_TOOLS_JOBS)
	&tool_jobs_list,
#endif
#if defined(CONFIG_AGENT_TOOLS_HARDWARE)
	&tool_hardware_describe,
	&tool_gpio_list,
	&tool_gpio_read,
	&tool_buses_list,
	&tool_display_list,
	&tool_network_status,
	&tool_sensors_read,
#endif
};

#define STATIC_COUNT (sizeof(registry) / sizeof(registry[0]))

/* Tools added at run time; the table is only changed while no request runs. */
static const struct tool_def *dynamic[CONFIG_AGENT_TOOL_DYNAMIC_SLOTS];
static size_t dynamic_count;

size_t tool_registry_count(void)
{
	return STATIC_COUNT + dynamic_count;
}

const struct tool_def *tool_registry_get(size_t index)
{
	if (index < STATIC_COUNT) {
		return registry[index];
	}
	index -= STATIC_COUNT;
	return index < dynamic_count ? dynamic[index] : NULL;
}

/*
 * What tool_args_parse() can hold: at most one array argument, whose objects have at most
 * TOOL_ITEM_FIELDS_MAX scalar fields.
 */
static bool params_fit(const struct tool_def *def)
{
	unsigned int arrays = 0;

	if (def->param_count > TOOL_PARAMS_MAX || (def->param_count > 0 && def->params == NULL)) {
		return false;
	}
	for (size_t i = 0; i < def->param_count; i++) {
		const struct tool_param *p = &def->params[i];

		if (p->name == NULL) {
			return false;
		}
		if (p->type == TOOL_PARAM_STRINGS || p->type == TOOL_PARAM_OBJECTS) {
			arrays++;
		}
		if (p->type != TOOL_PARAM_OBJECTS) {
			continue;
		}
		if (p->field_count > TOOL_ITEM_FIELDS_MAX || p->fields == NULL) {
			return false;
		}
		for (size_t f = 0; f < p->field_count; f++) {
			if (p->fields[f].type == TOOL_PARAM_STRINGS ||
			    p->fields[f].type == TOOL_PARAM_OBJECTS) {
				return false;
			}
		}
	}
	return arrays <= 1;
}

int tool_registry_add(const struct tool_def *def)
{
	if (def == NULL || def->name == NULL || def->exec == NULL || !params_fit(def)) {
		return -EINVAL;
	}
	if (tool_registry_find(def->name) != NULL) {
		return -EEXIST;
	}
	if (dynamic_count == CONFIG_AGENT_TOOL_DYNAMIC_SLOTS) {
		return -ENOMEM;
	}
	dynamic[dynamic_count++] = def;
	return 0;
}

size_t tool_registry_room(void)
{
	return CONFIG_AGENT_TOOL_DYNAMIC_SLOTS - dynamic_count;
}

int tool_registry_remove(const struct tool_def *def)
{
	for (size_t i = 0; i < dynamic_count; i++) {
		if (dynamic[i] == def) {
			memmove(&dynamic[i], &dynamic[i + 1],
				(dynamic_count - i - 1) * sizeof(dynamic[0]));
			dynamic_count--;
			return 0;
		}
	}
	return -ENOENT;
}

const struct tool_def *tool_registry_find(const char *name)
{
	for (size_t i = 0; i < tool_registry_count(); i++) {
		const struct tool_def *def = tool_registry_get(i);

		if (strcmp(def->name, name) == 0) {
			return def;
		}
	}
	return NULL;
}

const char *tool_unavailable_reason(const struct tool_def *def)
{
	const char *why = tool_capability_missing(tool_capability_of(def));

	if (why == NULL && def->unavailable != NULL) {
		why = def->unavailable();
	}
	return why;
}

bool tool_available(const struct tool_def *def)
{
	return tool_unavailable_reason(def) == NULL;
}
