/*
 * What the script tools share with other executors of scripts (module_tool.c, imported
 * device tools): run a request through the script runner and write the runner's structured
 * status as the tool result (docs/scripting.md).
 */
#ifndef AGENT_SCRIPT_TOOLS_H
#define AGENT_SCRIPT_TOOLS_H

#include <stddef.h>

#include "script_runner.h"
#include "tool.h"

/**
 * Run @p req with the script tools' deadline and @p ctx's cancellation, its output kept in
 * @p output (at most @p output_cap - 1 bytes, the rest counted and reported as truncated),
 * and write {language, outcome, ..., output, elapsed_ms} into @p out. Returns 0: every
 * outcome, also a run that could not start (busy, unavailable), is a structured result.
 */
int script_tool_report(struct tool_ctx *ctx, struct script_request *req, char *output,
		       size_t output_cap, struct json_writer *out);

#endif /* AGENT_SCRIPT_TOOLS_H */
