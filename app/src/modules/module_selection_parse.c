/*
 * The stored texts of the tool selection (module_selection.h): tools.mask and the
 * tools.agent.N records as decimal text. No settings, no lock: also the fuzz target's unit.
 */
#include <errno.h>

#include "module_selection.h"
#include "tool.h"

enum selection_choice module_selection_choice(uint32_t record, unsigned int bit)
{
	return (enum selection_choice)((record >> (2u * bit)) & 3u);
}

const char *module_selection_choice_name(enum selection_choice choice)
{
	static const char *const names[] = {"inherit", "off", "on", "invalid"};

	return names[(unsigned int)choice & 3u];
}

int module_selection_parse(const char *text, size_t len, bool mask, uint32_t *out)
{
	uint32_t max = mask ? TOOL_GROUPS_ALL : SELECTION_RECORD_MAX;
	uint32_t v = 0;

	if (len == 0u || len > 7u || (len > 1u && text[0] == '0')) {
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9') {
			return -EINVAL;
		}
		v = v * 10u + (uint32_t)(text[i] - '0');
	}
	if (v > max) {
		return -EINVAL;
	}
	for (unsigned int bit = 0; !mask && bit < TOOL_GROUP_COUNT; bit++) {
		if (module_selection_choice(v, bit) == SELECTION_INVALID) {
			return -EINVAL;
		}
	}
	*out = v;
	return 0;
}
