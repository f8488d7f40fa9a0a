/*
 * The firmware_reference tool (app/src/tools/reference_tool.c): its definition and
 * registration, its argument bounds (through tool_args_parse), and its results: at most
 * CONFIG_AGENT_REFERENCE_MATCHES_MAX contracts, always the guidance, never more than
 * CONFIG_AGENT_TOOL_RESULT_MAX_LEN bytes (contracts cut with "truncated": true), and a hint
 * instead of a failure when nothing matches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json_stream.h"
#include "reference.h"
#include "reference_text.h"
#include "tool.h"
#include "tool_exec.h"
#include "tool_registry.h"
#include "tools_reference.h"

#define RESULT_CAP (CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1)
#define FIELD_MAX  2048

/* ---- Reading a result back ---------------------------------------------------------------- */

struct entry {
	char topic[64];
	char summary[128];
	char contract[FIELD_MAX];
	size_t contract_len;
};

struct result {
	struct entry entries[8];
	int count;
	bool results_seen;
	bool truncated;
	bool hint_seen;
	char hint[FIELD_MAX];
	char guidance[FIELD_MAX];
	int other_keys;
};

static void append(char *dst, size_t cap, const struct json_value *v)
{
	size_t used = strlen(dst);

	if (used + v->len < cap) {
		memcpy(dst + used, v->text, v->len);
		dst[used + v->len] = '\0';
	}
}

static int collect(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct result *r = user_data;
	int depth = json_stream_depth(js);
	const char *key = depth >= 1 ? json_stream_key(js, 1) : NULL;

	if (depth == 1 && key != NULL) {
		if (strcmp(key, "results") == 0) {
			r->results_seen = v->token == JSON_ARRAY_BEGIN || r->results_seen;
		} else if (strcmp(key, "truncated") == 0) {
			r->truncated = v->token == JSON_TRUE;
		} else if (strcmp(key, "guidance") == 0 && v->token == JSON_STRING) {
			append(r->guidance, sizeof(r->guidance), v);
		} else if (strcmp(key, "hint") == 0 && v->token == JSON_STRING) {
			r->hint_seen = true;
			append(r->hint, sizeof(r->hint), v);
		} else if (v->token != JSON_STRING || v->first) {
			r->other_keys++;
		}
	}
	if (depth == 2 && v->token == JSON_OBJECT_BEGIN) {
		r->count++;
	}
	if (depth == 3 && v->token == JSON_STRING && r->count > 0 && r->count <= 8) {
		struct entry *e = &r->entries[r->count - 1];
		const char *field = json_stream_key(js, 3);

		if (strcmp(field, "topic") == 0) {
			append(e->topic, sizeof(e->topic), v);
		} else if (strcmp(field, "summary") == 0) {
			append(e->summary, sizeof(e->summary), v);
		} else if (strcmp(field, "contract") == 0) {
			append(e->contract, sizeof(e->contract), v);
			e->contract_len += v->len;
		}
	}
	return 0;
}

static char out[RESULT_CAP];
static char guidance_text[PACKED_TEXT_LEN_MAX + 1];
static struct result res;
static struct json_stream js;

/* Parse @p len bytes of out into res; fails the test unless it is one JSON object. */
static void read_result(int len)
{
	assert_true(len > 0);
	assert_true(len <= CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
	assert_true(tool_json_is_object(out, (size_t)len));
	memset(&res, 0, sizeof(res));
	json_stream_init(&js, collect, &res);
	assert_int_equal(json_stream_feed(&js, out, (size_t)len), 0);
	assert_int_equal(json_stream_finish(&js), 0);
	assert_true(res.results_seen);
	assert_string_equal(res.guidance, packed_text_str(reference_guidance, guidance_text,
							  sizeof(guidance_text)));
	assert_int_equal(res.other_keys, 0);
	assert_true(res.count <= CONFIG_AGENT_REFERENCE_MATCHES_MAX);
}

/* The answer over @p index as the executor writes it, read back into res. */
static void answer(const struct reference_index *index, const char *query)
{
	struct json_writer w;

	jw_init(&w, out, sizeof(out));
	assert_int_equal(reference_tool_answer(index, query, strlen(query), &w), 0);
	read_result(jw_finish(&w));
}

/* ---- Definition, registration, arguments --------------------------------------------------- */

static void test_definition(void **state)
{
	const struct tool_def *def = &tool_firmware_reference;

	(void)state;
	assert_string_equal(def->name, "firmware_reference");
	assert_int_equal(def->risk, TOOL_RISK_READ);
	assert_int_equal(def->domain, TOOL_DOMAIN_REFERENCE);
	assert_int_equal(def->param_count, 1);
	assert_string_equal(def->params[0].name, "query");
	assert_int_equal(def->params[0].type, TOOL_PARAM_STRING);
	assert_true(def->params[0].required);
	assert_int_equal(def->params[0].min, 1);
	assert_int_equal(def->params[0].max, CONFIG_AGENT_TOOL_QUERY_MAX_LEN);
	assert_null(def->unavailable);
	assert_int_equal(def->capability, TOOL_CAP_NONE);
	assert_int_equal(def->groups, TOOL_GROUP_NONE);
	/* registered, second among the bootstrap tools' entries, before tool_search */
	assert_ptr_equal(tool_registry_find("firmware_reference"), def);
	for (size_t i = 0; i < tool_registry_count(); i++) {
		if (tool_registry_get(i) == def) {
			assert_true(i + 1 < tool_registry_count());
			assert_string_equal(tool_registry_get(i + 1)->name, "tool_search");
		}
	}
}

static void test_argument_bounds(void **state)
{
	static struct tool_args args;
	char json[CONFIG_AGENT_TOOL_QUERY_MAX_LEN + 64];
	char why[160];
	const struct tool_def *def = &tool_firmware_reference;
	int n;

	(void)state;
	/* exactly CONFIG_AGENT_TOOL_QUERY_MAX_LEN bytes: accepted */
	n = snprintf(json, sizeof(json), "{\"query\":\"%0*d\"}", CONFIG_AGENT_TOOL_QUERY_MAX_LEN, 7);
	assert_int_equal(tool_args_parse(def, json, (size_t)n, &args, why, sizeof(why)), 0);
	assert_int_equal(args.v[0].len, CONFIG_AGENT_TOOL_QUERY_MAX_LEN);
	/* one byte more: refused, and the reason names the field */
	n = snprintf(json, sizeof(json), "{\"query\":\"%0*d\"}", CONFIG_AGENT_TOOL_QUERY_MAX_LEN + 1,
		     7);
	assert_int_equal(tool_args_parse(def, json, (size_t)n, &args, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "query"));
	/* empty, missing, of another type, or with another field: refused */
	assert_int_equal(tool_args_parse(def, "{\"query\":\"\"}", 12, &args, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(tool_args_parse(def, "{}", 2, &args, why, sizeof(why)), -EINVAL);
	assert_int_equal(tool_args_parse(def, "{\"query\":3}", 11, &args, why, sizeof(why)), -EINVAL);
	assert_int_equal(tool_args_parse(def, "{\"query\":\"gpio\",\"limit\":3}", 26, &args, why,
					 sizeof(why)),
			 -EINVAL);
}

/* Through the canonical executor, as the tool loop runs it. */
static void test_execute(void **state)
{
	static struct tool_args args;
	struct tool_ctx ctx = {.cwd = "/lfs"};
	char why[160];
	const char *json = "{\"query\":\"gpio read level\"}";

	(void)state;
	assert_int_equal(tool_args_parse(&tool_firmware_reference, json, strlen(json), &args, why,
					 sizeof(why)),
			 0);
	assert_int_equal(tool_execute(&tool_firmware_reference, AGENT_TOOLS_READ_ONLY, false, &ctx,
				      &args, out, sizeof(out)),
			 0);
	read_result((int)strlen(out));
	assert_true(res.count >= 1);
	assert_string_equal(res.entries[0].topic, "gpio");
	assert_non_null(strstr(res.entries[0].contract, "Never configures or claims a pin"));
	assert_false(res.truncated);
}

/* ---- Results over the built-in pages ------------------------------------------------------- */

static void test_builtin_queries(void **state)
{
	static const char *const queries[] = {
		"agent",	   "storage write limits", "gpio read level",     "lua gfx drawing",
		"tls certificate", "how do I configure the endpoint",	  "man -k",
		"jobs memory",	   "x",			   "settings forget key", "hardware i2c bus",
	};
	const struct reference_index *idx = reference_builtin();

	(void)state;
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		answer(idx, queries[i]);
		for (int e = 0; e < res.count; e++) {
			const struct reference_page *p = reference_lookup(idx, res.entries[e].topic);

			assert_non_null(p);
			assert_string_equal(res.entries[e].summary, p->summary);
			if (!res.truncated) {
				assert_string_equal(res.entries[e].contract,
						    page_text(p, REFERENCE_CONTRACT));
			}
		}
	}
	answer(idx, "storage write limits");
	assert_int_equal(res.count, CONFIG_AGENT_REFERENCE_MATCHES_MAX);
	assert_true(strcmp(res.entries[0].topic, "storage-tools") == 0 ||
		    strcmp(res.entries[1].topic, "storage-tools") == 0);
	assert_true(strcmp(res.entries[0].topic, "limits") == 0 ||
		    strcmp(res.entries[1].topic, "limits") == 0);
}

/* Every topic's own name finds it first, whole, with the guidance. */
static void test_every_topic(void **state)
{
	const struct reference_index *idx = reference_builtin();

	(void)state;
	for (size_t i = 0; i < idx->count; i++) {
		answer(idx, idx->pages[i].topic);
		assert_true(res.count >= 1);
		assert_string_equal(res.entries[0].topic, idx->pages[i].topic);
		assert_string_equal(res.entries[0].contract,
				    page_text(&idx->pages[i], REFERENCE_CONTRACT));
	}
}

/*
 * A language and a task, the shape of the spec's {"query":"lua gfx drawing"}: the task's page
 * first and whole, its contract ending in a copyable skeleton, the guidance too (read_result).
 * A runtime left out of the build has no page to give.
 */
/* Unused in a build without either runtime. */
static __attribute__((unused)) void expect_skeleton_first(const char *query, const char *topic,
							   const char *calls,
							   const char *handling)
{
	answer(reference_builtin(), query);
	assert_true(res.count >= 1);
	assert_string_equal(res.entries[0].topic, topic);
	assert_string_equal(res.entries[0].contract,
			    page_text(reference_lookup(reference_builtin(), topic),
				      REFERENCE_CONTRACT));
	assert_non_null(strstr(res.entries[0].contract, "\nSkeleton:\n"));
	assert_non_null(strstr(strstr(res.entries[0].contract, "\nSkeleton:\n"), calls));
	assert_non_null(strstr(strstr(res.entries[0].contract, "\nSkeleton:\n"), handling));
}

#if !defined(CONFIG_AGENT_SCRIPT_LUA) || !defined(CONFIG_AGENT_SCRIPT_PYTHON)
static void expect_no_page_of(const char *query, const char *prefix)
{
	answer(reference_builtin(), query);
	for (int e = 0; e < res.count; e++) {
		assert_true(strncmp(res.entries[e].topic, prefix, strlen(prefix)) != 0);
	}
}
#endif

static void test_language_and_task_queries(void **state)
{
	(void)state;
#ifdef CONFIG_AGENT_SCRIPT_LUA
	expect_skeleton_first("lua file read", "lua-files", "device.read(", "pcall(function()");
	expect_skeleton_first("lua gpio", "lua-gpio", "device.gpio()", "pcall(function()");
	expect_skeleton_first("lua sensors", "lua-sensors", "device.sensors()", "pcall(");
#else
	expect_no_page_of("lua file read", "lua-");
#endif
#ifdef CONFIG_AGENT_SCRIPT_PYTHON
	expect_skeleton_first("python gpio", "python-gpio", "device.gpio()", "except OSError");
	expect_skeleton_first("python sensors", "python-sensors", "device.sensors()", "try:");
	expect_skeleton_first("python file read", "python-files", "device.read(", "except (");
#else
	expect_no_page_of("python gpio", "python-");
	assert_string_equal(res.entries[0].topic, "gpio");
#endif
}

static void test_no_match_is_a_hint(void **state)
{
	(void)state;
	answer(reference_builtin(), "gfx drawing");
	assert_int_equal(res.count, 0);
	assert_true(res.hint_seen);
	assert_non_null(strstr(res.hint, "No reference page matches"));
	assert_non_null(strstr(res.hint, " agent-tools"));
	assert_non_null(strstr(res.hint, " storage-tools"));
	assert_false(res.truncated);
	/* only common words */
	answer(reference_builtin(), "how to do the");
	assert_int_equal(res.count, 0);
	assert_true(res.hint_seen);
}

/* ---- Results that do not fit --------------------------------------------------------------- */

static char big[3][1600];

static void fill_contract(char *dst, size_t size, const char *unit)
{
	size_t n = strlen(unit);
	size_t used = 0;

	while (used + n < size) {
		memcpy(dst + used, unit, n);
		used += n;
	}
	dst[used] = '\0';
}

static struct reference_page big_pages[3];

/* Three pages with @p size-byte contracts made of @p units. */
static const struct reference_index *big_index(const char *units[3], size_t size)
{
	static const char *const topics[] = {"big-a", "big-b", "big-c"};
	static struct reference_index idx = {.pages = big_pages, .count = 3};

	for (size_t i = 0; i < 3; i++) {
		fill_contract(big[i], size, units[i]);
		big_pages[i] = (struct reference_page){
			.topic = topics[i],
			.summary = "a big page",
			.keywords = "big",
			.body = "body",
			.contract = big[i],
			.body_len = 4,
			.contract_len = (uint16_t)strlen(big[i]),
		};
	}
	return &idx;
}

static void check_cut(const struct reference_index *idx)
{
	answer(idx, "big");
	assert_true(res.truncated);
	assert_true(res.count >= 1);
	for (int e = 0; e < res.count; e++) {
		const struct reference_page *p = reference_lookup(idx, res.entries[e].topic);

		/* whole, or a prefix of the page's contract */
		assert_true(res.entries[e].contract_len <= p->contract_len);
		assert_memory_equal(res.entries[e].contract, p->contract,
				    res.entries[e].contract_len);
	}
	/* the last one shown is the cut one */
	assert_true(res.entries[res.count - 1].contract_len <
		    reference_lookup(idx, res.entries[res.count - 1].topic)->contract_len);
}

static void test_cut_at_a_line_end(void **state)
{
	const char *units[3] = {"abcdefghij abcdefghij abcdefghij\n", "0123456789\n",
				"line of the third\n"};

	(void)state;
	/* two whole contracts and a part of the third */
	check_cut(big_index(units, 1300));
	assert_int_equal(res.count, 3);
	/* cut after a whole line */
	assert_int_equal(res.entries[res.count - 1].contract[res.entries[res.count - 1].contract_len -
							     1],
			 '\n');
}

/* Quotes double when escaped and control characters take six bytes: still within bounds. */
static void test_cut_with_escapes(void **state)
{
	const char *units[3] = {"\"quoted\" \\ ", "\t\x01", "\"\"\"\""};

	(void)state;
	check_cut(big_index(units, sizeof(big[0])));
}

/* A multi-byte character is never split (the result stays valid UTF-8 to the reader). */
static void test_cut_keeps_characters_whole(void **state)
{
	const char *units[3] = {"\xc3\xa9\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x80\xa8x"};

	(void)state;
	check_cut(big_index(units, sizeof(big[0])));
	for (int e = 0; e < res.count; e++) {
		assert_null(strstr(res.entries[e].contract, "\xef\xbf\xbd")); /* no U+FFFD */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_definition),
		cmocka_unit_test(test_argument_bounds),
		cmocka_unit_test(test_execute),
		cmocka_unit_test(test_builtin_queries),
		cmocka_unit_test(test_every_topic),
		cmocka_unit_test(test_language_and_task_queries),
		cmocka_unit_test(test_no_match_is_a_hint),
		cmocka_unit_test(test_cut_at_a_line_end),
		cmocka_unit_test(test_cut_with_escapes),
		cmocka_unit_test(test_cut_keeps_characters_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
