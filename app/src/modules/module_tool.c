/*
 * Imported device tools (module_tool.h, docs/modules.md "Device tools"): a static tool
 * definition per catalog entry, registered while the entry is an installed tool module,
 * and its executor: digest check, then the script runner (lua, python) or the feeder
 * (host).
 */
#include "module_tool.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_catalog.h"
#include "module_host.h"
#include "module_import.h"
#include "module_internal.h"
#include "script_runner.h"
#include "script_tools.h"
#include "sha256.h"
#include "tool_registry.h"

#if CONFIG_AGENT_MODULE_SLOTS > 64
#error "module_tool.c has executors for 64 catalog entries"
#endif
#if (defined(CONFIG_AGENT_SCRIPT_LUA) || defined(CONFIG_AGENT_SCRIPT_PYTHON)) &&                \
	CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX < MODULE_TOOL_ARGS_MAX
#error "CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX must hold a tool module's declared arguments"
#endif

#define RESULT_SHAPE                                                                   \
	TOOL_TEXT(module_tool_result_shape,                                                     \
		  "{language, outcome: completed|exception|cancelled|deadline|out_of_memory|"  \
		  "busy|unavailable|load_failed, type, line, message, truncated, "           \
		  "output_bytes, output, elapsed_ms}")

/* File scope: with AGENT_PLAIN_TOOL_TEXTS a TOOL_TEXT is a compound literal, which inside a
 * function would end with the call while the registry keeps its address. */
static const struct packed_text *const script_shape = RESULT_SHAPE;
static const struct packed_text *const host_shape = TOOL_TEXT(module_tool_output_1,
	"the host program's result (docs/modules.md \"Host tools\")");
static const struct packed_text *const imported_keywords =
	TOOL_TEXT(module_tool_keywords_1, "imported device tool module");

struct module_tool {
	struct tool_def def;
	struct tool_param params[MODULE_TOOL_ARGS_MAX];
	char arg_names[MODULE_TOOL_ARGS_MAX][MODULE_ARG_NAME_MAX + 1];
	char name[MODULE_NAME_MAX + 1];
	char description[MODULE_DESCRIPTION_MAX + 1];
	struct packed_text description_text; /* the description, plain */
	char entry[MODULE_FILE_MAX + 1];
	uint8_t digest[MODULE_DIGEST_LEN]; /* the entry's SHA-256, recorded at import */
	enum module_runtime runtime;
	uint32_t output_max;
	bool registered;
};

static struct module_tool tools[CONFIG_AGENT_MODULE_SLOTS] AGENT_PSRAM_ATTR;
/* One request runs at a time, so one call at a time: its output and argv live here. */
static char output[CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1] AGENT_PSRAM_ATTR;

static const char *lua_unavailable(void)
{
	return script_lang_available(SCRIPT_LANG_LUA) ? NULL
						       : "the lua runtime is not built into this firmware";
}

static const char *python_unavailable(void)
{
	return script_lang_available(SCRIPT_LANG_PYTHON)
		       ? NULL
		       : "the python runtime is not built into this firmware";
}

/* The installed entry of tool @p t, its entry text checked against the recorded digest
 * (under the module lock). 0, or a negative errno with ctx->error set. */
static int checked_entry(struct tool_ctx *ctx, const struct module_tool *t, const char **text,
			 size_t *len)
{
	int index;
	int err;

	module_lock();
	index = module_catalog_find(t->name, MODULE_INSTALLED);
	if (index < 0 || module_catalog_entry(index)->kind != MODULE_KIND_TOOL) {
		module_unlock();
		return tool_fail(ctx, -ENOENT, "tool %s is no longer installed", t->name);
	}
	*text = module_catalog_text(index) + module_catalog_entry(index)->manifest_len;
	*len = module_catalog_entry(index)->body_len;
	err = module_tool_digest_check(t->name, *text, *len, t->digest, ctx->error,
				       sizeof(ctx->error));
	module_unlock();
	return err;
}

static int run_slot(unsigned int slot, struct tool_ctx *ctx, const struct tool_args *args,
		    struct json_writer *out)
{
	const struct module_tool *t = &tools[slot];
	char text[MODULE_TOOL_ARGS_MAX][MODULE_TOOL_ARG_TEXT];
	const char *argv[MODULE_TOOL_ARGS_MAX];
	const char *entry = NULL;
	size_t entry_len = 0;
	int err;

	if (!t->registered) {
		return tool_fail(ctx, -ENOENT, "no imported tool in slot %u", slot);
	}
	err = module_tool_argv(t->params, t->def.param_count, args, text, argv, ctx->error,
			       sizeof(ctx->error));
	if (err != 0) {
		return err;
	}
	/* The digest is checked before every load: the text the runner gets is the text
	 * checked, and it cannot change during the request (module_tool_admit()). */
	err = checked_entry(ctx, t, &entry, &entry_len);
	if (err != 0) {
		return err;
	}
	if (t->runtime == MODULE_RUNTIME_HOST) {
		struct module_host_call call = {
			.tool = t->name,
			.entry = t->entry,
			.digest = t->digest,
			.argv = argv,
			.argc = t->def.param_count,
			.output_max = t->output_max,
		};

		return module_host_run(ctx, &call, out);
	}
	{
		struct script_request req = {
			.lang = t->runtime == MODULE_RUNTIME_LUA ? SCRIPT_LANG_LUA
								 : SCRIPT_LANG_PYTHON,
			.source = entry,
			.source_len = entry_len,
			.argv = argv,
			.argc = t->def.param_count,
			.argv0 = t->name,
		};

		/* The manifest's bound, within the buffer whatever the Kconfig values. */
		size_t cap = (size_t)t->output_max + 1u < sizeof(output)
				     ? (size_t)t->output_max + 1u
				     : sizeof(output);

		return script_tool_report(ctx, &req, output, cap, out);
	}
}

/* One executor per catalog entry: a tool_exec_fn does not say which tool it runs. */
#define EXEC1(n)                                                                              \
	static int exec_##n(struct tool_ctx *ctx, const struct tool_args *args,               \
			    struct json_writer *out)                                          \
	{                                                                                     \
		return run_slot(n, ctx, args, out);                                           \
	}
#define EXEC8(a, b, c, d, e, f, g, h)                                                         \
	EXEC1(a) EXEC1(b) EXEC1(c) EXEC1(d) EXEC1(e) EXEC1(f) EXEC1(g) EXEC1(h)
EXEC8(0, 1, 2, 3, 4, 5, 6, 7)
EXEC8(8, 9, 10, 11, 12, 13, 14, 15)
EXEC8(16, 17, 18, 19, 20, 21, 22, 23)
EXEC8(24, 25, 26, 27, 28, 29, 30, 31)
EXEC8(32, 33, 34, 35, 36, 37, 38, 39)
EXEC8(40, 41, 42, 43, 44, 45, 46, 47)
EXEC8(48, 49, 50, 51, 52, 53, 54, 55)
EXEC8(56, 57, 58, 59, 60, 61, 62, 63)

#define EXEC_REF8(a, b, c, d, e, f, g, h)                                                     \
	exec_##a, exec_##b, exec_##c, exec_##d, exec_##e, exec_##f, exec_##g, exec_##h
static const tool_exec_fn executors[64] = {
	EXEC_REF8(0, 1, 2, 3, 4, 5, 6, 7),	   EXEC_REF8(8, 9, 10, 11, 12, 13, 14, 15),
	EXEC_REF8(16, 17, 18, 19, 20, 21, 22, 23), EXEC_REF8(24, 25, 26, 27, 28, 29, 30, 31),
	EXEC_REF8(32, 33, 34, 35, 36, 37, 38, 39), EXEC_REF8(40, 41, 42, 43, 44, 45, 46, 47),
	EXEC_REF8(48, 49, 50, 51, 52, 53, 54, 55), EXEC_REF8(56, 57, 58, 59, 60, 61, 62, 63),
};

/* ---- Registration ------------------------------------------------------------------------ */

static int registered_slot(const char *name)
{
	for (int i = 0; i < CONFIG_AGENT_MODULE_SLOTS; i++) {
		if (tools[i].registered && strcmp(tools[i].name, name) == 0) {
			return i;
		}
	}
	return -ENOENT;
}

int module_tool_admit(int arrival, int installed, char *why, size_t why_len)
{
	const struct module_entry *e = module_catalog_entry(arrival);
	bool was_tool = installed >= 0 && module_catalog_entry(installed)->kind == MODULE_KIND_TOOL;
	const struct tool_def *other;

	if (e->kind == MODULE_KIND_TOOL && module_tool_data_only()) {
		return module_refuse(why, why_len, -EPERM,
				     "tool modules are refused by this build (data-only modules)");
	}
	if (e->kind != MODULE_KIND_TOOL && !was_tool) {
		return 0;
	}
	if (module_tool_active(e->name)) {
		return module_refuse(why, why_len, -EBUSY,
				     "tool %s: tool modules change only while no request runs; "
				     "import it again when the request ends",
				     e->name);
	}
	if (e->kind != MODULE_KIND_TOOL) {
		return 0;
	}
	other = tool_registry_find(e->name);
	if (other != NULL && registered_slot(e->name) < 0) {
		return module_refuse(why, why_len, -EINVAL,
				     "name: %s is a built-in tool; a tool module needs its own name",
				     e->name);
	}
	if (other == NULL && tool_registry_room() == 0u) {
		return module_refuse(why, why_len, -ENOSPC,
				     "tools: all %d run-time tool slots are taken "
				     "(CONFIG_AGENT_TOOL_DYNAMIC_SLOTS)",
				     CONFIG_AGENT_TOOL_DYNAMIC_SLOTS);
	}
	return 0;
}

/* Fill slot @p index from its installed entry and register it. */
static int register_entry(int index, char *why, size_t why_len)
{
	const struct module_entry *e = module_catalog_entry(index);
	const char *text = module_catalog_text(index);
	struct module_tool *t = &tools[index];
	struct module_manifest m;
	uint8_t whole[MODULE_DIGEST_LEN];
	size_t len;
	int err;

	/* The text is the one the import recorded (its digest covers manifest and body). */
	sha256_digest(text, (size_t)e->manifest_len + e->body_len, whole);
	if (memcmp(whole, e->digest, sizeof(whole)) != 0) {
		return module_refuse(why, why_len, -EACCES,
				     "tool %s: the text is not the one recorded at import", e->name);
	}
	err = module_manifest_parse(text, e->manifest_len, &m, why, why_len);
	if (err != 0) {
		return err;
	}
	memset(t, 0, sizeof(*t));
	(void)snprintf(t->name, sizeof(t->name), "%s", e->name);
	len = m.description.len < MODULE_DESCRIPTION_MAX ? m.description.len
							 : MODULE_DESCRIPTION_MAX;
	memcpy(t->description, m.description.ptr, len);
	t->description_text = (struct packed_text){.data = t->description, .len = (uint16_t)len};
	len = m.entry.len < MODULE_FILE_MAX ? m.entry.len : MODULE_FILE_MAX;
	memcpy(t->entry, m.entry.ptr, len);
	sha256_digest(text + e->manifest_len, e->body_len, t->digest);
	t->runtime = m.runtime;
	t->output_max = m.output_max != 0u ? m.output_max : CONFIG_AGENT_SCRIPT_TOOL_OUTPUT_MAX_LEN;
	t->def.name = t->name;
	t->def.description = &t->description_text;
	t->def.domain = TOOL_DOMAIN_SCRIPT;
	t->def.risk = m.risk;
	t->def.params = t->params;
	t->def.param_count = module_tool_params(&m, t->params, t->arg_names);
	t->def.exec = executors[index];
	t->def.groups = TOOL_GROUP_IMPORTED;
	t->def.keywords = imported_keywords;
	switch (m.runtime) {
	case MODULE_RUNTIME_LUA:
		t->def.capability = TOOL_CAP_SCRIPT_RUNTIME;
		t->def.unavailable = lua_unavailable;
		t->def.output = script_shape;
		break;
	case MODULE_RUNTIME_PYTHON:
		t->def.capability = TOOL_CAP_SCRIPT_RUNTIME;
		t->def.unavailable = python_unavailable;
		t->def.output = script_shape;
		break;
	default:
		t->def.output = host_shape;
		break;
	}
	err = tool_registry_add(&t->def);
	if (err != 0) {
		return module_refuse(why, why_len, err, "tool %s: cannot be registered (error %d)",
				     e->name, err);
	}
	t->registered = true;
	return 0;
}

void module_tool_reset(void)
{
	for (int i = 0; i < CONFIG_AGENT_MODULE_SLOTS; i++) {
		if (tools[i].registered) {
			(void)tool_registry_remove(&tools[i].def);
			tools[i].registered = false;
		}
	}
}

int module_tool_sync(const char *name, char *why, size_t why_len)
{
	int slot = registered_slot(name);
	int index;

	if (slot >= 0) {
		(void)tool_registry_remove(&tools[slot].def);
		tools[slot].registered = false;
	}
	index = module_catalog_find(name, MODULE_INSTALLED);
	if (index < 0 || module_catalog_entry(index)->kind != MODULE_KIND_TOOL) {
		return 0;
	}
	return register_entry(index, why, why_len);
}
