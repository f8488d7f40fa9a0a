/*
 * One run of the script runner (script_runner.c) as the device API (script_api.c) sees it.
 * Only this folder includes it; runtimes see struct script_exec as opaque (script_runtime.h).
 */
#ifndef AGENT_SCRIPT_INTERNAL_H
#define AGENT_SCRIPT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"
#include "script_runner.h"

struct script_exec {
	const struct script_request *req;
	struct script_status *st;
	struct agent_region *heap;
	const char *source;
	size_t source_len;
	char *file_buf; /* a file's source, in the runtime's heap until released */
	const char *argv[1 + CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX];
	uint8_t argc;
	int64_t deadline_at_ms;
	enum script_outcome stop; /* SCRIPT_COMPLETED while the run may go on */
	bool outcome_set;
	/* What the last device API call holds (script_api_release() gives it back). */
	void *api_scratch;
	struct agent_file *api_file;
	struct agent_dir *api_dir;
};

/** Give back what the device API holds for @p ex (a call interrupted by an error). */
void script_api_release(struct script_exec *ex);

/** Add the script tools of the runtimes built in to the registry (script_tools.c). */
int script_tools_register(void);

#endif /* AGENT_SCRIPT_INTERNAL_H */
