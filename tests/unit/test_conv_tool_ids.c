/*
 * Tool ids in turn records (docs/conversation-format.md "Tool id records", docs/tools.md
 * "Tool ids"): the id table and tool_numeric_id(), a turn with a built-in and an imported tool
 * call storing ids N and 0 after their tool records, a version-1 file read and continued, and
 * the tool id record at its bounds (2 bytes; 1 and 3 refused; only after a tool record).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "conv_format.h"
#include "conv_store.h"
#include "tool_ids.h"
#include "tool_registry.h"

#include "conv_test_util.h"
#include "flash_fixture.h"

static int setup(void **state)
{
	(void)state;
	posix_fs_fail_after(-1);
	return flash_fixture_setup("test_conv_tool_ids");
}

static int teardown(void **state)
{
	(void)state;
	(void)posix_flash_unmount();
	host_rm_tree(scratch_dir);
	return 0;
}

/* ---- the table ----------------------------------------------------------------------------- */

static int imported_exec(struct tool_ctx *ctx, const struct tool_args *args,
			 struct json_writer *out)
{
	(void)ctx;
	(void)args;
	(void)out;
	return 0;
}

static const struct tool_def imported_weather = {
	.name = "weather",
	.description = PACKED_TEXT_PLAIN("an imported tool module"),
	.domain = TOOL_DOMAIN_SCRIPT,
	.exec = imported_exec,
	.groups = TOOL_GROUP_IMPORTED,
};

static void ids_are_fixed_by_name(void **state)
{
	static const char *const expected[] = {
		"system_status",  "firmware_reference", "tool_search",	     "storage_stat",
		"storage_list",	  "storage_read",	"storage_write",     "storage_search",
		"storage_read_range", "storage_patch",	"jobs_list",	     "hardware_describe",
		"gpio_list",	  "gpio_read",		"buses_list",	     "display_list",
		"network_status", "sensors_read",	"script_run_python", "script_run_lua",
		"script_run_file", "skill_use",		"memory_write",	     "memory_recall",
	};

	(void)state;
	assert_int_equal(tool_id_count(), sizeof(expected) / sizeof(expected[0]));
	for (uint16_t id = 1; id <= tool_id_count(); id++) {
		assert_string_equal(tool_id_name(id), expected[id - 1u]);
		assert_int_equal(tool_id_of_name(expected[id - 1u]), id);
	}
	assert_null(tool_id_name(0));
	assert_null(tool_id_name((uint16_t)(tool_id_count() + 1u)));
	assert_int_equal(tool_id_of_name("weather"), TOOL_ID_NONE);
	assert_int_equal(tool_id_of_name("storage_rea"), TOOL_ID_NONE);
	assert_int_equal(tool_id_of_name(NULL), TOOL_ID_NONE);
	assert_int_equal(tool_numeric_id(NULL), TOOL_ID_NONE);
}

static void every_compiled_in_tool_has_its_own_id(void **state)
{
	uint8_t seen[64] = {0};

	(void)state;
	assert_true(tool_registry_count() > 0u);
	for (size_t i = 0; i < tool_registry_count(); i++) {
		const struct tool_def *def = tool_registry_get(i);
		uint16_t id = tool_numeric_id(def);

		if (id == TOOL_ID_NONE) {
			fail_msg("built-in tool %s has no id", def->name);
		}
		assert_true(id < sizeof(seen));
		assert_int_equal(seen[id]++, 0);
		assert_string_equal(tool_id_name(id), def->name);
	}
	assert_int_equal(tool_numeric_id(tool_registry_find("system_status")), 1);
	assert_int_equal(tool_numeric_id(tool_registry_find("storage_read")), 6);
}

static void an_imported_tool_is_zero_even_under_a_built_in_name(void **state)
{
	struct tool_def shadow = imported_weather;

	(void)state;
	assert_int_equal(tool_registry_add(&imported_weather), 0);
	assert_int_equal(tool_numeric_id(tool_registry_find("weather")), TOOL_ID_NONE);
	assert_int_equal(tool_registry_remove(&imported_weather), 0);
	/* An imported module named like a built-in this build lacks is still imported: 0. */
	shadow.name = "script_run_lua";
	assert_int_equal(tool_numeric_id(&shadow), TOOL_ID_NONE);
	shadow.groups = TOOL_GROUP_RUN;
	assert_int_equal(tool_numeric_id(&shadow), 20);
}

/* ---- the records --------------------------------------------------------------------------- */

struct collected {
	uint8_t types[32];
	uint8_t data[32][64];
	uint32_t len[32];
	int count;
};

static int collect(const struct conv_chunk *chunk, void *user_data)
{
	struct collected *c = user_data;

	assert_true(c->count < 32 && chunk->total_len < 64u);
	c->types[c->count] = chunk->type;
	c->len[c->count] = chunk->total_len;
	memcpy(c->data[c->count] + chunk->offset, chunk->data, chunk->len);
	if (chunk->last) {
		c->count++;
	}
	return 0;
}

static void a_turn_stores_built_in_and_imported_ids(void **state)
{
	static const char *const lines[] = {"storage_read {\"path\":\"/lfs/a\"}", "weather {}"};
	static struct collected c;
	struct conv_meta meta = {2, "openai", "gpt-test", "ids"};
	struct conv_handle h;
	uint16_t ids[2];

	(void)state;
	assert_int_equal(tool_registry_add(&imported_weather), 0);
	ids[0] = tool_numeric_id(tool_registry_find("storage_read"));
	ids[1] = tool_numeric_id(tool_registry_find("weather"));
	assert_int_equal(tool_registry_remove(&imported_weather), 0);

	struct conv_turn turn = {
		.user = "q",
		.user_len = 1,
		.assistant = "a",
		.assistant_len = 1,
		.tools = lines,
		.tool_count = 2,
		.tool_ids = ids,
	};

	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_create(&h, &meta), 1);
	assert_int_equal(conv_store_commit(&h, &turn, NULL), 0);
	/* Sizes: meta, user, 2 x (tool + tool id), assistant. */
	assert_int_equal(h.bytes, CONV_HEADER_BYTES + CONV_TRAILER_BYTES + 9u * 8u + 6u + 8u +
					  3u + 1u + strlen(lines[0]) + strlen(lines[1]) +
					  2u * CONV_TOOL_ID_BYTES + 1u);
	memset(&c, 0, sizeof(c));
	assert_int_equal(conv_store_read(1, collect, &c), 0);
	static const uint8_t want[] = {CONV_REC_PROVIDER, CONV_REC_MODEL,   CONV_REC_TITLE,
				       CONV_REC_USER,	  CONV_REC_TOOL,    CONV_REC_TOOL_ID,
				       CONV_REC_TOOL,	  CONV_REC_TOOL_ID, CONV_REC_ASSISTANT};
	assert_int_equal(c.count, sizeof(want));
	assert_memory_equal(c.types, want, sizeof(want));
	/* The names stay in the lines; the ids follow, little-endian. */
	assert_int_equal(c.len[4], strlen(lines[0]));
	assert_memory_equal(c.data[4], lines[0], c.len[4]);
	assert_int_equal(c.len[5], 2);
	assert_memory_equal(c.data[5], "\x06\x00", 2);
	assert_memory_equal(c.data[6], "weather {}", 10);
	assert_int_equal(c.len[7], 2);
	assert_memory_equal(c.data[7], "\x00\x00", 2);

	/* Without ids (tool_ids NULL) the tool records stand alone, as in version 1. */
	turn.tool_ids = NULL;
	assert_int_equal(conv_store_commit(&h, &turn, NULL), 0);
	memset(&c, 0, sizeof(c));
	assert_int_equal(conv_store_read(1, collect, &c), 0);
	assert_int_equal(c.count, (int)sizeof(want) + 4);
	assert_int_equal(c.types[sizeof(want) + 1], CONV_REC_TOOL);
	assert_int_equal(c.types[sizeof(want) + 2], CONV_REC_TOOL);
	/* A 16-bit id above the table is stored as it is (the table grows; the store checks
	 * only the size). */
	ids[0] = 0xBEEF;
	turn.tool_ids = ids;
	turn.tool_count = 1;
	assert_int_equal(conv_store_commit(&h, &turn, NULL), 0);
	memset(&c, 0, sizeof(c));
	assert_int_equal(conv_store_read(1, collect, &c), 0);
	assert_int_equal(c.types[c.count - 2], CONV_REC_TOOL_ID);
	assert_memory_equal(c.data[c.count - 2], "\xef\xbe", 2);
}

/* ---- hand-made files ----------------------------------------------------------------------- */

struct file_builder {
	uint8_t bytes[512];
	size_t len;
	uint32_t records;
	uint32_t turns;
};

static void fb_start(struct file_builder *fb)
{
	memset(fb, 0, sizeof(*fb));
	fb->len = CONV_HEADER_BYTES;
}

static void fb_record(struct file_builder *fb, uint8_t type, const void *data, size_t len)
{
	uint8_t *at = fb->bytes + fb->len;

	conv_record_head_encode(type, (uint16_t)len, at);
	memcpy(at + CONV_RECORD_HEAD_BYTES, data, len);
	conv_put_le32(at + CONV_RECORD_HEAD_BYTES + len,
		      conv_crc32(0, at, CONV_RECORD_HEAD_BYTES + len));
	fb->len += CONV_RECORD_OVERHEAD + len;
	fb->records++;
	fb->turns += type == CONV_REC_USER;
}

/* Header of @p version and trailer around the records; returns the file's size. */
static size_t fb_finish(struct file_builder *fb, uint8_t version)
{
	struct conv_header hdr = {
		.slot = 1,
		.protocol = 2,
		.conv_id = 7,
		.sequence = 7,
		.turns = fb->turns,
		.records = fb->records,
		.file_bytes = (uint32_t)(fb->len + CONV_TRAILER_BYTES),
	};

	conv_header_encode(&hdr, fb->bytes);
	fb->bytes[4] = version;
	conv_put_le32(fb->bytes + 44, conv_crc32(0, fb->bytes, 44));
	conv_trailer_encode(hdr.file_bytes, 0, fb->bytes + fb->len);
	conv_put_le32(fb->bytes + fb->len + 8, conv_crc32(0, fb->bytes, fb->len + 8));
	fb->len += CONV_TRAILER_BYTES;
	return fb->len;
}

/* A one-turn file: meta, "q", a tool record (unless @p no_tool), a record of type @p type
 * with @p id_len bytes, "a". */
static size_t fb_turn(struct file_builder *fb, uint8_t version, bool no_tool, uint8_t type,
		      size_t id_len)
{
	static const uint8_t id[4] = {0x06, 0x00, 0x00, 0x00};

	fb_start(fb);
	fb_record(fb, CONV_REC_PROVIDER, "openai", 6);
	fb_record(fb, CONV_REC_MODEL, "gpt-test", 8);
	fb_record(fb, CONV_REC_TITLE, "t", 1);
	fb_record(fb, CONV_REC_USER, "q", 1);
	if (!no_tool) {
		fb_record(fb, CONV_REC_TOOL, "storage_read {}", 15);
	}
	fb_record(fb, type, id, id_len);
	fb_record(fb, CONV_REC_ASSISTANT, "a", 1);
	return fb_finish(fb, version);
}

/* Put @p fb into slot 1, start the store, read the slot: the read's result. */
static int put_and_read(const struct file_builder *fb, struct collected *c)
{
	char path[64];

	slot_file_path(path, sizeof(path), CONV_DIR_LFS, 1, "bin");
	assert_int_equal(conv_store_init(), 0); /* makes the directory */
	assert_int_equal(file_put(path, fb->bytes, fb->len), 0);
	assert_int_equal(conv_store_init(), 0);
	memset(c, 0, sizeof(*c));
	return conv_store_read(1, collect, c);
}

static void a_tool_id_record_at_its_bounds(void **state)
{
	static struct file_builder fb;
	static struct collected c;

	(void)state;
	/* Exactly 2 bytes after a tool record: valid. */
	fb_turn(&fb, 2, false, CONV_REC_TOOL_ID, 2);
	assert_int_equal(put_and_read(&fb, &c), 0);
	assert_int_equal(c.count, 7);
	assert_int_equal(c.types[5], CONV_REC_TOOL_ID);
	/* 1 and 3 bytes: damaged. */
	fb_turn(&fb, 2, false, CONV_REC_TOOL_ID, 1);
	assert_int_equal(put_and_read(&fb, &c), -EBADMSG);
	assert_int_equal(c.count, 5); /* the records before it were delivered */
	fb_turn(&fb, 2, false, CONV_REC_TOOL_ID, 3);
	assert_int_equal(put_and_read(&fb, &c), -EBADMSG);
	/* A tool id that follows no tool record: damaged. */
	fb_turn(&fb, 2, true, CONV_REC_TOOL_ID, 2);
	assert_int_equal(put_and_read(&fb, &c), -EBADMSG);
	assert_int_equal(c.count, 4);
	/* A damaged file is not continued. */
	struct conv_summary sum;

	assert_int_equal(conv_store_summary(1, &sum), -EBADMSG);
	/* Version 1 knew no type 21: a record of that type is unknown, delivered, skipped. */
	fb_turn(&fb, 1, true, CONV_REC_TOOL_ID, 3);
	assert_int_equal(put_and_read(&fb, &c), 0);
	assert_int_equal(c.count, 6);
	/* Versions 0 and 3 are refused. */
	fb_turn(&fb, 0, false, CONV_REC_TOOL_ID, 2);
	assert_int_equal(put_and_read(&fb, &c), -EBADMSG);
	fb_turn(&fb, 3, false, CONV_REC_TOOL_ID, 2);
	assert_int_equal(put_and_read(&fb, &c), -EBADMSG);
}

static void a_version_1_file_reads_and_continues_as_version_2(void **state)
{
	static struct file_builder fb;
	static struct collected c;
	static const char *const lines[] = {"storage_list {}"};
	static const uint16_t ids[] = {5};
	struct conv_turn turn = {
		.user = "q2",
		.user_len = 2,
		.assistant = "a2",
		.assistant_len = 2,
		.tools = lines,
		.tool_count = 1,
		.tool_ids = ids,
	};
	struct conv_handle h;
	uint8_t head[CONV_HEADER_BYTES];
	char path[64];

	(void)state;
	/* What version 1 wrote: a turn with a tool record and no id. */
	fb_start(&fb);
	fb_record(&fb, CONV_REC_PROVIDER, "openai", 6);
	fb_record(&fb, CONV_REC_MODEL, "gpt-test", 8);
	fb_record(&fb, CONV_REC_TITLE, "t", 1);
	fb_record(&fb, CONV_REC_USER, "q", 1);
	fb_record(&fb, CONV_REC_TOOL, "storage_read {}", 15);
	fb_record(&fb, CONV_REC_ASSISTANT, "a", 1);
	fb_finish(&fb, 1);
	assert_int_equal(put_and_read(&fb, &c), 0);
	assert_int_equal(c.count, 6);
	assert_int_equal(c.types[4], CONV_REC_TOOL);

	/* Resumed and continued: the new file is version 2; the old turn keeps no id. */
	assert_int_equal(conv_store_open(&h, 1), 0);
	assert_int_equal(h.turns, 1);
	assert_int_equal(conv_store_commit(&h, &turn, NULL), 0);
	slot_file_path(path, sizeof(path), CONV_DIR_LFS, 1, "bin");
	assert_int_equal(file_get(path, head, sizeof(head)), (int)sizeof(head));
	assert_int_equal(head[4], 2);
	assert_int_equal(conv_store_init(), 0);
	memset(&c, 0, sizeof(c));
	assert_int_equal(conv_store_read(1, collect, &c), 0);
	static const uint8_t want[] = {CONV_REC_PROVIDER,  CONV_REC_MODEL, CONV_REC_TITLE,
				       CONV_REC_USER,	   CONV_REC_TOOL,  CONV_REC_ASSISTANT,
				       CONV_REC_USER,	   CONV_REC_TOOL,  CONV_REC_TOOL_ID,
				       CONV_REC_ASSISTANT};
	assert_int_equal(c.count, sizeof(want));
	assert_memory_equal(c.types, want, sizeof(want));
	assert_memory_equal(c.data[8], "\x05\x00", 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_are_fixed_by_name),
		cmocka_unit_test(every_compiled_in_tool_has_its_own_id),
		cmocka_unit_test(an_imported_tool_is_zero_even_under_a_built_in_name),
		cmocka_unit_test_setup_teardown(a_turn_stores_built_in_and_imported_ids, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_tool_id_record_at_its_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(a_version_1_file_reads_and_continues_as_version_2,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
