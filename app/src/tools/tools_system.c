/*
 * system_status: board, firmware version, uptime and memory. The memory figures are the
 * agent's own fixed-block pools per memory class (agent_pool_foreach), which is where every
 * buffer of the agent lives; the field names say "pool" so that nobody reads them as the
 * whole heap.
 */
#include "agent_jobs.h"
#include "agent_port.h"
#include "agent_version.h"
#include "tools_system.h"

static int status_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	struct agent_jobs_mem mem[AGENT_MEM_CLASS_COUNT];

	(void)ctx;
	(void)args;
	agent_jobs_mem_read(mem);
	jw_object_begin(out);
	jw_key(out, "board");
	jw_string(out, agent_board_name());
	jw_key(out, "firmware_version");
	jw_string(out, AGENT_VERSION_STRING);
	jw_key(out, "uptime_ms");
	jw_int(out, agent_uptime_ms());
	jw_key(out, "memory_source");
	jw_string(out, "agent_pools");
	jw_key(out, "internal_pool_free_bytes");
	jw_int(out, (int64_t)mem[AGENT_MEM_INTERNAL].free_bytes);
	jw_key(out, "internal_pool_largest_free_block_bytes");
	jw_int(out, (int64_t)mem[AGENT_MEM_INTERNAL].largest_free_bytes);
	jw_key(out, "psram_pool_free_bytes");
	jw_int(out, (int64_t)mem[AGENT_MEM_PSRAM].free_bytes);
	jw_key(out, "psram_pool_largest_free_block_bytes");
	jw_int(out, (int64_t)mem[AGENT_MEM_PSRAM].largest_free_bytes);
	jw_key(out, "pools");
	jw_int(out, (int64_t)(mem[AGENT_MEM_INTERNAL].pools + mem[AGENT_MEM_PSRAM].pools));
	jw_object_end(out);
	return 0;
}

const struct tool_def tool_system_status = {
	.name = "system_status",
	.description = "Board ID, firmware version, uptime, and free memory: free bytes and the "
		       "largest free block in the agent's internal-RAM pools, and free bytes in "
		       "its PSRAM pools (the agent's own fixed-block pools, not the whole heap). "
		       "No arguments.",
	.domain = TOOL_DOMAIN_SYSTEM,
	.risk = TOOL_RISK_READ,
	.params = NULL,
	.param_count = 0,
	.output = "{board, firmware_version, uptime_ms, memory_source: \"agent_pools\", "
		  "internal_pool_free_bytes, internal_pool_largest_free_block_bytes, "
		  "psram_pool_free_bytes, psram_pool_largest_free_block_bytes, pools}",
	.exec = status_exec,
	.keywords = "status system board version firmware uptime memory ram psram free heap",
};
