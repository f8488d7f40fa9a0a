/*
 * jobs_list: a point-in-time snapshot of the job registry (agent_jobs.h) with the memory and
 * thread-slot figures its admission check uses. An empty name lists every job briefly; a
 * name returns that job's complete record. It never starts or stops anything.
 */
#if defined(CONFIG_AGENT_TOOLS_JOBS)

#include <errno.h>
#include <string.h>

#include "agent_jobs.h"
#include "tools_jobs.h"
#include "tools_listing.h"
#include "tools_system.h"

/* One snapshot per call, kept off the worker stack: tools run one at a time. */
static struct agent_jobs_snapshot snap AGENT_PSRAM_ATTR;
static char item_buf[TOOLS_ITEM_MAX] AGENT_PSRAM_ATTR;

static void write_header(struct json_writer *out, const struct agent_jobs_snapshot *s)
{
	jw_key(out, "taken_ms");
	jw_int(out, s->taken_ms);
	jw_key(out, "memory");
	jw_object_begin(out);
	for (size_t c = 0; c < AGENT_MEM_CLASS_COUNT; c++) {
		jw_key(out, agent_jobs_mem_class_name((enum agent_mem_class)c));
		tools_write_memory_class(out, &s->mem[c]);
	}
	jw_object_end(out);
	jw_key(out, "background_reserve_bytes");
	jw_object_begin(out);
	for (size_t c = 0; c < AGENT_MEM_CLASS_COUNT; c++) {
		jw_key(out, agent_jobs_mem_class_name((enum agent_mem_class)c));
		jw_int(out, (int64_t)s->reserve_bytes[c]);
	}
	jw_object_end(out);
	jw_key(out, "task_overhead_bytes");
	jw_int(out, (int64_t)s->task_overhead_bytes);
	jw_key(out, "thread_slots");
	jw_object_begin(out);
	jw_key(out, "total");
	jw_int(out, s->thread_slots);
	jw_key(out, "free");
	jw_int(out, s->thread_slots_free);
	jw_key(out, "stack_bytes");
	jw_int(out, (int64_t)s->slot_stack_bytes);
	jw_object_end(out);
}

/* The fields both forms share. */
static void write_summary(struct json_writer *w, const struct agent_job_record *r)
{
	jw_key(w, "name");
	jw_string(w, r->name);
	jw_key(w, "state");
	jw_string(w, agent_job_state_name(r->state));
	jw_key(w, "generation");
	jw_int(w, r->generation);
	jw_key(w, "disposition");
	jw_string(w, agent_job_disposition_name(r->admission.disposition));
	jw_key(w, "reason");
	jw_string(w, r->admission.reason);
	tools_key_string_or_null(w, "reason_detail", r->admission.detail);
	tools_key_string_or_null(w, "owner", r->owner);
}

static void write_record(struct json_writer *w, const struct agent_job_record *r)
{
	jw_object_begin(w);
	write_summary(w, r);
	jw_key(w, "last_error");
	jw_int(w, r->last_error);
	jw_key(w, "stack");
	jw_object_begin(w);
	jw_key(w, "bytes");
	jw_int(w, (int64_t)r->stack_bytes);
	jw_key(w, "placement");
	jw_string(w, agent_jobs_mem_class_name(r->stack_placement));
	jw_object_end(w);
	jw_key(w, "started_ms");
	if (r->state == AGENT_JOB_RUNNING) {
		jw_int(w, r->started_ms);
	} else {
		jw_null(w);
	}
	jw_key(w, "claims");
	jw_array_begin(w);
	for (uint8_t i = 0; i < r->claim_count; i++) {
		jw_object_begin(w);
		jw_key(w, "pool");
		jw_string(w, r->claims[i].pool);
		jw_key(w, "blocks");
		jw_int(w, r->claims[i].blocks);
		jw_key(w, "bytes");
		jw_int(w, (int64_t)r->claims[i].bytes);
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_object_end(w);
}

static int jobs_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	const struct tool_value *name = &args->v[0];
	bool one = name->present && name->len > 0;
	bool truncated = false;

	agent_jobs_snapshot(&snap);
	if (one) {
		const struct agent_job_record *found = NULL;

		for (size_t i = 0; i < snap.job_count; i++) {
			if (strlen(snap.jobs[i].name) == name->len &&
			    memcmp(snap.jobs[i].name, name->str, name->len) == 0) {
				found = &snap.jobs[i];
			}
		}
		if (found == NULL) {
			char known[AGENT_JOBS_MAX * (AGENT_JOB_NAME_MAX + 2) + 1] = "";

			for (size_t i = 0; i < snap.job_count; i++) {
				if (i > 0) {
					strcat(known, ", ");
				}
				strcat(known, snap.jobs[i].name);
			}
			return tool_fail(ctx, -ENOENT, "no job named '%.*s'; the jobs are: %s",
					 (int)(name->len > 32 ? 32 : name->len), name->str, known);
		}
		jw_object_begin(out);
		write_header(out, &snap);
		jw_key(out, "job");
		write_record(out, found);
		jw_object_end(out);
		return 0;
	}
	jw_object_begin(out);
	write_header(out, &snap);
	jw_key(out, "jobs");
	jw_array_begin(out);
	for (size_t i = 0; i < snap.job_count && !truncated; i++) {
		struct json_writer item;

		jw_init(&item, item_buf, sizeof(item_buf));
		jw_object_begin(&item);
		write_summary(&item, &snap.jobs[i]);
		jw_object_end(&item);
		truncated = !tools_item_append(out, &item, 0);
	}
	return tools_list_end(out, NULL, 0, truncated);
}

static const struct tool_param jobs_params[] = {
	{
		.name = "name",
		.type = TOOL_PARAM_STRING,
		.required = false,
		.description = TOOL_TEXT(tools_jobs_description_1,
			"A job name (\"agent\", \"chat\", \"script_python\", ...) for its "
			"complete record; empty or absent lists every job."),
		.min = 0,
		.max = AGENT_JOB_NAME_MAX,
	},
};

const struct tool_def tool_jobs_list = {
	.name = "jobs_list",
	.description = TOOL_TEXT(tools_jobs_description_2,
		"Read-only workload inspection with the device's job admission policy: "
		"internal/PSRAM free and largest-block bytes, background reserve, task "
		"overhead, thread slots, and each job's state, generation, start disposition "
		"(ready, running, waiting_for_memory, blocked) with a machine-readable reason. "
		"Give a job name for its complete record (last error, worker stack and "
		"placement, owner, current pool claims). Never starts or stops a job; 'ready' "
		"cannot foresee undeclared buffers."),
	.domain = TOOL_DOMAIN_JOBS,
	.risk = TOOL_RISK_READ,
	.params = jobs_params,
	.param_count = 1,
	.output = TOOL_TEXT(tools_jobs_output_1,
		"{taken_ms, memory: {internal, psram: {free_bytes, largest_free_block_bytes, "
		"heap, pool_free_bytes, pools}}, background_reserve_bytes: {internal, psram}, "
		"task_overhead_bytes, thread_slots: {total, free, stack_bytes}, jobs: [{name, "
		"state, generation, disposition, reason, reason_detail, owner}], truncated} or, "
		"with a name, job: {... last_error, stack: {bytes, placement}, started_ms, "
		"claims: [{pool, blocks, bytes}]}"),
	.exec = jobs_exec,
	.keywords = TOOL_TEXT(tools_jobs_keywords_1,
		"jobs tasks workload admission memory threads running scheduler worker"),
};

#endif /* CONFIG_AGENT_TOOLS_JOBS */
