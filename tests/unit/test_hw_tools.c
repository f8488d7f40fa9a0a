/*
 * The hardware inspection tools (app/src/tools/tools_hardware.c, tools_gpio.c, tools_buses.c,
 * tools_net_sensors.c) over the POSIX port's simulated board (app/src/port/posix/board_file.c
 * and board_sim.c), called executor by executor with board files from tests/unit/boards/ and
 * files written here: the results, their bounds, the malformed-file errors and that reading
 * a GPIO configures nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posix/posix_board.h"
#include "tool.h"
#include "tool_exec.h"
#include "tools_hardware.h"

#define RESULT_CAP (CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1)

static char result[RESULT_CAP];
static struct tool_args args;
static struct tool_ctx ctx;
static char why[256];

static void load(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", HW_TEST_BOARD_DIR, name);
	assert_int_equal(posix_board_load(path, why, sizeof(why)), 0);
}

/* Run @p def with the argument object @p json; 0 and the result in `result`, or the error. */
static int run(const struct tool_def *def, const char *json)
{
	struct json_writer w;
	char arg_why[160];
	int err;
	int len;

	memset(&ctx, 0, sizeof(ctx));
	ctx.cwd = "/lfs";
	assert_int_equal(tool_args_parse(def, json, strlen(json), &args, arg_why, sizeof(arg_why)),
			 0);
	jw_init(&w, result, sizeof(result));
	err = def->exec(&ctx, &args, &w);
	if (err < 0) {
		assert_true(ctx.error[0] != '\0');
		return err;
	}
	assert_int_equal(err, 0);
	len = jw_finish(&w);
	assert_true(len > 0);
	assert_true(len <= CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
	assert_true(tool_json_is_object(result, (size_t)len));
	return 0;
}

static void assert_has(const char *needle)
{
	if (strstr(result, needle) == NULL) {
		fail_msg("'%s' not in %s", needle, result);
	}
}

static void assert_lacks(const char *needle)
{
	if (strstr(result, needle) != NULL) {
		fail_msg("'%s' unexpectedly in %s", needle, result);
	}
}

static int setup(void **state)
{
	(void)state;
	posix_board_reset();
	return 0;
}

/* ---- the board file ------------------------------------------------------------------------ */

static void test_repo_board_file_loads(void **state)
{
	(void)state;
	assert_int_equal(posix_board_load(HW_TEST_SIM_BOARD, why, sizeof(why)), 0);
	assert_true(agent_gpio_count() > 0);
	assert_true(agent_bus_count() > 0);
	assert_int_equal(agent_display_count(), 1);
	assert_true(agent_sensor_count() > 0);
}

static void test_malformed_fixture_names_the_line(void **state)
{
	char path[512];

	(void)state;
	load("full.board");
	snprintf(path, sizeof(path), "%s/%s", HW_TEST_BOARD_DIR, "malformed.board");
	assert_int_equal(posix_board_load(path, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "line 4: gpio: unknown key 'colour'");
	/* The board loaded before stays. */
	assert_int_equal(agent_gpio_count(), 7);
}

static void test_missing_file(void **state)
{
	(void)state;
	assert_int_equal(posix_board_load("no-such-dir/none.board", why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "cannot open it"));
}

/* Write @p text as a board file and load it; returns the load's result. */
static int load_text(const char *text)
{
	FILE *f = fopen("scratch.board", "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return posix_board_load("scratch.board", why, sizeof(why));
}

static void expect_error(const char *text, const char *message)
{
	assert_int_equal(load_text(text), -EINVAL);
	if (strcmp(why, message) != 0) {
		fail_msg("expected '%s', got '%s'", message, why);
	}
}

static void test_malformed_lines(void **state)
{
	(void)state;
	expect_error("board\nled name=x\n",
		     "line 2: unknown keyword 'led' (board, gpio, bus, display, wifi, ap, nat, "
		     "family, sensor)");
	expect_error("board\ngpio name=A controller=g pin=1 policy=free\n",
		     "line 2: gpio: mode= is required");
	expect_error("board\ngpio name=A name=B\n", "line 2: gpio: name given twice");
	expect_error("board\ngpio name=A controller=g pin=70000 policy=free mode=input level=1\n",
		     "line 2: gpio: pin must be a whole number from 0 to 65535, not '70000'");
	expect_error("board\ngpio name=A controller=g pin=1 policy=maybe mode=input level=1\n",
		     "line 2: gpio: unknown policy 'maybe' (one of: free, input_only, strapping, "
		     "reserved)");
	expect_error("board\ngpio name=A controller=g pin=1 policy=free mode=output level=1\n",
		     "line 2: gpio: A: level= and read_error= are only for a pin configured as "
		     "an input (mode=input or input_output)");
	expect_error("board\ngpio name=A controller=g pin=1 policy=free mode=input\n",
		     "line 2: gpio: A: an input needs exactly one of level=0|1 and "
		     "read_error=-ERRNO");
	expect_error("board\ngpio name=A controller=g pin=1 policy=free mode=unconfigured\n"
		     "gpio name=B controller=g pin=1 policy=free mode=unconfigured\n",
		     "line 3: gpio: B: g pin 1 is already A");
	expect_error("board model=\"unterminated\n",
		     "line 1: board: model: unterminated quoted value");
	expect_error("board psram=1024\n",
		     "line 1: board: psram= and caps=psram must agree (both or neither)");
	expect_error("board caps=psram,toaster psram=1\n",
		     "line 1: board: unknown caps 'toaster' (one of: psram, sd, display, wifi, "
		     "bluetooth, ethernet, usb, battery)");
	expect_error("board\nsensor family=environment name=t quantity=temperature unit=C "
		     "value=1\n",
		     "line 2: sensor: family environment is not present: declare it first with "
		     "'family name=environment present=yes'");
	expect_error("board\nwifi state=connected ssid=x ip=10.0.0.1\n",
		     "wifi, ap and nat lines need caps=...,wifi on the board line");
	expect_error("gpio name=A controller=g pin=1 policy=free mode=unconfigured\n",
		     "no board line");
	expect_error("board\nbus name=u type=uart ready=yes leases=2\n",
		     "line 2: bus: u: an exclusive bus has at most one lease");
}

static void test_line_length_bound(void **state)
{
	char text[POSIX_BOARD_LINE_MAX + 64];
	size_t len;

	(void)state;
	/* A comment line of exactly POSIX_BOARD_LINE_MAX characters is read; one more is not. */
	strcpy(text, "board\n#");
	len = strlen(text);
	memset(text + len, 'x', POSIX_BOARD_LINE_MAX - 1);
	text[len + POSIX_BOARD_LINE_MAX - 1] = '\n';
	text[len + POSIX_BOARD_LINE_MAX] = '\0';
	assert_int_equal(load_text(text), 0);
	text[len + POSIX_BOARD_LINE_MAX - 1] = 'x';
	text[len + POSIX_BOARD_LINE_MAX] = '\n';
	text[len + POSIX_BOARD_LINE_MAX + 1] = '\0';
	assert_int_equal(load_text(text), -EINVAL);
	assert_string_equal(why, "line 2: longer than 255 characters");
}

static void test_gpio_table_bound(void **state)
{
	static char text[POSIX_BOARD_GPIO_MAX * 96 + 256];
	size_t used;

	(void)state;
	used = (size_t)snprintf(text, sizeof(text), "board\n");
	for (int i = 0; i < POSIX_BOARD_GPIO_MAX; i++) {
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "gpio name=P%d controller=g pin=%d policy=free "
					 "mode=unconfigured\n",
					 i, i);
	}
	assert_int_equal(load_text(text), 0);
	assert_int_equal(agent_gpio_count(), POSIX_BOARD_GPIO_MAX);
	snprintf(text + used, sizeof(text) - used,
		 "gpio name=P%d controller=g pin=%d policy=free mode=unconfigured\n",
		 POSIX_BOARD_GPIO_MAX, POSIX_BOARD_GPIO_MAX);
	assert_int_equal(load_text(text), -EINVAL);
	assert_string_equal(why, "line 66: gpio: more than 64 gpio lines");
}

/* ---- hardware_describe --------------------------------------------------------------------- */

static void test_describe_full(void **state)
{
	(void)state;
	load("full.board");
	assert_int_equal(run(&tool_hardware_describe, "{}"), 0);
	assert_has("\"board\":\"host_sim\"");
	assert_has("\"model\":\"Fixture board\",\"soc\":\"esp32s3\"");
	assert_has("\"capabilities\":{\"psram\":true,\"sd\":false,\"display\":true,\"wifi\":true,"
		   "\"bluetooth\":false,\"ethernet\":false,\"usb\":false,\"battery\":true}");
	assert_has("\"psram_bytes\":8388608,\"flash_bytes\":8388608,\"sram_bytes\":null");
	assert_has("\"counts\":{\"gpio_slots\":7,\"buses\":4,\"displays\":2,"
		   "\"sensor_readings\":4}");
}

static void test_describe_minimal(void **state)
{
	(void)state;
	load("minimal.board");
	assert_int_equal(run(&tool_hardware_describe, "{}"), 0);
	assert_has("\"model\":null,\"soc\":null");
	assert_has("\"psram\":false");
	assert_has("\"psram_bytes\":0,\"flash_bytes\":null");
	assert_has("\"counts\":{\"gpio_slots\":0,\"buses\":0,\"displays\":0,"
		   "\"sensor_readings\":0}");
}

/* ---- GPIO ---------------------------------------------------------------------------------- */

static void test_gpio_list_levels_only_for_inputs(void **state)
{
	(void)state;
	load("full.board");
	assert_int_equal(run(&tool_gpio_list, "{}"), 0);
	assert_has("\"count\":7,\"start\":0");
	assert_has("{\"slot\":0,\"name\":\"BOOT\",\"controller\":\"gpio0\",\"pin\":0,"
		   "\"policy\":\"strapping\",\"claimed_by\":\"gpio-keys\",\"mode\":\"input\","
		   "\"readable\":true,\"level\":1}");
	assert_has("{\"slot\":1,\"name\":\"GPIO4\",\"controller\":\"gpio0\",\"pin\":4,"
		   "\"policy\":\"free\",\"claimed_by\":null,\"mode\":\"unconfigured\","
		   "\"readable\":false,\"level\":null}");
	assert_has("\"name\":\"LED\",\"controller\":\"gpio0\",\"pin\":5,\"policy\":\"free\","
		   "\"claimed_by\":\"led\",\"mode\":\"output\",\"readable\":false,\"level\":null}");
	assert_has("\"name\":\"SENSE\",\"controller\":\"gpio0\",\"pin\":6,"
		   "\"policy\":\"input_only\",\"claimed_by\":null,\"mode\":\"input\","
		   "\"readable\":true,\"level\":0}");
	assert_has("\"name\":\"FLAKY\",\"controller\":\"gpio1\",\"pin\":2,\"policy\":\"free\","
		   "\"claimed_by\":null,\"mode\":\"input\",\"readable\":true,\"level\":null}");
	assert_has("\"truncated\":false}");
	assert_lacks("next_start");
}

static void test_gpio_read_unconfigured_configures_nothing(void **state)
{
	struct agent_gpio_slot before;
	struct agent_gpio_slot after;

	(void)state;
	load("full.board");
	assert_int_equal(agent_gpio_get(1, &before), 0);
	assert_int_equal(run(&tool_gpio_read, "{\"name\":\"gpio4\"}"), 0);
	assert_string_equal(result, "{\"slot\":1,\"name\":\"GPIO4\",\"controller\":\"gpio0\","
				    "\"pin\":4,\"policy\":\"free\",\"claimed_by\":null,"
				    "\"mode\":\"unconfigured\",\"configured\":false,"
				    "\"readable\":false,\"level\":null,"
				    "\"level_reason\":\"not_configured\"}");
	/* Nothing changed: still unconfigured, unclaimed, unreadable. */
	assert_int_equal(agent_gpio_get(1, &after), 0);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_int_equal(after.mode, AGENT_GPIO_MODE_UNCONFIGURED);
	assert_string_equal(after.claimed_by, "");
	assert_false(after.readable);
	assert_int_equal(run(&tool_gpio_list, "{}"), 0);
	assert_has("\"name\":\"GPIO4\",\"controller\":\"gpio0\",\"pin\":4,\"policy\":\"free\","
		   "\"claimed_by\":null,\"mode\":\"unconfigured\",\"readable\":false,"
		   "\"level\":null}");
}

static void test_gpio_read_inputs_outputs_and_failures(void **state)
{
	(void)state;
	load("full.board");
	assert_int_equal(run(&tool_gpio_read, "{\"slot\":0}"), 0);
	assert_has("\"name\":\"BOOT\"");
	assert_has("\"configured\":true,\"readable\":true,\"level\":1,\"level_reason\":null}");
	assert_int_equal(run(&tool_gpio_read, "{\"name\":\"LED\"}"), 0);
	assert_has("\"mode\":\"output\",\"configured\":true,\"readable\":false,\"level\":null,"
		   "\"level_reason\":\"output_only\"}");
	assert_int_equal(run(&tool_gpio_read, "{\"name\":\"FLAKY\"}"), 0);
	assert_has("\"readable\":true,\"level\":null,\"level_reason\":\"read_failed\","
		   "\"read_error\":-5}");
	assert_int_equal(run(&tool_gpio_read, "{\"name\":\"SDA\"}"), 0);
	assert_has("\"mode\":\"input_output\",\"configured\":true,\"readable\":true,\"level\":1");
}

static void test_gpio_read_errors(void **state)
{
	(void)state;
	load("full.board");
	assert_int_equal(run(&tool_gpio_read, "{}"), -EINVAL);
	assert_string_equal(ctx.error, "give exactly one of slot and name");
	assert_int_equal(run(&tool_gpio_read, "{\"slot\":1,\"name\":\"BOOT\"}"), -EINVAL);
	/* Slots 0..6 exist: 6 is read, 7 is not. */
	assert_int_equal(run(&tool_gpio_read, "{\"slot\":6}"), 0);
	assert_has("\"name\":\"FLASH_CS\"");
	assert_int_equal(run(&tool_gpio_read, "{\"slot\":7}"), -ENOENT);
	assert_string_equal(ctx.error, "no GPIO slot 7 (7 slots; gpio_list shows them)");
	assert_int_equal(run(&tool_gpio_read, "{\"name\":\"NOPE\"}"), -ENOENT);
	assert_string_equal(ctx.error, "no GPIO slot named 'NOPE'; gpio_list shows the names");
}

static void test_gpio_list_truncates_and_pages(void **state)
{
	static char text[POSIX_BOARD_GPIO_MAX * 256 + 64];
	size_t used;
	int next;
	int listed;
	const char *p;

	(void)state;
	/* 64 slots with the longest names and claims: far more than one result holds. */
	used = (size_t)snprintf(text, sizeof(text), "board\n");
	for (int i = 0; i < POSIX_BOARD_GPIO_MAX; i++) {
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "gpio name=PIN_WITH_A_VERY_LONG_NAME_%05d controller="
					 "controller_with_long_name_%02d pin=%d policy=strapping "
					 "mode=input_output level=1 claimed_by="
					 "a_driver_with_a_long_name_%04d\n",
					 i, i % 100, i, i);
	}
	assert_true(used < sizeof(text));
	assert_int_equal(load_text(text), 0);
	assert_int_equal(run(&tool_gpio_list, "{}"), 0);
	assert_true(strlen(result) <= CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
	assert_has("\"truncated\":true,\"next_start\":");
	next = atoi(strstr(result, "\"next_start\":") + strlen("\"next_start\":"));
	listed = 0;
	for (p = result; (p = strstr(p, "\"slot\":")) != NULL; p++) {
		listed++;
	}
	assert_true(next > 0 && next < POSIX_BOARD_GPIO_MAX);
	assert_int_equal(listed, next); /* whole elements, 0 .. next-1 */

	/* The next page starts exactly there. */
	snprintf(why, sizeof(why), "{\"start\":%d}", next);
	assert_int_equal(run(&tool_gpio_list, why), 0);
	snprintf(why, sizeof(why), "\"start\":%d,\"gpios\":[{\"slot\":%d,", next, next);
	assert_has(why);

	/* The last slot alone fits; one past it is an error. */
	snprintf(why, sizeof(why), "{\"start\":%d}", POSIX_BOARD_GPIO_MAX - 1);
	assert_int_equal(run(&tool_gpio_list, why), 0);
	assert_has("\"truncated\":false}");
	snprintf(why, sizeof(why), "{\"start\":%d}", POSIX_BOARD_GPIO_MAX);
	assert_int_equal(run(&tool_gpio_list, why), -EINVAL);
	assert_string_equal(ctx.error, "start 64 is past the last slot (64 slots)");
}

/* ---- buses, displays, network -------------------------------------------------------------- */

static void test_buses(void **state)
{
	(void)state;
	load("full.board");
	assert_int_equal(run(&tool_buses_list, "{}"), 0);
	assert_has("{\"name\":\"i2c0\",\"type\":\"i2c\",\"pins\":{\"sda\":8,\"scl\":9},"
		   "\"speed_hz\":100000,\"ready\":true,\"origin\":\"board\",\"sharing\":\"shared\","
		   "\"leases\":2}");
	assert_has("{\"name\":\"spi2\",\"type\":\"spi\",\"pins\":null,\"speed_hz\":null,"
		   "\"ready\":false,\"origin\":\"board\",\"sharing\":\"shared\",\"leases\":0}");
	assert_has("{\"name\":\"uart1\",\"type\":\"uart\",\"pins\":{\"tx\":17,\"rx\":18},"
		   "\"speed_hz\":9600,\"ready\":true,\"origin\":\"runtime\","
		   "\"sharing\":\"exclusive\",\"leases\":1}");
	assert_has("\"name\":\"ow0\",\"type\":\"onewire\",\"pins\":{\"data\":3}");
	assert_has("\"count\":4,\"truncated\":false}");

	assert_int_equal(run(&tool_buses_list, "{\"type\":\"I2C\"}"), 0);
	assert_has("\"count\":1,");
	assert_lacks("spi2");
	assert_int_equal(run(&tool_buses_list, "{\"type\":\"can\"}"), -EINVAL);
	assert_string_equal(ctx.error, "unknown bus type 'can' (i2c, spi, uart or onewire)");
}

static void test_displays(void **state)
{
	(void)state;
	load("full.board");
	assert_int_equal(run(&tool_display_list, "{}"), 0);
	assert_has("{\"name\":\"lcd0\",\"driver\":\"st7789v\",\"width\":240,\"height\":135,"
		   "\"ready\":true,\"roles\":[\"primary\",\"console\"],\"brightness\":true,"
		   "\"owner\":\"chat\"}");
	assert_has("{\"name\":\"status panel\",\"driver\":\"ssd1306\",\"width\":128,"
		   "\"height\":32,\"ready\":false,\"roles\":[\"status\"],\"brightness\":false,"
		   "\"owner\":null}");
	assert_has("\"count\":2,\"truncated\":false}");
	load("minimal.board");
	assert_int_equal(run(&tool_display_list, "{}"), 0);
	assert_string_equal(result, "{\"displays\":[],\"count\":0,\"truncated\":false}");
}

static void test_network(void **state)
{
	(void)state;
	load("full.board");
	assert_int_equal(run(&tool_network_status, "{}"), 0);
	assert_string_equal(result,
			    "{\"wifi_present\":true,\"station\":{\"state\":\"connected\","
			    "\"ssid\":\"lab net\",\"ip\":\"10.0.0.7\",\"netmask\":"
			    "\"255.255.255.0\",\"gateway\":\"10.0.0.1\",\"rssi_dbm\":-61,"
			    "\"channel\":11},\"access_point\":{\"active\":true,\"ssid\":"
			    "\"agent-ap\",\"ip\":\"192.168.4.1\",\"channel\":11,\"clients\":2},"
			    "\"nat\":{\"enabled\":true}}");
	load("minimal.board");
	assert_int_equal(run(&tool_network_status, "{}"), 0);
	assert_has("{\"wifi_present\":false,\"station\":{\"state\":\"absent\",\"ssid\":null,"
		   "\"ip\":null");
	assert_has("\"rssi_dbm\":null,\"channel\":null}");
	assert_has("\"access_point\":{\"active\":false");
}

/* ---- sensors ------------------------------------------------------------------------------- */

static void test_sensors_absent_family(void **state)
{
	(void)state;
	load("full.board");
	assert_int_equal(run(&tool_sensors_read, "{}"), 0);
	assert_has("{\"family\":\"battery\",\"available\":true,\"readings\":["
		   "{\"sensor\":\"battery\",\"quantity\":\"voltage\",\"unit\":\"V\","
		   "\"value\":3.912},"
		   "{\"sensor\":\"battery\",\"quantity\":\"charge\",\"unit\":\"%\",\"value\":81},"
		   "{\"sensor\":\"gauge\",\"quantity\":\"current\",\"unit\":\"mA\","
		   "\"value\":null,\"error\":-5},"
		   "{\"sensor\":\"battery\",\"quantity\":\"temperature\",\"unit\":\"C\","
		   "\"value\":-0.05}]}");
	assert_has("{\"family\":\"environment\",\"available\":false,\"reason\":"
		   "\"not_in_build\"}");
	assert_int_equal(run(&tool_sensors_read, "{\"family\":\"environment\"}"), 0);
	assert_string_equal(result, "{\"families\":[{\"family\":\"environment\",\"available\":"
				    "false,\"reason\":\"not_in_build\"}],\"truncated\":false}");
	assert_int_equal(run(&tool_sensors_read, "{\"family\":\"weather\"}"), -EINVAL);
	assert_string_equal(ctx.error, "unknown sensor family 'weather' (battery or environment)");

	load("minimal.board");
	assert_int_equal(run(&tool_sensors_read, "{}"), 0);
	assert_string_equal(result, "{\"families\":[{\"family\":\"battery\",\"available\":false,"
				    "\"reason\":\"not_in_build\"},{\"family\":\"environment\","
				    "\"available\":false,\"reason\":\"not_in_build\"}],"
				    "\"truncated\":false}");
}

static void test_sensor_value_format(void **state)
{
	(void)state;
	assert_int_equal(load_text("board\nfamily name=environment present=yes\n"
				   "sensor family=environment name=s quantity=a unit=x "
				   "value=1013.250000\n"
				   "sensor family=environment name=s quantity=b unit=x value=0.000001\n"
				   "sensor family=environment name=s quantity=c unit=x value=-7\n"
				   "sensor family=environment name=s quantity=d unit=x value=.5\n"),
			 0);
	assert_int_equal(run(&tool_sensors_read, "{\"family\":\"environment\"}"), 0);
	assert_has("\"quantity\":\"a\",\"unit\":\"x\",\"value\":1013.25}");
	assert_has("\"quantity\":\"b\",\"unit\":\"x\",\"value\":0.000001}");
	assert_has("\"quantity\":\"c\",\"unit\":\"x\",\"value\":-7}");
	assert_has("\"quantity\":\"d\",\"unit\":\"x\",\"value\":0.5}");
	expect_error("board\nfamily name=environment present=yes\n"
		     "sensor family=environment name=s quantity=a unit=x value=1.0000001\n",
		     "line 3: sensor: value has more than six decimals: '1.0000001'");
}

static void test_empty_board(void **state)
{
	(void)state;
	/* Nothing loaded (the unit tests' default): every tool answers, with empty lists. */
	assert_int_equal(run(&tool_gpio_list, "{}"), 0);
	assert_string_equal(result, "{\"count\":0,\"start\":0,\"gpios\":[],\"truncated\":false}");
	assert_int_equal(run(&tool_buses_list, "{}"), 0);
	assert_string_equal(result, "{\"buses\":[],\"count\":0,\"truncated\":false}");
	assert_int_equal(run(&tool_gpio_read, "{\"slot\":0}"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_repo_board_file_loads, setup),
		cmocka_unit_test_setup(test_malformed_fixture_names_the_line, setup),
		cmocka_unit_test_setup(test_missing_file, setup),
		cmocka_unit_test_setup(test_malformed_lines, setup),
		cmocka_unit_test_setup(test_line_length_bound, setup),
		cmocka_unit_test_setup(test_gpio_table_bound, setup),
		cmocka_unit_test_setup(test_describe_full, setup),
		cmocka_unit_test_setup(test_describe_minimal, setup),
		cmocka_unit_test_setup(test_gpio_list_levels_only_for_inputs, setup),
		cmocka_unit_test_setup(test_gpio_read_unconfigured_configures_nothing, setup),
		cmocka_unit_test_setup(test_gpio_read_inputs_outputs_and_failures, setup),
		cmocka_unit_test_setup(test_gpio_read_errors, setup),
		cmocka_unit_test_setup(test_gpio_list_truncates_and_pages, setup),
		cmocka_unit_test_setup(test_buses, setup),
		cmocka_unit_test_setup(test_displays, setup),
		cmocka_unit_test_setup(test_network, setup),
		cmocka_unit_test_setup(test_sensors_absent_family, setup),
		cmocka_unit_test_setup(test_sensor_value_format, setup),
		cmocka_unit_test_setup(test_empty_board, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
