/*
 * Tool framework pieces without a provider: argument parsing and checking against a tool's
 * params (app/src/tools/tool_args.c), the policy table, the selection and its schemas
 * (tool_session.c), tool_search's matching, and the canonical executor's checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"
#include "tool_exec.h"
#include "tool_registry.h"
#include "tool_session.h"
#include "tools_bootstrap.h"

static const struct tool_param edit_fields[] = {
	{.name = "offset", .type = TOOL_PARAM_INTEGER, .required = true, .min = 0, .max = 100},
	{.name = "insert", .type = TOOL_PARAM_STRING, .required = false, .max = 8},
};

static const struct tool_param params[] = {
	{.name = "path", .type = TOOL_PARAM_STRING, .required = true, .min = 1, .max = 10},
	{.name = "count", .type = TOOL_PARAM_INTEGER, .min = -5, .max = 5},
	{.name = "flag", .type = TOOL_PARAM_BOOLEAN},
	{.name = "edits", .type = TOOL_PARAM_OBJECTS, .min = 1, .max = 3, .fields = edit_fields,
	 .field_count = 2},
};

static int echo_exec(struct tool_ctx *ctx, const struct tool_args *a, struct json_writer *out)
{
	(void)ctx;
	jw_object_begin(out);
	jw_key(out, "path");
	jw_string_n(out, a->v[0].str, a->v[0].len);
	jw_object_end(out);
	return 0;
}

static const struct tool_def demo = {
	.name = "demo",
	.description = PACKED_TEXT_PLAIN("demo"),
	.risk = TOOL_RISK_MUTATING,
	.params = params,
	.param_count = 4,
	.exec = echo_exec,
};

static struct tool_args args;
static char why[160];

static int parse(const char *json)
{
	return tool_args_parse(&demo, json, strlen(json), &args, why, sizeof(why));
}

static void test_valid_arguments(void **state)
{
	(void)state;
	assert_int_equal(parse("{\"path\":\"a\\\"b\",\"count\":-5,\"flag\":true,"
			       "\"edits\":[{\"offset\":3,\"insert\":\"xy\"},{\"offset\":100}]}"),
			 0);
	assert_string_equal(args.v[0].str, "a\"b");
	assert_int_equal(args.v[0].len, 3);
	assert_true(args.v[1].present);
	assert_int_equal(args.v[1].integer, -5);
	assert_true(args.v[2].boolean);
	assert_int_equal(args.v[3].count, 2);
	assert_int_equal(args.item[0][0].integer, 3);
	assert_string_equal(args.item[0][1].str, "xy");
	assert_int_equal(args.item[1][0].integer, 100);
	assert_false(args.item[1][1].present);
	/* optional fields may be left out or given as null */
	assert_int_equal(parse("{\"path\":\"p\",\"count\":null}"), 0);
	assert_false(args.v[1].present);
	/* a string at exactly its bound, escapes counted after unescaping */
	assert_int_equal(parse("{\"path\":\"0123456789\"}"), 0);
	assert_int_equal(parse("{\"path\":\"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\"}"), 0);
	assert_int_equal(args.v[0].len, 10);
}

struct bad {
	const char *json;
	const char *why;
};

static void test_every_bad_argument_has_its_reason(void **state)
{
	static const struct bad cases[] = {
		{"[]", "the arguments must be a JSON object"},
		{"\"x\"", "the arguments must be a JSON object"},
		{"{\"path\":\"a\"", "the arguments are not valid JSON"},
		{"{\"path\":\"a\"} x", "the arguments are not valid JSON"},
		{"{}", "field path is required"},
		{"{\"path\":null}", "field path must be a string"},
		{"{\"path\":\"\"}", "field path must be at least 1 bytes long"},
		{"{\"path\":\"01234567890\"}", "field path is longer than 10 bytes"},
		{"{\"path\":1}", "field path must be a string"},
		{"{\"path\":\"a\",\"path\":\"b\"}", "field path is given twice"},
		{"{\"path\":\"a\",\"nope\":1}", "unknown field nope"},
		/* Names match in all their bytes: a NUL inside the key is no name. */
		{"{\"path\\u0000x\":\"a\"}", "unknown field path\\u0000x"},
		{"{\"path\":\"a\",\"path\\u0000\":\"b\"}", "unknown field path\\u0000"},
		{"{\"path\":\"a\",\"count\\u0000\":1}", "unknown field count\\u0000"},
		{"{\"path\":\"a\",\"edits\":[{\"offset\\u0000\":1}]}",
		 "field edits: unknown field offset\\u0000 in an element"},
		{"{\"path\":\"a\",\"pat\":1}", "unknown field pat"},
		{"{\"path\":\"a\",\"paths\":1}", "unknown field paths"},
		{"{\"path\":\"a\",\"count\":6}", "field count must be at most 5"},
		{"{\"path\":\"a\",\"count\":-6}", "field count must be at least -5"},
		{"{\"path\":\"a\",\"count\":1.5}", "field count must be an integer"},
		{"{\"path\":\"a\",\"count\":1e2}", "field count must be an integer"},
		{"{\"path\":\"a\",\"count\":\"1\"}", "field count must be an integer"},
		{"{\"path\":\"a\",\"count\":99999999999999999999}", "field count is out of range"},
		/* The largest int64 is read (and then out of bounds); one more overflows, as do
		 * the ones that differ in the last digit only. */
		{"{\"path\":\"a\",\"count\":9223372036854775807}", "field count must be at most 5"},
		{"{\"path\":\"a\",\"count\":9223372036854775808}", "field count is out of range"},
		{"{\"path\":\"a\",\"count\":9223372036854775810}", "field count is out of range"},
		{"{\"path\":\"a\",\"count\":-9223372036854775807}", "field count must be at least -5"},
		{"{\"path\":\"a\",\"flag\":1}", "field flag must be true or false"},
		{"{\"path\":\"a\",\"edits\":{}}", "field edits must be an array of objects"},
		{"{\"path\":\"a\",\"edits\":[]}", "field edits needs at least 1 elements"},
		{"{\"path\":\"a\",\"edits\":[1]}", "field edits must be an array of objects"},
		{"{\"path\":\"a\",\"edits\":[{}]}", "field edits[0].offset is required"},
		{"{\"path\":\"a\",\"edits\":[{\"offset\":1,\"x\":1}]}",
		 "field edits: unknown field x in an element"},
		{"{\"path\":\"a\",\"edits\":[{\"offset\":1,\"offset\":2}]}",
		 "field edits: an element repeats a field"},
		{"{\"path\":\"a\",\"edits\":[{\"offset\":[1]}]}",
		 "field edits: elements hold only strings, numbers and booleans"},
		{"{\"path\":\"a\",\"edits\":[{\"offset\":101}]}", "field offset must be at most 100"},
		{"{\"path\":\"a\",\"edits\":[{\"offset\":1,\"insert\":\"123456789\"}]}",
		 "field insert is longer than 8 bytes"},
		{"{\"path\":\"a\",\"edits\":[{\"offset\":1},{\"offset\":1},{\"offset\":1},"
		 "{\"offset\":1}]}",
		 "field edits has more than 3 elements"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = parse(cases[i].json);

		if (err != -EINVAL || strcmp(why, cases[i].why) != 0) {
			fail_msg("%s: got %d '%s', want '%s'", cases[i].json, err, why,
				 cases[i].why);
		}
	}
}

/* "unknown field KEY" for @p key (JSON string text, escapes allowed); the reason. */
static const char *unknown_key(const char *key)
{
	char json[512];

	snprintf(json, sizeof(json), "{\"path\":\"a\",\"%s\":1}", key);
	assert_int_equal(parse(json), -EINVAL);
	return why;
}

static char *repeated(char *out, const char *piece, size_t times)
{
	out[0] = '\0';
	for (size_t i = 0; i < times; i++) {
		strcat(out, piece);
	}
	return out;
}

/*
 * The key of an unknown field as the reason shows it (utf8_shown()): controls C0, DEL and C1
 * as \u00XX, whole characters, at most 60 bytes, "..." after a key cut there or at
 * JSON_KEY_MAX (47 bytes). Before, a C1 control (U+009B, a one-byte CSI) went out raw and
 * a long key showed whole (11 NULs: 66 bytes).
 */
static void test_unknown_keys_are_shown_visible_and_whole(void **state)
{
	char key[400];
	char want[400];

	(void)state;
	assert_string_equal(unknown_key("x\\u009b\\u007f\\u009fy\\u00a0z"),
			    "unknown field x\\u009b\\u007f\\u009fy\xc2\xa0z");
	assert_string_equal(unknown_key("caf\\u00e9"), "unknown field caf\xc3\xa9");
	/* 10 NULs are 60 bytes shown: whole; 11 would be 66: ten of them and "...". */
	snprintf(want, sizeof(want), "unknown field %s", repeated(key, "\\u0000", 10));
	assert_string_equal(unknown_key(key), want);
	repeated(key, "\\u0000", 11);
	snprintf(want, sizeof(want), "unknown field %s...", repeated(want + 200, "\\u0000", 10));
	assert_string_equal(unknown_key(key), want);
	/* A 2-byte character that ends at byte 60 is shown; one that would end at 61 is not,
	 * not half of it either. */
	snprintf(key, sizeof(key), "%saaaa\\u00e9", repeated(want + 200, "\\u0000", 9));
	snprintf(want, sizeof(want), "unknown field %saaaa\xc3\xa9",
		 repeated(want + 200, "\\u0000", 9));
	assert_string_equal(unknown_key(key), want);
	snprintf(key, sizeof(key), "%saaaaa\\u00e9", repeated(want + 200, "\\u0000", 9));
	snprintf(want, sizeof(want), "unknown field %saaaaa...",
		 repeated(want + 200, "\\u0000", 9));
	assert_string_equal(unknown_key(key), want);
	/* 47 bytes (JSON_KEY_MAX) whole; 48 cut to 47 and marked. */
	snprintf(want, sizeof(want), "unknown field %s", repeated(key, "k", 47));
	assert_string_equal(unknown_key(key), want);
	strcat(want, "...");
	assert_string_equal(unknown_key(repeated(key, "k", 48)), want);
}

static void test_arguments_longer_than_the_bound(void **state)
{
	static char big[CONFIG_AGENT_TOOL_ARGS_MAX_LEN + 2];

	(void)state;
	memset(big, ' ', sizeof(big) - 1);
	big[0] = '{';
	memcpy(big + 1, "\"path\":\"a\"", 10);
	big[CONFIG_AGENT_TOOL_ARGS_MAX_LEN - 1] = '}';
	big[CONFIG_AGENT_TOOL_ARGS_MAX_LEN] = '\0';
	assert_int_equal(parse(big), 0); /* exactly the bound */
	big[CONFIG_AGENT_TOOL_ARGS_MAX_LEN - 1] = ' ';
	big[CONFIG_AGENT_TOOL_ARGS_MAX_LEN] = '}';
	assert_int_equal(parse(big), -EINVAL);
	assert_string_equal(why, "the arguments are longer than 4095 bytes");
}

static void test_policy_table(void **state)
{
	(void)state;
	for (int r = TOOL_RISK_READ; r <= TOOL_RISK_DISRUPTIVE; r++) {
		assert_int_equal(tool_policy_disposition(AGENT_TOOLS_OFF, r), TOOL_DENIED);
	}
	assert_int_equal(tool_policy_disposition(AGENT_TOOLS_READ_ONLY, TOOL_RISK_READ), TOOL_RUNS);
	assert_int_equal(tool_policy_disposition(AGENT_TOOLS_READ_ONLY, TOOL_RISK_SENSITIVE),
			 TOOL_ASKS);
	assert_int_equal(tool_policy_disposition(AGENT_TOOLS_READ_ONLY, TOOL_RISK_MUTATING),
			 TOOL_DENIED);
	assert_int_equal(tool_policy_disposition(AGENT_TOOLS_READ_ONLY, TOOL_RISK_DISRUPTIVE),
			 TOOL_DENIED);
	assert_int_equal(tool_policy_disposition(AGENT_TOOLS_CONFIRM, TOOL_RISK_READ), TOOL_RUNS);
	for (int r = TOOL_RISK_SENSITIVE; r <= TOOL_RISK_DISRUPTIVE; r++) {
		assert_int_equal(tool_policy_disposition(AGENT_TOOLS_CONFIRM, r), TOOL_ASKS);
	}
}

static void test_executor_checks_the_policy_again(void **state)
{
	static char out[CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1];
	struct tool_ctx ctx = {.cwd = "/lfs"};

	(void)state;
	assert_int_equal(parse("{\"path\":\"x\"}"), 0);
	/* mutating: denied under read-only and off, needs the confirmation under confirm */
	assert_int_equal(tool_execute(&demo, AGENT_TOOLS_READ_ONLY, true, &ctx, &args, out,
				      sizeof(out)),
			 -EPERM);
	assert_int_equal(tool_execute(&demo, AGENT_TOOLS_OFF, true, &ctx, &args, out, sizeof(out)),
			 -EPERM);
	assert_int_equal(tool_execute(&demo, AGENT_TOOLS_CONFIRM, false, &ctx, &args, out,
				      sizeof(out)),
			 -EPERM);
	assert_int_equal(tool_execute(&demo, AGENT_TOOLS_CONFIRM, true, &ctx, &args, out,
				      sizeof(out)),
			 0);
	assert_string_equal(out, "{\"path\":\"x\"}");
}

static int big_exec(struct tool_ctx *ctx, const struct tool_args *a, struct json_writer *out)
{
	(void)ctx;
	(void)a;
	jw_object_begin(out);
	jw_key(out, "x");
	jw_string_begin(out);
	for (int i = 0; i < 5000; i++) {
		jw_string_part(out, "a", 1);
	}
	jw_string_end(out);
	jw_object_end(out);
	return 0;
}

static int array_exec(struct tool_ctx *ctx, const struct tool_args *a, struct json_writer *out)
{
	(void)ctx;
	(void)a;
	jw_array_begin(out);
	jw_array_end(out);
	return 0;
}

static void test_executor_replaces_bad_results(void **state)
{
	static char out[CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1];
	struct tool_def def = demo;
	struct tool_ctx ctx = {.cwd = "/lfs"};

	(void)state;
	def.risk = TOOL_RISK_READ;
	def.exec = big_exec;
	assert_int_equal(parse("{\"path\":\"x\"}"), 0);
	assert_int_equal(tool_execute(&def, AGENT_TOOLS_CONFIRM, false, &ctx, &args, out,
				      sizeof(out)),
			 -ENOSPC);
	assert_string_equal(out, "{\"error\":\"the result of demo exceeded 4095 bytes\","
				 "\"truncated\":true}");
	def.exec = array_exec;
	assert_int_equal(tool_execute(&def, AGENT_TOOLS_CONFIRM, false, &ctx, &args, out,
				      sizeof(out)),
			 -EBADMSG);
	assert_true(tool_json_is_object(out, strlen(out)));
}

static void test_path_like_tokens(void **state)
{
	(void)state;
	assert_true(tool_text_has_path("does mandel.py exist?"));
	assert_true(tool_text_has_path("open /config.lua"));
	assert_true(tool_text_has_path("look in scripts/"));
	assert_true(tool_text_has_path("(notes.txt)"));
	assert_false(tool_text_has_path("pi is 3.14 roughly."));
	assert_false(tool_text_has_path("hello world. how are you?"));
	assert_false(tool_text_has_path("e.g. this"));
	assert_false(tool_text_has_path(NULL));
}

static void test_schemas_fit_and_bootstrap_comes_first(void **state)
{
	static char buf[CONFIG_AGENT_TOOL_DESCRIPTOR_BUF_SIZE];
	struct tool_session s;
	const struct tool_def *list[TOOL_ADVERTISED_MAX];
	struct json_writer w;

	(void)state;
	tool_session_init(&s, AGENT_TOOLS_CONFIRM, "");
	size_t n = tool_session_advertised(&s, list, TOOL_ADVERTISED_MAX);

	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		assert_true(tool_is_bootstrap(list[i]));
	}
	tool_session_init(&s, AGENT_TOOLS_OFF, "");
	assert_int_equal(tool_session_advertised(&s, list, TOOL_ADVERTISED_MAX), 0);
	/* Every registered tool's schema, in both forms, is valid JSON. */
	for (size_t i = 0; i < tool_registry_count(); i++) {
		jw_init(&w, buf, sizeof(buf));
		tool_write_parameters(tool_registry_get(i), &w);
		int len = jw_finish(&w);

		assert_true(len > 0);
		assert_true(tool_json_is_object(buf, (size_t)len));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_arguments),
		cmocka_unit_test(test_every_bad_argument_has_its_reason),
		cmocka_unit_test(test_unknown_keys_are_shown_visible_and_whole),
		cmocka_unit_test(test_arguments_longer_than_the_bound),
		cmocka_unit_test(test_policy_table),
		cmocka_unit_test(test_executor_checks_the_policy_again),
		cmocka_unit_test(test_executor_replaces_bad_results),
		cmocka_unit_test(test_path_like_tokens),
		cmocka_unit_test(test_schemas_fit_and_bootstrap_comes_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
