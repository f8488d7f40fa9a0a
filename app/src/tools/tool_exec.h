/*
 * The canonical executor: every tool call goes through here, which checks the policy again
 * (a call the policy denies, or one that needs a confirmation it did not get, never reaches
 * the tool) and that the result is one JSON object within the result bound.
 */
#ifndef AGENT_TOOL_EXEC_H
#define AGENT_TOOL_EXEC_H

#include <stdbool.h>

#include "tool_session.h"

/**
 * Run @p def with @p args under @p policy. @p confirmed says the person allowed this call.
 * Returns 0 with the result in @p out (NUL-terminated, at most
 * CONFIG_AGENT_TOOL_RESULT_MAX_LEN bytes); -EPERM when the policy does not let it run;
 * -ENODEV when the tool is unavailable; or the tool's negative errno with ctx->error set.
 * A result that overflowed or is not a JSON object is replaced by an error object and
 * reported as -EBADMSG (overflow: -ENOSPC) with ctx->error set.
 */
int tool_execute(const struct tool_def *def, enum agent_tools_policy policy, bool confirmed,
		 struct tool_ctx *ctx, const struct tool_args *args, char *out, size_t out_len);

/** Whether @p json is exactly one JSON object. */
bool tool_json_is_object(const char *json, size_t len);

#endif /* AGENT_TOOL_EXEC_H */
