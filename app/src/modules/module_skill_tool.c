/*
 * skill_use (docs/modules.md "Skills"): the exact installed body of a skill, or an error
 * when it is absent. Selection group skill_use; reads only.
 */
#include <errno.h>
#include <string.h>

#include "module_agents.h"
#include "module_catalog.h"
#include "module_import.h"
#include "module_tools.h"
#include "tool.h"
#include "tool_registry.h"

/* Bytes @p text takes as a JSON string's contents (json_writer.c's escapes). */
static size_t escaped_len(const char *text, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' ||
		    c == '\f') {
			n += 2u;
		} else if (c < 0x20u) {
			n += 6u;
		} else if (c == 0xe2u && i + 2u < len && (unsigned char)text[i + 1u] == 0x80u &&
			   ((unsigned char)text[i + 2u] == 0xa8u ||
			    (unsigned char)text[i + 2u] == 0xa9u)) {
			n += 6u; /* U+2028, U+2029 */
			i += 2u;
		} else {
			n++;
		}
	}
	return n;
}

static int skill_use_exec(struct tool_ctx *ctx, const struct tool_args *args,
			  struct json_writer *out)
{
	const char *name = args->v[0].str;
	const char *body;
	size_t len = 0;
	size_t need;

	module_lock();
	body = module_skill_body(name, &len);
	if (body == NULL) {
		module_unlock();
		return tool_fail(ctx, -ENOENT, "skill \"%.40s\" is not installed", name);
	}
	need = escaped_len(body, len) + args->v[0].len + 32u;
	if (need > tool_result_room(out)) {
		module_unlock();
		return tool_fail(ctx, -E2BIG,
				 "skill %.40s: its body takes %u bytes as JSON, more than a tool "
				 "result holds",
				 name, (unsigned int)need);
	}
	jw_object_begin(out);
	jw_key(out, "name");
	jw_string(out, name);
	jw_key(out, "body");
	jw_string_n(out, body, len);
	jw_object_end(out);
	module_unlock();
	return 0;
}

/* Offered only while a skill is installed: there is nothing to return before. */
static const char *skill_use_unavailable(void)
{
	bool any = false;

	module_lock();
	for (int i = 0; i < CONFIG_AGENT_MODULE_SLOTS && !any; i++) {
		const struct module_entry *e = module_catalog_entry(i);

		any = e->state == MODULE_INSTALLED && e->kind == MODULE_KIND_SKILL;
	}
	module_unlock();
	return any ? NULL : "no skill is installed";
}

static const struct tool_param skill_use_params[] = {
	{.name = "name",
	 .type = TOOL_PARAM_STRING,
	 .required = true,
	 .description = TOOL_TEXT(module_skill_tool_description_1,
	 	"the skill's name, as agent skills lists it"),
	 .min = 1,
	 .max = MODULE_NAME_MAX},
};

static const struct tool_def skill_use_def = {
	.name = "skill_use",
	.description = TOOL_TEXT(module_skill_tool_description_2,
		"Return the exact text of an installed skill: rules or instructions for a kind "
		"of task. An error when no skill has that name."),
	.domain = TOOL_DOMAIN_REFERENCE,
	.risk = TOOL_RISK_READ,
	.params = skill_use_params,
	.param_count = 1,
	.output = TOOL_TEXT(module_skill_tool_output_1, "{\"name\": string, \"body\": string}"),
	.unavailable = skill_use_unavailable,
	.exec = skill_use_exec,
	.groups = TOOL_GROUP_SKILL_USE,
	.keywords = TOOL_TEXT(module_skill_tool_keywords_1,
		"skill skills rules instructions procedure how guide"),
};

int module_tools_register(void)
{
	int err = tool_registry_add(&skill_use_def);

	return err == -EEXIST ? 0 : err;
}
