/* The canonical executor (tool_exec.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json_stream.h"
#include "tool_exec.h"
#include "tool_registry.h"

static int first_token(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	bool *is_object = user_data;

	if (json_stream_depth(js) == 0 && v->token != JSON_OBJECT_END) {
		*is_object = v->token == JSON_OBJECT_BEGIN;
	}
	return 0;
}

bool tool_json_is_object(const char *json, size_t len)
{
	static struct json_stream js AGENT_PSRAM_ATTR; /* one request at a time; off the stack */
	bool is_object = false;

	json_stream_init(&js, first_token, &is_object);
	if (json_stream_feed(&js, json, len) != 0 || json_stream_finish(&js) != 0) {
		return false;
	}
	return is_object;
}

static void error_object(char *out, size_t out_len, const char *message, bool truncated)
{
	struct json_writer w;

	jw_init(&w, out, out_len);
	jw_object_begin(&w);
	jw_key(&w, "error");
	jw_string(&w, message);
	if (truncated) {
		jw_key(&w, "truncated");
		jw_bool(&w, true);
	}
	jw_object_end(&w);
	(void)jw_finish(&w);
}

int tool_execute(const struct tool_def *def, enum agent_tools_policy policy, bool confirmed,
		 struct tool_ctx *ctx, const struct tool_args *args, char *out, size_t out_len)
{
	enum tool_disposition d = tool_policy_disposition(policy, def->risk);
	const char *unavailable;
	struct json_writer w;
	size_t cap = out_len < CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1
			     ? out_len
			     : CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1;
	int err;

	ctx->error[0] = '\0';
	if (d == TOOL_DENIED || (d == TOOL_ASKS && !confirmed)) {
		return tool_fail(ctx, -EPERM, "the tool policy does not allow %s", def->name);
	}
	unavailable = tool_unavailable_reason(def);
	if (unavailable != NULL) {
		return tool_fail(ctx, -ENODEV, "%s is not available: %s", def->name, unavailable);
	}
	jw_init(&w, out, cap);
	err = def->exec(ctx, args, &w);
	if (err < 0) {
		if (ctx->error[0] == '\0') {
			snprintf(ctx->error, sizeof(ctx->error), "%s failed (error %d)", def->name,
				 err);
		}
		return err;
	}
	err = jw_finish(&w);
	if (err == -ENOSPC) {
		snprintf(ctx->error, sizeof(ctx->error), "the result of %s exceeded %d bytes",
			 def->name, CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
		error_object(out, cap, ctx->error, true);
		return -ENOSPC;
	}
	if (err < 0 || !tool_json_is_object(out, (size_t)err)) {
		snprintf(ctx->error, sizeof(ctx->error), "%s returned no JSON object", def->name);
		error_object(out, cap, ctx->error, false);
		return -EBADMSG;
	}
	return 0;
}
