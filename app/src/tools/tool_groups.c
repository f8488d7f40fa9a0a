/*
 * The ten selection groups of the modules spec ("Tool selection"), in the bit order of the
 * tools.mask setting (DESIGN.md section 1, docs/tools.md "Selection groups").
 */
#include <errno.h>
#include <string.h>

#include "tool.h"

static const char *const group_names[TOOL_GROUP_COUNT] = {
	"memory_recall", "memory_write", "fs_read", "fs_list",	"fs_write",
	"fs_update",	 "run",		 "skill_use", "fs_stat", "imported",
};

const char *tool_group_name(unsigned int bit)
{
	return bit < TOOL_GROUP_COUNT ? group_names[bit] : NULL;
}

int tool_group_parse(const char *name, size_t len)
{
	for (unsigned int i = 0; i < TOOL_GROUP_COUNT; i++) {
		if (strlen(group_names[i]) == len && memcmp(group_names[i], name, len) == 0) {
			return (int)i;
		}
	}
	return -ENOENT;
}

const char *tool_group_of(const struct tool_def *def)
{
	for (unsigned int i = 0; i < TOOL_GROUP_COUNT; i++) {
		if ((def->groups & (1u << i)) != 0u) {
			return group_names[i];
		}
	}
	return NULL;
}
