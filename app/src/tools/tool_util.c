/* Small helpers shared by the tool executors (tool.h). */
#include <stdarg.h>
#include <stdio.h>

#include "tool.h"

/* Room for the closing brackets and a "truncated" member an executor may still add. */
#define RESULT_TAIL_RESERVE 32

size_t tool_result_room(const struct json_writer *out)
{
	size_t cap = out->cap < CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1 ? out->cap
								     : CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1;
	size_t used = out->len + RESULT_TAIL_RESERVE + 1;

	return out->overflow || used >= cap ? 0 : cap - used;
}

int tool_fail(struct tool_ctx *ctx, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->error, sizeof(ctx->error), fmt, ap);
	va_end(ap);
	return err;
}

const char *tool_risk_name(enum tool_risk risk)
{
	static const char *const names[] = {"read", "sensitive", "mutating", "disruptive"};

	return (unsigned int)risk < sizeof(names) / sizeof(names[0]) ? names[risk] : "?";
}

const char *tool_domain_name(enum tool_domain domain)
{
	static const char *const names[] = {"system",	"reference", "discovery",
					    "storage",	"jobs",	     "hardware",
					    "network",	"sensors",   "script"};

	return (unsigned int)domain < sizeof(names) / sizeof(names[0]) ? names[domain] : "?";
}
