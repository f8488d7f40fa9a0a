/*
 * The module directory format (app/src/modules/module_manifest.c, module_validate.c;
 * docs/modules.md "The module directory", "The manifest keys", "Validation"): every key of
 * every kind valid and invalid, every bound at N and N + 1, the line grammar (CRLF, comments,
 * blank lines), SKILL.md alone and under a manifest, and the whole check of an arrival.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_manifest.h"
#include "sha256.h"

#define BIG 40000

static char why[MODULE_REASON_MAX + 1];
static struct module_manifest m;

/* Texts built by the tests (a few at a time). */
static char bufs[4][BIG];
static char big[BIG]; /* a body, apart from the texts above */
static unsigned int buf_next;

static char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));

static char *fmt(const char *format, ...)
{
	char *b = bufs[buf_next++ % 4u];
	va_list ap;

	va_start(ap, format);
	(void)vsnprintf(b, BIG, format, ap);
	va_end(ap);
	return b;
}

/* @p n bytes of @p c (a string). */
static char *rep(char c, size_t n)
{
	char *b = bufs[buf_next++ % 4u];

	memset(b, c, n);
	b[n] = '\0';
	return b;
}

/* @p n comma-separated copies of @p item with a running number after it. */
static char *items(const char *item, size_t n)
{
	char *b = bufs[buf_next++ % 4u];
	size_t len = 0;

	b[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		len += (size_t)snprintf(b + len, BIG - len, "%s%s%zu", i > 0u ? "," : "", item, i);
	}
	return b;
}

static int parse(const char *text)
{
	memset(why, 'x', sizeof(why));
	why[sizeof(why) - 1u] = '\0';
	return module_manifest_parse(text, strlen(text), &m, why, sizeof(why));
}

static bool is(struct module_text t, const char *s)
{
	return t.len == strlen(s) && memcmp(t.ptr, s, t.len) == 0;
}

static void ok(const char *text)
{
	int rc = parse(text);

	if (rc != 0) {
		fail_msg("refused (%d: %s):\n%s", rc, why, text);
	}
}

static void refused(const char *text, int err, const char *reason)
{
	int rc = parse(text);

	if (rc != err || strcmp(why, reason) != 0) {
		fail_msg("want %d \"%s\", got %d \"%s\" for:\n%s", err, reason, rc,
			 rc == 0 ? "" : why, text);
	}
}

#define ROLE  "kind: role\nname: r\ndescription: A role.\n"
#define SKILL "kind: skill\nname: s\ndescription: A skill.\n"
#define TOOL  "kind: tool\nname: t\ndescription: A tool.\nruntime: lua\nentry: main.lua\n"

static void test_role_every_key(void **state)
{
	(void)state;
	ok("# the conductor\n"
	   "name: conductor\n"
	   "kind: role\n"
	   "description: Plans the work and hands it out.\n"
	   "version: 1.0.2-rc+7\n"
	   "overlay: conductor.txt\n"
	   "tools: fs_read, memory_recall,storage_read , *\n"
	   "skills: arithmetic,unit-conversion\n");
	assert_int_equal(m.kind, MODULE_KIND_ROLE);
	assert_true(is(m.name, "conductor"));
	assert_true(is(m.description, "Plans the work and hands it out."));
	assert_true(is(m.version, "1.0.2-rc+7"));
	assert_true(is(m.overlay, "conductor.txt"));
	assert_true(is(m.tools, "fs_read, memory_recall,storage_read , *"));
	assert_true(is(m.skills, "arithmetic,unit-conversion"));
	assert_true(is(module_manifest_body_file(&m), "conductor.txt"));
}

static void test_role_defaults(void **state)
{
	(void)state;
	ok(ROLE);
	assert_true(is(m.overlay, "overlay.txt"));
	assert_null(m.tools.ptr);
	assert_int_equal(m.tools.len, 0);
	assert_null(m.skills.ptr);
	assert_null(m.version.ptr);
	assert_null(m.body.ptr);
	assert_null(m.entry.ptr);
	assert_true(is(module_manifest_body_file(&m), "overlay.txt"));
}

static void test_skill_keys(void **state)
{
	(void)state;
	ok(SKILL);
	assert_int_equal(m.kind, MODULE_KIND_SKILL);
	assert_true(is(m.body, "SKILL.md"));
	assert_null(m.overlay.ptr);
	ok(SKILL "body: rules.md\nversion: 2\n");
	assert_true(is(m.body, "rules.md"));
	assert_true(is(m.version, "2"));
	assert_true(is(module_manifest_body_file(&m), "rules.md"));
}

static void test_tool_every_key(void **state)
{
	static const char hex[] =
		"00112233445566778899aabbccddeeff0123456789abcdef0f1e2d3c4b5a6978";

	(void)state;
	ok(fmt("kind: tool\nname: unit-convert\ndescription: Converts units.\nruntime: python\n"
	       "entry: convert.py\ndigest: %s\nargs: value:integer, unit : string,exact:boolean\n"
	       "risk: read\noutput: 512\nversion: 0.1\n",
	       hex));
	assert_int_equal(m.kind, MODULE_KIND_TOOL);
	assert_int_equal(m.runtime, MODULE_RUNTIME_PYTHON);
	assert_true(is(m.entry, "convert.py"));
	assert_true(m.has_digest);
	assert_int_equal(m.digest[0], 0x00);
	assert_int_equal(m.digest[1], 0x11);
	assert_int_equal(m.digest[31], 0x78);
	assert_int_equal(m.arg_count, 3);
	assert_true(is(m.args[0].name, "value"));
	assert_int_equal(m.args[0].type, MODULE_ARG_INTEGER);
	assert_true(is(m.args[1].name, "unit"));
	assert_int_equal(m.args[1].type, MODULE_ARG_STRING);
	assert_true(is(m.args[2].name, "exact"));
	assert_int_equal(m.args[2].type, MODULE_ARG_BOOLEAN);
	assert_int_equal(m.risk, TOOL_RISK_READ);
	assert_int_equal(m.output_max, 512);
	assert_true(is(module_manifest_body_file(&m), "convert.py"));
}

static void test_tool_defaults(void **state)
{
	(void)state;
	ok(TOOL);
	assert_int_equal(m.runtime, MODULE_RUNTIME_LUA);
	assert_false(m.has_digest);
	assert_int_equal(m.arg_count, 0);
	assert_int_equal(m.risk, TOOL_RISK_DISRUPTIVE);
	assert_int_equal(m.output_max, CONFIG_AGENT_SCRIPT_TOOL_OUTPUT_MAX_LEN);
	ok("kind: tool\nname: t\ndescription: d\nruntime: host\nentry: t.sh\n");
	assert_int_equal(m.runtime, MODULE_RUNTIME_HOST);
}

/* Each kind's own keys are unknown keys for the other kinds. */
static void test_keys_checked_against_the_kind(void **state)
{
	static const struct {
		const char *line;
		const char *key;
		unsigned int kinds; /* bits of enum module_kind accepting it */
	} keys[] = {
		{"overlay: o.txt\n", "overlay", 1u << MODULE_KIND_ROLE},
		{"tools: fs_read\n", "tools", 1u << MODULE_KIND_ROLE},
		{"skills: arithmetic\n", "skills", 1u << MODULE_KIND_ROLE},
		{"body: b.md\n", "body", 1u << MODULE_KIND_SKILL},
		{"runtime: lua\n", "runtime", 1u << MODULE_KIND_TOOL},
		{"entry: e.lua\n", "entry", 1u << MODULE_KIND_TOOL},
		{"digest: " "0000000000000000000000000000000000000000000000000000000000000000\n",
		 "digest", 1u << MODULE_KIND_TOOL},
		{"args: a:string\n", "args", 1u << MODULE_KIND_TOOL},
		{"risk: read\n", "risk", 1u << MODULE_KIND_TOOL},
		{"output: 100\n", "output", 1u << MODULE_KIND_TOOL},
	};
	static const char *const bases[MODULE_KIND_COUNT] = {
		"kind: role\nname: r\ndescription: d\n", "kind: skill\nname: s\ndescription: d\n",
		"kind: tool\nname: t\ndescription: d\n"};
	static const char *const tool_rest[] = {"runtime: lua\n", "entry: e.lua\n"};

	(void)state;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		for (unsigned int kind = 0; kind < MODULE_KIND_COUNT; kind++) {
			char text[512];

			/* a tool's manifest needs runtime and entry, given once */
			snprintf(text, sizeof(text), "%s%s%s%s", bases[kind], keys[k].line,
				 kind == MODULE_KIND_TOOL && strcmp(keys[k].key, "runtime") != 0
					 ? tool_rest[0] : "",
				 kind == MODULE_KIND_TOOL && strcmp(keys[k].key, "entry") != 0
					 ? tool_rest[1] : "");
			if ((keys[k].kinds & (1u << kind)) != 0u) {
				ok(text);
			} else {
				refused(text, -EINVAL,
					fmt("unknown key \"%s\" for a %s", keys[k].key,
					    module_kind_name((enum module_kind)kind)));
			}
		}
	}
	refused(ROLE "colour: red\n", -EINVAL, "unknown key \"colour\" for a role");
	refused(ROLE "a_very_long_key_name_that_goes_on_and_on: 1\n", -EINVAL,
		"unknown key \"a_very_long_key_name_that_goes_on_an...\" for a role");
}

static void test_missing_keys(void **state)
{
	(void)state;
	refused("name: r\ndescription: d\n", -EINVAL, "missing key \"kind\"");
	refused("", -EINVAL, "missing key \"kind\"");
	refused("# only a comment\n\n", -EINVAL, "missing key \"kind\"");
	refused("kind: role\ndescription: d\n", -EINVAL, "missing key \"name\"");
	refused("kind: skill\nname: s\n", -EINVAL, "missing key \"description\"");
	refused("kind: tool\nname: t\ndescription: d\nentry: e.lua\n", -EINVAL,
		"missing key \"runtime\"");
	refused("kind: tool\nname: t\ndescription: d\nruntime: lua\n", -EINVAL,
		"missing key \"entry\"");
	assert_int_equal(module_manifest_parse(NULL, 0, &m, why, sizeof(why)), -EINVAL);
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	refused(ROLE "name: r2\n", -EINVAL, "duplicate key \"name\"");
	refused(ROLE "kind: role\n", -EINVAL, "duplicate key \"kind\"");
	refused(ROLE "kind: tool\n", -EINVAL, "duplicate key \"kind\"");
	refused(ROLE "tools: a\ntools: b\n", -EINVAL, "duplicate key \"tools\"");
	refused(TOOL "risk: read\nrisk: read\n", -EINVAL, "duplicate key \"risk\"");
}

static void test_kind_value(void **state)
{
	(void)state;
	refused("kind: Role\nname: r\ndescription: d\n", -EINVAL,
		"kind: \"Role\" is not role, skill or tool");
	refused("kind: module\nname: r\ndescription: d\n", -EINVAL,
		"kind: \"module\" is not role, skill or tool");
	refused("kind:\nname: r\ndescription: d\n", -EINVAL, "kind: empty value");
	/* kind is read first, on any line */
	ok("name: r\ndescription: d\noverlay: o.txt\nkind: role\n");
	assert_int_equal(m.kind, MODULE_KIND_ROLE);
}

static void test_line_grammar(void **state)
{
	(void)state;
	refused(ROLE "overlay o.txt\n", -EINVAL, "line 4: no \"key: value\"");
	refused(ROLE " overlay: o.txt\n", -EINVAL, "line 4: no \"key: value\"");
	refused(ROLE "overlay : o.txt\n", -EINVAL, "line 4: no \"key: value\"");
	refused(ROLE "Overlay: o.txt\n", -EINVAL, "line 4: no \"key: value\"");
	refused(ROLE "1overlay: o.txt\n", -EINVAL, "line 4: no \"key: value\"");
	refused(ROLE "over-lay: o.txt\n", -EINVAL, "line 4: no \"key: value\"");
	refused(ROLE ": o.txt\n", -EINVAL, "line 4: no \"key: value\"");
	refused(ROLE "  # an indented comment is no comment\n", -EINVAL,
		"line 4: no \"key: value\"");
	/* a malformed line is found before a missing kind */
	refused("name: r\nbad line\n", -EINVAL, "line 2: no \"key: value\"");
	/* comments, blank lines, blanks around values, no space after the colon */
	ok("# a comment: with a colon\n\n   \n\t\nkind:role\n#\nname:\t r \t\n"
	   "description:   Says # and: colons.  \n\n");
	assert_true(is(m.name, "r"));
	assert_true(is(m.description, "Says # and: colons."));
	/* the last line needs no LF */
	ok("kind: role\nname: r\ndescription: d");
	assert_true(is(m.description, "d"));
	/* an empty value is refused for every key */
	refused(ROLE "overlay:\n", -EINVAL, "overlay: empty value");
	refused(ROLE "version:   \n", -EINVAL, "version: empty value");
	refused(ROLE "tools:\n", -EINVAL, "tools: empty value");
}

static void test_crlf(void **state)
{
	(void)state;
	ok("# comment\r\nkind: tool\r\nname: t\r\ndescription: A tool.\r\n\r\nruntime: lua\r\n"
	   "entry: main.lua\r\nargs: a:string\r\n");
	assert_true(is(m.name, "t"));
	assert_true(is(m.description, "A tool."));
	assert_true(is(m.entry, "main.lua"));
	assert_true(is(m.args[0].name, "a"));
	/* mixed line ends */
	ok("kind: role\r\nname: r\ndescription: d\r\n");
	assert_true(is(m.description, "d"));
	/* a CR not before an LF is part of the value, and no value allows it */
	refused("kind: role\nname: r\rx\ndescription: d\n", -EINVAL,
		"name: \"r\\u000dx\" is not a module name");
	refused("kind: role\nname: r\ndescription: a\rb\n", -EINVAL,
		"description: a control character at byte 1");
	refused("kind: role\nname: r\ndescription: d\r", -EINVAL,
		"description: a control character at byte 1");
	refused("kind: role\r\r\nname: r\ndescription: d\n", -EINVAL,
		"kind: \"role\\u000d\" is not role, skill or tool");
}

static void test_name(void **state)
{
	(void)state;
	ok("kind: role\ndescription: d\nname: a-b_c9\n");
	assert_true(is(m.name, "a-b_c9"));
	ok(fmt("kind: role\ndescription: d\nname: %s\n", rep('n', MODULE_NAME_MAX)));
	assert_int_equal(m.name.len, MODULE_NAME_MAX);
	refused(fmt("kind: role\ndescription: d\nname: %s\n", rep('n', MODULE_NAME_MAX + 1)),
		-E2BIG, "name: 32 bytes, at most 31");
	refused("kind: role\ndescription: d\nname: Foo\n", -EINVAL,
		"name: \"Foo\" is not a module name");
	refused("kind: role\ndescription: d\nname: 9lives\n", -EINVAL,
		"name: \"9lives\" is not a module name");
	refused("kind: role\ndescription: d\nname: a b\n", -EINVAL,
		"name: \"a b\" is not a module name");
	refused("kind: role\ndescription: d\nname: a.b\n", -EINVAL,
		"name: \"a.b\" is not a module name");
	refused("kind: role\ndescription: d\nname: caf\xc3\xa9\n", -EINVAL,
		"name: \"caf\xc3\xa9\" is not a module name");
}

static void test_description(void **state)
{
	(void)state;
	ok(fmt("kind: role\nname: r\ndescription: %s\n", rep('d', MODULE_DESCRIPTION_MAX)));
	assert_int_equal(m.description.len, MODULE_DESCRIPTION_MAX);
	refused(fmt("kind: role\nname: r\ndescription: %s\n", rep('d', MODULE_DESCRIPTION_MAX + 1)),
		-E2BIG, "description: 201 bytes, at most 200");
	refused(fmt("kind: role\nname: r\ndescription: %s\n", rep('d', 231)), -E2BIG,
		"description: 231 bytes, at most 200");
	/* UTF-8 counts bytes */
	ok("kind: role\nname: r\ndescription: Größe \xe2\x82\xac and \xf0\x9f\x98\x80\n");
	refused("kind: role\nname: r\ndescription: a\tb\n", -EINVAL,
		"description: a control character at byte 1");
	refused("kind: role\nname: r\ndescription: ab\x7f\n", -EINVAL,
		"description: a control character at byte 2");
	refused("kind: role\nname: r\ndescription: a\xc2\x85\n", -EINVAL,
		"description: a control character at byte 1");
	refused("kind: role\nname: r\ndescription: a\x1b[1m\n", -EINVAL,
		"description: a control character at byte 1");
	ok("kind: role\nname: r\ndescription: a\xc2\xa0non-breaking\n");
}

static void test_version(void **state)
{
	(void)state;
	ok(fmt(ROLE "version: %s\n", rep('9', MODULE_VERSION_MAX)));
	assert_int_equal(m.version.len, MODULE_VERSION_MAX);
	refused(fmt(ROLE "version: %s\n", rep('9', MODULE_VERSION_MAX + 1)), -E2BIG,
		"version: 16 bytes, at most 15");
	ok(ROLE "version: 1.2-Beta+b.5\n");
	refused(ROLE "version: 1.2 beta\n", -EINVAL, "version: \"1.2 beta\" is not 0-9 A-Z a-z . + -");
	refused(ROLE "version: 1_2\n", -EINVAL, "version: \"1_2\" is not 0-9 A-Z a-z . + -");
}

static void test_file_names(void **state)
{
	static const char *const cases[][2] = {
		{ROLE, "overlay"}, {SKILL, "body"},
		{"kind: tool\nname: t\ndescription: d\nruntime: lua\n", "entry"}};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		const char *base = cases[i][0];
		const char *key = cases[i][1];

		ok(fmt("%s%s: %s\n", base, key, rep('f', MODULE_FILE_MAX)));
		assert_int_equal(module_manifest_body_file(&m).len, MODULE_FILE_MAX);
		refused(fmt("%s%s: %s\n", base, key, rep('f', MODULE_FILE_MAX + 1)), -E2BIG,
			fmt("%s: 64 bytes, at most 63", key));
		ok(fmt("%s%s: My_File-2.v1.txt\n", base, key));
		ok(fmt("%s%s: .hidden\n", base, key));
		refused(fmt("%s%s: .\n", base, key), -EINVAL, fmt("%s: \".\" is not a file name", key));
		refused(fmt("%s%s: ..\n", base, key), -EINVAL, fmt("%s: \"..\" is not a file name", key));
		refused(fmt("%s%s: a/b.txt\n", base, key), -EINVAL,
			fmt("%s: \"a/b.txt\" is not a file name", key));
		refused(fmt("%s%s: /etc/passwd\n", base, key), -EINVAL,
			fmt("%s: \"/etc/passwd\" is not a file name", key));
		refused(fmt("%s%s: a b.txt\n", base, key), -EINVAL,
			fmt("%s: \"a b.txt\" is not a file name", key));
		refused(fmt("%s%s: a\\b\n", base, key), -EINVAL,
			fmt("%s: \"a\\b\" is not a file name", key));
	}
}

static void test_tools_list(void **state)
{
	(void)state;
	ok(ROLE "tools: memory_recall,memory_write,fs_read,fs_list,fs_write,fs_update,run,"
		"skill_use,fs_stat,imported\n");
	ok(ROLE "tools: *\n");
	ok(ROLE "tools: imported_tool_not_yet_there\n");
	ok(fmt(ROLE "tools: %s\n", items("t", MODULE_LIST_MAX)));
	refused(fmt(ROLE "tools: %s\n", items("t", MODULE_LIST_MAX + 1)), -E2BIG,
		"tools: 17 items, at most 16");
	ok(fmt(ROLE "tools: a,%s\n", rep('t', 31)));
	refused(fmt(ROLE "tools: a,%s\n", rep('t', 32)), -E2BIG,
		"tools: \"tttttttttttttttttttttttttttttttt\" is 32 bytes, at most 31");
	refused(ROLE "tools: a,,b\n", -EINVAL, "tools: an empty item");
	refused(ROLE "tools: a,\n", -EINVAL, "tools: an empty item");
	refused(ROLE "tools: ,a\n", -EINVAL, "tools: an empty item");
	refused(ROLE "tools: a, ,b\n", -EINVAL, "tools: an empty item");
	refused(ROLE "tools: fs_read,Storage\n", -EINVAL,
		"tools: \"Storage\" is not a tool or group name");
	refused(ROLE "tools: my-tool\n", -EINVAL, "tools: \"my-tool\" is not a tool or group name");
	refused(ROLE "tools: **\n", -EINVAL, "tools: \"**\" is not a tool or group name");
	refused(ROLE "tools: fs read\n", -EINVAL, "tools: \"fs read\" is not a tool or group name");
}

static void test_skills_list(void **state)
{
	(void)state;
	ok(ROLE "skills: arithmetic, unit-conversion ,a_b\n");
	ok(fmt(ROLE "skills: %s\n", items("s", MODULE_LIST_MAX)));
	refused(fmt(ROLE "skills: %s\n", items("s", MODULE_LIST_MAX + 1)), -E2BIG,
		"skills: 17 items, at most 16");
	ok(fmt(ROLE "skills: %s\n", rep('s', MODULE_NAME_MAX)));
	refused(fmt(ROLE "skills: %s\n", rep('s', MODULE_NAME_MAX + 1)), -E2BIG,
		"skills: \"ssssssssssssssssssssssssssssssss\" is 32 bytes, at most 31");
	refused(ROLE "skills: a,,b\n", -EINVAL, "skills: an empty item");
	refused(ROLE "skills: Arithmetic\n", -EINVAL, "skills: \"Arithmetic\" is not a module name");
	refused(ROLE "skills: *\n", -EINVAL, "skills: \"*\" is not a module name");
}

static void test_runtime(void **state)
{
	static const char *const names[] = {"lua", "python", "host"};

	(void)state;
	for (int i = 0; i < 3; i++) {
		ok(fmt("kind: tool\nname: t\ndescription: d\nentry: e\nruntime: %s\n", names[i]));
		assert_int_equal(m.runtime, i);
	}
	refused("kind: tool\nname: t\ndescription: d\nentry: e\nruntime: Lua\n", -EINVAL,
		"runtime: \"Lua\" is not lua, python or host");
	refused("kind: tool\nname: t\ndescription: d\nentry: e\nruntime: ruby\n", -EINVAL,
		"runtime: \"ruby\" is not lua, python or host");
	refused("kind: tool\nname: t\ndescription: d\nentry: e\nruntime: lua5\n", -EINVAL,
		"runtime: \"lua5\" is not lua, python or host");
}

static void test_digest(void **state)
{
	(void)state;
	ok(fmt(TOOL "digest: %s\n", rep('a', 64)));
	assert_true(m.has_digest);
	assert_int_equal(m.digest[0], 0xaa);
	refused(fmt(TOOL "digest: %s\n", rep('a', 63)), -EINVAL,
		"digest: not 64 lower-case hex digits");
	refused(fmt(TOOL "digest: %s\n", rep('a', 65)), -EINVAL,
		"digest: not 64 lower-case hex digits");
	refused(fmt(TOOL "digest: %s\n", rep('A', 64)), -EINVAL,
		"digest: not 64 lower-case hex digits");
	refused(fmt(TOOL "digest: %s\n", rep('g', 64)), -EINVAL,
		"digest: not 64 lower-case hex digits");
}

static void test_args(void **state)
{
	(void)state;
	ok(TOOL "args: a:string,b:string,c:string,d:string,e:string,f:string,g:integer\n");
	assert_int_equal(m.arg_count, MODULE_TOOL_ARGS_MAX);
	assert_true(is(m.args[6].name, "g"));
	assert_int_equal(m.args[6].type, MODULE_ARG_INTEGER);
	refused(TOOL "args: a:string,b:string,c:string,d:string,e:string,f:string,g:string,"
		     "h:string\n",
		-E2BIG, "args: 8 items, at most 7");
	ok(fmt(TOOL "args: %s:boolean\n", rep('x', MODULE_ARG_NAME_MAX)));
	assert_int_equal(m.args[0].name.len, MODULE_ARG_NAME_MAX);
	refused(fmt(TOOL "args: %s:boolean\n", rep('x', MODULE_ARG_NAME_MAX + 1)), -E2BIG,
		"args: \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\" is 32 bytes, at most 31");
	refused(TOOL "args: a:string,a:integer\n", -EINVAL, "args: duplicate argument \"a\"");
	refused(TOOL "args: a\n", -EINVAL, "args: \"a\" is not NAME:TYPE");
	refused(TOOL "args: a:float\n", -EINVAL, "args: \"float\" is not string, integer or boolean");
	refused(TOOL "args: a:\n", -EINVAL, "args: \"\" is not string, integer or boolean");
	refused(TOOL "args: A:string\n", -EINVAL, "args: \"A\" is not an argument name");
	refused(TOOL "args: :string\n", -EINVAL, "args: \"\" is not an argument name");
	refused(TOOL "args: a-b:string\n", -EINVAL, "args: \"a-b\" is not an argument name");
	refused(TOOL "args: a:string,\n", -EINVAL, "args: an empty item");
	refused(TOOL "args: a:string:string\n", -EINVAL,
		"args: \"string:string\" is not string, integer or boolean");
}

static void test_risk(void **state)
{
	static const char *const names[] = {"read", "sensitive", "mutating", "disruptive"};
	static const enum tool_risk risks[] = {TOOL_RISK_READ, TOOL_RISK_SENSITIVE,
					       TOOL_RISK_MUTATING, TOOL_RISK_DISRUPTIVE};

	(void)state;
	for (int i = 0; i < 4; i++) {
		ok(fmt(TOOL "risk: %s\n", names[i]));
		assert_int_equal(m.risk, risks[i]);
	}
	refused(TOOL "risk: harmless\n", -EINVAL,
		"risk: \"harmless\" is not read, sensitive, mutating or disruptive");
	refused(TOOL "risk: READ\n", -EINVAL,
		"risk: \"READ\" is not read, sensitive, mutating or disruptive");
}

static void test_output(void **state)
{
	(void)state;
	ok(TOOL "output: 1\n");
	assert_int_equal(m.output_max, 1);
	ok(fmt(TOOL "output: %d\n", CONFIG_AGENT_TOOL_RESULT_MAX_LEN));
	assert_int_equal(m.output_max, CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
	refused(fmt(TOOL "output: %d\n", CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1), -E2BIG,
		fmt("output: %d, at most %d", CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1,
		    CONFIG_AGENT_TOOL_RESULT_MAX_LEN));
	refused(TOOL "output: 99999999999999999999999\n", -E2BIG,
		fmt("output: 99999999999999999999999, at most %d", CONFIG_AGENT_TOOL_RESULT_MAX_LEN));
	refused(TOOL "output: 4294967297\n", -E2BIG,
		fmt("output: 4294967297, at most %d", CONFIG_AGENT_TOOL_RESULT_MAX_LEN));
	static const char *const bad[] = {"0", "007", "+5", "-1", "12a", "1 000", "0x10"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refused(fmt(TOOL "output: %s\n", bad[i]), -EINVAL,
			fmt("output: \"%s\" is not a number from 1 to %d", bad[i],
			    CONFIG_AGENT_TOOL_RESULT_MAX_LEN));
	}
}

/* A role manifest of exactly @p len bytes (a comment pads it). */
static char *role_of_len(size_t len)
{
	char *b = bufs[buf_next++ % 4u];
	size_t base = strlen(ROLE);

	memcpy(b, ROLE, base);
	b[base] = '#';
	memset(b + base + 1, 'p', len - base - 2u);
	b[len - 1u] = '\n';
	b[len] = '\0';
	return b;
}

static void test_manifest_bound(void **state)
{
	(void)state;
	ok(role_of_len(CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN));
	refused(role_of_len(CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN + 1), -E2BIG,
		fmt("manifest: %d bytes, at most %d", CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN + 1,
		    CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN));
}

static void test_nul_and_utf8(void **state)
{
	static const char nul[] = "kind: role\nname: r\ndescription: d\n# a\0b\n";

	(void)state;
	assert_int_equal(module_manifest_parse(nul, sizeof(nul) - 1u, &m, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "manifest: a NUL byte at offset 37");
	refused(ROLE "# caf\xe9\n", -EINVAL, "manifest: not UTF-8 at offset 45");
	refused(ROLE "# \xed\xa0\x80 a surrogate\n", -EINVAL, "manifest: not UTF-8 at offset 42");
	refused(ROLE "# \xc0\xaf overlong\n", -EINVAL, "manifest: not UTF-8 at offset 42");
	refused(ROLE "# cut \xe2\x82", -EINVAL, "manifest: not UTF-8 at offset 46");
}

static void test_list_next(void **state)
{
	struct module_text list = {" a ,b,\tc\t", 9};
	struct module_text item;
	size_t pos = 0;

	(void)state;
	assert_true(module_list_next(list, &pos, &item));
	assert_true(is(item, "a"));
	assert_true(module_list_next(list, &pos, &item));
	assert_true(is(item, "b"));
	assert_true(module_list_next(list, &pos, &item));
	assert_true(is(item, "c"));
	assert_false(module_list_next(list, &pos, &item));
	assert_false(module_list_next(list, &pos, &item));
	pos = 0;
	assert_false(module_list_next((struct module_text){NULL, 0}, &pos, &item));
	pos = 0;
	list = (struct module_text){"x,", 2};
	assert_true(module_list_next(list, &pos, &item));
	assert_true(is(item, "x"));
	assert_true(module_list_next(list, &pos, &item));
	assert_int_equal(item.len, 0);
	assert_false(module_list_next(list, &pos, &item));
}

/* ---- SKILL.md ---- */

static const char arithmetic[] = "---\n"
				 "name: arithmetic\n"
				 "description: Gives rules for arithmetic tasks.\n"
				 "---\n"
				 "Check each operation and state the unit of each result.\n";

static size_t body_off;

static int skill_md(const char *text)
{
	memset(why, 'x', sizeof(why));
	why[sizeof(why) - 1u] = '\0';
	body_off = 12345;
	return module_skill_md_parse(text, strlen(text), &m, &body_off, why, sizeof(why));
}

static void skill_md_refused(const char *text, int err, const char *reason)
{
	int rc = skill_md(text);

	if (rc != err || strcmp(why, reason) != 0) {
		fail_msg("want %d \"%s\", got %d \"%s\" for:\n%s", err, reason, rc,
			 rc == 0 ? "" : why, text);
	}
}

static void test_skill_md_arithmetic(void **state)
{
	(void)state;
	assert_int_equal(skill_md(arithmetic), 0);
	assert_int_equal(m.kind, MODULE_KIND_SKILL);
	assert_true(is(m.name, "arithmetic"));
	assert_true(is(m.description, "Gives rules for arithmetic tasks."));
	assert_true(is(m.body, "SKILL.md"));
	assert_string_equal(arithmetic + body_off,
			    "Check each operation and state the unit of each result.\n");
	assert_int_equal(module_front_matter_end(arithmetic, strlen(arithmetic)), body_off);
}

static void test_skill_md_crlf(void **state)
{
	static const char text[] = "---\r\n# a comment\r\nname: arithmetic\r\n\r\n"
				   "description: Gives rules.\r\n---\r\nBody.\r\n";

	(void)state;
	assert_int_equal(skill_md(text), 0);
	assert_true(is(m.name, "arithmetic"));
	assert_true(is(m.description, "Gives rules."));
	assert_string_equal(text + body_off, "Body.\r\n");
}

static void test_skill_md_refusals(void **state)
{
	(void)state;
	skill_md_refused("name: a\n---\nbody\n", -EINVAL, "SKILL.md: no \"---\" line at the start");
	skill_md_refused("--- \nname: a\ndescription: d\n---\nbody\n", -EINVAL,
			 "SKILL.md: no \"---\" line at the start");
	skill_md_refused("\xef\xbb\xbf---\nname: a\ndescription: d\n---\nbody\n", -EINVAL,
			 "SKILL.md: no \"---\" line at the start");
	skill_md_refused("", -EINVAL, "SKILL.md: no \"---\" line at the start");
	skill_md_refused("---", -EINVAL, "SKILL.md: no \"---\" line at the start");
	skill_md_refused("---\nname: a\ndescription: d\n", -EINVAL,
			 "SKILL.md: no closing \"---\" line");
	skill_md_refused("---\nname: a\ndescription: d\n----\nbody\n", -EINVAL,
			 "SKILL.md: no closing \"---\" line");
	skill_md_refused("---\nname: a\ndescription: d\n---\n", -EINVAL, "SKILL.md: empty body");
	skill_md_refused("---\nname: a\ndescription: d\n---", -EINVAL, "SKILL.md: empty body");
	skill_md_refused("---\nname: a\ndescription: d\nkind: skill\n---\nbody\n", -EINVAL,
			 "unknown key \"kind\" in the SKILL.md header");
	skill_md_refused("---\nname: a\ndescription: d\nversion: 1\n---\nbody\n", -EINVAL,
			 "unknown key \"version\" in the SKILL.md header");
	skill_md_refused("---\nname: a\ndescription: d\nbody: b.md\n---\nbody\n", -EINVAL,
			 "unknown key \"body\" in the SKILL.md header");
	skill_md_refused("---\nname: a\n---\nbody\n", -EINVAL, "missing key \"description\"");
	skill_md_refused("---\ndescription: d\n---\nbody\n", -EINVAL, "missing key \"name\"");
	skill_md_refused("---\nname: a\nname: b\ndescription: d\n---\nbody\n", -EINVAL,
			 "duplicate key \"name\"");
	skill_md_refused("---\nname: A\ndescription: d\n---\nbody\n", -EINVAL,
			 "name: \"A\" is not a module name");
	skill_md_refused("---\nname: a\nnot a key line\ndescription: d\n---\nbody\n", -EINVAL,
			 "line 3: no \"key: value\"");
	skill_md_refused(fmt("---\nname: a\ndescription: %s\n---\nbody\n",
			     rep('d', MODULE_DESCRIPTION_MAX + 1)),
			 -E2BIG, "description: 201 bytes, at most 200");
	skill_md_refused("---\nname: a\ndescription: caf\xe9\n---\nbody\n", -EINVAL,
			 "SKILL.md header: not UTF-8 at offset 28");
	assert_int_equal(module_skill_md_parse("---\nname: a\0\ndescription: d\n---\nb", 33, &m,
					       &body_off, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "SKILL.md header: a NUL byte at offset 11");
	assert_int_equal(module_skill_md_parse(NULL, 0, &m, &body_off, why, sizeof(why)), -EINVAL);
	/* only the header is read: the body may hold anything */
	assert_int_equal(skill_md("---\nname: a\ndescription: d\n---\n---\nkind: x\n---\n"), 0);
	assert_int_equal(body_off, 31);
}

/* A SKILL.md whose whole header (both "---" lines) is @p len bytes. */
static char *skill_md_header_of_len(size_t len)
{
	char *b = bufs[buf_next++ % 4u];
	static const char start[] = "---\nname: a\ndescription: d\n#";
	size_t n = sizeof(start) - 1u;

	memcpy(b, start, n);
	memset(b + n, 'p', len - n - 5u);
	memcpy(b + len - 5u, "\n---\nbody\n", 11);
	return b;
}

static void test_skill_md_header_bound(void **state)
{
	(void)state;
	assert_int_equal(skill_md(skill_md_header_of_len(CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN)), 0);
	assert_int_equal(body_off, CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN);
	skill_md_refused(skill_md_header_of_len(CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN + 1), -E2BIG,
			 fmt("SKILL.md header: %d bytes, at most %d",
			     CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN + 1,
			     CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN));
}

static void test_front_matter_end(void **state)
{
	static const struct {
		const char *text;
		size_t end;
	} cases[] = {
		{"---\n---\nbody", 8},
		{"---\r\nname: x\r\n---\r\nbody", 19},
		{"---\nanything: at all\nNot A Key\n---\n", 35},
		{"---\na\n---", 9},
		{"---\na\n---\r", 0},
		{"---\na\n--- \nbody", 0},
		{"---\na\n", 0},
		{"---", 0},
		{"", 0},
		{"body\n---\nx\n---\n", 0},
		{" ---\n---\n", 0},
		{"---\n---\n---\n", 8},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t got = module_front_matter_end(cases[i].text, strlen(cases[i].text));

		if (got != cases[i].end) {
			fail_msg("case %zu: %zu, want %zu", i, got, cases[i].end);
		}
	}
	assert_int_equal(module_front_matter_end(NULL, 0), 0);
}

/* ---- module_validate() ---- */

static int validate(const char *manifest, const char *body, size_t body_len,
		    const char *expect_name, enum module_kind expect_kind)
{
	memset(why, 'x', sizeof(why));
	why[sizeof(why) - 1u] = '\0';
	return module_validate(manifest, manifest != NULL ? strlen(manifest) : 0u, body, body_len,
			       expect_name, expect_kind, &m, why, sizeof(why));
}

static void validate_refused(const char *manifest, const char *body, size_t body_len, int err,
			     const char *reason)
{
	int rc = validate(manifest, body, body_len, NULL, MODULE_KIND_COUNT);

	if (rc != err || strcmp(why, reason) != 0) {
		fail_msg("want %d \"%s\", got %d \"%s\"", err, reason, rc, rc == 0 ? "" : why);
	}
}

static void test_validate_skill_md_alone(void **state)
{
	char *text = big;
	size_t head = strlen("---\nname: a\ndescription: d\n---\n");

	(void)state;
	assert_int_equal(validate(NULL, arithmetic, strlen(arithmetic), "arithmetic",
				  MODULE_KIND_SKILL),
			 0);
	assert_true(is(m.name, "arithmetic"));
	/* the bound counts the body after the header */
	snprintf(text, BIG, "---\nname: a\ndescription: d\n---\n%s",
		 rep('b', CONFIG_AGENT_MODULE_SKILL_MAX_LEN));
	assert_int_equal(strlen(text), head + CONFIG_AGENT_MODULE_SKILL_MAX_LEN);
	assert_int_equal(validate(NULL, text, strlen(text), NULL, MODULE_KIND_COUNT), 0);
	strcat(text, "b");
	validate_refused(NULL, text, strlen(text), -E2BIG,
			 fmt("body \"SKILL.md\": %d bytes, at most %d",
			     CONFIG_AGENT_MODULE_SKILL_MAX_LEN + 1, CONFIG_AGENT_MODULE_SKILL_MAX_LEN));
	validate_refused(NULL, "---\nname: a\ndescription: d\n---\n", 31, -EINVAL,
			 "SKILL.md: empty body");
	validate_refused(NULL, "---\nname: a\ndescription: d\n---\nx\0y", 34, -EINVAL,
			 "body \"SKILL.md\": a NUL byte at offset 32");
	validate_refused(NULL, "---\nname: a\ndescription: d\n---\nx\xff", 33, -EINVAL,
			 "body \"SKILL.md\": not UTF-8 at offset 32");
	validate_refused(NULL, "Just a body.\n", 13, -EINVAL,
			 "SKILL.md: no \"---\" line at the start");
	validate_refused(NULL, NULL, 0, -EINVAL, "SKILL.md: no \"---\" line at the start");
	assert_int_equal(validate(NULL, arithmetic, strlen(arithmetic), "other", MODULE_KIND_COUNT),
			 -EINVAL);
	assert_string_equal(why, "name: the import says \"other\", the SKILL.md \"arithmetic\"");
}

/* A module.manifest takes precedence over the header of the SKILL.md beside it. */
static void test_validate_manifest_precedence(void **state)
{
	static const char manifest[] = "kind: skill\nname: sums\ndescription: Adds up.\n";
	static const char header_name[] = "---\nname: arithmetic\ndescription: Gives rules.\n"
					  "version: not read\n---\nThe body.\n";
	char *text = big;
	size_t off;

	(void)state;
	assert_int_equal(validate(manifest, arithmetic, strlen(arithmetic), "sums", MODULE_KIND_SKILL),
			 0);
	assert_true(is(m.name, "sums"));
	assert_true(is(m.description, "Adds up."));
	off = module_front_matter_end(arithmetic, strlen(arithmetic));
	assert_string_equal(arithmetic + off,
			    "Check each operation and state the unit of each result.\n");
	/* the header's keys are not read, even ones a SKILL.md alone may not have */
	assert_int_equal(validate(manifest, header_name, strlen(header_name), NULL,
				  MODULE_KIND_COUNT),
			 0);
	assert_true(is(m.name, "sums"));
	/* the import's name is checked against the manifest's, not the header's */
	assert_int_equal(validate(manifest, arithmetic, strlen(arithmetic), "arithmetic",
				  MODULE_KIND_COUNT),
			 -EINVAL);
	assert_string_equal(why, "name: the import says \"arithmetic\", the manifest \"sums\"");
	/* a body without a header is the body */
	assert_int_equal(validate(manifest, "Plain body.\n", 12, NULL, MODULE_KIND_COUNT), 0);
	assert_int_equal(module_front_matter_end("Plain body.\n", 12), 0);
	/* the bound counts the body after the header */
	snprintf(text, BIG, "---\nname: x\n---\n%s", rep('b', CONFIG_AGENT_MODULE_SKILL_MAX_LEN));
	assert_int_equal(validate(manifest, text, strlen(text), NULL, MODULE_KIND_COUNT), 0);
	strcat(text, "b");
	validate_refused(manifest, text, strlen(text), -E2BIG,
			 fmt("body \"SKILL.md\": %d bytes, at most %d",
			     CONFIG_AGENT_MODULE_SKILL_MAX_LEN + 1, CONFIG_AGENT_MODULE_SKILL_MAX_LEN));
	/* a header alone leaves an empty body */
	validate_refused(manifest, "---\nname: x\n---\n", 16, -EINVAL, "body \"SKILL.md\": empty");
	/* the header is bounded like a manifest */
	snprintf(text, BIG, "---\n#%s\n---\nbody", rep('p', CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN - 10));
	assert_int_equal(module_front_matter_end(text, strlen(text)),
			 CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN);
	assert_int_equal(validate(manifest, text, strlen(text), NULL, MODULE_KIND_COUNT), 0);
	snprintf(text, BIG, "---\n#%s\n---\nbody", rep('p', CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN - 9));
	validate_refused(manifest, text, strlen(text), -E2BIG,
			 fmt("body \"SKILL.md\": a header of %d bytes, at most %d",
			     CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN + 1,
			     CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN));
	/* a role's overlay is never cut at a header */
	assert_int_equal(validate(ROLE, "---\n---\n", 8, NULL, MODULE_KIND_COUNT), 0);
}

static void test_validate_role(void **state)
{
	const char *manifest = ROLE "overlay: conductor.txt\n";
	char *body = big;

	(void)state;
	memset(body, 'o', CONFIG_AGENT_MODULE_OVERLAY_MAX_LEN + 1);
	assert_int_equal(validate(manifest, body, CONFIG_AGENT_MODULE_OVERLAY_MAX_LEN, "r",
				  MODULE_KIND_ROLE),
			 0);
	validate_refused(manifest, body, CONFIG_AGENT_MODULE_OVERLAY_MAX_LEN + 1, -E2BIG,
			 fmt("overlay \"conductor.txt\": %d bytes, at most %d",
			     CONFIG_AGENT_MODULE_OVERLAY_MAX_LEN + 1,
			     CONFIG_AGENT_MODULE_OVERLAY_MAX_LEN));
	validate_refused(manifest, "", 0, -EINVAL, "overlay \"conductor.txt\": empty");
	validate_refused(ROLE, NULL, 0, -EINVAL, "overlay \"overlay.txt\": empty");
	validate_refused(manifest, "ab\0c", 4, -EINVAL,
			 "overlay \"conductor.txt\": a NUL byte at offset 2");
	validate_refused(manifest, "Gr\xc3\xb6\xc3", 5, -EINVAL,
			 "overlay \"conductor.txt\": not UTF-8 at offset 4");
	assert_int_equal(validate(manifest, "Gr\xc3\xb6\xc3\x9f\xe2\x82\xac\n", 10, NULL,
				  MODULE_KIND_COUNT),
			 0);
	/* the manifest is checked first */
	validate_refused("kind: role\n", "x", 1, -EINVAL, "missing key \"name\"");
}

static void test_validate_tool(void **state)
{
	static const char script[] = "return 1 + 1\n";
	uint8_t digest[SHA256_DIGEST_BYTES];
	char hex[SHA256_HEX_LEN + 1];
	char *body = big;

	(void)state;
	memset(body, 's', CONFIG_AGENT_SCRIPT_FILE_MAX_LEN + 1);
	assert_int_equal(validate(TOOL, body, CONFIG_AGENT_SCRIPT_FILE_MAX_LEN, "t",
				  MODULE_KIND_TOOL),
			 0);
	validate_refused(TOOL, body, CONFIG_AGENT_SCRIPT_FILE_MAX_LEN + 1, -E2BIG,
			 fmt("entry \"main.lua\": %d bytes, at most %d",
			     CONFIG_AGENT_SCRIPT_FILE_MAX_LEN + 1, CONFIG_AGENT_SCRIPT_FILE_MAX_LEN));
	validate_refused(TOOL, "", 0, -EINVAL, "entry \"main.lua\": empty");
	/* a tool's entry may be any bytes */
	assert_int_equal(validate(TOOL, "\x7f" "ELF\0\xff", 6, NULL, MODULE_KIND_COUNT), 0);
	/* the declared digest */
	sha256_digest(script, strlen(script), digest);
	sha256_hex(digest, hex);
	assert_int_equal(validate(fmt(TOOL "digest: %s\n", hex), script, strlen(script), NULL,
				  MODULE_KIND_COUNT),
			 0);
	assert_true(m.has_digest);
	assert_memory_equal(m.digest, digest, sizeof(digest));
	validate_refused(fmt(TOOL "digest: %s\n", hex), "return 1 + 2\n", 13, -EINVAL,
			 "digest: does not match the entry's SHA-256");
}

static void test_validate_identity(void **state)
{
	(void)state;
	assert_int_equal(validate(ROLE, "o", 1, "r", MODULE_KIND_ROLE), 0);
	assert_int_equal(validate(ROLE, "o", 1, NULL, MODULE_KIND_COUNT), 0);
	assert_int_equal(validate(ROLE, "o", 1, "r2", MODULE_KIND_ROLE), -EINVAL);
	assert_string_equal(why, "name: the import says \"r2\", the manifest \"r\"");
	assert_int_equal(validate(ROLE, "o", 1, "", MODULE_KIND_ROLE), -EINVAL);
	assert_string_equal(why, "name: the import says \"\", the manifest \"r\"");
	assert_int_equal(validate(ROLE, "o", 1, "r", MODULE_KIND_TOOL), -EINVAL);
	assert_string_equal(why, "kind: the import says \"tool\", the manifest \"role\"");
	assert_int_equal(validate(ROLE, "o", 1, "a\nvery long name from the import head, cut",
				  MODULE_KIND_ROLE),
			 -EINVAL);
	assert_string_equal(why, "name: the import says \"a\\u000avery long name from the impor...\","
				 " the manifest \"r\"");
}

/* A reason always fits the caller's buffer, cut when it is small. */
static void test_reason_buffer(void **state)
{
	char small[8];

	(void)state;
	assert_int_equal(module_manifest_parse("kind: x\n", 8, &m, small, sizeof(small)), -EINVAL);
	assert_string_equal(small, "kind: \"");
	assert_int_equal(module_manifest_parse("kind: x\n", 8, &m, NULL, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_role_every_key),
		cmocka_unit_test(test_role_defaults),
		cmocka_unit_test(test_skill_keys),
		cmocka_unit_test(test_tool_every_key),
		cmocka_unit_test(test_tool_defaults),
		cmocka_unit_test(test_keys_checked_against_the_kind),
		cmocka_unit_test(test_missing_keys),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_kind_value),
		cmocka_unit_test(test_line_grammar),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_description),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_file_names),
		cmocka_unit_test(test_tools_list),
		cmocka_unit_test(test_skills_list),
		cmocka_unit_test(test_runtime),
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_risk),
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_manifest_bound),
		cmocka_unit_test(test_nul_and_utf8),
		cmocka_unit_test(test_list_next),
		cmocka_unit_test(test_skill_md_arithmetic),
		cmocka_unit_test(test_skill_md_crlf),
		cmocka_unit_test(test_skill_md_refusals),
		cmocka_unit_test(test_skill_md_header_bound),
		cmocka_unit_test(test_front_matter_end),
		cmocka_unit_test(test_validate_skill_md_alone),
		cmocka_unit_test(test_validate_manifest_precedence),
		cmocka_unit_test(test_validate_role),
		cmocka_unit_test(test_validate_tool),
		cmocka_unit_test(test_validate_identity),
		cmocka_unit_test(test_reason_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
