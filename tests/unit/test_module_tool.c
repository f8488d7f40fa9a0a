/*
 * Imported device tools (app/src/modules/module_tool.c, module_tool_args.c; docs/modules.md
 * "Device tools"): a manifest's `args` as the tool's parameters (declared order, types,
 * bounds; 7 declared arguments and the manifest's refusal of 8), a call's values as argv
 * (decimal integers, true/false), the digest check, and the registry kept in step with the
 * catalog: an import registers, a replacement re-registers the new text, a removal
 * unregisters, a change while a request runs is refused, and a catalog text corrupted
 * between the import and the call is refused by the digest check before anything runs.
 * Without /lfs the imports install without a journal (docs/modules.md "The journal").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_catalog.h"
#include "module_import.h"
#include "module_manifest.h"
#include "module_tool.h"
#include "script_runner.h"
#include "sha256.h"
#include "tool_capability.h"
#include "tool_registry.h"

static bool request_running;

static bool fake_active(void)
{
	return request_running;
}

static int setup(void **state)
{
	(void)state;
	request_running = false;
	return 0;
}

/* ---- pure parts --------------------------------------------------------------------------- */

static void parse(const char *text, struct module_manifest *m)
{
	char why[MODULE_REASON_MAX + 1] = "";

	assert_int_equal(module_manifest_parse(text, strlen(text), m, why, sizeof(why)), 0);
}

static void test_args_become_required_params_in_declared_order(void **state)
{
	struct module_manifest m;
	struct tool_param params[MODULE_TOOL_ARGS_MAX];
	char names[MODULE_TOOL_ARGS_MAX][MODULE_ARG_NAME_MAX + 1];

	(void)state;
	parse("name: t\nkind: tool\ndescription: d\nruntime: lua\nentry: t.lua\n"
	      "args: zeta: string, alpha:integer ,mid:boolean\n",
	      &m);
	assert_int_equal(module_tool_params(&m, params, names), 3);
	assert_string_equal(params[0].name, "zeta");
	assert_int_equal(params[0].type, TOOL_PARAM_STRING);
	assert_int_equal(params[0].min, 0);
	assert_int_equal(params[0].max, MODULE_TOOL_STRING_MAX);
	assert_string_equal(params[1].name, "alpha");
	assert_int_equal(params[1].type, TOOL_PARAM_INTEGER);
	assert_int_equal(params[1].min, MODULE_TOOL_INTEGER_MIN);
	assert_int_equal(params[1].max, MODULE_TOOL_INTEGER_MAX);
	assert_string_equal(params[2].name, "mid");
	assert_int_equal(params[2].type, TOOL_PARAM_BOOLEAN);
	for (int i = 0; i < 3; i++) {
		assert_true(params[i].required);
	}
	parse("name: t\nkind: tool\ndescription: d\nruntime: lua\nentry: t.lua\n", &m);
	assert_int_equal(module_tool_params(&m, params, names), 0);
}

static const char *const SEVEN = "a1:string,a2:integer,a3:boolean,a4:string,a5:string,"
				 "a6:integer,a7:boolean";

static void test_seven_args_map_and_eight_are_refused(void **state)
{
	char text[512];
	char why[MODULE_REASON_MAX + 1] = "";
	struct module_manifest m;
	struct tool_param params[MODULE_TOOL_ARGS_MAX];
	char names[MODULE_TOOL_ARGS_MAX][MODULE_ARG_NAME_MAX + 1];

	(void)state;
	(void)snprintf(text, sizeof(text),
		       "name: t\nkind: tool\ndescription: d\nruntime: lua\nentry: t.lua\nargs: %s\n",
		       SEVEN);
	parse(text, &m);
	assert_int_equal(module_tool_params(&m, params, names), 7);
	assert_string_equal(params[6].name, "a7");
	(void)snprintf(text, sizeof(text),
		       "name: t\nkind: tool\ndescription: d\nruntime: lua\nentry: t.lua\n"
		       "args: %s,a8:string\n",
		       SEVEN);
	assert_int_equal(module_manifest_parse(text, strlen(text), &m, why, sizeof(why)), -E2BIG);
	assert_string_equal(why, "args: 8 items, at most 7");
}

/* A definition with @p count of the params for tool_args_parse(). */
static int args_of(const struct tool_param *params, uint8_t count, const char *json,
		   struct tool_args *args, char *why, size_t why_len)
{
	struct tool_def def = {.name = "t", .params = params, .param_count = count};

	return tool_args_parse(&def, json, strlen(json), args, why, why_len);
}

static void test_argv_is_text_in_declared_order(void **state)
{
	struct module_manifest m;
	struct tool_param params[MODULE_TOOL_ARGS_MAX];
	char names[MODULE_TOOL_ARGS_MAX][MODULE_ARG_NAME_MAX + 1];
	char text[MODULE_TOOL_ARGS_MAX][MODULE_TOOL_ARG_TEXT];
	const char *argv[MODULE_TOOL_ARGS_MAX];
	static struct tool_args args;
	char why[160] = "";
	uint8_t n;

	(void)state;
	parse("name: t\nkind: tool\ndescription: d\nruntime: lua\nentry: t.lua\n"
	      "args: s:string, i:integer, b:boolean, lo:integer, f:boolean\n",
	      &m);
	n = module_tool_params(&m, params, names);
	/* The model's order does not matter: argv follows the declared one. */
	assert_int_equal(args_of(params, n,
				 "{\"f\":false,\"b\":true,\"lo\":-2147483648,\"i\":2147483647,"
				 "\"s\":\"a b\"}",
				 &args, why, sizeof(why)),
			 0);
	assert_int_equal(module_tool_argv(params, n, &args, text, argv, why, sizeof(why)), 0);
	assert_string_equal(argv[0], "a b");
	assert_string_equal(argv[1], "2147483647");
	assert_string_equal(argv[2], "true");
	assert_string_equal(argv[3], "-2147483648");
	assert_string_equal(argv[4], "false");
	/* The bounds at N + 1, a wrong type, a missing argument: refused by the check. */
	assert_int_equal(args_of(params, n,
				 "{\"f\":false,\"b\":true,\"lo\":-2147483649,\"i\":1,\"s\":\"\"}",
				 &args, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(args_of(params, n,
				 "{\"f\":false,\"b\":true,\"lo\":0,\"i\":2147483648,\"s\":\"\"}",
				 &args, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(args_of(params, n,
				 "{\"f\":false,\"b\":true,\"lo\":0,\"i\":\"7\",\"s\":\"\"}", &args,
				 why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "i"));
	assert_int_equal(args_of(params, n, "{\"f\":false,\"b\":true,\"lo\":0,\"i\":1}", &args,
				 why, sizeof(why)),
			 -EINVAL);
	/* A string of 255 bytes is taken, 256 refused. */
	{
		char json[400];
		char s[MODULE_TOOL_STRING_MAX + 2];

		memset(s, 'x', sizeof(s) - 1u);
		s[MODULE_TOOL_STRING_MAX] = '\0';
		(void)snprintf(json, sizeof(json),
			       "{\"f\":false,\"b\":true,\"lo\":0,\"i\":1,\"s\":\"%s\"}", s);
		assert_int_equal(args_of(params, n, json, &args, why, sizeof(why)), 0);
		s[MODULE_TOOL_STRING_MAX] = 'x';
		s[MODULE_TOOL_STRING_MAX + 1] = '\0';
		(void)snprintf(json, sizeof(json),
			       "{\"f\":false,\"b\":true,\"lo\":0,\"i\":1,\"s\":\"%s\"}", s);
		assert_int_equal(args_of(params, n, json, &args, why, sizeof(why)), -EINVAL);
	}
	/* A NUL inside a string cannot be an argv entry. */
	assert_int_equal(args_of(params, n,
				 "{\"f\":false,\"b\":true,\"lo\":0,\"i\":1,\"s\":\"a\\u0000b\"}",
				 &args, why, sizeof(why)),
			 0);
	assert_int_equal(module_tool_argv(params, n, &args, text, argv, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "argument s contains a NUL byte");
}

static void test_the_digest_check_names_the_tool_and_both_prefixes(void **state)
{
	static const char entry[] = "print('hi')\n";
	uint8_t recorded[MODULE_DIGEST_LEN];
	char why[160] = "";
	char tampered[sizeof(entry)];

	(void)state;
	sha256_digest(entry, strlen(entry), recorded);
	assert_int_equal(module_tool_digest_check("hello", entry, strlen(entry), recorded, why,
						  sizeof(why)),
			 0);
	memcpy(tampered, entry, sizeof(entry));
	tampered[7] = 'o';
	assert_int_equal(module_tool_digest_check("hello", tampered, strlen(tampered), recorded,
						  why, sizeof(why)),
			 -EACCES);
	{
		uint8_t now[MODULE_DIGEST_LEN];
		char expect[160];

		sha256_digest(tampered, strlen(tampered), now);
		(void)snprintf(expect, sizeof(expect),
			       "tool hello: the entry's SHA-256 %02x%02x%02x%02x%02x%02x%02x%02x... "
			       "is not the %02x%02x%02x%02x%02x%02x%02x%02x... recorded at import; "
			       "refused, nothing ran",
			       now[0], now[1], now[2], now[3], now[4], now[5], now[6], now[7],
			       recorded[0], recorded[1], recorded[2], recorded[3], recorded[4],
			       recorded[5], recorded[6], recorded[7]);
		assert_string_equal(why, expect);
	}
}

/* ---- registration ------------------------------------------------------------------------ */

static int import_tool(const char *name, const char *args, const char *entry, char *why)
{
	char manifest[512];
	struct module_import_result res;

	(void)snprintf(manifest, sizeof(manifest),
		       "name: %s\nkind: tool\ndescription: Says hello to someone.\nruntime: lua\n"
		       "entry: e.lua\nrisk: read\noutput: 5\n%s%s%s",
		       name, args != NULL ? "args: " : "", args != NULL ? args : "",
		       args != NULL ? "\n" : "");
	return module_import_text(manifest, strlen(manifest), entry, strlen(entry), &res, why,
				  MODULE_REASON_MAX + 1);
}

static char *catalog_entry_text(const char *name)
{
	int index = module_catalog_find(name, MODULE_INSTALLED);

	assert_true(index >= 0);
	/* The test stands for damaged RAM or flash: the catalog's text changes in place. */
	return (char *)(uintptr_t)(module_catalog_text(index) +
				   module_catalog_entry(index)->manifest_len);
}

static void test_import_replace_remove_keep_the_registry_in_step(void **state)
{
	char why[MODULE_REASON_MAX + 1] = "";
	const struct tool_def *def;

	(void)state;
	assert_int_equal(module_boot(fake_active), 0);
	assert_null(tool_registry_find("greet"));
	assert_int_equal(import_tool("greet", "who:string", "print(arg[1])\n", why), 0);
	def = tool_registry_find("greet");
	assert_non_null(def);
	/* An imported tool's description is plain text (not packed), read as it is. */
	assert_int_equal(def->description->codes, 0);
	assert_string_equal(packed_text_str(def->description, NULL, 0), "Says hello to someone.");
	assert_int_equal(def->risk, TOOL_RISK_READ);
	assert_int_equal(def->domain, TOOL_DOMAIN_SCRIPT);
	assert_int_equal(def->groups, TOOL_GROUP_IMPORTED);
	assert_int_equal(def->capability, TOOL_CAP_SCRIPT_RUNTIME);
	assert_int_equal(def->param_count, 1);
	assert_string_equal(def->params[0].name, "who");

	/* A replacement re-registers the new text's arguments. */
	assert_int_equal(import_tool("greet", "n:integer,loud:boolean", "print(arg[1])\n", why), 0);
	def = tool_registry_find("greet");
	assert_non_null(def);
	assert_int_equal(def->param_count, 2);
	assert_string_equal(def->params[0].name, "n");
	assert_string_equal(def->params[1].name, "loud");

	/* While a request runs: no replacement, no removal, no new tool module; a role is
	 * still accepted. */
	request_running = true;
	assert_int_equal(import_tool("greet", "who:string", "print(1)\n", why), -EBUSY);
	assert_string_equal(why, "tool greet: tool modules change only while no request runs; "
				 "import it again when the request ends");
	assert_int_equal(import_tool("other", NULL, "print(1)\n", why), -EBUSY);
	assert_null(tool_registry_find("other"));
	assert_int_equal(tool_registry_find("greet")->param_count, 2);
	assert_int_equal(module_remove("greet", why, sizeof(why)), -EBUSY);
	{
		static const char role[] = "name: r\nkind: role\ndescription: d\n";
		struct module_import_result res;

		assert_int_equal(module_import_text(role, strlen(role), "Be brief.", 9, &res, why,
						    sizeof(why)),
				 0);
	}
	request_running = false;

	/* The same text again changes nothing; removal unregisters. */
	assert_int_equal(import_tool("greet", "n:integer,loud:boolean", "print(arg[1])\n", why), 0);
	assert_ptr_equal(tool_registry_find("greet"), def);
	assert_int_equal(module_remove("greet", why, sizeof(why)), 0);
	assert_null(tool_registry_find("greet"));
	/* A built-in tool's name is refused. */
	assert_int_equal(import_tool("tool_search", NULL, "print(1)\n", why), -EINVAL);
	assert_string_equal(why, "name: tool_search is a built-in tool; a tool module needs its "
				 "own name");
	assert_int_equal(module_remove("r", why, sizeof(why)), 0);
}

static void test_seven_declared_args_register(void **state)
{
	char why[MODULE_REASON_MAX + 1] = "";
	const struct tool_def *def;

	(void)state;
	assert_int_equal(module_boot(fake_active), 0);
	assert_int_equal(import_tool("seven", SEVEN, "print(#arg)\n", why), 0);
	def = tool_registry_find("seven");
	assert_non_null(def);
	assert_int_equal(def->param_count, 7);
	assert_string_equal(def->params[6].name, "a7");
	assert_int_equal(module_remove("seven", why, sizeof(why)), 0);
}

static void test_a_corrupted_catalog_text_is_refused_before_it_runs(void **state)
{
	char why[MODULE_REASON_MAX + 1] = "";
	static struct tool_args args;
	static char buf[CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1];
	struct json_writer out;
	struct tool_ctx ctx = {.cwd = "/lfs"};
	const struct tool_def *def;
	char *text;

	(void)state;
	assert_int_equal(module_boot(fake_active), 0);
	assert_int_equal(import_tool("hello", "who:string", "print('hi ' .. arg[1])\n", why), 0);
	def = tool_registry_find("hello");
	assert_non_null(def);
	assert_int_equal(tool_args_parse(def, "{\"who\":\"bob\"}", 13, &args, why, sizeof(why)), 0);
#if defined(CONFIG_AGENT_SCRIPT_LUA)
	/* Intact: it runs, its 9 bytes of output cut at the manifest's 5. */
	jw_init(&out, buf, sizeof(buf));
	assert_int_equal(def->exec(&ctx, &args, &out), 0);
	assert_non_null(strstr(buf, "\"output\":\"hi bo\""));
	assert_non_null(strstr(buf, "\"truncated\":true"));
	assert_non_null(strstr(buf, "\"output_bytes\":7"));
#endif
	text = catalog_entry_text("hello");
	text[0] = 'X'; /* "Xrint(...)": the same length, another digest */
	jw_init(&out, buf, sizeof(buf));
	buf[0] = '\0';
	assert_int_equal(def->exec(&ctx, &args, &out), -EACCES);
	assert_non_null(strstr(ctx.error, "tool hello: the entry's SHA-256 "));
	assert_non_null(strstr(ctx.error, "recorded at import; refused, nothing ran"));
	assert_int_equal(out.len, 0); /* no result: nothing ran */
	text[0] = 'p';
	ctx.error[0] = '\0';
	jw_init(&out, buf, sizeof(buf));
	assert_int_not_equal(def->exec(&ctx, &args, &out), -EACCES);
	assert_int_equal(module_remove("hello", why, sizeof(why)), 0);
}

/* Run before the script runtimes start: the runtime a tool needs is missing. */
static void test_without_its_runtime_a_tool_is_unavailable(void **state)
{
	char why[MODULE_REASON_MAX + 1] = "";
	const struct tool_def *def;

	(void)state;
	assert_int_equal(module_boot(fake_active), 0);
	assert_int_equal(import_tool("lonely", NULL, "print(1)\n", why), 0);
	def = tool_registry_find("lonely");
	assert_non_null(def);
	assert_string_equal(tool_unavailable_reason(def), "no script runtime is built in");
	assert_int_equal(tool_script_runtime_register("python"), 0);
	assert_string_equal(tool_unavailable_reason(def),
			    "the lua runtime is not built into this firmware");
	assert_int_equal(tool_script_runtime_unregister("python"), 0);
	assert_int_equal(module_remove("lonely", why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest before_runtimes[] = {
		cmocka_unit_test_setup(test_without_its_runtime_a_tool_is_unavailable, setup),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_args_become_required_params_in_declared_order, setup),
		cmocka_unit_test_setup(test_seven_args_map_and_eight_are_refused, setup),
		cmocka_unit_test_setup(test_argv_is_text_in_declared_order, setup),
		cmocka_unit_test_setup(test_the_digest_check_names_the_tool_and_both_prefixes,
				       setup),
		cmocka_unit_test_setup(test_import_replace_remove_keep_the_registry_in_step, setup),
		cmocka_unit_test_setup(test_seven_declared_args_register, setup),
		cmocka_unit_test_setup(test_a_corrupted_catalog_text_is_refused_before_it_runs,
				       setup),
	};

	int failed = cmocka_run_group_tests(before_runtimes, NULL, NULL);

#if defined(CONFIG_AGENT_SCRIPT_LUA)
	if (script_runner_init() != 0) {
		return 1;
	}
#endif
	return failed + cmocka_run_group_tests(tests, NULL, NULL);
}
