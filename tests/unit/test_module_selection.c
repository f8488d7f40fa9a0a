/*
 * Tool selection and the tool status stream (app/src/modules/module_selection.c,
 * module_tool_status.c; docs/tools.md "Tool selection", "The tool status stream") over the
 * real POSIX settings: the stored texts at their bounds, every group's bits, the effective
 * mask, forgetting, and the stream's header, records and compaction at its byte bound.
 */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_port.h"
#include "module.h"
#include "module_agents.h"
#include "module_selection.h"
#include "module_tool_status.h"
#include "module_import.h"
#include "posix/posix_port.h"
#include "tool.h"

#include "flash_fixture.h"

static int setup(void **state)
{
	(void)state;
	if (flash_fixture_setup("test_module_selection") != 0) {
		return -1;
	}
	/* The catalog, the lock and the stream; skill_use is registered again (-EEXIST) from
	 * the second test on, which does not matter here. */
	(void)module_boot(NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return flash_fixture_teardown();
}

static int parse(const char *text, bool mask, uint32_t *v)
{
	return module_selection_parse(text, strlen(text), mask, v);
}

static void test_stored_texts_at_their_bounds(void **state)
{
	uint32_t v = 7;

	(void)state;
	assert_int_equal(parse("0", true, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse("1023", true, &v), 0); /* N */
	assert_int_equal(v, 1023);
	assert_int_equal(parse("1024", true, &v), -EINVAL); /* N + 1 */
	assert_int_equal(parse("", true, &v), -EINVAL);
	assert_int_equal(parse("01", true, &v), -EINVAL);
	assert_int_equal(parse("-1", true, &v), -EINVAL);
	assert_int_equal(parse("1 ", true, &v), -EINVAL);
	/* Records: every group at 2 is the largest valid value whose groups are 0..2. */
	assert_int_equal(parse("699050", false, &v), 0); /* 0xAAAAA */
	assert_int_equal(v, 0xAAAAAu);
	assert_int_equal(parse("349525", false, &v), 0); /* 0x55555: every group 1 */
	assert_int_equal(parse("1048575", false, &v), -EINVAL); /* 0xFFFFF: every group 3 */
	assert_int_equal(parse("1048576", false, &v), -EINVAL); /* past 20 bits */
	assert_int_equal(parse("99999999", false, &v), -EINVAL); /* 8 digits */
	for (unsigned int bit = 0; bit < TOOL_GROUP_COUNT; bit++) {
		char text[16];

		for (uint32_t c = 0; c < 4u; c++) {
			snprintf(text, sizeof(text), "%u", (unsigned int)(c << (2u * bit)));
			assert_int_equal(parse(text, false, &v), c == 3u ? -EINVAL : 0);
			if (c != 3u) {
				assert_int_equal(module_selection_choice(v, bit), c);
			}
		}
	}
}

static void test_every_group_default_and_choice(void **state)
{
	struct selection_state st;
	char why[MODULE_REASON_MAX + 1];

	(void)state;
	assert_int_equal(module_selection_read(0, &st), 0);
	assert_int_equal(st.defaults, TOOL_GROUPS_ALL);
	assert_int_equal(st.effective, TOOL_GROUPS_ALL);
	for (int bit = 0; bit < (int)TOOL_GROUP_COUNT; bit++) {
		assert_int_equal(module_selection_set_default(bit, false, why, sizeof(why)), 0);
		assert_int_equal(module_selection_effective(0), TOOL_GROUPS_ALL & ~(1u << bit));
		/* The agent's choice beats the default in either direction. */
		assert_int_equal(module_selection_set_agent(0, bit, SELECTION_ENABLE, why,
							    sizeof(why)),
				 0);
		assert_int_equal(module_selection_effective(0), TOOL_GROUPS_ALL);
		assert_int_equal(module_selection_set_default(bit, true, why, sizeof(why)), 0);
		assert_int_equal(module_selection_set_agent(0, bit, SELECTION_DISABLE, why,
							    sizeof(why)),
				 0);
		assert_int_equal(module_selection_effective(0), TOOL_GROUPS_ALL & ~(1u << bit));
		assert_int_equal(module_selection_read(0, &st), 0);
		assert_int_equal(st.record, 1u << (2u * (unsigned int)bit));
		assert_int_equal(module_selection_set_agent(0, bit, SELECTION_INHERIT, why,
							    sizeof(why)),
				 0);
		assert_int_equal(agent_settings_get("agent/tools.agent.0", why, sizeof(why)),
				 -ENOENT);
	}
	assert_int_equal(module_selection_set_default(SELECTION_ALL_GROUPS, false, why,
						      sizeof(why)),
			 0);
	assert_int_equal(module_selection_effective(1), 0);
	assert_int_equal(module_selection_set_agent(1, SELECTION_ALL_GROUPS, SELECTION_ENABLE, why,
						    sizeof(why)),
			 0);
	assert_int_equal(module_selection_effective(1), TOOL_GROUPS_ALL);
	assert_int_equal(module_selection_effective(0), 0);
	module_agent_forget(1);
	assert_int_equal(module_selection_effective(1), 0);
	/* Refusals. */
	assert_int_equal(module_selection_set_agent(MODULE_AGENT_IDS, 0, SELECTION_ENABLE, why,
						    sizeof(why)),
			 -ERANGE);
	assert_int_equal(module_selection_set_agent(1, 0, SELECTION_INVALID, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(module_selection_set_agent(1, (int)TOOL_GROUP_COUNT, SELECTION_ENABLE,
						    why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(module_selection_set_default((int)TOOL_GROUP_COUNT, true, why,
						      sizeof(why)),
			 -EINVAL);
	assert_int_equal(module_selection_read(MODULE_AGENT_IDS, &st), -ERANGE);
}

static void test_an_invalid_stored_record_is_ignored(void **state)
{
	struct selection_state st;

	(void)state;
	assert_int_equal(agent_settings_set("agent/tools.mask", "5", 1), 0);
	assert_int_equal(agent_settings_set("agent/tools.agent.2", "12", 2), 0); /* group 1 at 3 */
	assert_int_equal(module_selection_read(2, &st), 0);
	assert_true(st.record_invalid);
	assert_int_equal(st.record, 0);
	assert_int_equal(st.effective, 5);
	assert_int_equal(agent_settings_set("agent/tools.mask", "x", 1), 0);
	assert_int_equal(module_selection_read(2, &st), 0);
	assert_true(st.defaults_invalid);
	assert_int_equal(st.defaults, TOOL_GROUPS_ALL);
}

static void test_unreadable_settings_enable_nothing_and_change_nothing(void **state)
{
	char why[MODULE_REASON_MAX + 1];
	struct selection_state st;

	(void)state;
	assert_int_equal(module_selection_set_default(3, false, why, sizeof(why)), 0);
	posix_fs_fail_after(0); /* every file call fails with -EIO: the settings too */
	assert_int_equal(module_selection_read(0, &st), -EIO);
	assert_int_equal(st.effective, 0);
	assert_int_equal(module_selection_effective(0), 0);
	assert_int_equal(module_selection_set_default(4, false, why, sizeof(why)), -EIO);
	assert_string_equal(why, "settings: cannot read agent/tools.mask; nothing changed");
	assert_int_equal(module_selection_set_agent(0, 4, SELECTION_DISABLE, why, sizeof(why)),
			 -EIO);
	posix_fs_fail_after(-1);
	assert_int_equal(module_selection_read(0, &st), 0);
	assert_int_equal(st.defaults, TOOL_GROUPS_ALL & ~(1u << 3)); /* as it was */
	assert_int_equal(st.record, 0);
	/* Without a settings store at all nothing can be stored: the defaults, every group on. */
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(module_selection_read(0, &st), 0);
	assert_int_equal(st.effective, TOOL_GROUPS_ALL);
	assert_int_equal(posix_flash_mount(image_path, 0, false), 0);
}

/* The number of lines of the stream and its generation. */
static size_t stream_lines(uint32_t *gen, size_t *size)
{
	static char copy[CONFIG_AGENT_TOOL_STATUS_STREAM_BYTES + 1];
	size_t n = module_tool_status_read(0, copy, sizeof(copy), size, gen);
	size_t lines = 0;

	assert_int_equal(n, *size);
	for (size_t i = 0; i < n; i++) {
		lines += copy[i] == '\n';
	}
	assert_true(n == 0 || copy[n - 1] == '\n');
	assert_memory_equal(copy, "{\"stream\":\"tools.jsonl\",\"version\":1,", 36);
	return lines;
}

static void test_the_stream_starts_with_agent_0_and_compacts_at_its_bound(void **state)
{
	char why[MODULE_REASON_MAX + 1];
	char buf[16];
	uint32_t gen;
	size_t size;
	size_t last;
	size_t total;

	(void)state;
	assert_int_equal(stream_lines(&gen, &size), 2); /* the header and agent 0 */
	assert_int_equal(gen, 0);
	assert_int_equal(module_tool_status_read(size, buf, sizeof(buf), &total, &gen), 0);
	assert_int_equal(module_tool_status_read(size + 1u, buf, sizeof(buf), &total, &gen), 0);
	/* Each refresh appends one record until the next one does not fit: then the stream
	 * starts again with the header and the current state of the agents it reports. */
	last = size;
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(module_tool_status_refresh(0), 0);
		(void)stream_lines(&gen, &size);
		assert_true(size <= CONFIG_AGENT_TOOL_STATUS_STREAM_BYTES);
		if (gen != 0) {
			break;
		}
		assert_true(size > last);
		last = size;
	}
	assert_int_equal(gen, 1);
	assert_int_equal(stream_lines(&gen, &size), 2);
	assert_true(CONFIG_AGENT_TOOL_STATUS_STREAM_BYTES - last < size); /* N + 1 did not fit */
	/* A default change reports every agent the stream reports. */
	assert_int_equal(module_tool_status_refresh(1), 0);
	assert_int_equal(stream_lines(&gen, &size), 3);
	assert_int_equal(module_selection_set_default(2, false, why, sizeof(why)), 0);
	assert_int_equal(stream_lines(&gen, &size), 5);
	assert_int_equal(module_tool_status_refresh(MODULE_AGENT_IDS), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stored_texts_at_their_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_group_default_and_choice, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_an_invalid_stored_record_is_ignored, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_unreadable_settings_enable_nothing_and_change_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_the_stream_starts_with_agent_0_and_compacts_at_its_bound, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
