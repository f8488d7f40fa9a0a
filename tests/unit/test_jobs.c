/*
 * The job registry and its admission check (app/src/agent/state/agent_jobs.c) over real pools
 * and the simulated heap of the POSIX port, and the two tools that read it: jobs_list and
 * system_status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_jobs.h"
#include "agent_mem.h"
#include "posix/posix_port.h"
#include "tool.h"
#include "tool_exec.h"
#include "tools_jobs.h"
#include "tools_system.h"

#define RESULT_CAP (CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1)

/* Stand-ins for the provider's pools, with the names the built-in jobs claim. */
#define STREAM_BLOCK_BYTES 64u
#define STREAM_BLOCKS	   4u
#define REQUEST_BYTES	   256u
#define SCRATCH_BLOCK_BYTES 32u
#define SCRATCH_BLOCKS	    3u

static uint8_t stream_buf[STREAM_BLOCK_BYTES * STREAM_BLOCKS] __attribute__((aligned(8)));
static uint8_t request_buf[REQUEST_BYTES] __attribute__((aligned(8)));
static uint8_t scratch_buf[SCRATCH_BLOCK_BYTES * SCRATCH_BLOCKS] __attribute__((aligned(8)));
static struct agent_pool *stream_pool;
static struct agent_pool *request_pool;
static struct agent_pool *scratch_pool;

static char result[RESULT_CAP];
static struct tool_args args;
static struct tool_ctx ctx;
static struct agent_jobs_snapshot snap;

static const struct agent_job_def python_job = {
	.name = "script_python",
	.group = "python",
	.stack_bytes = CONFIG_AGENT_WORKER_STACK_SIZE,
	.stack_placement = AGENT_MEM_INTERNAL,
};

static const struct agent_job_claim lua_claims[] = {{.pool = "scratch", .blocks = 2}};

static const struct agent_job_def lua_job = {
	.name = "script_lua",
	.group = "lua",
	.stack_bytes = CONFIG_AGENT_WORKER_STACK_SIZE,
	.stack_placement = AGENT_MEM_INTERNAL,
	.claims = lua_claims,
	.claim_count = 1,
};

static int setup(void **state)
{
	(void)state;
	posix_pool_reset_all();
	posix_heap_reset();
	agent_mem_reset();
	assert_int_equal(agent_pool_init(&stream_pool, "stream", stream_buf, STREAM_BLOCK_BYTES,
					 STREAM_BLOCKS, AGENT_MEM_PSRAM),
			 0);
	assert_int_equal(agent_pool_init(&request_pool, "request", request_buf, REQUEST_BYTES, 1,
					 AGENT_MEM_PSRAM),
			 0);
	assert_int_equal(agent_pool_init(&scratch_pool, "scratch", scratch_buf,
					 SCRATCH_BLOCK_BYTES, SCRATCH_BLOCKS, AGENT_MEM_INTERNAL),
			 0);
	agent_jobs_reset();
	return 0;
}

static const struct agent_job_record *record(const char *name)
{
	agent_jobs_snapshot(&snap);
	for (size_t i = 0; i < snap.job_count; i++) {
		if (strcmp(snap.jobs[i].name, name) == 0) {
			return &snap.jobs[i];
		}
	}
	fail_msg("no job %s in the snapshot", name);
	return NULL;
}

static int run(const struct tool_def *def, const char *json)
{
	struct json_writer w;
	char why[160];
	int err;
	int len;

	memset(&ctx, 0, sizeof(ctx));
	assert_int_equal(tool_args_parse(def, json, strlen(json), &args, why, sizeof(why)), 0);
	jw_init(&w, result, sizeof(result));
	err = def->exec(&ctx, &args, &w);
	if (err < 0) {
		return err;
	}
	len = jw_finish(&w);
	assert_true(len > 0 && len <= CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
	assert_true(tool_json_is_object(result, (size_t)len));
	return 0;
}

static void assert_has(const char *needle)
{
	if (strstr(result, needle) == NULL) {
		fail_msg("'%s' not in %s", needle, result);
	}
}

/* ---- registry ------------------------------------------------------------------------------ */

static void test_builtin_jobs_idle_and_ready(void **state)
{
	const struct agent_job_record *r;

	(void)state;
	agent_jobs_snapshot(&snap);
	assert_int_equal(snap.job_count, 2);
	assert_string_equal(snap.jobs[0].name, "agent");
	assert_string_equal(snap.jobs[1].name, "chat");
	r = record("agent");
	assert_int_equal(r->state, AGENT_JOB_IDLE);
	assert_int_equal(r->generation, 0);
	assert_int_equal(r->admission.disposition, AGENT_JOB_READY);
	assert_string_equal(r->admission.reason, "admissible");
	assert_int_equal(r->stack_bytes, CONFIG_AGENT_WORKER_STACK_SIZE);
	assert_int_equal(r->stack_placement, AGENT_MEM_INTERNAL);
	assert_int_equal(r->claim_count, 0);
	assert_string_equal(r->owner, "");
	assert_int_equal(snap.thread_slots, CONFIG_AGENT_THREAD_SLOTS);
	assert_int_equal(snap.thread_slots_free, CONFIG_AGENT_THREAD_SLOTS);
	/* The pools as they are: psram = stream + request, internal = scratch and the heap. */
	assert_int_equal(snap.mem[AGENT_MEM_PSRAM].free_bytes,
			 STREAM_BLOCK_BYTES * STREAM_BLOCKS + REQUEST_BYTES);
	assert_int_equal(snap.mem[AGENT_MEM_PSRAM].largest_free_bytes, REQUEST_BYTES);
	assert_int_equal(snap.mem[AGENT_MEM_PSRAM].pools, 2);
	assert_false(snap.mem[AGENT_MEM_PSRAM].heap_present);
	assert_int_equal(snap.mem[AGENT_MEM_INTERNAL].pool_free_bytes,
			 SCRATCH_BLOCK_BYTES * SCRATCH_BLOCKS);
	assert_true(snap.mem[AGENT_MEM_INTERNAL].heap_present);
	assert_int_equal(snap.mem[AGENT_MEM_INTERNAL].free_bytes,
			 SCRATCH_BLOCK_BYTES * SCRATCH_BLOCKS + POSIX_HEAP_INTERNAL_BYTES);
	/* The reserve where there is a heap, 0 where none; the port's per-thread record. */
	assert_int_equal(snap.reserve_bytes[AGENT_MEM_INTERNAL],
			 CONFIG_AGENT_JOBS_RESERVE_INTERNAL_BYTES);
	assert_int_equal(snap.reserve_bytes[AGENT_MEM_PSRAM], 0);
	assert_int_equal(snap.task_overhead_bytes, agent_thread_overhead_bytes());
}

static void test_begin_end_generation_owner_claims(void **state)
{
	struct agent_job_admission why;
	const struct agent_job_record *r;

	(void)state;
	assert_int_equal(agent_job_begin("agent", "shell", &why), 0);
	assert_int_equal(why.disposition, AGENT_JOB_RUNNING_NOW);
	r = record("agent");
	assert_int_equal(r->state, AGENT_JOB_RUNNING);
	assert_int_equal(r->generation, 1);
	assert_string_equal(r->owner, "shell");
	assert_int_equal(r->admission.disposition, AGENT_JOB_RUNNING_NOW);
	assert_string_equal(r->admission.reason, "running");
	/* The whole of both provider pools, resolved against their real sizes. */
	assert_int_equal(r->claim_count, 2);
	assert_string_equal(r->claims[0].pool, "stream");
	assert_int_equal(r->claims[0].blocks, STREAM_BLOCKS);
	assert_int_equal(r->claims[0].bytes, STREAM_BLOCKS * STREAM_BLOCK_BYTES);
	assert_string_equal(r->claims[1].pool, "request");
	assert_int_equal(r->claims[1].blocks, 1);
	assert_int_equal(snap.thread_slots_free, CONFIG_AGENT_THREAD_SLOTS - 1);

	/* The same group cannot start; the job itself is already running. */
	r = record("chat");
	assert_int_equal(r->admission.disposition, AGENT_JOB_BLOCKED);
	assert_string_equal(r->admission.reason, "group_busy");
	assert_string_equal(r->admission.detail, "agent");
	assert_int_equal(agent_job_begin("chat", "shell", &why), -EBUSY);
	assert_int_equal(agent_job_begin("agent", "shell", NULL), -EALREADY);

	agent_job_end("agent", -ECONNRESET);
	r = record("agent");
	assert_int_equal(r->state, AGENT_JOB_IDLE);
	assert_int_equal(r->generation, 1);
	assert_int_equal(r->last_error, -ECONNRESET);
	assert_string_equal(r->owner, "");
	assert_int_equal(r->claim_count, 0);
	assert_int_equal(record("chat")->admission.disposition, AGENT_JOB_READY);

	assert_int_equal(agent_job_begin("agent", "console", NULL), 0);
	agent_job_end("agent", 0);
	r = record("agent");
	assert_int_equal(r->generation, 2);
	assert_int_equal(r->last_error, 0);
	/* An end without a begin changes nothing. */
	agent_job_end("chat", -EIO);
	assert_int_equal(record("chat")->last_error, 0);
}

static void test_waiting_for_memory_uses_real_pools(void **state)
{
	struct agent_job_admission why;
	void *held;
	void *second;

	(void)state;
	/* Someone else holds one stream block: a whole-pool claim cannot be met. */
	held = agent_pool_alloc(stream_pool);
	assert_non_null(held);
	assert_int_equal(agent_job_check("agent", &why), 0);
	assert_int_equal(why.disposition, AGENT_JOB_WAITING_FOR_MEMORY);
	assert_string_equal(why.reason, "pool_short");
	assert_string_equal(why.detail, "stream");
	assert_int_equal(agent_job_begin("agent", "shell", &why), -ENOMEM);
	assert_int_equal(record("agent")->generation, 0);
	assert_int_equal(agent_pool_free(stream_pool, held), 0);
	assert_int_equal(agent_job_begin("agent", "shell", NULL), 0);
	agent_job_end("agent", 0);

	/* A counted claim: 2 of 3 scratch blocks. With 2 free it is ready, with 1 it waits. */
	assert_int_equal(agent_job_register(&lua_job), 0);
	held = agent_pool_alloc(scratch_pool);
	assert_int_equal(agent_job_check("script_lua", &why), 0);
	assert_int_equal(why.disposition, AGENT_JOB_READY);
	second = agent_pool_alloc(scratch_pool);
	assert_int_equal(agent_job_check("script_lua", &why), 0);
	assert_int_equal(why.disposition, AGENT_JOB_WAITING_FOR_MEMORY);
	assert_string_equal(why.detail, "scratch");
	agent_pool_free(scratch_pool, second);
	agent_pool_free(scratch_pool, held);
}

/* Take all of the simulated heap but @p left bytes (a multiple of its unit). */
static void *heap_leave(size_t left)
{
	void *taken;

	assert_int_equal(left % POSIX_HEAP_UNIT_BYTES, 0);
	taken = posix_heap_alloc(AGENT_MEM_INTERNAL, POSIX_HEAP_INTERNAL_BYTES - left);
	assert_non_null(taken);
	return taken;
}

/*
 * The background reserve is heap kept free: a job waits (reserve_short) when the internal
 * heap has less than CONFIG_AGENT_JOBS_RESERVE_INTERNAL_BYTES free, whatever the pools hold.
 * Its claims are checked against the pools alone. With the heap at exactly the reserve and
 * exactly the claimed blocks free it is ready; one heap unit less (16 B, the simulated heap's
 * granularity: reserve - 1 B is not a state that heap can be in) and it waits, although the
 * free pool block would have covered the difference (the check added pools to the heap).
 */
static void test_background_reserve_at_the_bound(void **state)
{
	static const struct agent_job_claim claims[] = {{.pool = "scratch", .blocks = 2}};
	static const struct agent_job_def probe = {
		.name = "probe",
		.stack_placement = AGENT_MEM_INTERNAL,
		.claims = claims,
		.claim_count = 1,
	};
	const size_t reserve = CONFIG_AGENT_JOBS_RESERVE_INTERNAL_BYTES;
	struct agent_job_admission why;
	void *taken;

	(void)state;
	assert_true(reserve >= POSIX_HEAP_UNIT_BYTES);
	assert_int_equal(agent_job_register(&probe), 0);
	taken = heap_leave(reserve);
	assert_int_equal(agent_job_check("probe", &why), 0);
	assert_int_equal(why.disposition, AGENT_JOB_READY);
	assert_string_equal(why.reason, "admissible");
	assert_int_equal(agent_job_begin("probe", "shell", &why), 0);
	agent_job_end("probe", 0);
	assert_int_equal(posix_heap_free(taken), 0);

	taken = heap_leave(reserve - POSIX_HEAP_UNIT_BYTES);
	assert_int_equal(agent_job_check("probe", &why), 0);
	assert_int_equal(why.disposition, AGENT_JOB_WAITING_FOR_MEMORY);
	assert_string_equal(why.reason, "reserve_short");
	assert_string_equal(why.detail, "internal");
	assert_int_equal(agent_job_begin("probe", "shell", &why), -ENOMEM);
	assert_int_equal(posix_heap_free(taken), 0);

	/* An empty heap: the job waits with every pool block free. */
	taken = heap_leave(0);
	assert_int_equal(agent_job_check("probe", &why), 0);
	assert_string_equal(why.reason, "reserve_short");
	assert_int_equal(posix_heap_free(taken), 0);
}

/*
 * The task overhead (a thread's record in its static slot) is not taken from the heap or the
 * pools: a job with a worker stack is ready with the heap at exactly the reserve and no pool
 * block free, and waits one heap unit below it, as a job without one.
 */
static void test_task_overhead_is_not_taken_from_heap_or_pools(void **state)
{
	const size_t reserve = CONFIG_AGENT_JOBS_RESERVE_INTERNAL_BYTES;
	void *held[SCRATCH_BLOCKS];
	struct agent_job_admission why;
	void *taken;

	(void)state;
	assert_true(agent_thread_overhead_bytes() > 0u);
	for (size_t i = 0; i < SCRATCH_BLOCKS; i++) {
		held[i] = agent_pool_alloc(scratch_pool);
		assert_non_null(held[i]);
	}
	taken = heap_leave(reserve);
	assert_int_equal(agent_job_check("agent", &why), 0);
	assert_int_equal(why.disposition, AGENT_JOB_READY);
	assert_int_equal(posix_heap_free(taken), 0);
	taken = heap_leave(reserve - POSIX_HEAP_UNIT_BYTES);
	assert_int_equal(agent_job_check("agent", &why), 0);
	assert_string_equal(why.reason, "reserve_short");
	assert_int_equal(posix_heap_free(taken), 0);
	for (size_t i = 0; i < SCRATCH_BLOCKS; i++) {
		agent_pool_free(scratch_pool, held[i]);
	}
}

static void test_thread_slots(void **state)
{
	struct agent_job_admission why;
	const struct agent_job_record *r;

	(void)state;
	assert_int_equal(agent_job_register(&python_job), 0);
	assert_int_equal(agent_job_register(&lua_job), 0);
	/* CONFIG_AGENT_THREAD_SLOTS (2 in the host build) jobs with a stack fill every slot. */
	assert_int_equal(CONFIG_AGENT_THREAD_SLOTS, 2);
	assert_int_equal(agent_job_begin("agent", "shell", NULL), 0);
	assert_int_equal(agent_job_begin("script_python", "shell", NULL), 0);
	r = record("script_lua");
	assert_int_equal(r->admission.disposition, AGENT_JOB_BLOCKED);
	assert_string_equal(r->admission.reason, "no_thread_slot");
	assert_int_equal(snap.thread_slots_free, 0);
	assert_int_equal(agent_job_begin("script_lua", "shell", &why), -EBUSY);
	assert_string_equal(why.reason, "no_thread_slot");
	agent_job_end("script_python", 0);
	assert_int_equal(agent_job_begin("script_lua", "shell", NULL), 0);
	agent_job_end("script_lua", 0);
	agent_job_end("agent", 0);
}

static void test_stack_too_large_and_registration(void **state)
{
	static const struct agent_job_def big = {
		.name = "big",
		.stack_bytes = CONFIG_AGENT_WORKER_STACK_SIZE + 1,
		.stack_placement = AGENT_MEM_INTERNAL,
	};
	static const struct agent_job_def fits = {
		.name = "fits",
		.stack_bytes = CONFIG_AGENT_WORKER_STACK_SIZE,
		.stack_placement = AGENT_MEM_INTERNAL,
	};
	static const struct agent_job_def extra[] = {
		{.name = "x1", .stack_placement = AGENT_MEM_INTERNAL},
		{.name = "x2", .stack_placement = AGENT_MEM_INTERNAL},
	};
	static const struct agent_job_def bad_name = {.name = "a_name_of_16_chr"};
	struct agent_job_admission why;

	(void)state;
	assert_int_equal(agent_job_register(&big), 0);
	assert_int_equal(agent_job_check("big", &why), 0);
	assert_int_equal(why.disposition, AGENT_JOB_BLOCKED);
	assert_string_equal(why.reason, "stack_too_large");
	assert_int_equal(agent_job_register(&fits), 0);
	assert_int_equal(agent_job_check("fits", &why), 0);
	assert_int_equal(why.disposition, AGENT_JOB_READY);

	assert_int_equal(agent_job_register(&fits), -EEXIST);
	assert_int_equal(agent_job_register(&bad_name), -EINVAL);
	assert_int_equal(agent_job_register(NULL), -EINVAL);
	/* 2 built-in + big + fits + x1 + x2 = AGENT_JOBS_MAX; one more does not fit. */
	assert_int_equal(agent_job_register(&extra[0]), 0);
	assert_int_equal(agent_job_register(&extra[1]), 0);
	assert_int_equal(agent_job_register(&python_job), -ENOSPC);
	agent_jobs_snapshot(&snap);
	assert_int_equal(snap.job_count, AGENT_JOBS_MAX);

	assert_int_equal(agent_job_begin("nobody", "shell", NULL), -ENOENT);
	assert_int_equal(agent_job_check("nobody", &why), -ENOENT);
	agent_jobs_reset();
	agent_jobs_snapshot(&snap);
	assert_int_equal(snap.job_count, 2);
}

/* ---- tools --------------------------------------------------------------------------------- */

static void test_jobs_list_tool(void **state)
{
	char expect[512];
	void *blocks[STREAM_BLOCKS];
	void *body;

	(void)state;
	/* As the request worker does: begin, then take every block of both pools. */
	assert_int_equal(agent_job_begin("agent", "shell", NULL), 0);
	for (size_t i = 0; i < STREAM_BLOCKS; i++) {
		blocks[i] = agent_pool_alloc(stream_pool);
	}
	body = agent_pool_alloc(request_pool);

	assert_int_equal(run(&tool_jobs_list, "{}"), 0);
	snprintf(expect, sizeof(expect),
		 "\"memory\":{\"internal\":{\"free_bytes\":%u,\"largest_free_block_bytes\":%u,"
		 "\"heap\":{\"total_bytes\":%u,\"free_bytes\":%u,\"largest_free_block_bytes\":%u,"
		 "\"allocated_bytes\":0,\"max_allocated_bytes\":0},\"pool_free_bytes\":96,"
		 "\"pools\":1},\"psram\":{\"free_bytes\":0,\"largest_free_block_bytes\":0,"
		 "\"heap\":null,\"pool_free_bytes\":0,\"pools\":2}}",
		 POSIX_HEAP_INTERNAL_BYTES + 96u, POSIX_HEAP_INTERNAL_BYTES,
		 POSIX_HEAP_INTERNAL_BYTES, POSIX_HEAP_INTERNAL_BYTES, POSIX_HEAP_INTERNAL_BYTES);
	assert_has(expect);
	snprintf(expect, sizeof(expect),
		 "\"background_reserve_bytes\":{\"internal\":%u,\"psram\":0},"
		 "\"task_overhead_bytes\":%u",
		 CONFIG_AGENT_JOBS_RESERVE_INTERNAL_BYTES,
		 (unsigned int)agent_thread_overhead_bytes());
	assert_has(expect);
	assert_has("\"thread_slots\":{\"total\":2,\"free\":1,\"stack_bytes\":16384}");
	assert_has("\"jobs\":[{\"name\":\"agent\",\"state\":\"running\",\"generation\":1,"
		   "\"disposition\":\"running\",\"reason\":\"running\",\"reason_detail\":null,"
		   "\"owner\":\"shell\"},{\"name\":\"chat\",\"state\":\"idle\",\"generation\":0,"
		   "\"disposition\":\"blocked\",\"reason\":\"group_busy\",\"reason_detail\":"
		   "\"agent\",\"owner\":null}],\"truncated\":false}");

	assert_int_equal(run(&tool_jobs_list, "{\"name\":\"agent\"}"), 0);
	assert_has("\"job\":{\"name\":\"agent\",\"state\":\"running\",\"generation\":1,"
		   "\"disposition\":\"running\",\"reason\":\"running\",\"reason_detail\":null,"
		   "\"owner\":\"shell\",\"last_error\":0,\"stack\":{\"bytes\":16384,"
		   "\"placement\":\"internal\"},\"started_ms\":");
	assert_has("\"claims\":[{\"pool\":\"stream\",\"blocks\":4,\"bytes\":256},"
		   "{\"pool\":\"request\",\"blocks\":1,\"bytes\":256}]}}");

	for (size_t i = 0; i < STREAM_BLOCKS; i++) {
		agent_pool_free(stream_pool, blocks[i]);
	}
	agent_pool_free(request_pool, body);
	agent_job_end("agent", -ETIMEDOUT);
	assert_int_equal(run(&tool_jobs_list, "{\"name\":\"agent\"}"), 0);
	assert_has("\"state\":\"idle\",\"generation\":1,\"disposition\":\"ready\","
		   "\"reason\":\"admissible\",\"reason_detail\":null,\"owner\":null,"
		   "\"last_error\":-110,");
	assert_has("\"started_ms\":null,\"claims\":[]}}");

	/* An empty name lists; an unknown one fails with the names. */
	assert_int_equal(run(&tool_jobs_list, "{\"name\":\"\"}"), 0);
	assert_has("\"jobs\":[{\"name\":\"agent\"");
	assert_int_equal(run(&tool_jobs_list, "{\"name\":\"make\"}"), -ENOENT);
	assert_string_equal(ctx.error, "no job named 'make'; the jobs are: agent, chat");
}

static void test_system_status(void **state)
{
	char expect[768];
	void *held;
	void *heap_block;
	void *blocks[STREAM_BLOCKS];

	(void)state;
	held = agent_pool_alloc(scratch_pool);
	heap_block = posix_heap_alloc(AGENT_MEM_INTERNAL, 4096);
	assert_int_equal(run(&tool_system_status, "{}"), 0);
	assert_has("{\"board\":\"host_sim\",\"firmware_version\":\"");
	assert_has("\"uptime_ms\":");
	/* No request yet: the samples are null. */
	snprintf(expect, sizeof(expect),
		 "\"internal_free_bytes\":%u,\"internal_largest_free_block_bytes\":%u,"
		 "\"internal_lowest_free_bytes_streaming\":null,\"psram_free_bytes\":512,"
		 "\"psram_free_bytes_before_last_request\":null,"
		 "\"psram_free_bytes_at_last_completion\":null,\"requests\":0,"
		 "\"memory\":{\"internal\":{\"free_bytes\":%u,\"largest_free_block_bytes\":%u,"
		 "\"heap\":{\"total_bytes\":%u,\"free_bytes\":%u,\"largest_free_block_bytes\":%u,"
		 "\"allocated_bytes\":4096,\"max_allocated_bytes\":4096},\"pool_free_bytes\":64,"
		 "\"pools\":1},\"psram\":{\"free_bytes\":512,\"largest_free_block_bytes\":256,"
		 "\"heap\":null,\"pool_free_bytes\":512,\"pools\":2}}}",
		 POSIX_HEAP_INTERNAL_BYTES - 4096u + 64u, POSIX_HEAP_INTERNAL_BYTES - 4096u,
		 POSIX_HEAP_INTERNAL_BYTES - 4096u + 64u, POSIX_HEAP_INTERNAL_BYTES - 4096u,
		 POSIX_HEAP_INTERNAL_BYTES, POSIX_HEAP_INTERNAL_BYTES - 4096u,
		 POSIX_HEAP_INTERNAL_BYTES - 4096u);
	assert_has(expect);

	/* A request as the provider makes one: the same figures agent status prints. */
	agent_mem_request_begin();
	for (size_t i = 0; i < STREAM_BLOCKS; i++) {
		blocks[i] = agent_pool_alloc(stream_pool);
	}
	agent_mem_http_request();
	assert_true(agent_mem_stream_chunk(agent_uptime_ms()));
	agent_mem_request_end();
	for (size_t i = 0; i < STREAM_BLOCKS; i++) {
		agent_pool_free(stream_pool, blocks[i]);
	}
	assert_int_equal(run(&tool_system_status, "{}"), 0);
	snprintf(expect, sizeof(expect),
		 "\"internal_lowest_free_bytes_streaming\":%u,\"psram_free_bytes\":512,"
		 "\"psram_free_bytes_before_last_request\":512,"
		 "\"psram_free_bytes_at_last_completion\":%u,\"requests\":1,",
		 POSIX_HEAP_INTERNAL_BYTES - 4096u + 64u,
		 512u - STREAM_BLOCKS * STREAM_BLOCK_BYTES);
	assert_has(expect);
	agent_pool_free(scratch_pool, held);
	posix_heap_free(heap_block);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_builtin_jobs_idle_and_ready, setup),
		cmocka_unit_test_setup(test_begin_end_generation_owner_claims, setup),
		cmocka_unit_test_setup(test_waiting_for_memory_uses_real_pools, setup),
		cmocka_unit_test_setup(test_background_reserve_at_the_bound, setup),
		cmocka_unit_test_setup(test_task_overhead_is_not_taken_from_heap_or_pools, setup),
		cmocka_unit_test_setup(test_thread_slots, setup),
		cmocka_unit_test_setup(test_stack_too_large_and_registration, setup),
		cmocka_unit_test_setup(test_jobs_list_tool, setup),
		cmocka_unit_test_setup(test_system_status, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
