/* The supplied modules built into the firmware (scripts/gen_module_assets.py). */
#ifndef AGENT_MODULE_ASSETS_H
#define AGENT_MODULE_ASSETS_H

#include <stddef.h>

struct agent_module_asset {
	const char *manifest; /* module.manifest, or "" for a skill as SKILL.md alone */
	size_t manifest_len;
	const char *body;
	size_t body_len;
};

extern const struct agent_module_asset agent_module_assets[];
extern const size_t agent_module_asset_count;

#endif /* AGENT_MODULE_ASSETS_H */
