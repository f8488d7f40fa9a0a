/* The feeder queue of imported host tools (module_host.h). */
#include <errno.h>

#include "module_host.h"

int module_host_run(struct tool_ctx *ctx, const struct module_host_call *call,
		    struct json_writer *out)
{
	(void)out;
	return tool_fail(ctx, -ENOTCONN, "host tool %s: no feeder attached (run `agent-host feed`)",
			 call->tool);
}
