/*
 * The script tools of the spec: script_run_python and script_run_lua run a generated source
 * string (at most CONFIG_AGENT_SCRIPT_SOURCE_MAX_LEN bytes), script_run_file a saved Python
 * or Lua file with up to CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX arguments, all through the script
 * runner with its output captured up to CONFIG_AGENT_SCRIPT_TOOL_OUTPUT_MAX_LEN bytes. They
 * run code, so they are "disruptive" (confirmed under the confirm policy); they are
 * registered only when their runtime is built in; script_run_file is a workflow dependency
 * (activated on demand, docs/tools.md). The result is the runner's structured status.
 */
#include <errno.h>
#include <string.h>

#include "script_internal.h"
#include "script_runner.h"
#include "script_tools.h"
#include "storage_params.h"
#include "storage_path.h"
#include "tool.h"
#include "tool_registry.h"

#define TOOL_OUTPUT_MAX CONFIG_AGENT_SCRIPT_TOOL_OUTPUT_MAX_LEN

int script_tool_report(struct tool_ctx *ctx, struct script_request *req, char *output,
		       size_t output_cap, struct json_writer *out)
{
	struct script_status status;

	req->out = output;
	req->out_cap = output_cap;
	req->deadline_ms = script_deadline_ms();
	req->cancel = ctx->cancel;
	req->owner = "tool";
	(void)script_run(req, &status);
	jw_object_begin(out);
	jw_key(out, "language");
	jw_string(out, script_lang_name(req->lang));
	script_status_json(&status, output, out);
	jw_key(out, "elapsed_ms");
	jw_int(out, status.elapsed_ms);
	jw_object_end(out);
	return 0;
}

static int run_and_report(struct tool_ctx *ctx, struct script_request *req,
			  struct json_writer *out)
{
	char output[TOOL_OUTPUT_MAX + 1];

	return script_tool_report(ctx, req, output, sizeof(output), out);
}

static int run_source(struct tool_ctx *ctx, const struct tool_args *args,
		      struct json_writer *out, enum script_lang lang)
{
	struct script_request req = {
		.lang = lang,
		.source = args->v[0].str,
		.source_len = args->v[0].len,
	};

	if (memchr(req.source, '\0', req.source_len) != NULL) {
		return tool_fail(ctx, -EINVAL, "source contains a NUL byte");
	}
	return run_and_report(ctx, &req, out);
}

static int python_exec(struct tool_ctx *ctx, const struct tool_args *args,
		       struct json_writer *out)
{
	return run_source(ctx, args, out, SCRIPT_LANG_PYTHON);
}

static int lua_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	return run_source(ctx, args, out, SCRIPT_LANG_LUA);
}

/* The language of a file, by its extension: .py or .lua. */
static int lang_of_path(const char *path, enum script_lang *lang)
{
	size_t len = strlen(path);

	if (len > 3u && strcmp(path + len - 3u, ".py") == 0) {
		*lang = SCRIPT_LANG_PYTHON;
		return 0;
	}
	if (len > 4u && strcmp(path + len - 4u, ".lua") == 0) {
		*lang = SCRIPT_LANG_LUA;
		return 0;
	}
	return -EINVAL;
}

static int file_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	char path[STORAGE_PATH_MAX + 1];
	const char *argv[CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX];
	struct script_request req = {0};
	int err = storage_path_resolve(ctx, args->v[0].str, args->v[0].len, path);

	if (err != 0) {
		return err;
	}
	if (lang_of_path(path, &req.lang) != 0) {
		return tool_fail(ctx, -EINVAL, "%s: a script file ends in .py or .lua", path);
	}
	if (!script_lang_available(req.lang)) {
		return tool_fail(ctx, -ENOTSUP, "%s is not built into this firmware",
				 script_lang_name(req.lang));
	}
	if (args->v[1].present) {
		for (uint8_t i = 0; i < args->v[1].count; i++) {
			if (memchr(args->item[i][0].str, '\0', args->item[i][0].len) != NULL) {
				return tool_fail(ctx, -EINVAL, "args[%u] contains a NUL byte", i);
			}
			argv[i] = args->item[i][0].str;
		}
		req.argc = args->v[1].count;
	}
	req.path = path;
	req.argv = argv;
	return run_and_report(ctx, &req, out);
}

static const char *python_unavailable(void)
{
	return script_lang_available(SCRIPT_LANG_PYTHON) ? NULL : "python is not built in";
}

static const char *lua_unavailable(void)
{
	return script_lang_available(SCRIPT_LANG_LUA) ? NULL : "lua is not built in";
}

#define SOURCE_PARAM(desc)                                                                   \
	{                                                                                    \
		.name = "source", .type = TOOL_PARAM_STRING, .required = true,               \
		.description = desc, .min = 1, .max = CONFIG_AGENT_SCRIPT_SOURCE_MAX_LEN,    \
	}

static const struct tool_param python_params[] = {
	SOURCE_PARAM(TOOL_TEXT(script_tools_param_1,
		"MicroPython source, at most {{CONFIG_AGENT_SCRIPT_SOURCE_MAX_LEN}} bytes; "
		"print() what you need back. `import device` reaches files and the board.")),
};

static const struct tool_param lua_params[] = {
	SOURCE_PARAM(TOOL_TEXT(script_tools_param_2,
		"Lua 5.4 source, at most {{CONFIG_AGENT_SCRIPT_SOURCE_MAX_LEN}} bytes; print() "
		"what you need back. The global `device` reaches files and the board.")),
};

static const struct tool_param file_params[] = {
	STORAGE_PATH_PARAM(TOOL_TEXT(script_tools_param_3,
		"The script file, ending in .py or .lua: absolute (\"/lfs/blink.py\") or "
		"relative to the shell's current directory.")),
	{
		.name = "args",
		.type = TOOL_PARAM_STRINGS,
		.description = TOOL_TEXT(script_tools_description_1,
			"Arguments: sys.argv[1:] in Python, arg[1..] and ... in Lua."),
		.min = 0,
		.max = CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX,
		.item_max_len = SCRIPT_ARG_MAX_LEN,
	},
};

#define RESULT_SHAPE                                                                   \
	TOOL_TEXT(script_tools_result_shape,                                                     \
		  "{language, outcome: completed|exception|cancelled|deadline|out_of_memory|"  \
		  "busy|unavailable|load_failed, type, line, message, truncated, "           \
		  "output_bytes, output, elapsed_ms}")

static const struct tool_def script_tools[] = {
	{
		.name = "script_run_python",
		.description = TOOL_TEXT(script_tools_description_2,
			"Run a MicroPython source string on the device and return its printed "
			"output (at most {{CONFIG_AGENT_SCRIPT_TOOL_OUTPUT_MAX_LEN}} bytes) and "
			"status. Runs code: the person confirms it."),
		.domain = TOOL_DOMAIN_SCRIPT,
		.risk = TOOL_RISK_DISRUPTIVE,
		.params = python_params,
		.param_count = 1,
		.output = RESULT_SHAPE,
		.capability = TOOL_CAP_SCRIPT_RUNTIME,
		.unavailable = python_unavailable,
		.exec = python_exec,
		.groups = TOOL_GROUP_RUN,
		.keywords = TOOL_TEXT(script_tools_keywords_1,
			"python micropython script run execute code eval compute calculate"),
	},
	{
		.name = "script_run_lua",
		.description = TOOL_TEXT(script_tools_description_3,
			"Run a Lua 5.4 source string on the device and return its printed "
			"output (at most {{CONFIG_AGENT_SCRIPT_TOOL_OUTPUT_MAX_LEN}} bytes) and "
			"status. Runs code: the person confirms it."),
		.domain = TOOL_DOMAIN_SCRIPT,
		.risk = TOOL_RISK_DISRUPTIVE,
		.params = lua_params,
		.param_count = 1,
		.output = RESULT_SHAPE,
		.capability = TOOL_CAP_SCRIPT_RUNTIME,
		.unavailable = lua_unavailable,
		.exec = lua_exec,
		.groups = TOOL_GROUP_RUN,
		.keywords = TOOL_TEXT(script_tools_keywords_2,
			"lua script run execute code eval compute calculate"),
	},
	{
		.name = "script_run_file",
		.description = TOOL_TEXT(script_tools_description_4,
			"Run a saved .py or .lua file with up to "
			"{{CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX}} arguments; returns its printed "
			"output (at most {{CONFIG_AGENT_SCRIPT_TOOL_OUTPUT_MAX_LEN}} bytes) and "
			"status. Runs code: the person confirms it."),
		.domain = TOOL_DOMAIN_SCRIPT,
		.risk = TOOL_RISK_DISRUPTIVE,
		.params = file_params,
		.param_count = 2,
		.output = RESULT_SHAPE,
		.capability = TOOL_CAP_SCRIPT_RUNTIME,
		.exec = file_exec,
		.groups = TOOL_GROUP_RUN,
		.keywords = TOOL_TEXT(script_tools_keywords_3,
			"run execute script file program python lua saved arguments"),
		.workflow_dependency = true,
	},
};

int script_tools_register(void)
{
	int first_err = 0;

	for (size_t i = 0; i < sizeof(script_tools) / sizeof(script_tools[0]); i++) {
		const struct tool_def *def = &script_tools[i];
		int err;

		if ((def->exec == python_exec && !script_lang_available(SCRIPT_LANG_PYTHON)) ||
		    (def->exec == lua_exec && !script_lang_available(SCRIPT_LANG_LUA))) {
			continue; /* advertised only with their runtime */
		}
		err = tool_registry_add(def);
		if (err != 0 && err != -EEXIST && first_err == 0) {
			first_err = err;
		}
	}
	return first_err;
}
