/*
 * The conversation store (conv_store.h, docs/conversation-format.md) over a real LittleFS
 * image at /lfs and over the simulator's SD folder at /SD:: create, commit, list, read,
 * resume, delete; eviction order; the file bounds at N-1, N and N+1; recovery from the
 * backup; the Chat history bounds; the memory used to restore a 48 KiB conversation; and a
 * fault injected at every filesystem call of a save, an eviction and a delete, followed by
 * the next start's recovery.
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
#include "json_writer.h"

#include "conv_test_util.h"
#include "flash_fixture.h"

#define FLASH_MAX CONFIG_AGENT_CONV_FLASH_FILE_MAX
#define SD_MAX	  CONFIG_AGENT_CONV_SD_FILE_MAX

static char sd_path[128];

static int setup_flash(void **state)
{
	(void)state;
	posix_fs_fail_after(-1);
	return flash_fixture_setup("test_conv_store");
}

static int setup_sd(void **state)
{
	int err = setup_flash(state);

	if (err != 0) {
		return err;
	}
	snprintf(sd_path, sizeof(sd_path), "%s/sd", scratch_dir);
	return posix_sd_mount(sd_path);
}

static int teardown(void **state)
{
	(void)state;
	posix_fs_fail_after(-1);
	(void)posix_sd_unmount();
	(void)posix_flash_unmount();
	host_rm_tree(scratch_dir);
	return 0;
}

struct collected {
	uint8_t types[64];
	char text[64][128];
	int count;
};

static int collect(const struct conv_chunk *chunk, void *user_data)
{
	struct collected *c = user_data;

	assert_true(c->count < 64);
	assert_true(chunk->len <= CONV_IO_BYTES);
	if (chunk->offset == 0u) {
		c->types[c->count] = chunk->type;
		c->text[c->count][0] = '\0';
	}
	if (chunk->offset + chunk->len < sizeof(c->text[0])) {
		memcpy(c->text[c->count] + chunk->offset, chunk->data, chunk->len);
		c->text[c->count][chunk->offset + chunk->len] = '\0';
	}
	if (chunk->last) {
		c->count++;
	}
	return 0;
}

static int count_listed(const struct conv_summary *s, void *user_data)
{
	(void)s;
	(*(int *)user_data)++;
	return 0;
}

static void create_commit_list_read_delete(void **state)
{
	static const char *const tools[] = {"storage_read: executed", "gpio_read: denied"};
	struct conv_usage usage = {11, 22, 33, 4};
	struct conv_turn t1 = {
		.user = "hello there",
		.user_len = 11,
		.assistant = "general kenobi",
		.assistant_len = 14,
		.tools = tools,
		.tool_count = 2,
		.response_id = "resp_a",
		.usage = &usage,
	};
	struct conv_turn t2 = {
		.user = "second",
		.user_len = 6,
		.assistant = "",
		.assistant_len = 0,
		.response_id = "resp_b",
	};
	struct conv_meta meta = {2, "openai", "gpt-test", "Greetings"};
	struct conv_store_info info;
	struct conv_summary sum;
	struct conv_handle h;
	struct conv_handle h2;
	struct collected *c = calloc(1, sizeof(*c));
	char id[CONV_RESPONSE_ID_MAX + 1];
	int listed = 0;

	(void)state;
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_info_get(&info), 0);
	assert_int_equal(info.medium, CONV_MEDIUM_FLASH);
	assert_int_equal(info.slots, CONFIG_AGENT_CONV_FLASH_SLOTS);
	assert_int_equal(info.file_max_bytes, FLASH_MAX);
	assert_string_equal(info.dir, CONV_DIR_LFS);
	assert_int_equal(conv_store_list(count_listed, &listed), 0);

	/* Nothing is stored until the first completed turn. */
	assert_int_equal(conv_store_create(&h, &meta), 1);
	assert_true(h.pending);
	assert_int_equal(conv_store_list(count_listed, &listed), 0);
	assert_int_equal(conv_store_summary(1, &sum), -ENOENT);

	assert_int_equal(conv_store_commit(&h, &t1, NULL), 0);
	assert_false(h.pending);
	assert_int_equal(h.turns, 1);
	assert_int_equal(conv_store_summary(1, &sum), 0);
	assert_string_equal(sum.title, "Greetings");
	assert_string_equal(sum.model, "gpt-test");
	assert_string_equal(sum.provider, "openai");
	assert_int_equal(sum.protocol, 2);
	assert_int_equal(sum.turns, 1);
	assert_int_equal(sum.bytes, h.bytes);
	assert_true(sum.created_s > 1600000000 && sum.updated_s >= sum.created_s);
	assert_int_equal(conv_store_commit(&h, &t2, NULL), 0);
	assert_int_equal(conv_store_list(count_listed, &listed), 1);
	assert_int_equal(listed, 1);

	assert_int_equal(conv_store_read(1, collect, c), 0);
	static const uint8_t want_types[] = {
		CONV_REC_PROVIDER, CONV_REC_MODEL,	CONV_REC_TITLE,	    CONV_REC_USER,
		CONV_REC_TOOL,	   CONV_REC_TOOL,	CONV_REC_ASSISTANT, CONV_REC_RESPONSE_ID,
		CONV_REC_USAGE,	   CONV_REC_USER,	CONV_REC_ASSISTANT, CONV_REC_RESPONSE_ID,
	};
	assert_int_equal(c->count, sizeof(want_types));
	assert_memory_equal(c->types, want_types, sizeof(want_types));
	assert_string_equal(c->text[3], "hello there");
	assert_string_equal(c->text[4], "storage_read: executed");
	assert_string_equal(c->text[6], "general kenobi");
	assert_string_equal(c->text[10], "");
	assert_int_equal(conv_store_last_response_id(1, id, sizeof(id)), 6);
	assert_string_equal(id, "resp_b");
	assert_int_equal(conv_store_last_response_id(1, id, 4), -ENOSPC);

	/* Resume and continue from another handle. */
	assert_int_equal(conv_store_open(&h2, 1), 0);
	assert_int_equal(h2.conv_id, h.conv_id);
	assert_int_equal(h2.turns, 2);
	assert_string_equal(h2.title, "Greetings");
	assert_int_equal(conv_store_commit(&h2, &t2, NULL), 0);
	assert_int_equal(h2.turns, 3);
	assert_int_equal(stray_files(CONV_DIR_LFS), 0);

	/* Delete: gone with its backup; a handle on it learns so. */
	assert_int_equal(conv_store_delete(1), 0);
	assert_int_equal(conv_store_delete(1), -ENOENT);
	assert_int_equal(conv_store_summary(1, &sum), -ENOENT);
	assert_int_equal(conv_store_read(1, collect, c), -ENOENT);
	assert_int_equal(conv_store_last_response_id(1, id, sizeof(id)), -ENOENT);
	const char *why = NULL;

	assert_int_equal(conv_store_commit(&h2, &t2, &why), -ENOENT);
	assert_string_equal(why, "the conversation was deleted");
	listed = 0;
	assert_int_equal(conv_store_list(count_listed, &listed), 0);
	char path[64];
	struct agent_dirent ent;

	slot_file_path(path, sizeof(path), CONV_DIR_LFS, 1, "bak");
	assert_int_equal(agent_fs_stat(path, &ent), -ENOENT);

	/* Arguments out of bounds. */
	assert_int_equal(conv_store_summary(0, &sum), -EINVAL);
	assert_int_equal(conv_store_summary(CONFIG_AGENT_CONV_FLASH_SLOTS + 1, &sum), -EINVAL);
	assert_int_equal(conv_store_delete(CONFIG_AGENT_CONV_FLASH_SLOTS + 1), -EINVAL);
	/* A title is cut at a character boundary: 62 ASCII bytes, then a 2-byte character. */
	char title[80];

	memset(title, 'x', 62);
	memcpy(title + 62, "\xc3\xa9tail", 7);
	struct conv_meta cut = {1, "p", "m", title};

	assert_int_equal(conv_store_create(&h, &cut), 1);
	assert_int_equal(strlen(h.title), 62);
	struct conv_turn empty_user = {.user = "", .user_len = 0};

	assert_int_equal(conv_store_commit(&h, &empty_user, &why), -EINVAL);
	char long_line[300];

	memset(long_line, 'l', 256);
	long_line[256] = '\0';
	const char *long_tools[] = {long_line};
	struct conv_turn bad_tool = {.user = "u", .user_len = 1, .tools = long_tools, .tool_count = 1};

	assert_int_equal(conv_store_commit(&h, &bad_tool, &why), -EINVAL);
	long_line[96] = '\0';
	struct conv_turn bad_id = {.user = "u", .user_len = 1, .response_id = long_line};

	assert_int_equal(conv_store_commit(&h, &bad_id, &why), -EINVAL);
	assert_int_equal(conv_store_summary(1, &sum), -ENOENT);
	free(c);
}

/*
 * The chat passes the endpoint's host as the provider (up to 253 bytes): a longer one is cut
 * to CONV_PROVIDER_MAX at a character boundary, like the title, not refused.
 */
static void create_cuts_a_long_provider(void **state)
{
	static const char host[] = "llm-gateway.inference.eu-west-1.example-provider.internal.io";
	char accented[CONV_PROVIDER_MAX + 8];
	struct conv_meta meta = {1, host, "gpt-test", "long host"};
	struct conv_summary sum;
	struct conv_handle h;
	char model[CONV_MODEL_MAX + 2];

	(void)state;
	assert_int_equal(strlen(host), 60);
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_create(&h, &meta), 1);
	assert_int_equal(strlen(h.provider), CONV_PROVIDER_MAX);
	assert_memory_equal(h.provider, host, CONV_PROVIDER_MAX);
	assert_int_equal(commit_sized(&h, 5, 5, 1, "resp_1"), 0);
	assert_int_equal(conv_store_summary(1, &sum), 0);
	assert_string_equal(sum.provider, h.provider);

	/* A two-byte character across the bound goes whole: 30 bytes are kept. */
	memset(accented, 'x', CONV_PROVIDER_MAX - 1u);
	memcpy(accented + CONV_PROVIDER_MAX - 1u, "\xc3\xa9yz", 5);
	meta.provider = accented;
	assert_int_equal(conv_store_create(&h, &meta), 2);
	assert_int_equal(strlen(h.provider), CONV_PROVIDER_MAX - 1u);
	assert_memory_equal(h.provider, accented, CONV_PROVIDER_MAX - 1u);
	assert_int_equal(commit_sized(&h, 5, 5, 2, NULL), 0);
	assert_int_equal(conv_store_summary(2, &sum), 0);
	assert_string_equal(sum.provider, h.provider);

	/* Exactly the bound is kept whole; a model above its bound is still refused. */
	accented[CONV_PROVIDER_MAX] = '\0';
	memset(accented, 'p', CONV_PROVIDER_MAX);
	assert_int_equal(conv_store_create(&h, &meta), 3);
	assert_string_equal(h.provider, accented);
	memset(model, 'm', sizeof(model) - 1u);
	model[sizeof(model) - 1u] = '\0';
	meta.model = model;
	assert_int_equal(conv_store_create(&h, &meta), -EINVAL);
}

static void eviction_order_flash(void **state)
{
	struct conv_meta meta = {1, "openai", "gpt-test", "new"};
	struct conv_handle h;
	struct conv_summary sum;
	char path[64];
	struct agent_dirent ent;
	int a;
	int b;
	int c;

	(void)state;
	assert_int_equal(conv_store_init(), 0);
	a = new_conversation("A", 1, 40, 1);
	b = new_conversation("B", 1, 40, 2);
	c = new_conversation("C", 1, 40, 3);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(c, 3);
	/* Continuing A makes it recent: B is now the least recently written. */
	assert_int_equal(conv_store_open(&h, 1), 0);
	assert_int_equal(commit_sized(&h, 10, 10, 9, NULL), 0);

	/* Choosing is deterministic and evicts nothing by itself. */
	assert_int_equal(conv_store_create(&h, &meta), 2);
	assert_int_equal(conv_store_create(&h, &meta), 2);
	assert_int_equal(conv_store_summary(2, &sum), 0);
	assert_string_equal(sum.title, "B");

	assert_int_equal(commit_sized(&h, 10, 10, 4, NULL), 0);
	assert_int_equal(conv_store_summary(2, &sum), 0);
	assert_string_equal(sum.title, "new");
	assert_int_equal(sum.turns, 1);
	/* Nothing of B survives a completed eviction. */
	slot_file_path(path, sizeof(path), CONV_DIR_LFS, 2, "bak");
	assert_int_equal(agent_fs_stat(path, &ent), -ENOENT);

	/* Then C (slot 3), then A (slot 1), in the order they were last written. */
	assert_int_equal(new_conversation("D", 1, 10, 5), 3);
	assert_int_equal(new_conversation("E", 1, 10, 6), 1);
	assert_int_equal(new_conversation("F", 1, 10, 7), 2);
	assert_int_equal(conv_store_summary(1, &sum), 0);
	assert_string_equal(sum.title, "E");
	assert_int_equal(stray_files(CONV_DIR_LFS), 0);
}

static void eviction_order_sd(void **state)
{
	struct conv_store_info info;
	struct conv_summary sum;
	struct conv_handle h;

	(void)state;
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_info_get(&info), 0);
	assert_int_equal(info.medium, CONV_MEDIUM_SD);
	assert_int_equal(info.slots, CONFIG_AGENT_CONV_SD_SLOTS);
	assert_int_equal(info.file_max_bytes, SD_MAX);
	assert_string_equal(info.dir, CONV_DIR_SD);
	for (int i = 1; i <= CONFIG_AGENT_CONV_SD_SLOTS; i++) {
		char title[8];

		snprintf(title, sizeof(title), "S%d", i);
		assert_int_equal(new_conversation(title, 1, 20, (unsigned int)i), i);
	}
	/* Touch 1, 3 and 2, in that order: 4 becomes the oldest, then 5, 6, 7, 8, 1, 3, 2. */
	static const uint8_t touched[] = {1, 3, 2};

	for (size_t i = 0; i < sizeof(touched); i++) {
		assert_int_equal(conv_store_open(&h, touched[i]), 0);
		assert_int_equal(commit_sized(&h, 5, 5, 50u + (unsigned int)i, NULL), 0);
	}
	static const int order[] = {4, 5, 6, 7, 8, 1, 3, 2, 4};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		assert_int_equal(new_conversation("N", 1, 10, 100u + (unsigned int)i), order[i]);
	}
	assert_int_equal(conv_store_summary(2, &sum), 0);
	assert_string_equal(sum.title, "N");
	assert_int_equal(stray_files(CONV_DIR_SD), 0);
	/* The card is a host folder with FAT's rules: rename never replaces. */
	assert_int_equal(agent_fs_rename(CONV_DIR_SD "/conv1.bin", CONV_DIR_SD "/conv2.bin"),
			 -EEXIST);
	/* And names match regardless of case. */
	assert_int_equal(agent_fs_stat("/SD:/.AGENT/Conversations/CONV1.BIN", &(struct agent_dirent){0}),
			 0);
}

static void damaged_slot_is_evicted_first_and_backup_restored(void **state)
{
	struct conv_store_info info;
	struct conv_fp v1;
	struct conv_fp v2;
	struct conv_fp now;
	struct conv_handle h;
	uint8_t file[4096];
	char main_path[64];
	char bak_path[64];
	char tmp_path[64];
	const char *dir = (const char *)*state;
	int len;

	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(new_conversation("A", 1, 30, 1), 1);
	assert_int_equal(new_conversation("B", 1, 30, 2), 2);
	assert_int_equal(new_conversation("C", 1, 30, 3), 3);
	slot_file_path(main_path, sizeof(main_path), dir, 1, "bin");
	slot_file_path(bak_path, sizeof(bak_path), dir, 1, "bak");
	slot_file_path(tmp_path, sizeof(tmp_path), dir, 1, "tmp");

	/* Slot 1 with a previous version: main v2, backup v1. */
	v1 = conv_fingerprint(1);
	assert_int_equal(conv_store_open(&h, 1), 0);
	assert_int_equal(commit_sized(&h, 20, 20, 8, "resp_x"), 0);
	v2 = conv_fingerprint(1);
	assert_false(fp_equal(&v1, &v2));

	/* A damaged main file is replaced by its backup at the next start. */
	len = file_get(main_path, file, sizeof(file));
	assert_true(len > 100);
	file[len / 2] ^= 0x40;
	assert_int_equal(file_put(main_path, file, (size_t)len), 0);
	assert_int_equal(file_put(tmp_path, (const uint8_t *)"partial", 7), 0);
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_info_get(&info), 0);
	assert_int_equal(info.recovered, 1);
	assert_int_equal(info.damaged, 0);
	now = conv_fingerprint(1);
	assert_true(fp_equal(&now, &v1));
	assert_int_equal(stray_files(dir), 0);

	/* A missing main file too. */
	assert_int_equal(conv_store_open(&h, 1), 0);
	assert_int_equal(commit_sized(&h, 20, 20, 9, NULL), 0);
	assert_int_equal(agent_fs_unlink(main_path), 0);
	assert_int_equal(conv_store_init(), 0);
	now = conv_fingerprint(1);
	assert_true(fp_equal(&now, &v1));

	/* Main and backup damaged: the slot is damaged, evicted first, usable again after. */
	assert_int_equal(conv_store_open(&h, 1), 0);
	assert_int_equal(commit_sized(&h, 20, 20, 10, NULL), 0);
	len = file_get(main_path, file, sizeof(file));
	file[60] ^= 1;
	assert_int_equal(file_put(main_path, file, (size_t)len), 0);
	len = file_get(bak_path, file, sizeof(file));
	file[len - 1] ^= 1;
	assert_int_equal(file_put(bak_path, file, (size_t)len), 0);
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_info_get(&info), 0);
	assert_int_equal(info.damaged, 1);
	assert_int_equal(stray_files(dir), 0);
	struct agent_dirent ent;

	assert_int_equal(agent_fs_stat(bak_path, &ent), -ENOENT);
	const char *why = NULL;

	assert_int_equal(commit_sized(&h, 1, 1, 1, NULL), -EBADMSG);
	assert_int_equal(conv_store_open(&h, 1), -EBADMSG);
	/* Slot 1 is the oldest anyway here; make it the newest to see damage win. */
	assert_int_equal(conv_store_open(&h, 2), 0);
	assert_int_equal(commit_sized(&h, 1, 1, 1, NULL), 0);
	assert_int_equal(conv_store_open(&h, 3), 0);
	assert_int_equal(conv_store_commit(&h, &(struct conv_turn){.user = "u", .user_len = 1},
					   &why),
			 0);
	/* Every other slot full, all of them older than slot 1's last write but 2 and 3. */
	for (int s = 4; s <= (int)info.slots; s++) {
		assert_int_equal(new_conversation("F", 1, 10, 20u + (unsigned int)s), s);
	}
	assert_int_equal(new_conversation("D", 1, 10, 11), 1);
	assert_int_equal(conv_store_info_get(&info), 0);
	assert_int_equal(info.damaged, 0);
	now = conv_fingerprint(1);
	assert_int_equal(now.state, 0);
}

static void bad_record_stops_reading_and_stale_handle(void **state)
{
	struct collected *c = calloc(1, sizeof(*c));
	struct conv_handle old;
	struct conv_history *hist = calloc(1, sizeof(*hist));
	uint8_t file[4096];
	char path[64];
	const char *why = NULL;
	int len;
	size_t pos;

	(void)state;
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(new_conversation("A", 3, 20, 1), 1);
	assert_int_equal(new_conversation("B", 1, 20, 2), 2);
	assert_int_equal(new_conversation("C", 1, 20, 3), 3);

	/* Damage the payload of record 5 (the first turn's assistant message). */
	slot_file_path(path, sizeof(path), CONV_DIR_LFS, 1, "bin");
	len = file_get(path, file, sizeof(file));
	pos = CONV_HEADER_BYTES;
	for (int rec = 0; rec < 5; rec++) {
		pos += CONV_RECORD_OVERHEAD + (file[pos + 2] | (file[pos + 3] << 8));
	}
	assert_int_equal(file[pos], CONV_REC_ASSISTANT);
	file[pos + CONV_RECORD_HEAD_BYTES + 3] ^= 0x20;
	assert_int_equal(file_put(path, file, (size_t)len), 0);
	/* A damaged record under a valid header: reading stops there, after the good ones. */
	assert_int_equal(conv_store_read(1, collect, c), -EBADMSG);
	assert_int_equal(c->count, 5);
	assert_int_equal(conv_store_history(1, hist), -EBADMSG);
	assert_int_equal(hist->count, 0);

	/* A handle whose slot was taken by another conversation is refused. */
	assert_int_equal(conv_store_open(&old, 2), 0);
	assert_int_equal(conv_store_delete(1), 0);
	assert_int_equal(new_conversation("X", 1, 5, 4), 1);
	assert_int_equal(new_conversation("Y", 1, 5, 5), 2); /* evicts B: the oldest */
	assert_int_equal(commit_sized(&old, 1, 1, 1, NULL), -ESTALE);
	assert_int_equal(conv_store_commit(&old, &(struct conv_turn){.user = "u", .user_len = 1},
					   &why),
			 -ESTALE);
	assert_string_equal(why, "the slot now holds another conversation");
	free(c);
	free(hist);
}

/*
 * Sizes at the bound: the first commit of a conversation titled "t" with a bare turn (no
 * tools, id or usage) makes a file of 115 + user + assistant bytes.
 */
static int commit_bare(struct conv_handle *h, size_t user_len, size_t assistant_len,
		       const char **why)
{
	static char text[70000];
	struct conv_turn turn = {
		.user = text,
		.user_len = user_len,
		.assistant = text,
		.assistant_len = assistant_len,
	};

	memset(text, 'b', sizeof(text));
	return conv_store_commit(h, &turn, why);
}

static void check_bounds(uint32_t max)
{
	struct conv_meta meta = {1, "openai", "gpt-test", "t"};
	struct conv_handle h;
	struct conv_summary sum;
	struct conv_fp before;
	struct conv_fp after;
	const size_t base = 115;
	const char *why = NULL;
	char expect_why[80];

	assert_int_equal(conv_store_init(), 0);
	snprintf(expect_why, sizeof(expect_why),
		 "conversation full: start a new one (limit %u bytes)", (unsigned int)max);

	/* N - 1 and N are stored. */
	assert_int_equal(conv_store_create(&h, &meta), 1);
	assert_int_equal(commit_bare(&h, 100, max - 1u - base - 100u, &why), 0);
	assert_int_equal(h.bytes, max - 1u);
	assert_int_equal(conv_store_create(&h, &meta), 2);
	assert_int_equal(commit_bare(&h, 100, max - base - 100u, &why), 0);
	assert_int_equal(h.bytes, max);
	assert_int_equal(conv_store_summary(2, &sum), 0);
	assert_int_equal(sum.bytes, max);

	/* N + 1 is refused, with the reason, and nothing is stored. */
	assert_int_equal(conv_store_create(&h, &meta), 3);
	assert_int_equal(commit_bare(&h, 100, max + 1u - base - 100u, &why), -EFBIG);
	assert_string_equal(why, expect_why);
	assert_true(h.pending);
	assert_int_equal(conv_store_summary(3, &sum), -ENOENT);

	/* A later turn: to exactly N is stored, past it is refused and changes nothing. */
	assert_int_equal(commit_bare(&h, 100, 100, &why), 0);
	assert_int_equal(h.bytes, base + 200u);
	size_t to_n = max - h.bytes - 2u * CONV_RECORD_OVERHEAD - 10u;

	assert_int_equal(commit_bare(&h, 10, to_n + 1u, &why), -EFBIG);
	assert_int_equal(commit_bare(&h, 10, to_n, &why), 0);
	assert_int_equal(h.bytes, max);
	before = conv_fingerprint(3);
	assert_int_equal(commit_bare(&h, 1, 0, &why), -EFBIG);
	after = conv_fingerprint(3);
	assert_true(fp_equal(&before, &after));
	assert_int_equal(h.bytes, max);
	/* And N - 1 takes one byte more, then no more. */
	assert_int_equal(conv_store_open(&h, 1), 0);
	assert_int_equal(commit_bare(&h, 1, 0, &why), -EFBIG);
	assert_int_equal(h.bytes, max - 1u);
}

static void bounds_flash(void **state)
{
	(void)state;
	check_bounds(FLASH_MAX);
}

static void bounds_sd(void **state)
{
	(void)state;
	check_bounds(SD_MAX);
}

/* ---- Chat history --------------------------------------------------------------------------- */

/* The serialized size of @p hist's messages as json_writer writes them, commas between. */
static size_t history_json_len(const struct conv_history *hist)
{
	static char out[80000];
	struct json_writer w;
	int n;

	jw_init(&w, out, sizeof(out));
	jw_array_begin(&w);
	for (uint32_t i = 0; i < hist->count; i++) {
		const struct conv_history_msg *m = &hist->msgs[i];

		jw_object_begin(&w);
		jw_key(&w, "role");
		jw_string(&w, m->role == CONV_REC_USER ? "user" : "assistant");
		jw_key(&w, "content");
		jw_string_n(&w, hist->raw + m->offset, m->len);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	n = jw_finish(&w);
	assert_true(n >= 2);
	return (size_t)n - 2u; /* without the brackets */
}

/* Commit turns whose texts are given; returns 0 or the first error. */
static int commit_texts(struct conv_handle *h, const char *user, size_t ulen,
			const char *assistant, size_t alen)
{
	struct conv_turn t = {
		.user = user, .user_len = ulen, .assistant = assistant, .assistant_len = alen};

	return conv_store_commit(h, &t, NULL);
}

/* The window's texts lie one after another in raw, inside it, and add up to raw_bytes. */
static void check_window_layout(const struct conv_history *hist)
{
	uint32_t off = 0;

	assert_true(hist->count <= CONV_HISTORY_MESSAGES_MAX);
	if (hist->count > 0u) {
		assert_int_equal(hist->msgs[0].role, CONV_REC_USER);
	}
	for (uint32_t i = 0; i < hist->count; i++) {
		assert_int_equal(hist->msgs[i].offset, off);
		off += hist->msgs[i].len;
		assert_true(off <= sizeof(hist->raw));
	}
	assert_int_equal(hist->raw_bytes, off);
	assert_true(hist->raw_bytes <= CONFIG_AGENT_CHAT_HISTORY_RAW_MAX);
	assert_true(hist->serialized_bytes <= CONFIG_AGENT_CHAT_HISTORY_FRAGMENT_SIZE);
}

/* A message as committed, for the history oracle below. */
struct sent_msg {
	uint8_t role;
	const char *text;
	size_t len;
};

/*
 * Compare @p hist with the window worked out from what was sent: the longest run of the
 * newest messages within the count, raw and serialized bounds, without the assistant
 * messages it would start with (texts without JSON escapes: an object is 24 bytes, the
 * role and the text). Every message's role and exact text are checked.
 */
static void check_history_against(const struct conv_history *hist, const struct sent_msg *sent,
				  uint32_t n)
{
	uint32_t start = n;
	uint32_t raw = 0;
	uint32_t ser = 0;

	while (start > 0u) {
		const struct sent_msg *m = &sent[start - 1u];
		uint32_t obj = 24u + (m->role == CONV_REC_USER ? 4u : 9u) + (uint32_t)m->len;
		uint32_t count = n - start + 1u;

		if (count > CONV_HISTORY_MESSAGES_MAX ||
		    raw + m->len > CONFIG_AGENT_CHAT_HISTORY_RAW_MAX ||
		    ser + obj + count - 1u > CONFIG_AGENT_CHAT_HISTORY_FRAGMENT_SIZE) {
			break;
		}
		raw += (uint32_t)m->len;
		ser += obj;
		start--;
	}
	while (start < n && sent[start].role != CONV_REC_USER) {
		start++;
	}
	assert_int_equal(hist->count, n - start);
	assert_int_equal(hist->truncated, start > 0u);
	for (uint32_t i = 0; i < hist->count; i++) {
		const struct sent_msg *m = &sent[start + i];

		assert_int_equal(hist->msgs[i].role, m->role);
		assert_int_equal(hist->msgs[i].len, m->len);
		assert_memory_equal(hist->raw + hist->msgs[i].offset, m->text, m->len);
	}
	check_window_layout(hist);
	assert_int_equal(hist->serialized_bytes, history_json_len(hist));
}

/*
 * Long turns that fill most of the raw bound, then short ones until the window has moved
 * round the 64-entry ring: every window must hold the newest messages, in order, and never
 * more text than the caller's buffer.
 */
static void history_window_wraps_the_ring(void **state)
{
	enum { LONG_TURNS = 8, LONG_LEN = 500, SHORT_TURNS = 40 };
	static char longs[LONG_TURNS][2][LONG_LEN + 1];
	static char shorts[SHORT_TURNS][2][8];
	static struct sent_msg sent[2 * (LONG_TURNS + SHORT_TURNS)];
	struct conv_history *hist = calloc(1, sizeof(*hist));
	struct conv_meta meta = {1, "openai", "gpt-test", "wrap"};
	struct conv_handle h;
	uint32_t n = 0;

	(void)state;
	assert_non_null(hist);
	assert_true(2u * LONG_TURNS * LONG_LEN <= CONFIG_AGENT_CHAT_HISTORY_RAW_MAX);
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_create(&h, &meta), 1);
	for (unsigned int i = 0; i < LONG_TURNS; i++) {
		fill_text(longs[i][0], LONG_LEN, i);
		fill_text(longs[i][1], LONG_LEN, i + 50u);
		assert_int_equal(commit_texts(&h, longs[i][0], LONG_LEN, longs[i][1], LONG_LEN), 0);
		sent[n++] = (struct sent_msg){CONV_REC_USER, longs[i][0], LONG_LEN};
		sent[n++] = (struct sent_msg){CONV_REC_ASSISTANT, longs[i][1], LONG_LEN};
	}
	assert_int_equal(conv_store_history(1, hist), 0);
	check_history_against(hist, sent, n);
	assert_false(hist->truncated);
	for (unsigned int i = 0; i < SHORT_TURNS; i++) {
		snprintf(shorts[i][0], sizeof(shorts[i][0]), "s%u", i);
		snprintf(shorts[i][1], sizeof(shorts[i][1]), "r%u", i);
		assert_int_equal(commit_texts(&h, shorts[i][0], strlen(shorts[i][0]), shorts[i][1],
					      strlen(shorts[i][1])),
				 0);
		sent[n++] = (struct sent_msg){CONV_REC_USER, shorts[i][0], strlen(shorts[i][0])};
		sent[n++] = (struct sent_msg){CONV_REC_ASSISTANT, shorts[i][1],
					      strlen(shorts[i][1])};
		/* From 21 short turns on: 58 messages and more, the ring wraps from 25. */
		if (i >= 20u) {
			memset(hist, 0x5a, sizeof(*hist));
			assert_int_equal(conv_store_history(1, hist), 0);
			check_history_against(hist, sent, n);
		}
	}
	/* The newest message is the last short answer; the long turns have all left. */
	assert_int_equal(hist->count, CONV_HISTORY_MESSAGES_MAX);
	assert_memory_equal(hist->raw + hist->msgs[hist->count - 1u].offset, "r39", 3);
	free(hist);
}

static void history_bounds(void **state)
{
	static char user[20000];
	static char assistant[20000];
	struct conv_history *hist = calloc(1, sizeof(*hist));
	struct conv_meta meta = {1, "openai", "gpt-test", "h"};
	struct conv_handle h;

	(void)state;
	assert_int_equal(conv_store_init(), 0);

	/* Small: everything, oldest first, exact texts. */
	assert_int_equal(conv_store_create(&h, &meta), 1);
	for (unsigned int i = 0; i < 3; i++) {
		snprintf(user, sizeof(user), "question %u", i);
		snprintf(assistant, sizeof(assistant), "answer \"%u\"\n", i);
		assert_int_equal(commit_texts(&h, user, strlen(user), assistant, strlen(assistant)),
				 0);
	}
	assert_int_equal(conv_store_history(1, hist), 0);
	assert_int_equal(hist->count, 6);
	assert_false(hist->truncated);
	assert_int_equal(hist->msgs[0].role, CONV_REC_USER);
	assert_int_equal(hist->msgs[5].role, CONV_REC_ASSISTANT);
	assert_memory_equal(hist->raw + hist->msgs[4].offset, "question 2", 10);
	assert_int_equal(hist->msgs[5].len, strlen("answer \"2\"\n"));
	assert_int_equal(hist->serialized_bytes, history_json_len(hist));

	/* Raw bound: 700-byte messages; the newest that fit 8 KiB, starting with a user one. */
	assert_int_equal(conv_store_create(&h, &meta), 2);
	for (unsigned int i = 0; i < 12; i++) {
		fill_text(user, 700, i);
		fill_text(assistant, 700, i + 100u);
		assert_int_equal(commit_texts(&h, user, 700, assistant, 700), 0);
	}
	assert_int_equal(conv_store_history(2, hist), 0);
	assert_int_equal(hist->count, CONFIG_AGENT_CHAT_HISTORY_RAW_MAX / 700u / 2u * 2u);
	assert_true(hist->truncated);
	assert_int_equal(hist->msgs[0].role, CONV_REC_USER);
	assert_true(hist->raw_bytes <= CONFIG_AGENT_CHAT_HISTORY_RAW_MAX);
	assert_true(hist->raw_bytes + 2u * 700u > CONFIG_AGENT_CHAT_HISTORY_RAW_MAX);
	for (uint32_t i = 0; i < hist->count; i++) {
		unsigned int turn = 12u - hist->count / 2u + i / 2u;

		/* Even: the turn's user message; odd: its answer. */
		fill_text(user, 700, i % 2u == 0u ? turn : turn + 100u);
		assert_int_equal(hist->msgs[i].role,
				 i % 2u == 0u ? CONV_REC_USER : CONV_REC_ASSISTANT);
		assert_int_equal(hist->msgs[i].len, 700);
		assert_memory_equal(hist->raw + hist->msgs[i].offset, user, 700);
	}
	check_window_layout(hist);
	assert_int_equal(hist->serialized_bytes, history_json_len(hist));

	/* Serialized bound: control characters take 6 bytes each once escaped. */
	assert_int_equal(conv_store_create(&h, &meta), 3);
	memset(user, 0x01, 1500);
	for (unsigned int i = 0; i < 3; i++) {
		assert_int_equal(commit_texts(&h, user, 1500, "ok", 2), 0);
	}
	assert_int_equal(conv_store_history(3, hist), 0);
	assert_int_equal(hist->count, 2);
	assert_true(hist->truncated);
	assert_true(hist->raw_bytes < CONFIG_AGENT_CHAT_HISTORY_RAW_MAX);
	assert_int_equal(hist->serialized_bytes, history_json_len(hist));
	assert_true(hist->serialized_bytes <= CONFIG_AGENT_CHAT_HISTORY_FRAGMENT_SIZE);
	assert_true(2u * hist->serialized_bytes + 1u > CONFIG_AGENT_CHAT_HISTORY_FRAGMENT_SIZE);
	free(hist);
}

static void history_count_and_large_message(void **state)
{
	static char text[20000];
	struct conv_history *hist = calloc(1, sizeof(*hist));
	struct conv_meta meta = {1, "openai", "gpt-test", "h"};
	struct conv_handle h;
	size_t len = 0;

	(void)state;
	assert_int_equal(conv_store_init(), 0);
	/* More messages than the ring: the newest 64. */
	assert_int_equal(conv_store_create(&h, &meta), 1);
	for (unsigned int i = 0; i < 40; i++) {
		char u[16];

		char a[16];

		snprintf(u, sizeof(u), "u%u", i);
		snprintf(a, sizeof(a), "a%u", i);
		assert_int_equal(commit_texts(&h, u, strlen(u), a, strlen(a)), 0);
	}
	assert_int_equal(conv_store_history(1, hist), 0);
	assert_int_equal(hist->count, CONV_HISTORY_MESSAGES_MAX);
	assert_true(hist->truncated);
	/* Every message of the window: turns 8..39, in order; the ring wraps once. */
	for (uint32_t i = 0; i < hist->count; i++) {
		char want[16];

		snprintf(want, sizeof(want), "%c%u", i % 2u == 0u ? 'u' : 'a', 8u + i / 2u);
		assert_int_equal(hist->msgs[i].role,
				 i % 2u == 0u ? CONV_REC_USER : CONV_REC_ASSISTANT);
		assert_int_equal(hist->msgs[i].len, strlen(want));
		assert_memory_equal(hist->raw + hist->msgs[i].offset, want, strlen(want));
	}
	check_window_layout(hist);
	assert_int_equal(hist->serialized_bytes, history_json_len(hist));

	/* A newest message above the raw bound: nothing older can be replayed either. */
	assert_int_equal(conv_store_create(&h, &meta), 2);
	assert_int_equal(commit_texts(&h, "q", 1, "a", 1), 0);
	memset(text, 'z', sizeof(text));
	assert_int_equal(
		commit_texts(&h, "q", 1, text, CONFIG_AGENT_CHAT_HISTORY_RAW_MAX + 1u), 0);
	assert_int_equal(conv_store_history(2, hist), 0);
	assert_int_equal(hist->count, 0);
	assert_true(hist->truncated);
	assert_int_equal(hist->raw_bytes, 0);

	/*
	 * Long messages are sized in 512-byte pieces: multi-byte characters and U+2028 cut by
	 * every piece boundary must still count exactly.
	 */
	assert_int_equal(conv_store_create(&h, &meta), 3);
	while (len + 4u < 3000u) {
		static const char *const pieces[] = {"\xc3\xa9", "\xe2\x80\xa8", "\xf0\x9f\x98\x80",
						     "x", "\""};
		const char *p = pieces[(len * 7u) % 5u];

		memcpy(text + len, p, strlen(p));
		len += strlen(p);
	}
	assert_int_equal(commit_texts(&h, text, len, text, len - 1u), 0);
	assert_int_equal(conv_store_history(3, hist), 0);
	assert_int_equal(hist->count, 2);
	assert_int_equal(hist->serialized_bytes, history_json_len(hist));
	assert_memory_equal(hist->raw + hist->msgs[1].offset, text, len - 1u);
	free(hist);
}

/* ---- memory --------------------------------------------------------------------------------- */

struct restore_check {
	size_t bytes;
	size_t max_chunk;
	uint32_t crc;
};

static int restore_chunk(const struct conv_chunk *chunk, void *user_data)
{
	struct restore_check *rc = user_data;

	rc->bytes += chunk->len;
	rc->crc = conv_crc32(rc->crc, chunk->data, chunk->len);
	if (chunk->len > rc->max_chunk) {
		rc->max_chunk = chunk->len;
	}
	return 0;
}

static int find_conv_pool(const struct agent_pool_stats *stats, void *user_data)
{
	if (strcmp(stats->name, "conv") != 0) {
		return 0;
	}
	*(struct agent_pool_stats *)user_data = *stats;
	return 1;
}

static void restore_48k_bounded_memory(void **state)
{
	static char user[2000];
	static char assistant[16000];
	struct conv_meta meta = {2, "openai", "gpt-test", "big"};
	struct conv_handle h;
	struct conv_summary sum;
	struct restore_check rc = {0};
	uint32_t want_crc = 0;
	size_t want_bytes = 0;

	(void)state;
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_create(&h, &meta), 1);
	want_crc = conv_crc32(want_crc, "openai", 6);
	want_crc = conv_crc32(want_crc, "gpt-test", 8);
	want_crc = conv_crc32(want_crc, "big", 3);
	want_bytes = 17;
	for (unsigned int i = 0; i < 3; i++) {
		fill_text(user, 1000, i);
		fill_text(assistant, 15000, i + 7u);
		assert_int_equal(commit_texts(&h, user, 1000, assistant, 15000), 0);
		want_crc = conv_crc32(want_crc, user, 1000);
		want_crc = conv_crc32(want_crc, assistant, 15000);
		want_bytes += 16000;
	}
	/* Fill to just under 48 KiB. */
	size_t left = SD_MAX - h.bytes - 2u * CONV_RECORD_OVERHEAD - 1u;

	memset(assistant, 'm', left);
	assert_int_equal(commit_texts(&h, "!", 1, assistant, left), 0);
	want_crc = conv_crc32(want_crc, "!", 1);
	want_crc = conv_crc32(want_crc, assistant, left);
	want_bytes += 1u + left;
	assert_int_equal(h.bytes, SD_MAX);
	assert_int_equal(conv_store_summary(1, &sum), 0);
	assert_int_equal(sum.bytes, SD_MAX);

	/* Restart, then restore the transcript. */
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_read(1, restore_chunk, &rc), 0);
	assert_int_equal(rc.bytes, want_bytes);
	assert_int_equal(rc.crc, want_crc);
	assert_int_equal(rc.max_chunk, CONV_IO_BYTES);
	/*
	 * The pool is one 512-byte block, and it is all the store ever held: the peak since
	 * boot is the whole of what restoring a 48 KiB conversation costs in buffers.
	 */
	struct agent_pool_stats st = {0};

	agent_pool_foreach(find_conv_pool, &st);
	assert_non_null(st.name);
	assert_int_equal(st.blocks_total, 1);
	assert_int_equal(st.block_bytes, CONV_IO_BYTES);
	assert_int_equal(st.blocks_free, 1); /* given back */
	assert_int_equal(st.alloc_failures, 0);
	/* Held: the one block; written: what the restore read into it, at most the block. */
	print_message("conversation restore: %zu bytes of records from a %u-byte file, "
		      "pool peak %zu bytes held, %zu bytes written\n",
		      rc.bytes, (unsigned int)SD_MAX, st.held_peak_bytes, st.written_peak_bytes);
	assert_int_equal(st.held_peak_bytes, CONV_IO_BYTES);
	assert_int_equal(st.written_block_max_bytes, CONV_IO_BYTES);
}

/* ---- faults at every filesystem call -------------------------------------------------------- */

enum conv_op {
	OP_SAVE,  /* a turn appended to slot 2 */
	OP_EVICT, /* a new conversation's first turn, replacing the oldest slot */
	OP_DELETE /* slot 1 removed */
};

static const char *const op_names[] = {"save", "eviction", "delete"};

static struct conv_handle op_handle;

static void op_prepare(enum conv_op op)
{
	struct conv_meta meta = {1, "openai", "gpt-test", "newcomer"};

	if (op == OP_SAVE) {
		assert_int_equal(conv_store_open(&op_handle, 2), 0);
	} else if (op == OP_EVICT) {
		assert_true(conv_store_create(&op_handle, &meta) > 0);
	}
}

static int op_run(enum conv_op op)
{
	switch (op) {
	case OP_SAVE:
		return commit_sized(&op_handle, 300, 900, 77, "resp_save");
	case OP_EVICT:
		return commit_sized(&op_handle, 200, 400, 88, "resp_evict");
	default:
		return conv_store_delete(1);
	}
}

static uint8_t op_target(enum conv_op op)
{
	return op == OP_SAVE ? 2 : op == OP_EVICT ? op_handle.slot : 1;
}

/* The store's folder on the SD card, and where its base state is kept between runs. */
static char sd_conv_host[192];
static char sd_base_host[192];
static char flash_base_host[192];
static bool fault_on_sd;

static int host_copy_file(const char *from, const char *to)
{
	static uint8_t data[IMAGE_BYTES];
	FILE *in = fopen(from, "rb");
	FILE *out;
	size_t n;

	if (in == NULL) {
		return -errno;
	}
	n = fread(data, 1, sizeof(data), in);
	fclose(in);
	out = fopen(to, "wb");
	if (out == NULL) {
		return -errno;
	}
	fwrite(data, 1, n, out);
	fclose(out);
	return n == sizeof(data) ? 0 : -EIO;
}

/* Put the medium back in the state saved by save_base(). */
static void restore_base(void)
{
	if (fault_on_sd) {
		assert_int_equal(host_copy_flat(sd_base_host, sd_conv_host), 0);
		return;
	}
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(host_copy_file(flash_base_host, image_path), 0);
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), 0);
}

static void save_base(void)
{
	snprintf(sd_conv_host, sizeof(sd_conv_host), "%s/.agent/conversations", sd_path);
	snprintf(sd_base_host, sizeof(sd_base_host), "%s/base", scratch_dir);
	snprintf(flash_base_host, sizeof(flash_base_host), "%s/base.bin", scratch_dir);
	if (fault_on_sd) {
		assert_int_equal(host_copy_flat(sd_conv_host, sd_base_host), 0);
		return;
	}
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(host_copy_file(image_path, flash_base_host), 0);
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), 0);
}

static void fault_every_call(enum conv_op op, int *cuts)
{
	struct conv_fp old_fp[CONV_SLOTS_MAX + 1];
	struct conv_fp new_fp[CONV_SLOTS_MAX + 1];
	uint8_t slots = fault_on_sd ? CONFIG_AGENT_CONV_SD_SLOTS : CONFIG_AGENT_CONV_FLASH_SLOTS;
	const char *dir = fault_on_sd ? CONV_DIR_SD : CONV_DIR_LFS;
	uint8_t target;
	long calls;

	/* A clean run: what "old" and "new" are, and how many calls the operation makes. */
	restore_base();
	assert_int_equal(conv_store_init(), 0);
	op_prepare(op);
	target = op_target(op);
	for (uint8_t s = 1; s <= slots; s++) {
		old_fp[s] = conv_fingerprint(s);
	}
	posix_fs_fail_after(-1);
	assert_int_equal(op_run(op), 0);
	calls = posix_fs_calls();
	for (uint8_t s = 1; s <= slots; s++) {
		new_fp[s] = conv_fingerprint(s);
	}
	assert_false(fp_equal(&old_fp[target], &new_fp[target]));

	for (int single = 0; single <= 1; single++) {
		for (long n = 0; n < calls; n++) {
			int err;

			restore_base();
			assert_int_equal(conv_store_init(), 0);
			op_prepare(op);
			if (single) {
				posix_fs_fail_range((int)n, 1, -EIO); /* one call fails */
			} else {
				posix_fs_fail_after((int)n); /* the card is gone from call n */
			}
			err = op_run(op);
			posix_fs_fail_after(-1);
			/* The next start. */
			assert_int_equal(conv_store_init(), 0);
			for (uint8_t s = 1; s <= slots; s++) {
				struct conv_fp fp = conv_fingerprint(s);
				bool is_old = fp_equal(&fp, &old_fp[s]);
				bool is_new = fp_equal(&fp, &new_fp[s]);

				if (!(is_old || is_new) || (s != target && !is_old)) {
					fail_msg("%s, %s fault at call %ld: slot %u is neither old "
						 "nor new (state %d)",
						 op_names[op], single ? "single" : "lasting", n,
						 (unsigned int)s, fp.state);
				}
				/*
				 * Success means the new version; a single failed call that is
				 * reported leaves the old one (with a lasting fault the next
				 * start may find either).
				 */
				if (s == target && ((err == 0 && !is_new) ||
						    (single && err != 0 && !is_old))) {
					fail_msg("%s, %s fault at call %ld: returned %d but slot "
						 "is %s",
						 op_names[op], single ? "single" : "lasting", n, err,
						 is_new ? "new" : "old");
				}
			}
			assert_int_equal(stray_files(dir), 0);
			(*cuts)++;
		}
	}
	print_message("%s %s: %ld filesystem calls, each failed alone and from there on\n",
		      fault_on_sd ? "SD" : "flash", op_names[op], calls);
}

static void fault_at_every_call(void **state)
{
	struct conv_store_info info;
	struct conv_handle h;
	int cuts = 0;

	fault_on_sd = *state != NULL;
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_info_get(&info), 0);
	for (int i = 1; i <= (int)info.slots; i++) {
		assert_int_equal(new_conversation("S", 1 + (unsigned int)i % 3u, 200, (unsigned int)i),
				 i);
	}
	/* Slot 1 with a backup (a previous version) too. */
	assert_int_equal(conv_store_open(&h, 1), 0);
	assert_int_equal(commit_sized(&h, 50, 50, 3, NULL), 0);
	save_base();

	fault_every_call(OP_SAVE, &cuts);
	fault_every_call(OP_EVICT, &cuts);
	fault_every_call(OP_DELETE, &cuts);
	print_message("%s fault injection: %d faulted runs, each recovered at the next start\n",
		      fault_on_sd ? "SD" : "flash", cuts);
}

/* The SD folder's FAT-like rules that the store's replace sequence relies on. */
static void sd_folder_behaves_like_fat(void **state)
{
	struct agent_file *f;
	struct agent_dirent ent;
	struct agent_statvfs vfs;
	struct agent_dir *d;
	int names = 0;

	(void)state;
	assert_int_equal(agent_fs_statvfs("/SD:", &vfs), 0);
	assert_true(vfs.block_bytes > 0u && vfs.blocks > 0u);
	assert_int_equal(agent_fs_mkdir("/SD:/dir"), 0);
	assert_int_equal(agent_fs_mkdir("/SD:/DIR"), -EEXIST);

	/* A close that fails keeps the size of the last sync. */
	assert_int_equal(agent_fs_open(&f, "/SD:/dir/a.txt", AGENT_FS_O_WRITE | AGENT_FS_O_CREATE),
			 0);
	assert_int_equal(agent_fs_write(f, "0123456789", 10), 10);
	assert_int_equal(agent_fs_sync(f), 0);
	assert_int_equal(agent_fs_write(f, "abcde", 5), 5);
	posix_fs_fail_range(0, 1, -EIO);
	assert_int_equal(agent_fs_close(f), -EIO);
	posix_fs_fail_after(-1);
	assert_int_equal(agent_fs_stat("/SD:/dir/a.txt", &ent), 0);
	assert_int_equal(ent.size, 10);
	/* A close that works records everything. */
	assert_int_equal(agent_fs_open(&f, "/SD:/Dir/A.TXT", AGENT_FS_O_RDWR | AGENT_FS_O_APPEND), 0);
	assert_int_equal(agent_fs_write(f, "xy", 2), 2);
	assert_int_equal(agent_fs_seek(f, 13, AGENT_FS_SEEK_SET), -EINVAL);
	assert_int_equal(agent_fs_seek(f, 12, AGENT_FS_SEEK_SET), 0);
	assert_int_equal(agent_fs_tell(f), 12);
	assert_int_equal(agent_fs_close(f), 0);
	assert_int_equal(agent_fs_stat("/SD:/dir/a.txt", &ent), 0);
	assert_int_equal(ent.size, 12);
	assert_string_equal(ent.name, "a.txt");

	/* Rename never replaces, stays on its volume, and names follow FAT's rules. */
	assert_int_equal(agent_fs_open(&f, "/SD:/dir/b.txt", AGENT_FS_O_WRITE | AGENT_FS_O_CREATE),
			 0);
	assert_int_equal(agent_fs_close(f), 0);
	assert_int_equal(agent_fs_rename("/SD:/dir/a.txt", "/SD:/dir/b.txt"), -EEXIST);
	assert_int_equal(agent_fs_rename("/SD:/dir/a.txt", "/SD:/dir/B.TXT"), -EEXIST);
	assert_int_equal(agent_fs_rename("/SD:/dir/a.txt", "/lfs/a.txt"), -EINVAL);
	assert_int_equal(agent_fs_rename("/SD:/dir/a.txt", "/SD:/dir/c.txt"), 0);
	assert_int_equal(agent_fs_stat("/SD:/dir/a*b", &ent), -ENOENT);
	assert_int_equal(agent_fs_stat("/SD:/dir/../dir", &ent), -ENOENT);
	assert_int_equal(agent_fs_opendir(&d, "/SD:/DIR"), 0);
	while (agent_fs_readdir(d, &ent) == 0 && ent.name[0] != '\0') {
		assert_true(strcmp(ent.name, "b.txt") == 0 || strcmp(ent.name, "c.txt") == 0);
		names++;
	}
	assert_int_equal(agent_fs_closedir(d), 0);
	assert_int_equal(names, 2);
	assert_int_equal(agent_fs_unlink("/SD:/dir"), -ENOTEMPTY);

	/* Without a card there is no /SD:, and the store falls back to flash. */
	assert_int_equal(posix_sd_unmount(), 0);
	assert_int_equal(agent_fs_statvfs("/SD:", &vfs), -ENOENT);
	assert_int_equal(agent_fs_stat("/SD:/dir/b.txt", &ent), -ENOENT);
	struct conv_store_info info;

	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_info_get(&info), 0);
	assert_int_equal(info.medium, CONV_MEDIUM_FLASH);
}

int main(void)
{
	static const char *lfs_dir = CONV_DIR_LFS;
	static const char *sd_dir = CONV_DIR_SD;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(create_commit_list_read_delete, setup_flash,
						teardown),
		cmocka_unit_test_setup_teardown(create_cuts_a_long_provider, setup_flash, teardown),
		cmocka_unit_test_setup_teardown(eviction_order_flash, setup_flash, teardown),
		cmocka_unit_test_setup_teardown(eviction_order_sd, setup_sd, teardown),
		cmocka_unit_test_setup_teardown(sd_folder_behaves_like_fat, setup_sd, teardown),
		cmocka_unit_test_prestate_setup_teardown(
			damaged_slot_is_evicted_first_and_backup_restored, setup_flash, teardown,
			(void *)lfs_dir),
		cmocka_unit_test_prestate_setup_teardown(
			damaged_slot_is_evicted_first_and_backup_restored, setup_sd, teardown,
			(void *)sd_dir),
		cmocka_unit_test_setup_teardown(bad_record_stops_reading_and_stale_handle,
						setup_flash, teardown),
		cmocka_unit_test_setup_teardown(bounds_flash, setup_flash, teardown),
		cmocka_unit_test_setup_teardown(bounds_sd, setup_sd, teardown),
		cmocka_unit_test_setup_teardown(history_bounds, setup_sd, teardown),
		cmocka_unit_test_setup_teardown(history_count_and_large_message, setup_sd, teardown),
		cmocka_unit_test_setup_teardown(history_window_wraps_the_ring, setup_sd, teardown),
		cmocka_unit_test_setup_teardown(restore_48k_bounded_memory, setup_sd, teardown),
		cmocka_unit_test_prestate_setup_teardown(fault_at_every_call, setup_flash, teardown,
							 NULL),
		cmocka_unit_test_prestate_setup_teardown(fault_at_every_call, setup_sd, teardown,
							 (void *)sd_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
