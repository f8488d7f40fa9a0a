/*
 * The MicroPython runtime (app/src/runtimes/python, docs/scripting-python.md) through the
 * script runner, as `agent script python` and script_run_python use it: every script runs on a
 * thread with the worker's stack (CONFIG_AGENT_WORKER_STACK_SIZE; the port scales it under
 * AddressSanitizer), and after every run, whatever its outcome, the runtime's region is empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_jobs.h"
#include "agent_port.h"
#include "script_runner.h"

#define OUT_CAP 4096u

struct run {
	const char *source;
	const char *const *argv;
	uint8_t argc;
	uint32_t deadline_ms;
	struct agent_cancel *cancel;
	char out[OUT_CAP];
	struct script_status status;
	int rc;
};

static void run_on_worker(void *user_data)
{
	struct run *run = user_data;
	struct script_request req = {
		.lang = SCRIPT_LANG_PYTHON,
		.source = run->source,
		.source_len = strlen(run->source),
		.argv = run->argv,
		.argc = run->argc,
		.out = run->out,
		.out_cap = sizeof(run->out),
		.deadline_ms = run->deadline_ms != 0u ? run->deadline_ms : 10000u,
		.cancel = run->cancel,
		.owner = "test",
	};

	run->rc = script_run(&req, &run->status);
}

static void assert_heap_empty(void)
{
	struct agent_region_stats stats;

	assert_int_equal(script_heap_stats(SCRIPT_LANG_PYTHON, &stats), 0);
	assert_int_equal(stats.used_bytes, 0);
	assert_int_equal(stats.blocks, 0);
}

/*
 * Run @p run on a thread of the port with the worker's stack (CONFIG_AGENT_WORKER_STACK_SIZE;
 * the port gives sanitised threads four times it, and the runner's C stack share follows) and
 * wait for it. A run that overran the stack would hit the thread's guard page. The region is
 * empty afterwards.
 */
static void run_python(struct run *run)
{
	struct agent_thread *thread;

	assert_int_equal(agent_thread_start(&thread, "py_test", CONFIG_AGENT_WORKER_STACK_SIZE,
					    run_on_worker, run),
			 0);
	assert_int_equal(agent_thread_join(thread, 60000u), 0);
	assert_int_equal(run->status.heap_left_bytes, 0);
	assert_heap_empty();
}

static struct run *new_run(const char *source)
{
	struct run *run = calloc(1, sizeof(*run));

	assert_non_null(run);
	run->source = source;
	return run;
}

/* Run @p source with a 300 ms deadline: it ends as "deadline" within a second of it;
 * returns the run for further checks (the caller frees it). */
static struct run *run_until_deadline(const char *source)
{
	struct run *run = new_run(source);

	run->deadline_ms = 300u;
	run_python(run);
	assert_int_equal(run->rc, 0);
	assert_int_equal(run->status.outcome, SCRIPT_DEADLINE);
	assert_true(run->status.elapsed_ms >= 300u);
	assert_true(run->status.elapsed_ms < 1300u);
	return run;
}

static void assert_exception(const struct run *run, const char *type, const char *message,
			     int32_t line)
{
	assert_int_equal(run->rc, 0);
	assert_int_equal(run->status.outcome, SCRIPT_EXCEPTION);
	assert_string_equal(run->status.exc_type, type);
	if (message != NULL) {
		assert_string_equal(run->status.message, message);
	}
	assert_int_equal(run->status.line, line);
}

static int setup(void **state)
{
	(void)state;
	assert_int_equal(agent_jobs_init(), 0);
	assert_int_equal(script_runner_init(), 0);
	assert_true(script_lang_available(SCRIPT_LANG_PYTHON));
	assert_heap_empty();
	return 0;
}

static void test_print_completes(void **state)
{
	struct run *run = new_run("print(6 * 7)\n");

	(void)state;
	run_python(run);
	assert_int_equal(run->rc, 0);
	assert_int_equal(run->status.outcome, SCRIPT_COMPLETED);
	assert_string_equal(run->out, "42\n");
	assert_true(run->status.heap_peak_bytes > 0u);
	free(run);
}

/* Integers are Python's (arbitrary precision); a huge one ends as out of memory, quickly. */
static void test_big_integers(void **state)
{
	struct run *run = new_run("print(2 ** 100, 9999999999999999999999999996 * 2)\n"
				  "print((1 << 64) - 1, -(2 ** 63) - 1)\n");

	(void)state;
	run_python(run);
	assert_int_equal(run->status.outcome, SCRIPT_COMPLETED);
	assert_string_equal(run->out, "1267650600228229401496703205376 19999999999999999999999999992\n"
				      "18446744073709551615 -9223372036854775809\n");
	free(run);

	run = new_run("x = 7 ** 10 ** 7\n");
	run_python(run);
	assert_int_equal(run->status.outcome, SCRIPT_OUT_OF_MEMORY);
	assert_true(run->status.elapsed_ms < 2000u);
	free(run);
}

static void test_argv(void **state)
{
	static const char *const args[] = {"one", "two words"};
	struct run *run = new_run("import sys\nprint(sys.argv)");

	(void)state;
	run->argv = args;
	run->argc = 2;
	run_python(run);
	assert_int_equal(run->status.outcome, SCRIPT_COMPLETED);
	assert_string_equal(run->out, "['<stdin>', 'one', 'two words']\n");
	free(run);
}

static void test_exception_type_message_line(void **state)
{
	struct run *run = new_run("x = [1, 2]\n"
				  "print('before')\n"
				  "y = x[5]\n"
				  "print('after')\n");

	(void)state;
	run_python(run);
	assert_exception(run, "IndexError", "list index out of range", 3);
	assert_string_equal(run->out, "before\n");
	free(run);
}

static void test_exception_line_is_the_innermost(void **state)
{
	struct run *run = new_run("def inner():\n"
				  "    raise KeyError('k')\n"
				  "\n"
				  "def outer():\n"
				  "    inner()\n"
				  "\n"
				  "outer()\n");

	(void)state;
	run_python(run);
	assert_exception(run, "KeyError", "k", 2);
	free(run);
}

static void test_syntax_error(void **state)
{
	struct run *run = new_run("a = 1\n"
				  "b = 2\n"
				  "def f(:\n"
				  "    pass\n");

	(void)state;
	run_python(run);
	assert_exception(run, "SyntaxError", "invalid syntax", 3);
	free(run);
}

static void test_sys_exit(void **state)
{
	struct run *run = new_run("import sys\nprint('a')\nsys.exit()\nprint('b')\n");

	(void)state;
	run_python(run);
	assert_int_equal(run->status.outcome, SCRIPT_COMPLETED);
	assert_string_equal(run->out, "a\n");
	free(run);

	run = new_run("import sys\nsys.exit(3)\n");
	run_python(run);
	assert_exception(run, "SystemExit", "3", 2);
	free(run);
}

static void test_deadline_stops_a_busy_loop(void **state)
{
	(void)state;
	free(run_until_deadline("while True:\n    pass\n"));
}

/* The stop is not an exception a script can catch: it unwinds past every try. */
static void test_deadline_passes_by_try(void **state)
{
	(void)state;
	free(run_until_deadline("n = 0\n"
				"while True:\n"
				"    try:\n"
				"        while True:\n"
				"            pass\n"
				"    except BaseException:\n"
				"        n += 1\n"
				"    finally:\n"
				"        n += 1\n"));
}

/* Loops inside one C function never reach the VM's hook; they are stopped all the same. */
static void test_deadline_stops_a_loop_in_c(void **state)
{
	static const char *const sources[] = {
		"print(sum(range(10 ** 12)))\n",
		"print(max(map(abs, range(10 ** 12))))\n",
		"print(max(x for x in range(10 ** 12)))\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		free(run_until_deadline(sources[i]));
	}
}

/* Reporting an exception runs its __str__, which the deadline stops too. */
static void test_deadline_stops_a_looping_exception_text(void **state)
{
	(void)state;
	free(run_until_deadline("class Slow(Exception):\n"
				"    def __str__(self):\n"
				"        while True:\n"
				"            pass\n"
				"raise Slow()\n"));
}

static void test_deadline_stops_a_sleep(void **state)
{
	struct run *run = run_until_deadline("import time\ntime.sleep(20)\nprint('woke')\n");

	(void)state;
	assert_string_equal(run->out, "");
	free(run);
}

struct canceller {
	struct agent_cancel *cancel;
	uint32_t after_ms;
	int64_t raised_at;
};

static void cancel_later(void *user_data)
{
	struct canceller *c = user_data;

	agent_sleep_ms(c->after_ms);
	c->raised_at = agent_uptime_ms();
	agent_cancel_raise(c->cancel);
}

static void test_cancel_stops_a_busy_loop_within_a_second(void **state)
{
	static const char *const sources[] = {
		"while True:\n    pass\n",
		"import device\nwhile True:\n    device.sleep_ms(1000)\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		struct agent_cancel cancel = {0};
		struct canceller c = {&cancel, 300u, 0};
		struct agent_thread *thread;
		struct run *run = new_run(sources[i]);
		int64_t ended;

		run->deadline_ms = 30000u;
		run->cancel = &cancel;
		assert_int_equal(agent_thread_start(&thread, "py_cancel", 16384u, cancel_later,
						    &c),
				 0);
		run_python(run);
		ended = agent_uptime_ms();
		assert_int_equal(agent_thread_join(thread, 5000u), 0);
		assert_int_equal(run->status.outcome, SCRIPT_CANCELLED);
		assert_true(c.raised_at > 0);
		assert_true(ended - c.raised_at < 1000);
		free(run);
	}
}

static void test_heap_exhausted(void **state)
{
	static const char *const sources[] = {
		"a = []\nwhile True:\n    a.append('x' * 1000)\n",
		"b = bytearray(1 << 30)\n",
		"d = {}\ni = 0\nwhile True:\n    d[i] = str(i)\n    i += 1\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		struct run *run = new_run(sources[i]);

		run_python(run);
		assert_int_equal(run->rc, 0);
		assert_int_equal(run->status.outcome, SCRIPT_OUT_OF_MEMORY);
		free(run);
	}
	/* The runtime works as before after running out. */
	test_print_completes(state);
}

/* The device module is built from the runner's table; its errors are Python exceptions. */
static void test_device_module(void **state)
{
	struct run *run = new_run("import device\n"
				  "t = device.uptime_ms()\n"
				  "print(type(t).__name__, t >= 0)\n"
				  "print(sorted(device.board().keys()))\n"
				  "try:\n"
				  "    device.sleep_ms(-1)\n"
				  "except ValueError as e:\n"
				  "    print('ValueError', e)\n"
				  "try:\n"
				  "    device.read(5)\n"
				  "except TypeError:\n"
				  "    print('TypeError')\n"
				  "try:\n"
				  "    device.uptime_ms(1)\n"
				  "except TypeError:\n"
				  "    print('TypeError')\n"
				  "try:\n"
				  "    device.read('/lfs/none.txt')\n"
				  "except OSError as e:\n"
				  "    print('OSError', e.args[0] > 0, len(e.args[1]) > 0)\n");

	(void)state;
	run_python(run);
	assert_int_equal(run->status.outcome, SCRIPT_COMPLETED);
	assert_string_equal(run->out, "int True\n"
				      "['board', 'firmware', 'model', 'soc', 'uptime_ms']\n"
				      "ValueError ms must be 0 to 60000\n"
				      "TypeError\n"
				      "TypeError\n"
				      "OSError True True\n");
	free(run);
}

static void test_time_module(void **state)
{
	struct run *run = new_run("import time\n"
				  "t = time.ticks_ms()\n"
				  "time.sleep_ms(50)\n"
				  "time.sleep(0.05)\n"
				  "print(time.ticks_diff(time.ticks_ms(), t) >= 100)\n");

	(void)state;
	run_python(run);
	assert_int_equal(run->status.outcome, SCRIPT_COMPLETED);
	assert_string_equal(run->out, "True\n");
	assert_true(run->status.elapsed_ms >= 100u);
	free(run);
}

/* Collections while objects are reachable only from the stack and the heap keep them. */
static void test_collections_keep_live_objects(void **state)
{
	struct run *run = new_run("import gc\n"
				  "keep = {}\n"
				  "for i in range(3000):\n"
				  "    keep[i % 50] = [str(i)] * 10\n"
				  "    if i % 100 == 0:\n"
				  "        gc.collect()\n"
				  "print(sum(len(v) for v in keep.values()), keep[49][0])\n");

	(void)state;
	run_python(run);
	assert_int_equal(run->status.outcome, SCRIPT_COMPLETED);
	assert_string_equal(run->out, "500 2999\n");
	free(run);
}

/* Python calling Python nests no C frames: its frames fill the Python stack, then stop. */
static void test_deep_recursion_fills_the_python_stack(void **state)
{
	struct run *run = new_run("def f(n):\n"
				  "    return f(n + 1) + 1\n"
				  "f(0)\n");

	(void)state;
	run_python(run);
	assert_exception(run, "RuntimeError", "pystack exhausted", 2);
	free(run);

	/* The depth it allows: a small function, with a try in each frame. */
	run = new_run("def f(n):\n"
		      "    try:\n"
		      "        return f(n + 1)\n"
		      "    except RuntimeError:\n"
		      "        return n\n"
		      "print(f(0) >= 50)\n");
	run_python(run);
	assert_int_equal(run->status.outcome, SCRIPT_COMPLETED);
	assert_string_equal(run->out, "True\n");
	free(run);
}

static void test_deep_c_recursion_is_stopped_by_the_stack_check(void **state)
{
	static const struct {
		const char *source;
		int32_t line;
	} cases[] = {
		/* A call that nests in C: a class's __init__ creating its own class. */
		{"class A:\n"
		 "    def __init__(self, n):\n"
		 "        self.c = A(n + 1)\n"
		 "A(0)\n",
		 3},
		/* A C function recursing: the repr of nested lists (MicroPython's own check). */
		{"a = []\n"
		 "for i in range(300):\n"
		 "    a = [a]\n"
		 "s = repr(a)\n",
		 4},
		/* C paths MicroPython does not check, checked by the adapter's mp_obj_get_type(). */
		{"a = []\n"
		 "b = []\n"
		 "for i in range(300):\n"
		 "    a = [a]\n"
		 "    b = [b]\n"
		 "print(a == b)\n",
		 6},
		{"t = ()\n"
		 "for i in range(300):\n"
		 "    t = (t,)\n"
		 "print(hash(t))\n",
		 4},
		{"a = ()\n"
		 "b = ()\n"
		 "for i in range(300):\n"
		 "    a = (a,)\n"
		 "    b = (b,)\n"
		 "print(a == b)\n",
		 6},
		{"a = []\n"
		 "b = []\n"
		 "for i in range(300):\n"
		 "    a = [a]\n"
		 "    b = [b]\n"
		 "print(a < b)\n",
		 6},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run *run = new_run(cases[i].source);

		run_python(run);
		assert_exception(run, "RuntimeError", "maximum recursion depth exceeded",
				 cases[i].line);
		assert_string_equal(run->out, "");
		free(run);
	}
}

/* "x=1", then "y=" and "-(" nested @p depth times around x: one tree level per "-(". */
static char *nested_negations(unsigned int depth)
{
	size_t len = 8u + 3u * depth + 2u;
	char *source = malloc(len);
	size_t at = 0;

	assert_non_null(source);
	at += (size_t)snprintf(source + at, len - at, "x=1\ny=");
	for (unsigned int i = 0; i < depth; i++) {
		source[at++] = '-';
		source[at++] = '(';
	}
	source[at++] = 'x';
	for (unsigned int i = 0; i < depth; i++) {
		source[at++] = ')';
	}
	source[at++] = '\n';
	source[at] = '\0';
	return source;
}

/*
 * The compiler recurses over the parse tree unchecked, so the adapter refuses a tree deeper
 * than 48 levels (PYTHON_PARSE_DEPTH_MAX): "y = -(-(...x...))" is two levels and one per
 * "-(", so 46 of them are the most that compile.
 */
static void test_deeply_nested_expression(void **state)
{
	char *source = nested_negations(46);
	struct run *run = new_run(source);

	(void)state;
	run_python(run);
	assert_int_equal(run->status.outcome, SCRIPT_COMPLETED);
	free(run);
	free(source);

	source = nested_negations(47);
	run = new_run(source);
	run_python(run);
	assert_exception(run, "SyntaxError", "too deeply nested", 2);
	free(run);
	free(source);

	/* Deeper, in brackets. */
	source = malloc(2u * 100u + 2u);
	assert_non_null(source);
	memset(source, '[', 100u);
	memset(source + 100u, ']', 100u);
	source[200] = '\n';
	source[201] = '\0';
	run = new_run(source);
	run_python(run);
	assert_exception(run, "SyntaxError", "too deeply nested", 1);
	free(run);
	free(source);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_print_completes),
		cmocka_unit_test(test_big_integers),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_exception_type_message_line),
		cmocka_unit_test(test_exception_line_is_the_innermost),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_sys_exit),
		cmocka_unit_test(test_deadline_stops_a_busy_loop),
		cmocka_unit_test(test_deadline_passes_by_try),
		cmocka_unit_test(test_deadline_stops_a_loop_in_c),
		cmocka_unit_test(test_deadline_stops_a_looping_exception_text),
		cmocka_unit_test(test_deadline_stops_a_sleep),
		cmocka_unit_test(test_cancel_stops_a_busy_loop_within_a_second),
		cmocka_unit_test(test_device_module),
		cmocka_unit_test(test_time_module),
		cmocka_unit_test(test_collections_keep_live_objects),
		cmocka_unit_test(test_deep_recursion_fills_the_python_stack),
		cmocka_unit_test(test_deep_c_recursion_is_stopped_by_the_stack_check),
		cmocka_unit_test(test_deeply_nested_expression),
		cmocka_unit_test(test_heap_exhausted),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
