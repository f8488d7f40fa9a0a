/*
 * libFuzzer target for the tool selection's stored texts (app/src/modules/
 * module_selection_parse.c; docs/tools.md "Tool selection"): tools.mask and the
 * tools.agent.N records come from the settings file, which provisioning (or anyone with the
 * card) writes. The first input byte chooses mask or record, the rest is the text. An
 * accepted text must be the canonical decimal of its value, within the bound, and a record
 * must have no group at 3; a refused one leaves the output alone.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module_selection.h"
#include "tool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char canonical[16];
	uint32_t v = 0xDEADBEEFu;
	bool mask;
	int err;

	if (size == 0) {
		return 0;
	}
	mask = (data[0] & 1u) != 0u;
	err = module_selection_parse((const char *)data + 1, size - 1u, mask, &v);
	if (err != 0) {
		if (err != -EINVAL || v != 0xDEADBEEFu) {
			abort();
		}
		return 0;
	}
	if (v > (mask ? TOOL_GROUPS_ALL : SELECTION_RECORD_MAX)) {
		abort();
	}
	for (unsigned int bit = 0; !mask && bit < TOOL_GROUP_COUNT; bit++) {
		if (module_selection_choice(v, bit) == SELECTION_INVALID) {
			abort();
		}
	}
	snprintf(canonical, sizeof(canonical), "%u", (unsigned int)v);
	if (strlen(canonical) != size - 1u || memcmp(canonical, data + 1, size - 1u) != 0) {
		abort();
	}
	return 0;
}
