/*
 * Imported host tools (docs/modules.md "Host tools"): a tool module whose runtime is `host`
 * runs on the PC through the feeder (`agent-host feed` / `west agent feed`), which stays
 * connected over SMP, fetches each call (long-poll), runs the module's entry program with
 * the declared arguments as the user's account and sends back its bounded output.
 *
 * Contract between the tool-module executor (module_tool.c) and the feeder queue
 * (module_host.c): one call at a time (one request runs at a time).
 */
#ifndef AGENT_MODULE_HOST_H
#define AGENT_MODULE_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "tool.h"

struct module_host_call {
	const char *tool;		/* the module's (and tool's) name */
	const char *entry;		/* the entry file's name in the module directory */
	const uint8_t *digest;		/* the entry's SHA-256 recorded at import (32 bytes) */
	const char *const *argv;	/* the declared arguments in declared order, as text */
	uint8_t argc;
	uint32_t output_max;		/* the manifest's output bound, bytes */
};

/**
 * Hand @p call to the attached feeder and wait for its answer (up to the host-tool timeout,
 * polling ctx->cancel). Writes the tool result (one JSON object) into @p out and returns 0,
 * or returns a negative errno after tool_fail() put the reason in ctx->error: no feeder
 * attached, the timeout, a non-zero exit, cancellation. Every failure is an error result the
 * model sees; the conversation goes on.
 */
int module_host_run(struct tool_ctx *ctx, const struct module_host_call *call,
		    struct json_writer *out);

#endif /* AGENT_MODULE_HOST_H */
