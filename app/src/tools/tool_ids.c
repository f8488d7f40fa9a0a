/*
 * The tool id table (tool_ids.h, docs/tools.md "Tool ids"). Index + 1 is the id: append new
 * built-in tools at the end; a retired tool keeps its row (its name stays, so the id is
 * never given to another tool).
 */
#include "tool_ids.h"

#include <string.h>

static const char *const tool_names[] = {
	"system_status",      /* 1 */
	"firmware_reference", /* 2 */
	"tool_search",	      /* 3 */
	"storage_stat",	      /* 4 */
	"storage_list",	      /* 5 */
	"storage_read",	      /* 6 */
	"storage_write",      /* 7 */
	"storage_search",     /* 8 */
	"storage_read_range", /* 9 */
	"storage_patch",      /* 10 */
	"jobs_list",	      /* 11 */
	"hardware_describe",  /* 12 */
	"gpio_list",	      /* 13 */
	"gpio_read",	      /* 14 */
	"buses_list",	      /* 15 */
	"display_list",	      /* 16 */
	"network_status",     /* 17 */
	"sensors_read",	      /* 18 */
	"script_run_python",  /* 19 */
	"script_run_lua",     /* 20 */
	"script_run_file",    /* 21 */
	"skill_use",	      /* 22 */
	"memory_write",	      /* 23 */
	"memory_recall",      /* 24 */
};

#define TOOL_ID_COUNT (sizeof(tool_names) / sizeof(tool_names[0]))

uint16_t tool_id_of_name(const char *name)
{
	if (name == NULL) {
		return TOOL_ID_NONE;
	}
	for (size_t i = 0; i < TOOL_ID_COUNT; i++) {
		if (strcmp(tool_names[i], name) == 0) {
			return (uint16_t)(i + 1u);
		}
	}
	return TOOL_ID_NONE;
}

uint16_t tool_numeric_id(const struct tool_def *def)
{
	if (def == NULL || (def->groups & TOOL_GROUP_IMPORTED) != 0u) {
		return TOOL_ID_NONE;
	}
	return tool_id_of_name(def->name);
}

const char *tool_id_name(uint16_t id)
{
	return id >= 1u && id <= TOOL_ID_COUNT ? tool_names[id - 1u] : NULL;
}

uint16_t tool_id_count(void)
{
	return (uint16_t)TOOL_ID_COUNT;
}
