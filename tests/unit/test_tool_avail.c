/*
 * Tool availability derived at run time (app/src/tools/tool_capability.c, tool_registry.c,
 * docs/tools.md "Availability"): each capability made missing and present again through the
 * POSIX port (mounts, the simulated board, script runtimes), the reason every check gives,
 * and that an unavailable tool is neither offered, nor activated by tool_search, nor run by
 * the canonical executor.
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
#include <sys/stat.h>
#include <unistd.h>

#include "flash_fixture.h"
#include "posix/posix_board.h"
#include "posix/posix_port.h"
#include "tool_capability.h"
#include "tool_exec.h"
#include "tool_registry.h"
#include "tool_session.h"
#include "tools_bootstrap.h"
#include "tools_hardware.h"
#include "tools_storage.h"
#include "tools_system.h"

static char result[CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1];
static char why[256];
static char sd_dir[64];

static void load_board(const char *text)
{
	FILE *f = fopen("avail.board", "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(posix_board_load("avail.board", why, sizeof(why)), 0);
}

static int setup(void **state)
{
	(void)state;
	posix_board_reset();
	snprintf(sd_dir, sizeof(sd_dir), "avail_sd_XXXXXX");
	return mkdtemp(sd_dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	(void)posix_sd_unmount();
	(void)rmdir(sd_dir);
	posix_board_reset();
	return 0;
}

static void assert_reason(const struct tool_def *def, const char *want)
{
	const char *got = tool_unavailable_reason(def);

	if (want == NULL) {
		if (got != NULL) {
			fail_msg("%s: unavailable (%s), expected available", def->name, got);
		}
		assert_true(tool_available(def));
		return;
	}
	if (got == NULL || strcmp(got, want) != 0) {
		fail_msg("%s: reason '%s', expected '%s'", def->name, got ? got : "(available)", want);
	}
	assert_false(tool_available(def));
}

/* ---- names ------------------------------------------------------------------------------- */

static void test_capability_names(void **state)
{
	static const char *const want[TOOL_CAP_COUNT] = {
		"-", "filesystem", "lfs", "sd", "gpio", "bus", "display", "sensors", "network",
		"script-runtime",
	};

	(void)state;
	for (int c = 0; c < TOOL_CAP_COUNT; c++) {
		assert_string_equal(tool_capability_name((enum tool_capability)c), want[c]);
	}
	assert_string_equal(tool_capability_name(TOOL_CAP_COUNT), "?");
	assert_null(tool_capability_missing(TOOL_CAP_NONE));
	/* The bootstrap tools need nothing: always there. */
	assert_int_equal(tool_capability_of(&tool_system_status), TOOL_CAP_NONE);
	assert_int_equal(tool_capability_of(&tool_tool_search), TOOL_CAP_NONE);
	assert_reason(&tool_system_status, NULL);
	assert_reason(&tool_tool_search, NULL);
}

/* ---- storage: a mounted filesystem -------------------------------------------------------- */

static const struct tool_def *const storage_tools[] = {
	&tool_storage_stat,   &tool_storage_list,	&tool_storage_read,  &tool_storage_write,
	&tool_storage_search, &tool_storage_read_range, &tool_storage_patch,
};

#define STORAGE_COUNT (sizeof(storage_tools) / sizeof(storage_tools[0]))
#define NO_FS	      "no filesystem is mounted (neither /lfs nor /SD:)"

static void assert_storage(const char *want)
{
	for (size_t i = 0; i < STORAGE_COUNT; i++) {
		assert_int_equal(tool_capability_of(storage_tools[i]), TOOL_CAP_FILESYSTEM);
		assert_reason(storage_tools[i], want);
	}
}

static void test_storage_needs_a_mounted_filesystem(void **state)
{
	(void)state;
	assert_false(agent_fs_mounted("/lfs"));
	assert_false(agent_fs_mounted("/SD:"));
	assert_storage(NO_FS);
	assert_string_equal(tool_capability_missing(TOOL_CAP_LFS),
			    "the LittleFS volume is not mounted at /lfs");
	assert_string_equal(tool_capability_missing(TOOL_CAP_SD), "no SD card is mounted at /SD:");

	/* LittleFS only. */
	assert_int_equal(flash_fixture_setup("avail"), 0);
	assert_true(agent_fs_mounted("/lfs"));
	assert_false(agent_fs_mounted("/SD:"));
	assert_false(agent_fs_mounted("/lf"));
	assert_false(agent_fs_mounted("/lfs/"));
	assert_false(agent_fs_mounted(NULL));
	assert_storage(NULL);
	assert_null(tool_capability_missing(TOOL_CAP_LFS));
	assert_non_null(tool_capability_missing(TOOL_CAP_SD));

	/* Both, then the card only: the storage tools stay available. */
	assert_int_equal(posix_sd_mount(sd_dir), 0);
	assert_true(agent_fs_mounted("/SD:"));
	assert_null(tool_capability_missing(TOOL_CAP_SD));
	assert_int_equal(flash_fixture_teardown(), 0);
	assert_false(agent_fs_mounted("/lfs"));
	assert_storage(NULL);
	assert_non_null(tool_capability_missing(TOOL_CAP_LFS));

	/* The card pulled: nothing is mounted, and the executor refuses with the reason. */
	assert_int_equal(posix_sd_power_cut(), 0);
	assert_storage(NO_FS);
	{
		struct tool_ctx ctx = {.cwd = "/lfs"};
		struct tool_args args;
		char arg_why[128];

		assert_int_equal(tool_args_parse(&tool_storage_stat, "{\"path\":\"a.txt\"}", 16,
						 &args, arg_why, sizeof(arg_why)),
				 0);
		assert_int_equal(tool_execute(&tool_storage_stat, AGENT_TOOLS_CONFIRM, false, &ctx,
					      &args, result, sizeof(result)),
				 -ENODEV);
		assert_string_equal(ctx.error, "storage_stat is not available: " NO_FS);
	}
}

/* ---- hardware: the board's devices -------------------------------------------------------- */

static void test_hardware_follows_the_board(void **state)
{
	struct tool_ctx ctx = {.cwd = "/lfs"};
	struct tool_args args;
	char arg_why[128];

	(void)state;
	/* A board that declares nothing but itself. */
	load_board("board\n");
	assert_reason(&tool_hardware_describe, NULL); /* it describes the empty board */
	assert_reason(&tool_gpio_list, "the board has no GPIO slot");
	assert_reason(&tool_gpio_read, "the board has no GPIO slot");
	assert_reason(&tool_buses_list, "the board has no I2C, SPI, UART or 1-Wire bus");
	assert_reason(&tool_display_list, "the board has no display");
	assert_reason(&tool_network_status, "the device has no network interface");
	assert_reason(&tool_sensors_read, "no sensor service is in this build");
	assert_int_equal(tool_capability_of(&tool_gpio_list), TOOL_CAP_GPIO);
	assert_int_equal(tool_capability_of(&tool_network_status), TOOL_CAP_NETWORK);

	/* The executor refuses with the reason: the tool never runs. */
	assert_int_equal(tool_args_parse(&tool_gpio_read, "{\"slot\":0}", 10, &args, arg_why,
					 sizeof(arg_why)),
			 0);
	assert_int_equal(tool_execute(&tool_gpio_read, AGENT_TOOLS_CONFIRM, false, &ctx, &args,
				      result, sizeof(result)),
			 -ENODEV);
	assert_string_equal(ctx.error, "gpio_read is not available: the board has no GPIO slot");

	/* One device of each kind: each tool comes back. */
	load_board("board caps=display,ethernet\n"
		   "gpio name=BOOT controller=gpio0 pin=0 policy=strapping mode=unconfigured\n"
		   "bus name=uart0 type=uart ready=yes\n"
		   "display name=lcd0 driver=st7789v width=240 height=135 ready=yes "
		   "brightness=no\n"
		   "family name=battery present=yes\n");
	assert_reason(&tool_gpio_list, NULL);
	assert_reason(&tool_gpio_read, NULL);
	assert_reason(&tool_buses_list, NULL);
	assert_reason(&tool_display_list, NULL);
	assert_reason(&tool_network_status, NULL); /* Ethernet is an interface too */
	assert_reason(&tool_sensors_read, NULL);   /* a family without readings yet */

	/* Wi-Fi alone is an interface; a family declared absent is no sensor service. */
	load_board("board caps=wifi\nfamily name=environment present=no\n");
	assert_reason(&tool_network_status, NULL);
	assert_reason(&tool_sensors_read, "no sensor service is in this build");
	assert_reason(&tool_gpio_list, "the board has no GPIO slot");
}

/* ---- script tools: a runtime built in ------------------------------------------------------ */

static int script_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	(void)ctx;
	(void)args;
	jw_object_begin(out);
	jw_object_end(out);
	return 0;
}

static const struct tool_def script_tool = {
	.name = "script_run_python",
	.description = PACKED_TEXT_PLAIN("Run Python source."),
	.domain = TOOL_DOMAIN_SCRIPT,
	.risk = TOOL_RISK_DISRUPTIVE,
	.capability = TOOL_CAP_SCRIPT_RUNTIME,
	.exec = script_exec,
};

static void test_script_tools_need_a_runtime(void **state)
{
	static const char *const names[TOOL_SCRIPT_RUNTIMES_MAX + 1] = {"python", "lua", "forth"};

	(void)state;
	assert_int_equal(tool_registry_add(&script_tool), 0);
	assert_int_equal(tool_script_runtime_count(), 0);
	assert_reason(&script_tool, "no script runtime is built in");

	/* Up to TOOL_SCRIPT_RUNTIMES_MAX runtimes; one more is refused. */
	for (size_t i = 0; i < TOOL_SCRIPT_RUNTIMES_MAX; i++) {
		assert_int_equal(tool_script_runtime_register(names[i]), 0);
		assert_reason(&script_tool, NULL);
	}
	assert_int_equal(tool_script_runtime_register(names[TOOL_SCRIPT_RUNTIMES_MAX]), -ENOMEM);
	assert_int_equal(tool_script_runtime_register("python"), -EEXIST);
	assert_int_equal(tool_script_runtime_register(""), -EINVAL);
	assert_int_equal(tool_script_runtime_register(NULL), -EINVAL);
	assert_int_equal(tool_script_runtime_count(), TOOL_SCRIPT_RUNTIMES_MAX);

	/* Taken back one by one: unavailable again once none is left. */
	assert_int_equal(tool_script_runtime_unregister("forth"), -ENOENT);
	for (size_t i = 0; i < TOOL_SCRIPT_RUNTIMES_MAX; i++) {
		assert_reason(&script_tool, NULL);
		assert_int_equal(tool_script_runtime_unregister(names[i]), 0);
	}
	assert_reason(&script_tool, "no script runtime is built in");
	assert_int_equal(tool_registry_remove(&script_tool), 0);
}

/* ---- a tool's own check -------------------------------------------------------------------- */

static const char *own_reason;

static const char *own_check(void)
{
	return own_reason;
}

static const struct tool_def own_tool = {
	.name = "memory_recall",
	.description = PACKED_TEXT_PLAIN("Recall a stored memory."),
	.domain = TOOL_DOMAIN_SYSTEM,
	.risk = TOOL_RISK_READ,
	.unavailable = own_check,
	.exec = script_exec,
};

static void test_own_check_after_the_capability(void **state)
{
	struct tool_def both = own_tool;

	(void)state;
	own_reason = "no embedding pass is ready";
	assert_reason(&own_tool, "no embedding pass is ready");
	own_reason = NULL;
	assert_reason(&own_tool, NULL);
	/* The capability is asked first: its reason wins. */
	both.capability = TOOL_CAP_DISPLAY;
	own_reason = "no embedding pass is ready";
	assert_reason(&both, "the board has no display");
	own_reason = NULL;
}

/* ---- never offered, never activated --------------------------------------------------------- */

/* Run tool_search with @p query in @p s; the result in result[]. */
static void search(struct tool_session *s, const char *query)
{
	struct tool_ctx ctx = {.cwd = "/lfs", .session = s};
	struct tool_args args;
	struct json_writer w;
	char json[200];
	char arg_why[128];
	int n = snprintf(json, sizeof(json), "{\"query\":\"%s\"}", query);

	assert_int_equal(tool_args_parse(&tool_tool_search, json, (size_t)n, &args, arg_why,
					 sizeof(arg_why)),
			 0);
	jw_init(&w, result, sizeof(result));
	assert_int_equal(tool_tool_search.exec(&ctx, &args, &w), 0);
	assert_true(jw_finish(&w) > 0);
}

static void test_unavailable_tools_are_never_offered(void **state)
{
	static const char query[] = "gpio pins buses display network wifi sensors battery";
	const struct tool_def *selected[] = {&tool_gpio_list, &tool_network_status};
	struct tool_session s;

	(void)state;
	load_board("board\n");
	tool_session_init(&s, AGENT_TOOLS_CONFIRM, "");
	search(&s, query);
	assert_null(strstr(result, "gpio_list"));
	assert_null(strstr(result, "buses_list"));
	assert_null(strstr(result, "display_list"));
	assert_null(strstr(result, "network_status"));
	assert_null(strstr(result, "sensors_read"));
	/* Selected before the board lost them: no longer offered. */
	tool_session_select(&s, selected, 2);
	assert_false(tool_session_is_advertised(&s, &tool_gpio_list));
	assert_false(tool_session_is_advertised(&s, &tool_network_status));
	assert_false(tool_session_offerable(&s, &tool_gpio_list));

	/* The same search on a board that has them activates them. */
	assert_int_equal(posix_board_load(HW_TEST_SIM_BOARD, why, sizeof(why)), 0);
	tool_session_init(&s, AGENT_TOOLS_CONFIRM, "");
	search(&s, query);
	assert_non_null(strstr(result, "\"activated\":[{"));
	tool_session_select(&s, selected, 2);
	assert_true(tool_session_is_advertised(&s, &tool_gpio_list));
	assert_true(tool_session_is_advertised(&s, &tool_network_status));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_capability_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_storage_needs_a_mounted_filesystem, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hardware_follows_the_board, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_tools_need_a_runtime, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_check_after_the_capability, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unavailable_tools_are_never_offered, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
