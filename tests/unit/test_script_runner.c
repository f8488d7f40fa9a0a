/*
 * The script runner through script_run() with the Lua runtime (app/src/script,
 * app/src/runtimes/lua; docs/scripting.md): every outcome with the heap back to empty after
 * it, the output bound at N and N+1, the single-owner guard of two overlapping runs, a
 * cancel raised by another thread, a stop that pcall and a finalizer cannot swallow, and
 * source and recursion deep enough to exhaust the parser's and the VM's C stack on the
 * 16 KiB worker. Run under ASan in the sanitised build. First, before any runtime is put in
 * place, which script tools the registry holds without one.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_jobs.h"
#include "agent_port.h"
#include "flash_fixture.h"
#include "script_internal.h"
#include "script_runner.h"
#include "storage_params.h"
#include "tool_capability.h"
#include "tool_registry.h"

#define TOOL_OUTPUT_MAX CONFIG_AGENT_SCRIPT_TOOL_OUTPUT_MAX_LEN /* 383 */
#define LONG_MS		30000u

static char out[CONFIG_AGENT_MANUAL_SCRIPT_OUTPUT_MAX_LEN + 1];

struct run {
	enum script_lang lang;
	const char *source;
	const char *path;
	const char *const *argv;
	uint8_t argc;
	size_t out_cap;
	uint32_t deadline_ms;
	struct agent_cancel *cancel;
	char *out;
	struct script_status st;
	int rc;
};

static void do_run(struct run *r)
{
	struct script_request req = {
		.lang = r->lang,
		.source = r->source,
		.source_len = r->source != NULL ? strlen(r->source) : 0u,
		.path = r->path,
		.argv = r->argv,
		.argc = r->argc,
		.out = r->out != NULL ? r->out : out,
		.out_cap = r->out_cap != 0u ? r->out_cap : sizeof(out),
		.deadline_ms = r->deadline_ms != 0u ? r->deadline_ms : LONG_MS,
		.cancel = r->cancel,
		.owner = "test",
	};

	r->rc = script_run(&req, &r->st);
}

static void run_thread(void *user_data)
{
	do_run(user_data);
}

/* The heap of @p lang holds nothing, as the status and the port's figures both say. */
static void assert_heap_empty(enum script_lang lang, const struct script_status *st)
{
	struct agent_region_stats stats;

	assert_int_equal(st->heap_left_bytes, 0);
	assert_int_equal(script_heap_stats(lang, &stats), 0);
	assert_int_equal(stats.used_bytes, 0);
}

/* Run @p r on a thread with the worker's stack (the script's C stack on the device). */
static void run_on_worker(struct run *r, struct agent_thread **thread)
{
	assert_int_equal(agent_thread_start(thread, "script_test", CONFIG_AGENT_WORKER_STACK_SIZE,
					    run_thread, r),
			 0);
}

/* Wait for the run on @p thread; one that is never stopped fails the test (not hangs it). */
static void join(struct agent_thread *thread, const struct run *r)
{
	if (agent_thread_join(thread, 10000) != 0) {
		fail_msg("not stopped within 10 s: %s", r->source != NULL ? r->source : r->path);
	}
}

/* Run Lua @p source on the worker; it must end with the heap empty. */
static struct script_status lua(const char *source, uint32_t deadline_ms)
{
	struct run r = {.lang = SCRIPT_LANG_LUA, .source = source, .deadline_ms = deadline_ms};
	struct agent_thread *thread;

	run_on_worker(&r, &thread);
	join(thread, &r);
	assert_int_equal(r.rc, 0);
	assert_heap_empty(SCRIPT_LANG_LUA, &r.st);
	return r.st;
}

/* ---- Without a runtime ------------------------------------------------------------------- */

static void test_no_runtime_no_script_tools(void **state)
{
	const struct tool_def *file;

	(void)state;
	/* Nothing registered a runtime yet: only script_run_file is in the registry, and it
	 * is unavailable (never offered) with the capability's reason. */
	assert_int_equal(tool_script_runtime_count(), 0);
	assert_false(script_lang_available(SCRIPT_LANG_LUA));
	assert_false(script_lang_available(SCRIPT_LANG_PYTHON));
	assert_int_equal(script_tools_register(), 0);
	assert_null(tool_registry_find("script_run_lua"));
	assert_null(tool_registry_find("script_run_python"));
	file = tool_registry_find("script_run_file");
	assert_non_null(file);
	assert_false(tool_available(file));
	assert_string_equal(tool_unavailable_reason(file), "no script runtime is built in");
	/* And a run is refused as unavailable, not run. */
	{
		struct run r = {.lang = SCRIPT_LANG_LUA, .source = "print(1)"};

		do_run(&r);
		assert_int_equal(r.rc, -ENOTSUP);
		assert_int_equal(r.st.outcome, SCRIPT_UNAVAILABLE);
		assert_string_equal(out, "");
	}
}

/* ---- With the runtimes built in ------------------------------------------------------------ */

static int group_setup(void **state)
{
	(void)state;
	if (script_runner_init() != 0) {
		return -1;
	}
	return flash_fixture_setup("script_runner");
}

static int group_teardown(void **state)
{
	(void)state;
	return flash_fixture_teardown();
}

static void test_tools_registered_with_lua(void **state)
{
	(void)state;
	assert_true(script_lang_available(SCRIPT_LANG_LUA));
	assert_non_null(tool_registry_find("script_run_lua"));
	assert_true(tool_available(tool_registry_find("script_run_lua")));
	assert_true(tool_available(tool_registry_find("script_run_file")));
#ifdef CONFIG_AGENT_SCRIPT_PYTHON
	assert_non_null(tool_registry_find("script_run_python"));
#else
	assert_null(tool_registry_find("script_run_python"));
#endif
}

static void test_completed(void **state)
{
	struct script_status st;

	(void)state;
	st = lua("print(6 * 7)", 0);
	assert_int_equal(st.outcome, SCRIPT_COMPLETED);
	assert_string_equal(out, "42\n");
	assert_int_equal(st.out_len, 3);
	assert_false(st.truncated);
	assert_true(st.heap_peak_bytes > 0);
}

static void test_exception_has_type_line_and_message(void **state)
{
	struct script_status st;

	(void)state;
	st = lua("local x = 1\nlocal y = nil\nprint('before')\nprint(x + y)\n", 0);
	assert_int_equal(st.outcome, SCRIPT_EXCEPTION);
	assert_string_equal(st.exc_type, "runtime error");
	assert_int_equal(st.line, 4);
	assert_non_null(strstr(st.message, "arithmetic on a nil value"));
	assert_string_equal(out, "before\n"); /* the output up to the error is kept */

	st = lua("error('boom')", 0);
	assert_int_equal(st.outcome, SCRIPT_EXCEPTION);
	assert_int_equal(st.line, 1);
	assert_string_equal(st.message, "boom");

	/* A non-string error object. */
	st = lua("error({})", 0);
	assert_int_equal(st.outcome, SCRIPT_EXCEPTION);
	assert_int_equal(st.line, 0);
}

static void test_syntax_error(void **state)
{
	struct script_status st;

	(void)state;
	st = lua("x = 1\n= = 2\n", 0);
	assert_int_equal(st.outcome, SCRIPT_EXCEPTION);
	assert_string_equal(st.exc_type, "syntax error");
	assert_int_equal(st.line, 2);
	assert_string_equal(out, "");
}

static void test_binary_chunks_are_refused(void **state)
{
	struct script_status st;

	(void)state;
	/* A binary chunk as the source, and through load(). */
	st = lua("\x1bLua\x54", 0);
	assert_int_equal(st.outcome, SCRIPT_EXCEPTION);
	assert_string_equal(st.exc_type, "syntax error");
	st = lua("local f, e = load(string.dump(function() end)) print(f, e)", 0);
	assert_int_equal(st.outcome, SCRIPT_COMPLETED);
	assert_string_equal(out, "nil\tattempt to load a binary chunk (mode is 't')\n");
	st = lua("local f, e = load(string.dump(function() end), 'x', 'b') print(f, e)", 0);
	assert_int_equal(st.outcome, SCRIPT_COMPLETED);
	assert_string_equal(out, "nil\tattempt to load a binary chunk (mode is 't')\n");
}

static void test_deadline(void **state)
{
	struct script_status st;

	(void)state;
	st = lua("while true do end", 300);
	assert_int_equal(st.outcome, SCRIPT_DEADLINE);
	assert_in_range(st.elapsed_ms, 300, 1000);
	assert_string_equal(st.message, "stopped at its deadline");
	/* device.sleep_ms past the deadline is cut short. */
	st = lua("device.sleep_ms(60000)", 300);
	assert_int_equal(st.outcome, SCRIPT_DEADLINE);
	assert_in_range(st.elapsed_ms, 300, 1000);
}

static void test_out_of_memory(void **state)
{
	struct script_status st;

	(void)state;
	st = lua("local t = {} while true do t[#t + 1] = string.rep('x', 1000) .. #t end", 0);
	assert_int_equal(st.outcome, SCRIPT_OUT_OF_MEMORY);
	assert_true(st.heap_peak_bytes > CONFIG_AGENT_SCRIPT_LUA_HEAP_SIZE / 2);
	/* One allocation larger than the heap. */
	st = lua("local s = string.rep('x', " STORAGE_STR(CONFIG_AGENT_SCRIPT_LUA_HEAP_SIZE) ")", 0);
	assert_int_equal(st.outcome, SCRIPT_OUT_OF_MEMORY);
}

static void test_load_failed(void **state)
{
	struct run r = {.lang = SCRIPT_LANG_LUA, .path = "/lfs/none.lua"};

	(void)state;
	do_run(&r);
	assert_int_equal(r.rc, -ENOENT);
	assert_int_equal(r.st.outcome, SCRIPT_LOAD_FAILED);
	assert_string_equal(r.st.message, "no such file");
	assert_heap_empty(SCRIPT_LANG_LUA, &r.st);
}

static void write_file(const char *path, const char *text)
{
	struct agent_file *f;

	assert_int_equal(agent_fs_open(&f, path, AGENT_FS_O_WRITE | AGENT_FS_O_CREATE |
							  AGENT_FS_O_TRUNC),
			 0);
	assert_int_equal(agent_fs_write(f, text, strlen(text)), (int)strlen(text));
	assert_int_equal(agent_fs_close(f), 0);
}

static void test_file_with_arguments(void **state)
{
	static const char *const args[CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX + 1] = {
		"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"};
	struct run r = {.lang = SCRIPT_LANG_LUA, .path = "/lfs/args.lua", .argv = args};

	(void)state;
	write_file("/lfs/args.lua", "local n = select('#', ...)\n"
				    "print(arg[0], #arg, n, table.concat(arg, ' '))\n");
	r.argc = CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX;
	do_run(&r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.st.outcome, SCRIPT_COMPLETED);
	assert_string_equal(out, "/lfs/args.lua\t7\t7\ta1 a2 a3 a4 a5 a6 a7\n");
	assert_heap_empty(SCRIPT_LANG_LUA, &r.st);
	/* One more is refused before anything runs. */
	r.argc = CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX + 1;
	do_run(&r);
	assert_int_equal(r.rc, -E2BIG);
	assert_int_equal(r.st.outcome, SCRIPT_LOAD_FAILED);
	assert_string_equal(out, "");
}

/* A print of @p n bytes (n - 1 characters and the line break) through an out_cap of 384. */
static void print_bytes(size_t n, struct script_status *st, char *buf, size_t cap)
{
	char source[64];
	struct run r = {.lang = SCRIPT_LANG_LUA, .source = source, .out = buf, .out_cap = cap};

	(void)snprintf(source, sizeof(source), "print(string.rep('x', %zu))", n - 1u);
	do_run(&r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.st.outcome, SCRIPT_COMPLETED);
	assert_heap_empty(SCRIPT_LANG_LUA, &r.st);
	*st = r.st;
}

static void test_output_bound(void **state)
{
	char buf[TOOL_OUTPUT_MAX + 1 + 8];
	struct script_status st;

	(void)state;
	memset(buf, '#', sizeof(buf));
	print_bytes(TOOL_OUTPUT_MAX, &st, buf, TOOL_OUTPUT_MAX + 1);
	assert_false(st.truncated);
	assert_int_equal(st.out_len, TOOL_OUTPUT_MAX);
	assert_int_equal(st.out_total, TOOL_OUTPUT_MAX);
	assert_int_equal(strlen(buf), TOOL_OUTPUT_MAX);
	assert_int_equal(buf[TOOL_OUTPUT_MAX - 1], '\n');

	memset(buf, '#', sizeof(buf));
	print_bytes(TOOL_OUTPUT_MAX + 1, &st, buf, TOOL_OUTPUT_MAX + 1);
	assert_true(st.truncated);
	assert_int_equal(st.out_len, TOOL_OUTPUT_MAX);
	assert_int_equal(st.out_total, TOOL_OUTPUT_MAX + 1);
	assert_int_equal(strlen(buf), TOOL_OUTPUT_MAX);
	assert_int_equal(buf[TOOL_OUTPUT_MAX - 1], 'x');
	assert_int_equal(buf[TOOL_OUTPUT_MAX + 1], '#'); /* nothing written past out_cap */
}

/* Wait until a run of @p lang holds its guard (the job is running). */
static void wait_running(enum script_lang lang)
{
	const char *job = lang == SCRIPT_LANG_LUA ? "script_lua" : "script_python";

	for (int i = 0; i < 500; i++) {
		struct agent_job_admission why;

		if (agent_job_check(job, &why) != 0) {
			fail_msg("no job %s", job);
		}
		if (why.disposition == AGENT_JOB_RUNNING_NOW) {
			return;
		}
		agent_sleep_ms(10);
	}
	fail_msg("%s never started", job);
}

static void test_guard_refuses_a_second_run(void **state)
{
	static char out_a[64];
	struct run a = {.lang = SCRIPT_LANG_LUA,
			.source = "device.sleep_ms(600) print('a done')",
			.out = out_a,
			.out_cap = sizeof(out_a)};
	struct run b = {.lang = SCRIPT_LANG_LUA, .source = "print('b ran')"};
	struct agent_thread *thread;

	(void)state;
	run_on_worker(&a, &thread);
	wait_running(SCRIPT_LANG_LUA);
	do_run(&b);
	assert_int_equal(b.rc, -EBUSY);
	assert_int_equal(b.st.outcome, SCRIPT_BUSY);
	assert_non_null(strstr(b.st.message, "script_lua"));
	assert_string_equal(out, "");
	join(thread, &a);
	/* A was not disturbed. */
	assert_int_equal(a.rc, 0);
	assert_int_equal(a.st.outcome, SCRIPT_COMPLETED);
	assert_string_equal(out_a, "a done\n");
	assert_heap_empty(SCRIPT_LANG_LUA, &a.st);
	/* And the runtime is free again. */
	assert_int_equal(lua("print('b ran')", 0).outcome, SCRIPT_COMPLETED);
	assert_string_equal(out, "b ran\n");
}

static void test_lua_and_python_may_overlap(void **state)
{
	(void)state;
#ifdef CONFIG_AGENT_SCRIPT_PYTHON
	static char out_a[64];
	struct run a = {.lang = SCRIPT_LANG_LUA,
			.source = "device.sleep_ms(600) print('lua done')",
			.out = out_a,
			.out_cap = sizeof(out_a)};
	struct run b = {.lang = SCRIPT_LANG_PYTHON, .source = "print(6 * 7)"};
	struct agent_thread *thread;

	run_on_worker(&a, &thread);
	wait_running(SCRIPT_LANG_LUA);
	do_run(&b);
	assert_int_equal(b.rc, 0);
	assert_int_equal(b.st.outcome, SCRIPT_COMPLETED);
	assert_string_equal(out, "42\n");
	assert_heap_empty(SCRIPT_LANG_PYTHON, &b.st);
	join(thread, &a);
	assert_int_equal(a.st.outcome, SCRIPT_COMPLETED);
	assert_string_equal(out_a, "lua done\n");
	assert_heap_empty(SCRIPT_LANG_LUA, &a.st);
#else
	/* Python is not built in: a Python run is refused as unavailable. */
	struct run b = {.lang = SCRIPT_LANG_PYTHON, .source = "print(6 * 7)"};

	do_run(&b);
	assert_int_equal(b.rc, -ENOTSUP);
	assert_int_equal(b.st.outcome, SCRIPT_UNAVAILABLE);
#endif
}

/* Run @p source on the worker, raise the cancel after 300 ms; it must stop within 1 s. */
static void cancel_stops(const char *source)
{
	struct agent_cancel cancel = {0};
	struct run r = {.lang = SCRIPT_LANG_LUA, .source = source, .cancel = &cancel};
	struct agent_thread *thread;
	int64_t raised;

	run_on_worker(&r, &thread);
	wait_running(SCRIPT_LANG_LUA);
	agent_sleep_ms(300);
	raised = agent_uptime_ms();
	agent_cancel_raise(&cancel);
	join(thread, &r);
	if (agent_uptime_ms() - raised >= 1000) {
		fail_msg("%s: stopped %d ms after the cancel", source,
			 (int)(agent_uptime_ms() - raised));
	}
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.st.outcome, SCRIPT_CANCELLED);
	assert_string_equal(r.st.message, "cancelled");
	assert_heap_empty(SCRIPT_LANG_LUA, &r.st);
}

static void test_cancel_from_another_thread(void **state)
{
	(void)state;
	cancel_stops("while true do end");
	cancel_stops("device.sleep_ms(60000)");
	cancel_stops("local t = {} while true do t[1] = {} end");
}

static void test_pcall_cannot_swallow_the_stop(void **state)
{
	struct script_status st;

	(void)state;
	cancel_stops("while true do pcall(function() while true do end end) end");
	st = lua("while true do pcall(function() while true do end end) end", 300);
	assert_int_equal(st.outcome, SCRIPT_DEADLINE);
	st = lua("while true do local co = coroutine.wrap(function() while true do end end) "
		 "pcall(co) end",
		 300);
	assert_int_equal(st.outcome, SCRIPT_DEADLINE);
	/* A to-be-closed variable whose __close loops. */
	st = lua("while true do pcall(function() local x <close> = setmetatable({}, "
		 "{__close = function() while true do end end}) while true do end end) end",
		 300);
	assert_int_equal(st.outcome, SCRIPT_DEADLINE);
}

/*
 * Lua runs finalizers with its hooks off, so one that loops (at lua_close or in a collection)
 * could never be stopped: setmetatable refuses a metatable with __gc, whatever its value (a
 * callable table would be called too).
 */
static void test_a_finalizer_cannot_be_made(void **state)
{
	static const char *const sources[] = {
		"setmetatable({}, {__gc = function() while true do end end})",
		"setmetatable({}, {__gc = function() while true do end end}) collectgarbage()",
		"setmetatable({}, {__gc = setmetatable({}, {__call = function() while true do end "
		"end})})",
		"local mt = {} mt.__gc = true setmetatable({}, mt)",
		"local ok = pcall(setmetatable, {}, {__gc = function() while true do end end}) "
		"collectgarbage() print(ok)",
	};
	struct script_status st;

	(void)state;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]) - 1u; i++) {
		st = lua(sources[i], 300);
		assert_int_equal(st.outcome, SCRIPT_EXCEPTION);
		assert_int_equal(st.line, 1);
		assert_string_equal(st.message,
				    "__gc is not available to scripts (a finalizer cannot be stopped)");
	}
	st = lua(sources[sizeof(sources) / sizeof(sources[0]) - 1u], 300);
	assert_int_equal(st.outcome, SCRIPT_COMPLETED);
	assert_string_equal(out, "false\n");
	/* Other metatables still work, __close included. */
	st = lua("local t = setmetatable({}, {__index = function(_, k) return k .. '!' end}) "
		 "do local c <close> = setmetatable({}, {__close = function() print('closed') end}) "
		 "end print(t.hi)",
		 0);
	assert_int_equal(st.outcome, SCRIPT_COMPLETED);
	assert_string_equal(out, "closed\nhi!\n");
}

/* xpcall's handler runs where the hook works: one that loops is stopped, and it still gets
 * the error of an ordinary failure. */
static void test_xpcall(void **state)
{
	struct script_status st;

	(void)state;
	st = lua("print(xpcall(function(a) error('e' .. a, 0) end, function(m) return 'h:' .. m "
		 "end, 1)) print(xpcall(function(...) return ... end, print, 2, 3))",
		 0);
	assert_int_equal(st.outcome, SCRIPT_COMPLETED);
	assert_string_equal(out, "false\th:e1\ntrue\t2\t3\n");
	st = lua("xpcall(print, 7)", 0);
	assert_int_equal(st.outcome, SCRIPT_EXCEPTION);
	assert_non_null(strstr(st.message, "bad argument #2 to 'xpcall'"));
	st = lua("while true do xpcall(function() while true do end end, "
		 "function(e) while true do end end) end",
		 300);
	assert_int_equal(st.outcome, SCRIPT_DEADLINE);
	cancel_stops("xpcall(function() while true do end end, function() while true do end end)");
}

static void test_deep_nesting_is_an_exception(void **state)
{
	static char source[10001];
	struct run r = {.lang = SCRIPT_LANG_LUA, .source = source};
	struct agent_thread *thread;
	static const char *const deep[] = {
		/* recursion in Lua: the VM's stack limit (Lua calls use no C stack) */
		"local function f(n) return f(n + 1) + 1 end f(1)",
		"local function f(n) local t = {n, f = f} return 1 + t.f(n + 1) end f(1)",
	};

	(void)state;
	memset(source, '(', sizeof(source) - 1u);
	run_on_worker(&r, &thread);
	join(thread, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.st.outcome, SCRIPT_EXCEPTION);
	assert_string_equal(r.st.exc_type, "syntax error");
	assert_heap_empty(SCRIPT_LANG_LUA, &r.st);
	/* The same with a table constructor and a chain of unary operators. */
	memset(source, '{', sizeof(source) - 1u);
	run_on_worker(&r, &thread);
	join(thread, &r);
	assert_int_equal(r.st.outcome, SCRIPT_EXCEPTION);
	memcpy(source, "return ", 7);
	memset(source + 7, '~', sizeof(source) - 9u); /* return ~~~...~1 */
	source[sizeof(source) - 2u] = '1';
	run_on_worker(&r, &thread);
	join(thread, &r);
	assert_int_equal(r.st.outcome, SCRIPT_EXCEPTION);
	assert_heap_empty(SCRIPT_LANG_LUA, &r.st);

	for (size_t i = 0; i < sizeof(deep) / sizeof(deep[0]); i++) {
		struct run d = {.lang = SCRIPT_LANG_LUA, .source = deep[i], .deadline_ms = 5000};

		run_on_worker(&d, &thread);
		join(thread, &d);
		assert_int_equal(d.rc, 0);
		if (d.st.outcome != SCRIPT_EXCEPTION && d.st.outcome != SCRIPT_OUT_OF_MEMORY) {
			fail_msg("%s: %s", deep[i], script_outcome_name(d.st.outcome));
		}
		assert_heap_empty(SCRIPT_LANG_LUA, &d.st);
	}
}

/*
 * Recursion through C functions (each level up to 2 KiB of C stack): the call hook ends it
 * with "C stack overflow" once the run has taken half its thread's stack (8 KiB of the 16 KiB
 * worker; script_exec_c_stack_max()). Without the check each of these overflowed the worker's stack.
 */
static void test_c_recursion_is_an_exception(void **state)
{
	static const char *const deep[] = {
		"local function f(s) return (string.gsub(s, '.', f)) end f('ab')",
		"local t = setmetatable({}, {__tostring = function(t) "
		"return string.format('%s', t) end}) tostring(t)",
		"local function cmp(a, b) table.sort({3, 2, 1}, cmp) return a < b end "
		"table.sort({3, 2, 1}, cmp)",
		"local t = setmetatable({}, {}) getmetatable(t).__index = function(t, k) "
		"return t[k] end local x = t.x",
	};
	struct agent_thread *thread;

	(void)state;
	for (size_t i = 0; i < sizeof(deep) / sizeof(deep[0]); i++) {
		struct run d = {.lang = SCRIPT_LANG_LUA, .source = deep[i], .deadline_ms = 5000};

		run_on_worker(&d, &thread);
		join(thread, &d);
		assert_int_equal(d.rc, 0);
		if (d.st.outcome != SCRIPT_EXCEPTION || strstr(d.st.message, "C stack overflow") == NULL) {
			fail_msg("%s: %s %s", deep[i], script_outcome_name(d.st.outcome), d.st.message);
		}
		assert_heap_empty(SCRIPT_LANG_LUA, &d.st);
	}
	/* pcall catches it like any error; the run goes on. */
	{
		struct run d = {.lang = SCRIPT_LANG_LUA, .deadline_ms = 5000,
				.source = "local function f() return pcall(f) end "
					  "print(select(2, f()))"};

		run_on_worker(&d, &thread);
		join(thread, &d);
		assert_int_equal(d.st.outcome, SCRIPT_COMPLETED);
		assert_non_null(strstr(out, "C stack overflow"));
		assert_heap_empty(SCRIPT_LANG_LUA, &d.st);
	}
}

static void test_bad_requests(void **state)
{
	struct script_request req = {.lang = SCRIPT_LANG_LUA, .source = "x", .source_len = 1};
	struct script_status st;

	(void)state;
	/* No output buffer, both a source and a path, neither. */
	assert_int_equal(script_run(&req, &st), -EINVAL);
	req.out = out;
	req.out_cap = sizeof(out);
	req.path = "/lfs/x.lua";
	assert_int_equal(script_run(&req, &st), -EINVAL);
	req.source = NULL;
	req.path = NULL;
	assert_int_equal(script_run(&req, &st), -EINVAL);
	assert_int_equal(st.outcome, SCRIPT_LOAD_FAILED);
	assert_int_equal(script_run(NULL, &st), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest without[] = {
		cmocka_unit_test(test_no_runtime_no_script_tools),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tools_registered_with_lua),
		cmocka_unit_test(test_completed),
		cmocka_unit_test(test_exception_has_type_line_and_message),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_binary_chunks_are_refused),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_load_failed),
		cmocka_unit_test(test_file_with_arguments),
		cmocka_unit_test(test_output_bound),
		cmocka_unit_test(test_guard_refuses_a_second_run),
		cmocka_unit_test(test_lua_and_python_may_overlap),
		cmocka_unit_test(test_cancel_from_another_thread),
		cmocka_unit_test(test_pcall_cannot_swallow_the_stop),
		cmocka_unit_test(test_a_finalizer_cannot_be_made),
		cmocka_unit_test(test_xpcall),
		cmocka_unit_test(test_deep_nesting_is_an_exception),
		cmocka_unit_test(test_c_recursion_is_an_exception),
		cmocka_unit_test(test_bad_requests),
	};
	int failed = cmocka_run_group_tests_name("without a runtime", without, NULL, NULL);

	return failed + cmocka_run_group_tests_name("script_runner", tests, group_setup,
						    group_teardown);
}
