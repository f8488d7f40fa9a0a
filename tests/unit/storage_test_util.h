/*
 * Helpers of the storage tool tests: a LittleFS image of a chosen size at /lfs, running a
 * tool from its JSON arguments through the real argument parser, files in and out, and
 * reading members of a result. Included by one test file each, after cmocka.h; the
 * including file defines _POSIX_C_SOURCE 200809L (flash_fixture.h needs mkdtemp).
 */
#ifndef STORAGE_TEST_UTIL_H
#define STORAGE_TEST_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_port.h"
#include "flash_fixture.h"
#include "json_writer.h"
#include "posix/posix_port.h"
#include "sha256.h"
#include "storage_path.h"
#include "tool.h"
#include "tools_storage.h"

/* Returned by run_tool() when the argument parser refused the arguments. */
#define ARGS_REFUSED (-10000)

static char result[CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1];
static char last_error[TOOL_ERROR_MAX + 1];
static struct tool_args tool_args_buf;
static struct agent_cancel test_cancel;
static const char *test_cwd = "/lfs";

/* A fresh image of @p bytes mounted at /lfs, in flash_fixture.h's scratch folder. */
static inline int storage_fixture_setup(const char *prefix, uint32_t bytes)
{
	posix_fs_fail_after(-1);
	posix_fs_rename_replaces(true);
	test_cwd = "/lfs";
	agent_cancel_reset(&test_cancel);
	return flash_fixture_setup_bytes(prefix, bytes);
}

static inline int storage_fixture_teardown(void)
{
	posix_fs_fail_after(-1);
	posix_fs_rename_replaces(true);
	return flash_fixture_teardown();
}

/*
 * Parse @p json against @p def and run it with cwd test_cwd. The result (on 0) is in
 * result[] and must be a complete JSON document within the bound; a failure's message is in
 * last_error[] (the parser's reason for ARGS_REFUSED).
 */
static inline int run_tool_n(const struct tool_def *def, const char *json, size_t len)
{
	struct tool_ctx ctx;
	struct json_writer w;
	char why[TOOL_ERROR_MAX + 1];
	int err;

	result[0] = '\0';
	last_error[0] = '\0';
	err = tool_args_parse(def, json, len, &tool_args_buf, why, sizeof(why));
	if (err != 0) {
		snprintf(last_error, sizeof(last_error), "%s", why);
		return ARGS_REFUSED;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.cwd = test_cwd;
	ctx.cancel = &test_cancel;
	jw_init(&w, result, sizeof(result));
	err = def->exec(&ctx, &tool_args_buf, &w);
	if (err != 0) {
		assert_true(err < 0);
		assert_true(ctx.error[0] != '\0');
		snprintf(last_error, sizeof(last_error), "%s", ctx.error);
		return err;
	}
	int n = jw_finish(&w);

	if (n <= 0) {
		fail_msg("%s wrote no complete result (%d)", def->name, n);
	}
	assert_true((size_t)n <= CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
	return 0;
}

static inline int run_tool(const struct tool_def *def, const char *json)
{
	return run_tool_n(def, json, strlen(json));
}

/* Arguments built with the JSON writer (so any content is escaped correctly). */
static char args_json[CONFIG_AGENT_TOOL_ARGS_MAX_LEN + 4096];
static struct json_writer args_w;

static inline void args_begin(void)
{
	jw_init(&args_w, args_json, sizeof(args_json));
	jw_object_begin(&args_w);
}

static inline void args_str(const char *key, const char *value, size_t len)
{
	jw_key(&args_w, key);
	jw_string_n(&args_w, value, len);
}

static inline void args_int(const char *key, int64_t value)
{
	jw_key(&args_w, key);
	jw_int(&args_w, value);
}

static inline int args_run(const struct tool_def *def)
{
	jw_object_end(&args_w);
	int n = jw_finish(&args_w);

	assert_true(n > 0);
	return run_tool_n(def, args_json, (size_t)n);
}

/* A tool whose only argument is the path. */
static inline int run_path(const struct tool_def *def, const char *path)
{
	args_begin();
	args_str("path", path, strlen(path));
	return args_run(def);
}

/* ---- Files ---------------------------------------------------------------------------- */

static inline void put_file(const char *path, const void *data, size_t len)
{
	struct agent_file *file = NULL;

	assert_int_equal(agent_fs_open(&file, path,
				       AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC),
			 0);
	assert_int_equal(agent_fs_write(file, data, len), (int)len);
	assert_int_equal(agent_fs_close(file), 0);
}

static inline void put_text(const char *path, const char *text)
{
	put_file(path, text, strlen(text));
}

/* The whole of @p path into @p buf (at most @p cap bytes); its length, or a negative errno. */
static inline int get_file(const char *path, void *buf, size_t cap)
{
	struct agent_file *file = NULL;
	size_t n = 0;
	int err = agent_fs_open(&file, path, AGENT_FS_O_READ);

	if (err != 0) {
		return err;
	}
	for (;;) {
		int r = agent_fs_read(file, (char *)buf + n, cap - n);

		if (r < 0) {
			agent_fs_close(file);
			return r;
		}
		if (r == 0 || n + (size_t)r == cap) {
			n += (size_t)r;
			break;
		}
		n += (size_t)r;
	}
	assert_int_equal(agent_fs_close(file), 0);
	return (int)n;
}

static inline bool path_exists(const char *path)
{
	struct agent_dirent entry;

	return agent_fs_stat(path, &entry) == 0;
}

/* Fill @p buf with @p len bytes of printable text lines (deterministic from @p seed). */
static inline void make_text(char *buf, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (i % 64 == 63) ? '\n' : (char)('a' + (seed >> 16) % 26);
	}
}

static inline void hex_of(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1])
{
	uint8_t digest[SHA256_DIGEST_BYTES];

	sha256_digest(data, len, digest);
	sha256_hex(digest, hex);
}

/* ---- Result members ------------------------------------------------------------------- */

/* The text right after "key": in result[] (the first occurrence), or NULL. */
static inline const char *member(const char *key)
{
	char pattern[64];

	snprintf(pattern, sizeof(pattern), "\"%s\":", key);
	const char *at = strstr(result, pattern);

	return at != NULL ? at + strlen(pattern) : NULL;
}

static inline long long member_int(const char *key)
{
	const char *at = member(key);

	if (at == NULL) {
		fail_msg("no member %s in %s", key, result);
	}
	return strtoll(at, NULL, 10);
}

static inline bool member_bool(const char *key)
{
	const char *at = member(key);

	if (at == NULL) {
		fail_msg("no member %s in %s", key, result);
	}
	return strncmp(at, "true", 4) == 0;
}

/* A string member without escapes (paths, hashes, names) into @p out. */
static inline const char *member_str(const char *key, char *out, size_t cap)
{
	const char *at = member(key);
	size_t n = 0;

	if (at == NULL || *at != '"') {
		fail_msg("no string member %s in %s", key, result);
	}
	at++;
	while (at[n] != '"' && at[n] != '\0' && n + 1 < cap) {
		n++;
	}
	memcpy(out, at, n);
	out[n] = '\0';
	return out;
}

/* How many times @p text occurs in result[]. */
static inline int count_in_result(const char *text)
{
	int n = 0;

	for (const char *p = strstr(result, text); p != NULL; p = strstr(p + 1, text)) {
		n++;
	}
	return n;
}

#endif /* STORAGE_TEST_UTIL_H */
