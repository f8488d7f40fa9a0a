/*
 * Settings store of the POSIX port: one file, "/lfs/.settings", in the LittleFS image, in
 * the format of docs/sim-settings-file.md.
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

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_port.h"
#include "posix/posix_port.h"

#define SETTINGS_FILE   "/lfs/.settings"
#define SETTINGS_TMP    "/lfs/.settings.tmp"
#define HEADER_BYTES    8u
#define RECORD_OVERHEAD 7u /* key length, value length (2), CRC-32 (4) */

#include "flash_fixture.h"

static int setup(void **state)
{
	(void)state;
	return flash_fixture_setup("test_settings");
}

static int teardown(void **state)
{
	(void)state;
	return flash_fixture_teardown();
}

static void remount(void)
{
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), 0);
}

static void set_str(const char *key, const char *value)
{
	assert_int_equal(agent_settings_set(key, value, strlen(value)), 0);
}

static void assert_value(const char *key, const char *value)
{
	char buf[AGENT_SETTINGS_VALUE_MAX + 1];
	int len;

	memset(buf, 0, sizeof(buf));
	len = agent_settings_get(key, buf, sizeof(buf));
	assert_int_equal(len, (int)strlen(value));
	assert_memory_equal(buf, value, strlen(value));
}

static void assert_absent(const char *key)
{
	char buf[8];

	assert_int_equal(agent_settings_get(key, buf, sizeof(buf)), -ENOENT);
}

static size_t record_bytes(const char *key, size_t value_len)
{
	return RECORD_OVERHEAD + strlen(key) + value_len;
}

static int32_t file_size(const char *path)
{
	struct agent_dirent entry;
	int err = agent_fs_stat(path, &entry);

	return err == 0 ? (int32_t)entry.size : err;
}

/* Overwrites bytes of a file in the image through the filesystem, as a bad write would. */
static void patch_file(const char *path, uint32_t offset, const void *bytes, size_t len)
{
	struct agent_file *file = NULL;

	assert_int_equal(agent_fs_open(&file, path, AGENT_FS_O_RDWR), 0);
	assert_int_equal(agent_fs_seek(file, (int32_t)offset, AGENT_FS_SEEK_SET), 0);
	assert_int_equal(agent_fs_write(file, bytes, len), (int)len);
	assert_int_equal(agent_fs_close(file), 0);
}

static void write_whole_file(const char *path, const void *bytes, size_t len)
{
	struct agent_file *file = NULL;

	assert_int_equal(agent_fs_open(&file, path,
				       AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC),
			 0);
	assert_int_equal(agent_fs_write(file, bytes, len), (int)len);
	assert_int_equal(agent_fs_close(file), 0);
}

static size_t read_whole_file(const char *path, uint8_t *buf, size_t cap)
{
	struct agent_file *file = NULL;
	int n;

	assert_int_equal(agent_fs_open(&file, path, AGENT_FS_O_READ), 0);
	n = agent_fs_read(file, buf, cap);
	assert_true(n >= 0);
	assert_int_equal(agent_fs_close(file), 0);
	return (size_t)n;
}

/* Table-driven CRC-32, independent of the bitwise one under test. */
static uint32_t ref_crc32(const uint8_t *data, size_t len)
{
	static uint32_t table[256];
	uint32_t crc = 0xffffffffu;

	if (table[1] == 0u) {
		for (uint32_t i = 0; i < 256u; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++) {
				c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			}
			table[i] = c;
		}
	}
	for (size_t i = 0; i < len; i++) {
		crc = table[(crc ^ data[i]) & 0xffu] ^ (crc >> 8);
	}
	return crc ^ 0xffffffffu;
}

static void test_round_trip_overwrite_delete(void **state)
{
	(void)state;
	assert_absent("agent/model");
	set_str("agent/model", "gpt-4o-mini");
	assert_value("agent/model", "gpt-4o-mini");

	/* Overwrite with a shorter and then a longer value. */
	set_str("agent/model", "o3");
	assert_value("agent/model", "o3");
	set_str("agent/model", "a-much-longer-model-name");
	assert_value("agent/model", "a-much-longer-model-name");

	/* Binary values with NUL bytes survive. */
	assert_int_equal(agent_settings_set("agent/bin", "\0\1\2\0", 4), 0);
	{
		uint8_t buf[8];

		assert_int_equal(agent_settings_get("agent/bin", buf, sizeof(buf)), 4);
		assert_memory_equal(buf, "\0\1\2\0", 4);
	}

	assert_int_equal(agent_settings_delete("agent/model"), 0);
	assert_absent("agent/model");
	assert_int_equal(agent_settings_get("agent/bin", NULL, 0), 4);
	/* Deleting an absent key is not an error. */
	assert_int_equal(agent_settings_delete("agent/model"), 0);
	assert_int_equal(agent_settings_delete("never/set"), 0);

	/* A zero-length value deletes, as Zephyr's NVS and ZMS backends do. */
	assert_int_equal(agent_settings_set("agent/bin", "", 0), 0);
	assert_absent("agent/bin");

	/* One record per key: the file holds only what is live. */
	set_str("a", "1");
	set_str("a", "22");
	set_str("b", "3");
	assert_int_equal(file_size(SETTINGS_FILE),
			 (int32_t)(HEADER_BYTES + record_bytes("a", 2) + record_bytes("b", 1)));
}

static void test_get_small_buffer(void **state)
{
	char buf[8];

	(void)state;
	set_str("k", "0123456789");
	memset(buf, '#', sizeof(buf));
	assert_int_equal(agent_settings_get("k", buf, 4), 10);
	assert_memory_equal(buf, "0123####", 8);
	assert_int_equal(agent_settings_get("k", NULL, 0), 10);
	assert_int_equal(agent_settings_get("k", NULL, 1), -EINVAL);

	/* Buffer exactly the value's length (N), one less (N-1), one more (N+1). */
	{
		char exact[11];

		memset(exact, '#', sizeof(exact));
		assert_int_equal(agent_settings_get("k", exact, 10), 10);
		assert_memory_equal(exact, "0123456789#", 11);
		memset(exact, '#', sizeof(exact));
		assert_int_equal(agent_settings_get("k", exact, 9), 10);
		assert_memory_equal(exact, "012345678##", 11);
		memset(exact, '#', sizeof(exact));
		assert_int_equal(agent_settings_get("k", exact, 11), 10);
		assert_memory_equal(exact, "0123456789#", 11);
	}
}

static void test_key_bounds(void **state)
{
	char key[AGENT_SETTINGS_KEY_MAX + 2];
	static const char *const bad_keys[] = {
		"",    "has space", "a=b",  "tab\there", "nl\n",
		"\x7f", "\x80x",     "é", " lead",
	};

	(void)state;
	/* N-1 and N bytes are keys; N+1 is not. */
	memset(key, 'k', sizeof(key));
	key[AGENT_SETTINGS_KEY_MAX - 1] = '\0';
	assert_int_equal(agent_settings_set(key, "v", 1), 0);
	assert_value(key, "v");
	key[AGENT_SETTINGS_KEY_MAX - 1] = 'k';
	key[AGENT_SETTINGS_KEY_MAX] = '\0';
	assert_int_equal(agent_settings_set(key, "w", 1), 0);
	assert_value(key, "w");
	key[AGENT_SETTINGS_KEY_MAX] = 'k';
	key[AGENT_SETTINGS_KEY_MAX + 1] = '\0';
	assert_int_equal(agent_settings_set(key, "x", 1), -EINVAL);
	assert_int_equal(agent_settings_get(key, NULL, 0), -EINVAL);
	assert_int_equal(agent_settings_delete(key), -EINVAL);

	for (size_t i = 0; i < sizeof(bad_keys) / sizeof(bad_keys[0]); i++) {
		assert_int_equal(agent_settings_set(bad_keys[i], "v", 1), -EINVAL);
		assert_int_equal(agent_settings_get(bad_keys[i], NULL, 0), -EINVAL);
		assert_int_equal(agent_settings_delete(bad_keys[i]), -EINVAL);
	}
	assert_int_equal(agent_settings_set(NULL, "v", 1), -EINVAL);
	assert_int_equal(agent_settings_get(NULL, NULL, 0), -EINVAL);

	/* The bounds are visible characters: '!' and '~' are fine. */
	set_str("!~/a-b_c.d:e", "ok");
	assert_value("!~/a-b_c.d:e", "ok");
}

static void test_value_bounds(void **state)
{
	static uint8_t value[AGENT_SETTINGS_VALUE_MAX + 1];
	static uint8_t back[AGENT_SETTINGS_VALUE_MAX + 1];

	(void)state;
	for (size_t i = 0; i < sizeof(value); i++) {
		value[i] = (uint8_t)(i * 7u + 1u);
	}
	assert_int_equal(agent_settings_set("v", value, AGENT_SETTINGS_VALUE_MAX - 1u), 0);
	assert_int_equal(agent_settings_get("v", back, sizeof(back)),
			 AGENT_SETTINGS_VALUE_MAX - 1);
	assert_memory_equal(back, value, AGENT_SETTINGS_VALUE_MAX - 1u);

	assert_int_equal(agent_settings_set("v", value, AGENT_SETTINGS_VALUE_MAX), 0);
	assert_int_equal(agent_settings_get("v", back, sizeof(back)), AGENT_SETTINGS_VALUE_MAX);
	assert_memory_equal(back, value, AGENT_SETTINGS_VALUE_MAX);

	/* Too long is refused and the stored value stays. */
	assert_int_equal(agent_settings_set("v", value, AGENT_SETTINGS_VALUE_MAX + 1u), -E2BIG);
	assert_int_equal(agent_settings_get("v", NULL, 0), AGENT_SETTINGS_VALUE_MAX);
	assert_int_equal(agent_settings_set("v", NULL, 1), -EINVAL);

	/* The longest record survives a remount (no length field overflow). */
	remount();
	memset(back, 0, sizeof(back));
	assert_int_equal(agent_settings_get("v", back, sizeof(back)), AGENT_SETTINGS_VALUE_MAX);
	assert_memory_equal(back, value, AGENT_SETTINGS_VALUE_MAX);
}

struct visit_log {
	int count;
	int stop_after;
	char keys[8][AGENT_SETTINGS_KEY_MAX + 1];
	size_t lens[8];
};

static int visit(const char *key, size_t value_len, void *user_data)
{
	struct visit_log *log = user_data;

	if (log->count < 8) {
		strcpy(log->keys[log->count], key);
		log->lens[log->count] = value_len;
	}
	log->count++;
	return log->count == log->stop_after;
}

static bool log_has(const struct visit_log *log, const char *key, size_t len)
{
	for (int i = 0; i < log->count && i < 8; i++) {
		if (strcmp(log->keys[i], key) == 0) {
			return log->lens[i] == len;
		}
	}
	return false;
}

static struct visit_log walk(const char *subtree)
{
	struct visit_log log;

	memset(&log, 0, sizeof(log));
	assert_int_equal(agent_settings_foreach(subtree, visit, &log), 0);
	return log;
}

static void test_foreach_subtree(void **state)
{
	struct visit_log log;

	(void)state;
	log = walk("agent");
	assert_int_equal(log.count, 0);

	set_str("agent/a", "1");
	set_str("agent/b/c", "22");
	set_str("agents/x", "333");
	set_str("agent", "4444");
	set_str("other/agent/y", "55555");

	log = walk("agent");
	assert_int_equal(log.count, 2);
	assert_true(log_has(&log, "agent/a", 1));
	assert_true(log_has(&log, "agent/b/c", 2));

	log = walk("agent/");
	assert_int_equal(log.count, 2);

	log = walk("agent/b");
	assert_int_equal(log.count, 1);
	assert_true(log_has(&log, "agent/b/c", 2));

	log = walk("agents");
	assert_int_equal(log.count, 1);
	assert_true(log_has(&log, "agents/x", 3));

	log = walk("agen");
	assert_int_equal(log.count, 0);

	log = walk(NULL);
	assert_int_equal(log.count, 5);
	assert_true(log_has(&log, "agent", 4));
	assert_true(log_has(&log, "other/agent/y", 5));
	log = walk("");
	assert_int_equal(log.count, 5);

	/* A non-zero return stops the walk. */
	memset(&log, 0, sizeof(log));
	log.stop_after = 1;
	assert_int_equal(agent_settings_foreach(NULL, visit, &log), 0);
	assert_int_equal(log.count, 1);

	assert_int_equal(agent_settings_foreach("bad key", visit, &log), -EINVAL);
	assert_int_equal(agent_settings_foreach("agent", NULL, NULL), -EINVAL);
}

struct nested_ctx {
	int visited;
	size_t value_len;
	int get_result;
	int set_result;
	int delete_result;
	char value[16];
};

static int visit_nested(const char *key, size_t value_len, void *user_data)
{
	struct nested_ctx *ctx = user_data;

	ctx->visited++;
	memset(ctx->value, 0, sizeof(ctx->value));
	/* No cmocka assertion here: failing would jump out with the store locked. */
	ctx->value_len = value_len;
	ctx->get_result = agent_settings_get(key, ctx->value, sizeof(ctx->value) - 1u);
	ctx->set_result = agent_settings_set(key, "changed", 7);
	ctx->delete_result = agent_settings_delete(key);
	return 0;
}

static void test_foreach_callback_reentry(void **state)
{
	struct nested_ctx ctx = {0};

	(void)state;
	set_str("n/one", "first");
	assert_int_equal(agent_settings_foreach("n", visit_nested, &ctx), 0);
	assert_int_equal(ctx.visited, 1);
	/* Reading inside the walk works; changing is refused and changes nothing. */
	assert_int_equal(ctx.value_len, 5);
	assert_int_equal(ctx.get_result, 5);
	assert_string_equal(ctx.value, "first");
	assert_int_equal(ctx.set_result, -EBUSY);
	assert_int_equal(ctx.delete_result, -EBUSY);
	assert_value("n/one", "first");
	/* The walk is over: changes work again. */
	set_str("n/one", "second");
	assert_value("n/one", "second");
}

static void test_persistence(void **state)
{
	(void)state;
	set_str("agent/url", "https://api.example.com/v1");
	set_str("agent/key", "sk-secret");
	assert_int_equal(agent_settings_delete("agent/key"), 0);
	remount();
	assert_value("agent/url", "https://api.example.com/v1");
	assert_absent("agent/key");
}

static int child_set_and_crash(void)
{
	if (posix_flash_mount(image_path, IMAGE_BYTES, false) != 0) {
		return 1;
	}
	if (agent_settings_set("crash/key", "kept", 4) != 0) {
		return 2;
	}
	/* No unmount, no exit handlers: as if the power went. */
	_exit(0);
}

static void test_durable_without_unmount(void **state)
{
	pid_t pid;
	int status = 0;

	(void)state;
	set_str("crash/before", "old");
	assert_int_equal(posix_flash_unmount(), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		_exit(child_set_and_crash());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), 0);
	assert_value("crash/key", "kept");
	assert_value("crash/before", "old");
}

static void test_file_format(void **state)
{
	uint8_t buf[64];
	size_t n;

	(void)state;
	set_str("ab", "xyz");
	n = read_whole_file(SETTINGS_FILE, buf, sizeof(buf));
	assert_int_equal(n, HEADER_BYTES + record_bytes("ab", 3));
	/* Header: magic, version 1, three reserved zero bytes. */
	assert_memory_equal(buf, "AGST\x01\0\0\0", 8);
	/* Record: key length, value length little-endian, key, value, CRC-32 little-endian. */
	assert_int_equal(buf[8], 2);
	assert_int_equal(buf[9], 3);
	assert_int_equal(buf[10], 0);
	assert_memory_equal(&buf[11], "ab", 2);
	assert_memory_equal(&buf[13], "xyz", 3);
	{
		uint32_t crc = ref_crc32(&buf[8], 8);

		assert_int_equal(buf[16], crc & 0xffu);
		assert_int_equal(buf[17], (crc >> 8) & 0xffu);
		assert_int_equal(buf[18], (crc >> 16) & 0xffu);
		assert_int_equal(buf[19], crc >> 24);
	}

	/* A value of 512 bytes needs the high byte of the length. */
	{
		static uint8_t value[AGENT_SETTINGS_VALUE_MAX];
		uint8_t head[HEADER_BYTES + 3u + 2u + 3u + 4u + 3u];

		memset(value, 'v', sizeof(value));
		assert_int_equal(agent_settings_set("cd", value, sizeof(value)), 0);
		n = read_whole_file(SETTINGS_FILE, head, sizeof(head));
		assert_int_equal(n, sizeof(head));
		assert_int_equal(head[20], 2);
		assert_int_equal(head[21], AGENT_SETTINGS_VALUE_MAX & 0xff);
		assert_int_equal(head[22], AGENT_SETTINGS_VALUE_MAX >> 8);
	}
}

static void test_corrupt_record_keeps_earlier(void **state)
{
	uint32_t second;
	struct visit_log log;
	const uint8_t junk = 0x00;

	(void)state;
	set_str("k1", "one");
	set_str("k2", "two");
	set_str("k3", "three");
	second = HEADER_BYTES + (uint32_t)record_bytes("k1", 3);

	/* One flipped byte in k2's value: its CRC fails, and everything from there is lost. */
	patch_file(SETTINGS_FILE, second + 3u + 2u + 1u, &junk, 1);
	assert_value("k1", "one");
	assert_absent("k2");
	assert_absent("k3");
	log = walk(NULL);
	assert_int_equal(log.count, 1);
	assert_true(log_has(&log, "k1", 3));

	/* A change rewrites the file without the bad tail. */
	set_str("k4", "four");
	assert_value("k1", "one");
	assert_value("k4", "four");
	assert_absent("k2");
	assert_int_equal(file_size(SETTINGS_FILE),
			 (int32_t)(HEADER_BYTES + record_bytes("k1", 3) + record_bytes("k4", 4)));

	/* A length field pointing past any sane size is corruption too. */
	{
		const uint8_t huge[2] = {0xff, 0xff};

		patch_file(SETTINGS_FILE, second + 1u, huge, sizeof(huge));
	}
	assert_value("k1", "one");
	assert_absent("k4");
	/* And a zero key length. */
	patch_file(SETTINGS_FILE, second, &junk, 1);
	assert_value("k1", "one");
	assert_absent("k4");
}

static void test_truncated_file(void **state)
{
	struct agent_file *file = NULL;
	uint32_t two_records;

	(void)state;
	set_str("t1", "alpha");
	set_str("t2", "beta");
	set_str("t3", "gamma");
	two_records = HEADER_BYTES + (uint32_t)(record_bytes("t1", 5) + record_bytes("t2", 4));

	/* Cut at every length inside the third record: the first two always survive. */
	for (uint32_t cut = two_records; cut < two_records + record_bytes("t3", 5); cut++) {
		assert_int_equal(agent_fs_open(&file, SETTINGS_FILE, AGENT_FS_O_RDWR), 0);
		assert_int_equal(agent_fs_truncate(file, cut), 0);
		assert_int_equal(agent_fs_close(file), 0);
		assert_value("t1", "alpha");
		assert_value("t2", "beta");
		assert_absent("t3");
	}
	/* Cut inside the header: no settings at all, and a set starts a fresh file. */
	assert_int_equal(agent_fs_open(&file, SETTINGS_FILE, AGENT_FS_O_RDWR), 0);
	assert_int_equal(agent_fs_truncate(file, HEADER_BYTES - 1u), 0);
	assert_int_equal(agent_fs_close(file), 0);
	assert_absent("t1");
	set_str("t4", "delta");
	assert_value("t4", "delta");
	assert_int_equal(file_size(SETTINGS_FILE),
			 (int32_t)(HEADER_BYTES + record_bytes("t4", 5)));
}

static void test_garbage_file(void **state)
{
	static uint8_t junk[1000];

	(void)state;
	for (size_t i = 0; i < sizeof(junk); i++) {
		junk[i] = (uint8_t)(i * 131u + 17u);
	}
	write_whole_file(SETTINGS_FILE, junk, sizeof(junk));
	assert_absent("any");
	assert_int_equal(walk(NULL).count, 0);
	set_str("fresh", "start");
	assert_value("fresh", "start");

	/* Right header, garbage after it. */
	memcpy(junk, "AGST\x01\0\0\0", 8);
	write_whole_file(SETTINGS_FILE, junk, sizeof(junk));
	assert_absent("fresh");
	assert_int_equal(walk(NULL).count, 0);

	/* A future version is not read as this one. */
	set_str("v1", "x");
	patch_file(SETTINGS_FILE, 4, "\x02", 1);
	assert_absent("v1");
}

static void test_leftover_tmp_ignored(void **state)
{
	uint8_t image[256];
	size_t n;
	struct agent_dirent entry;

	(void)state;
	/* A complete copy holding a newer value, as a crash just before rename would leave. */
	set_str("agent/model", "new");
	n = read_whole_file(SETTINGS_FILE, image, sizeof(image));
	set_str("agent/model", "old");
	write_whole_file(SETTINGS_TMP, image, n);

	remount();
	assert_value("agent/model", "old");
	assert_int_equal(walk(NULL).count, 1);

	/* A half-written one is ignored just the same. */
	write_whole_file(SETTINGS_TMP, image, n - 3u);
	assert_value("agent/model", "old");

	/* The next change replaces the leftover, and leaves no temporary file behind. */
	set_str("agent/other", "x");
	assert_int_equal(agent_fs_stat(SETTINGS_TMP, &entry), -ENOENT);
	assert_value("agent/model", "old");
	assert_value("agent/other", "x");
}

static void test_not_mounted(void **state)
{
	struct visit_log log;

	(void)state;
	set_str("m", "1");
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(agent_settings_get("m", NULL, 0), -ENODEV);
	assert_int_equal(agent_settings_set("m", "2", 1), -ENODEV);
	assert_int_equal(agent_settings_delete("m"), -ENODEV);
	assert_int_equal(agent_settings_foreach(NULL, visit, &log), -ENODEV);
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), 0);
	assert_value("m", "1");
}

static void test_many_keys(void **state)
{
	char key[16];
	char value[16];

	(void)state;
	/* Beyond any table a RAM-based store would keep. */
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "many/%d", i);
		snprintf(value, sizeof(value), "v%d", i * 3);
		set_str(key, value);
	}
	for (int i = 0; i < 100; i += 7) {
		snprintf(key, sizeof(key), "many/%d", i);
		assert_int_equal(agent_settings_delete(key), 0);
	}
	remount();
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "many/%d", i);
		snprintf(value, sizeof(value), "v%d", i * 3);
		if (i % 7 == 0) {
			assert_absent(key);
		} else {
			assert_value(key, value);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_overwrite_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_get_small_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_value_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreach_subtree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreach_callback_reentry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_persistence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_durable_without_unmount, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_record_keeps_earlier, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leftover_tmp_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_mounted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_keys, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
