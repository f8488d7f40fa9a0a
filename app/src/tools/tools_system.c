/*
 * system_status: board, firmware version, uptime and memory. The memory figures are those of
 * agent_mem.h, the same `agent status` prints and jobs_list's admission check uses: per class
 * the port's run-time heap plus the agent's pools, and the samples the request path took
 * (lowest internal free memory while streaming, PSRAM before and at the completion of the last
 * request, the request count). docs/tools-device.md describes the fields.
 */
#include "agent_jobs.h"
#include "agent_mem.h"
#include "agent_port.h"
#include "agent_version.h"
#include "tools_system.h"

static void write_size_or_null(struct json_writer *out, bool known, size_t value)
{
	if (known) {
		jw_int(out, (int64_t)value);
	} else {
		jw_null(out);
	}
}

void tools_write_memory_class(struct json_writer *out, const struct agent_mem_figures *m)
{
	jw_object_begin(out);
	jw_key(out, "free_bytes");
	jw_int(out, (int64_t)m->free_bytes);
	jw_key(out, "largest_free_block_bytes");
	jw_int(out, (int64_t)m->largest_free_bytes);
	jw_key(out, "heap");
	if (m->heap_present) {
		jw_object_begin(out);
		jw_key(out, "total_bytes");
		jw_int(out, (int64_t)m->heap.total_bytes);
		jw_key(out, "free_bytes");
		jw_int(out, (int64_t)m->heap.free_bytes);
		jw_key(out, "largest_free_block_bytes");
		jw_int(out, (int64_t)m->heap.largest_free_bytes);
		jw_key(out, "allocated_bytes");
		jw_int(out, (int64_t)m->heap.allocated_bytes);
		jw_key(out, "max_allocated_bytes");
		jw_int(out, (int64_t)m->heap.max_allocated_bytes);
		jw_object_end(out);
	} else {
		jw_null(out);
	}
	jw_key(out, "pool_free_bytes");
	jw_int(out, (int64_t)m->pool_free_bytes);
	jw_key(out, "pools");
	jw_int(out, m->pools);
	jw_object_end(out);
}

static int status_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	struct agent_mem_figures mem[AGENT_MEM_CLASS_COUNT];
	struct agent_mem_requests req;

	(void)ctx;
	(void)args;
	agent_mem_read(mem);
	agent_mem_requests_get(&req);
	jw_object_begin(out);
	jw_key(out, "board");
	jw_string(out, agent_board_name());
	jw_key(out, "firmware_version");
	jw_string(out, AGENT_VERSION_STRING);
	jw_key(out, "uptime_ms");
	jw_int(out, agent_uptime_ms());
	jw_key(out, "internal_free_bytes");
	jw_int(out, (int64_t)mem[AGENT_MEM_INTERNAL].free_bytes);
	jw_key(out, "internal_largest_free_block_bytes");
	jw_int(out, (int64_t)mem[AGENT_MEM_INTERNAL].largest_free_bytes);
	jw_key(out, "internal_lowest_free_bytes_streaming");
	write_size_or_null(out, req.streamed, req.internal_lowest_streaming);
	jw_key(out, "psram_free_bytes");
	jw_int(out, (int64_t)mem[AGENT_MEM_PSRAM].free_bytes);
	jw_key(out, "psram_free_bytes_before_last_request");
	write_size_or_null(out, req.last_known, req.psram_before);
	jw_key(out, "psram_free_bytes_at_last_completion");
	write_size_or_null(out, req.last_completed, req.psram_at_completion);
	jw_key(out, "requests");
	jw_int(out, req.requests);
	jw_key(out, "memory");
	jw_object_begin(out);
	for (size_t c = 0; c < AGENT_MEM_CLASS_COUNT; c++) {
		jw_key(out, agent_jobs_mem_class_name((enum agent_mem_class)c));
		tools_write_memory_class(out, &mem[c]);
	}
	jw_object_end(out);
	jw_object_end(out);
	return 0;
}

const struct tool_def tool_system_status = {
	.name = "system_status",
	.description = TOOL_TEXT(tools_system_description_1,
		"Board ID, firmware version, uptime, and memory: free internal RAM, its largest "
		"block and lowest while streaming, free PSRAM now, before and at the last "
		"request's completion, request count, heap and pools. No arguments."),
	.domain = TOOL_DOMAIN_SYSTEM,
	.risk = TOOL_RISK_READ,
	.params = NULL,
	.param_count = 0,
	.output = TOOL_TEXT(tools_system_output_1,
		"{board, firmware_version, uptime_ms, internal_free_bytes, "
		"internal_largest_free_block_bytes, internal_lowest_free_bytes_streaming, "
		"psram_free_bytes, psram_free_bytes_before_last_request, "
		"psram_free_bytes_at_last_completion, requests, memory: {internal, psram: "
		"{free_bytes, largest_free_block_bytes, heap: {total_bytes, free_bytes, "
		"largest_free_block_bytes, allocated_bytes, max_allocated_bytes} or null, "
		"pool_free_bytes, pools}}}"),
	.exec = status_exec,
	.keywords = TOOL_TEXT(tools_system_keywords_1,
		"status system board version firmware uptime memory ram psram free heap"),
};
