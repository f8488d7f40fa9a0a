/*
 * The SMP management group (app/src/agent/mgmt/mgmt_*.c, docs/mgmt-group.md) over the real POSIX
 * port: every command and error code through agent_mgmt_handle(), the key in no response,
 * paging of export and tools, malformed and oversized requests, the serial framing and its
 * receiver.
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

#include <zcbor_decode.h>
#include <zcbor_encode.h>

#include "agent_cmd.h"
#include "agent_cmd_internal.h"
#include "agent_config.h"
#include "agent_port.h"
#include "agent_session.h"
#include "conv_store.h"
#include "mgmt_group.h"
#include "mgmt_internal.h"
#include "mgmt_serial.h"
#include "mgmt_smp.h"
#include "strict_utf8.h"
#include "posix/posix_port.h"
#include "reference.h"
#include "reference_sd.h"
#include "tool_registry.h"

#include "conv_test_util.h"
#include "flash_fixture.h"

#define SECRET "sk-very-secret-key-0123456789"

static uint8_t req_buf[AGENT_MGMT_BUF_SIZE + 64];
static uint8_t rsp_buf[AGENT_MGMT_BUF_SIZE];
static size_t rsp_len;
static uint8_t seq;

#include "mgmt_rsp.h"

/* ---- requests ------------------------------------------------------------------------------ */

/* An encoder for a request body, its map opened. */
#define REQ_BEGIN(zs)                                                                         \
	ZCBOR_STATE_E(zs, 2, req_buf + AGENT_SMP_HDR_SIZE,                                     \
		      sizeof(req_buf) - AGENT_SMP_HDR_SIZE, 0);                                \
	assert_true(zcbor_map_start_encode(zs, 8))

static void put_s(zcbor_state_t *zs, const char *key, const char *value)
{
	assert_true(zcbor_tstr_put_term(zs, key, 64));
	assert_true(zcbor_tstr_encode_ptr(zs, value, strlen(value)));
}

static void put_u(zcbor_state_t *zs, const char *key, uint32_t value)
{
	assert_true(zcbor_tstr_put_term(zs, key, 64));
	assert_true(zcbor_uint32_put(zs, value));
}

static void header(uint8_t op, uint16_t group, uint8_t cmd, size_t body_len)
{
	req_buf[0] = (uint8_t)((AGENT_SMP_VERSION_2 << 3) | op);
	req_buf[1] = 0;
	req_buf[2] = (uint8_t)(body_len >> 8);
	req_buf[3] = (uint8_t)body_len;
	req_buf[4] = (uint8_t)(group >> 8);
	req_buf[5] = (uint8_t)group;
	req_buf[6] = ++seq;
	req_buf[7] = cmd;
}

/* Key never in a response: checked on every response the tests see. */
static void assert_no_secret(void)
{
	const char *needle = "very-secret";

	for (size_t i = 0; i + strlen(needle) <= rsp_len; i++) {
		assert_false(memcmp(rsp_buf + i, needle, strlen(needle)) == 0);
	}
}

/* Send the raw body of @p body_len bytes already in req_buf; returns agent_mgmt_handle(). */
static int send_raw(uint8_t op, uint16_t group, uint8_t cmd, size_t body_len)
{
	int n;

	header(op, group, cmd, body_len);
	memset(rsp_buf, 0xee, sizeof(rsp_buf));
	n = agent_mgmt_handle(req_buf, AGENT_SMP_HDR_SIZE + body_len, rsp_buf, sizeof(rsp_buf));
	rsp_len = n > 0 ? (size_t)n : 0;
	if (n > 0) {
		assert_no_secret();
		/* The response header: op + 1, same group, sequence and command, version 2. */
		assert_int_equal(rsp_buf[0], (AGENT_SMP_VERSION_2 << 3) | (op + 1));
		assert_int_equal((rsp_buf[4] << 8) | rsp_buf[5], group);
		assert_int_equal(rsp_buf[6], seq);
		assert_int_equal(rsp_buf[7], cmd);
		assert_int_equal((rsp_buf[2] << 8) | rsp_buf[3], n - AGENT_SMP_HDR_SIZE);
	}
	return n;
}

static void send_enc(uint8_t op, uint8_t cmd, zcbor_state_t *zs)
{
	assert_true(zcbor_map_end_encode(zs, 8));
	size_t body = (size_t)(zs->payload_mut - (req_buf + AGENT_SMP_HDR_SIZE));

	assert_true(send_raw(op, AGENT_MGMT_GROUP_ID, cmd, body) > 0);
}

static void send_empty(uint8_t op, uint8_t cmd)
{
	req_buf[AGENT_SMP_HDR_SIZE] = 0xa0; /* {} */
	assert_true(send_raw(op, AGENT_MGMT_GROUP_ID, cmd, 1) > 0);
}

/* ---- responses ----------------------------------------------------------------------------- */

/* A decoder positioned at the value of top-level @p key; false when absent. */
#define RSP_FIND(zs, key) rsp_find(zs##_arr, ZCBOR_ARRAY_SIZE(zs##_arr), key)

static bool rsp_has(const char *key)
{
	return rsp_len > AGENT_SMP_HDR_SIZE && rsp_at(key) != NULL;
}

/* The group error's rc, or -1 for a response without "err". */
static int rsp_err(void)
{
	zcbor_state_t *zs;
	uint32_t group = 0;
	uint32_t rc = 0;

	if (!rsp_has("err")) {
		return -1;
	}
	zs = rsp_at("err");
	assert_true(zcbor_map_start_decode(zs));
	for (int i = 0; i < 2; i++) {
		struct zcbor_string k;

		assert_true(zcbor_tstr_decode(zs, &k));
		assert_true(zcbor_uint32_decode(zs, k.len == 5 ? &group : &rc));
	}
	assert_int_equal(group, AGENT_MGMT_GROUP_ID);
	assert_true(rsp_has("reason"));
	return (int)rc;
}

/* MCUmgr's own {"rc": N}. */
static int rsp_rc(void)
{
	return (int)rsp_uint("rc");
}

/* Entries of the list under @p key; the text member @p field of entry @p index into @p out. */
static size_t rsp_list(const char *key, const char *field, size_t index, char *out, size_t len)
{
	zcbor_state_t *zs = rsp_at(key);
	size_t count = 0;

	assert_non_null(zs);
	assert_true(zcbor_list_start_decode(zs));
	while (!zcbor_array_at_end(zs)) {
		if (count == index && field != NULL) {
			assert_true(zcbor_map_start_decode(zs));
			while (!zcbor_array_at_end(zs)) {
				struct zcbor_string k;
				struct zcbor_string v;

				assert_true(zcbor_tstr_decode(zs, &k));
				if (k.len == strlen(field) && memcmp(k.value, field, k.len) == 0 &&
				    zcbor_tstr_decode(zs, &v)) {
					snprintf(out, len, "%.*s", (int)v.len, v.value);
				} else {
					assert_true(zcbor_any_skip(zs, NULL));
				}
			}
			assert_true(zcbor_map_end_decode(zs));
		} else {
			assert_true(zcbor_any_skip(zs, NULL));
		}
		count++;
	}
	return count;
}

/* ---- fixtures ------------------------------------------------------------------------------ */

static int group_setup(void **state)
{
	(void)state;
	if (flash_fixture_setup("test_mgmt") != 0) {
		return -1;
	}
	(void)agent_init();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return flash_fixture_teardown();
}

/* Each test starts with the defaults and no conversations. */
static int setup(void **state)
{
	(void)state;
	posix_fs_fail_after(-1);
	assert_int_equal(agent_config_forget(agent_session_config()), 0);
	for (uint8_t slot = 1; slot <= CONV_SLOTS_MAX; slot++) {
		(void)conv_store_delete(slot);
	}
	assert_int_equal(conv_store_init(), 0);
	return 0;
}

/* ---- config -------------------------------------------------------------------------------- */

static void config_write(const char *name, const char *value)
{
	REQ_BEGIN(zs);
	put_s(zs, "name", name);
	put_s(zs, "value", value);
	send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_CONFIG, zs);
}

static void test_config_read_all(void **state)
{
	(void)state;
	send_empty(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONFIG);
	assert_int_equal(rsp_err(), -1);
	assert_string_equal(rsp_str("endpoint"), "");
	assert_string_equal(rsp_str("key"), "not set");
	assert_string_equal(rsp_str("reasoning"), "medium");
	assert_string_equal(rsp_str("tools"), "confirm");
	assert_int_equal(rsp_uint("max-tools"), 16);
	assert_string_equal(rsp_str("user"), "user");
	assert_string_equal(rsp_str("protocol"), "none");
	assert_true(rsp_has("model"));
	/* An empty body reads as {}. */
	assert_true(send_raw(AGENT_SMP_OP_READ, AGENT_MGMT_GROUP_ID, AGENT_MGMT_CMD_CONFIG, 0) > 0);
	assert_string_equal(rsp_str("key"), "not set");
}

static void test_config_write_every_name(void **state)
{
	static const char *const pairs[][3] = {
		{"endpoint", "https://api.example.com/v1/responses", NULL},
		{"model", "gpt-test", NULL},
		{"reasoning", "high", NULL},
		{"tools", "read-only", NULL},
		{"max-tools", "07", "7"},
		{"user", "ada", NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const char *canonical = pairs[i][2] != NULL ? pairs[i][2] : pairs[i][1];

		config_write(pairs[i][0], pairs[i][1]);
		assert_int_equal(rsp_err(), -1);
		assert_string_equal(rsp_str("name"), pairs[i][0]);
		assert_string_equal(rsp_str("value"), canonical);

		REQ_BEGIN(zs);
		put_s(zs, "name", pairs[i][0]);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONFIG, zs);
		assert_string_equal(rsp_str("value"), canonical);
	}
	send_empty(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONFIG);
	assert_string_equal(rsp_str("protocol"), "responses");
	/* Stored: a reload sees them. */
	struct agent_config cfg;

	assert_int_equal(agent_config_load(&cfg), 0);
	assert_string_equal(cfg.model, "gpt-test");
	assert_int_equal(cfg.max_tools, 7);
}

/* Every refusal carries the shell's own message; nothing is stored. */
static void test_config_refusals_are_the_shells(void **state)
{
	static const char *const bad[][2] = {
		{"endpoint", "ftp://example.com/v1/chat/completions"},
		{"endpoint", "https://user:pw@example.com/v1/chat/completions"},
		{"model", ""},
		{"reasoning", "extreme"},
		{"tools", "all"},
		{"max-tools", "0"},
		{"max-tools", "33"},
		{"user", "a b"},
	};
	struct agent_config before = *agent_session_config();

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct agent_config scratch = before;
		const char *why = NULL;
		char expected[AGENT_MGMT_REASON_MAX];

		assert_int_equal(agent_config_set(&scratch, bad[i][0], bad[i][1], &why), -EINVAL);
		snprintf(expected, sizeof(expected), "%s; nothing changed", why);
		config_write(bad[i][0], bad[i][1]);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
		assert_string_equal(rsp_str("reason"), expected);
	}
	assert_memory_equal(agent_session_config(), &before, sizeof(before));
}

static void test_config_too_long_is_refused_by_the_validator(void **state)
{
	char value[CONFIG_AGENT_ENDPOINT_MAX_LEN + 40];

	(void)state;
	memset(value, 'a', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	memcpy(value, "https://x.example/", 18);
	config_write("endpoint", value);
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
	assert_non_null(strstr(rsp_str("reason"), "too long"));
	memset(value, 'm', CONFIG_AGENT_MODEL_MAX_LEN + 1);
	value[CONFIG_AGENT_MODEL_MAX_LEN + 1] = '\0';
	config_write("model", value);
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
	value[CONFIG_AGENT_MODEL_MAX_LEN] = '\0';
	config_write("model", value);
	assert_int_equal(rsp_err(), -1);
}

static void test_config_unknown_name_and_fields(void **state)
{
	(void)state;
	config_write("colour", "blue");
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EUNKNOWN);
	assert_string_equal(rsp_str("reason"), "unknown setting 'colour'");
	{
		REQ_BEGIN(zs);
		put_s(zs, "name", "colour");
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EUNKNOWN);
	}
	{
		REQ_BEGIN(zs);
		put_s(zs, "name", "model");
		put_s(zs, "colour", "x");
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EUNKNOWN);
		assert_string_equal(rsp_str("reason"), "unknown field 'colour'");
	}
	/* Fields of commands that take none. */
	for (uint8_t cmd = AGENT_MGMT_CMD_STATUS; cmd <= AGENT_MGMT_CMD_FORGET; cmd++) {
		REQ_BEGIN(zs);
		put_u(zs, "x", 1);
		send_enc(cmd == AGENT_MGMT_CMD_STATUS ? AGENT_SMP_OP_READ : AGENT_SMP_OP_WRITE, cmd,
			 zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EUNKNOWN);
	}
}

static void test_config_missing_and_mistyped_fields(void **state)
{
	(void)state;
	{
		REQ_BEGIN(zs);
		put_s(zs, "value", "x");
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
		assert_string_equal(rsp_str("reason"), "name is missing");
	}
	{
		REQ_BEGIN(zs);
		put_s(zs, "name", "model");
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
		assert_string_equal(rsp_str("reason"), "value is missing");
	}
	{
		REQ_BEGIN(zs);
		put_s(zs, "name", "model");
		put_u(zs, "value", 5);
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
		assert_string_equal(rsp_str("reason"), "value must be a text string");
	}
	{
		REQ_BEGIN(zs);
		put_s(zs, "name", "model");
		put_s(zs, "name", "user");
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
		assert_string_equal(rsp_str("reason"), "field 'name' appears twice");
	}
	{
		REQ_BEGIN(zs);
		put_s(zs, "name", "model");
		assert_true(zcbor_tstr_put_lit(zs, "clear"));
		assert_true(zcbor_bool_put(zs, true));
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
		assert_string_equal(rsp_str("reason"), "clear is accepted only for key");
	}
	{
		REQ_BEGIN(zs);
		put_s(zs, "name", "key");
		put_s(zs, "value", SECRET);
		assert_true(zcbor_tstr_put_lit(zs, "clear"));
		assert_true(zcbor_bool_put(zs, true));
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
	}
	{
		/* A NUL inside a text value. */
		REQ_BEGIN(zs);
		put_s(zs, "name", "model");
		assert_true(zcbor_tstr_put_lit(zs, "value"));
		assert_true(zcbor_tstr_encode_ptr(zs, "a\0b", 3));
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
	}
	{
		/* A key that is not text. */
		REQ_BEGIN(zs);
		assert_true(zcbor_uint32_put(zs, 1));
		assert_true(zcbor_uint32_put(zs, 2));
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
	}
}

/* The key: set, cleared, shown only as "set"/"not set", never in any response. */
static void test_key_is_write_only(void **state)
{
	char key[CONFIG_AGENT_KEY_MAX_LEN + 2];

	(void)state;
	config_write("key", SECRET);
	assert_int_equal(rsp_err(), -1);
	assert_string_equal(rsp_str("value"), "set");
	{
		REQ_BEGIN(zs);
		put_s(zs, "name", "key");
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONFIG, zs);
		assert_string_equal(rsp_str("value"), "set");
	}
	assert_int_equal(agent_config_key_get(key, sizeof(key)), (int)strlen(SECRET));
	/* Every read command, every page: assert_no_secret() scans each response. */
	for (uint8_t cmd = 0; cmd < AGENT_MGMT_CMD_COUNT; cmd++) {
		if (agent_mgmt_has_handler(cmd, false)) {
			send_empty(AGENT_SMP_OP_READ, cmd);
		}
	}
	/* A refused key: the shell's message, and not the key. */
	config_write("key", "sk-very-secret with space");
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
	assert_non_null(strstr(rsp_str("reason"), "key unchanged"));
	assert_int_equal(agent_config_key_get(key, sizeof(key)), (int)strlen(SECRET));
	{
		REQ_BEGIN(zs);
		put_s(zs, "name", "key");
		assert_true(zcbor_tstr_put_lit(zs, "clear"));
		assert_true(zcbor_bool_put(zs, true));
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), -1);
		assert_string_equal(rsp_str("value"), "not set");
	}
	assert_int_equal(agent_config_key_get(key, sizeof(key)), -ENOENT);
	{
		REQ_BEGIN(zs);
		put_s(zs, "name", "key");
		assert_true(zcbor_tstr_put_lit(zs, "clear"));
		assert_true(zcbor_bool_put(zs, false));
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_CONFIG, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
		assert_string_equal(rsp_str("reason"), "clear must be true");
	}
}

static void test_settings_failure_is_eio(void **state)
{
	(void)state;
	posix_fs_fail_after(0);
	config_write("model", "other");
	posix_fs_fail_after(-1);
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EIO);
	assert_non_null(strstr(rsp_str("reason"), "(error "));
	posix_fs_fail_after(0);
	send_empty(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_FORGET);
	posix_fs_fail_after(-1);
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EIO);
}

/* ---- status, forget -------------------------------------------------------------------------- */

static void test_status(void **state)
{
	char name[32] = "";

	(void)state;
	config_write("key", SECRET);
	send_empty(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_STATUS);
	assert_int_equal(rsp_err(), -1);
	assert_string_equal(rsp_str("version"), "0.1.0");
	assert_string_equal(rsp_str("board"), agent_board_name());
	assert_string_equal(rsp_str("key"), "set");
	assert_true(rsp_has("tool_calls"));
	assert_true(rsp_list("pools", "name", 0, name, sizeof(name)) >= 1);
	assert_true(name[0] != '\0');
}

static void test_forget(void **state)
{
	char key[CONFIG_AGENT_KEY_MAX_LEN + 2];

	(void)state;
	config_write("key", SECRET);
	config_write("model", "m1");
	send_empty(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_FORGET);
	assert_int_equal(rsp_err(), -1);
	assert_false(rsp_has("rc"));
	assert_int_equal(agent_config_key_get(key, sizeof(key)), -ENOENT);
	assert_string_equal(agent_session_config()->model, "");
}

/* ---- man: the digests of installed reference pages ---------------------------------------- */

static void man_write(const char *topic, const char *sha256)
{
	REQ_BEGIN(zs);
	if (topic != NULL) {
		put_s(zs, "topic", topic);
	}
	if (sha256 != NULL) {
		put_s(zs, "sha256", sha256);
	}
	send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_MAN, zs);
}

static void test_man_records_and_forgets_a_digest(void **state)
{
	static const char hex[] =
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	const char *topic = reference_builtin()->pages[0].topic;
	uint8_t digest[SHA256_DIGEST_BYTES];
	char back[SHA256_HEX_LEN + 1];

	(void)state;
	(void)reference_digest_clear(topic);
	man_write(topic, hex);
	assert_int_equal(rsp_err(), -1);
	assert_string_equal(rsp_str("topic"), topic);
	assert_string_equal(rsp_str("sha256"), hex);
	assert_int_equal(reference_digest_get(topic, digest), 0);
	sha256_hex(digest, back);
	assert_string_equal(back, hex);
	/* Refusals: the digest stays. */
	man_write(topic, "00112233");
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
	assert_string_equal(rsp_str("reason"), "sha256 must be 64 lower-case hex digits");
	man_write(topic, "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff");
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
	man_write("no-such-topic", hex);
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_ENOENT);
	assert_string_equal(rsp_str("reason"), "no built-in page 'no-such-topic'");
	man_write(NULL, hex);
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
	assert_int_equal(reference_digest_get(topic, digest), 0);
	/* Without sha256: forgotten; a second time there is nothing to forget. */
	man_write(topic, NULL);
	assert_int_equal(rsp_err(), -1);
	assert_string_equal(rsp_str("sha256"), "");
	assert_int_equal(reference_digest_get(topic, digest), -ENOENT);
	man_write(topic, NULL);
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_ENOENT);
}

/* ---- conversations, export, delete ----------------------------------------------------------- */

static void test_conversations_list_and_paging(void **state)
{
	char title[80];

	(void)state;
	assert_int_equal(new_conversation("first", 1, 40, 1), 1);
	assert_int_equal(new_conversation("second", 2, 40, 2), 2);
	send_empty(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONVERSATIONS);
	assert_int_equal(rsp_err(), -1);
	assert_string_equal(rsp_str("dir"), CONV_DIR_LFS);
	assert_int_equal(rsp_uint("slots"), CONFIG_AGENT_CONV_FLASH_SLOTS);
	assert_int_equal(rsp_list("list", "title", 1, title, sizeof(title)), 2);
	assert_string_equal(title, "second");
	assert_int_equal(rsp_uint("next"), CONFIG_AGENT_CONV_FLASH_SLOTS);
	{
		REQ_BEGIN(zs);
		put_u(zs, "off", 1);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONVERSATIONS, zs);
		assert_int_equal(rsp_list("list", "title", 0, title, sizeof(title)), 1);
		assert_string_equal(title, "second");
	}
	{
		REQ_BEGIN(zs);
		put_u(zs, "off", CONFIG_AGENT_CONV_FLASH_SLOTS + 1);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONVERSATIONS, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_ERANGE);
	}
}

/* Export pages reassemble to the stored file, byte for byte. */
static void test_export_pages_reassemble_the_file(void **state)
{
	static uint8_t file[60000];
	static uint8_t got[60000];
	struct agent_file *f;
	uint32_t total = 0;
	uint32_t off = 0;
	int pages = 0;
	int n;

	(void)state;
	assert_int_equal(new_conversation("long", 3, 700, 3), 1);
	assert_int_equal(agent_fs_open(&f, CONV_DIR_LFS "/conv1.bin", AGENT_FS_O_READ), 0);
	n = agent_fs_read(f, file, sizeof(file));
	assert_true(n > 3 * (int)AGENT_MGMT_EXPORT_CHUNK);
	assert_int_equal(agent_fs_close(f), 0);
	do {
		REQ_BEGIN(zs);
		put_u(zs, "slot", 1);
		put_u(zs, "off", off);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_EXPORT, zs);
		assert_int_equal(rsp_err(), -1);
		assert_int_equal(rsp_uint("off"), off);
		assert_int_equal(rsp_uint("slot"), 1);
		total = rsp_uint("len");
		assert_int_equal(total, (uint32_t)n);

		zcbor_state_t *zd = rsp_at("data");
		struct zcbor_string data;

		assert_non_null(zd);
		assert_true(zcbor_bstr_decode(zd, &data));
		assert_true(data.len > 0 && data.len <= AGENT_MGMT_EXPORT_CHUNK);
		assert_true(rsp_len <= AGENT_MGMT_BUF_SIZE);
		memcpy(got + off, data.value, data.len);
		off += (uint32_t)data.len;
		pages++;
	} while (off < total);
	assert_memory_equal(got, file, (size_t)n);
	assert_true(pages >= n / (int)AGENT_MGMT_EXPORT_CHUNK);
	/* At the end: no data; past it: ERANGE. */
	{
		REQ_BEGIN(zs);
		put_u(zs, "slot", 1);
		put_u(zs, "off", total);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_EXPORT, zs);
		assert_int_equal(rsp_err(), -1);
	}
	{
		REQ_BEGIN(zs);
		put_u(zs, "slot", 1);
		put_u(zs, "off", total + 1);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_EXPORT, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_ERANGE);
	}
}

static void test_export_and_delete_errors(void **state)
{
	static const uint32_t bad_slots[] = {0, CONFIG_AGENT_CONV_FLASH_SLOTS + 1, 0xffffffffu};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		REQ_BEGIN(zs);
		put_u(zs, "slot", bad_slots[i]);
		put_u(zs, "off", 0);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_EXPORT, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_ERANGE);
		assert_string_equal(rsp_str("reason"), "slot must be a number from 1 to 3");
	}
	{
		REQ_BEGIN(zs);
		put_u(zs, "slot", 2);
		put_u(zs, "off", 0);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_EXPORT, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_ENOENT);
		assert_string_equal(rsp_str("reason"), "slot 2 holds no conversation");
	}
	{
		REQ_BEGIN(zs);
		put_u(zs, "slot", 2);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_EXPORT, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
		assert_string_equal(rsp_str("reason"), "off is missing");
	}
	{
		REQ_BEGIN(zs);
		put_s(zs, "slot", "1");
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_DELETE, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
		assert_string_equal(rsp_str("reason"), "slot must be an unsigned integer");
	}
	{
		REQ_BEGIN(zs);
		put_u(zs, "slot", 3);
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_DELETE, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_ENOENT);
	}
	/* A delete that the file system refuses. */
	assert_int_equal(new_conversation("x", 1, 20, 5), 1);
	posix_fs_fail_after(0);
	{
		REQ_BEGIN(zs);
		put_u(zs, "slot", 1);
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_DELETE, zs);
	}
	posix_fs_fail_after(-1);
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EIO);
	{
		REQ_BEGIN(zs);
		put_u(zs, "slot", 1);
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_DELETE, zs);
		assert_int_equal(rsp_err(), -1);
		assert_int_equal(rsp_uint("slot"), 1);
	}
	struct conv_summary s;

	assert_int_equal(conv_store_summary(1, &s), -ENOENT);
}

/* Without a file system the conversation commands answer ENODEV. */
static void test_no_storage_is_enodev(void **state)
{
	(void)state;
	assert_int_equal(posix_flash_unmount(), 0);
	assert_true(conv_store_init() != 0);
	send_empty(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONVERSATIONS);
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_ENODEV);
	{
		REQ_BEGIN(zs);
		put_u(zs, "slot", 1);
		put_u(zs, "off", 0);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_EXPORT, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_ENODEV);
	}
	{
		REQ_BEGIN(zs);
		put_u(zs, "slot", 1);
		send_enc(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_DELETE, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_ENODEV);
	}
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), 0);
	assert_int_equal(conv_store_init(), 0);
}

/* ---- tools --------------------------------------------------------------------------------- */

static void test_tools_paging(void **state)
{
	size_t total = tool_registry_count();
	uint32_t off = 0;
	int pages = 0;

	(void)state;
	while (off < total) {
		char name[64] = "";
		size_t count;

		REQ_BEGIN(zs);
		put_u(zs, "off", off);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_TOOLS, zs);
		assert_int_equal(rsp_err(), -1);
		assert_int_equal(rsp_uint("total"), total);
		assert_int_equal(rsp_uint("off"), off);
		assert_string_equal(rsp_str("policy"), "confirm");
		count = rsp_list("tools", "name", 0, name, sizeof(name));
		assert_true(count >= 1);
		assert_string_equal(name, tool_registry_get(off)->name);
		off += (uint32_t)count;
		pages++;
	}
	assert_int_equal(off, total);
	/* The compiled-in table and skill_use fit one 2 KiB response; the script tools, added at
	 * run time when a runtime is built in, start a second page. */
	{
		bool scripts = false;

		for (size_t i = 0; i < total; i++) {
			scripts = scripts || tool_registry_get(i)->domain == TOOL_DOMAIN_SCRIPT;
		}
		assert_int_equal(pages, scripts ? 2 : 1);
	}
	{
		REQ_BEGIN(zs);
		put_u(zs, "off", (uint32_t)total);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_TOOLS, zs);
		assert_int_equal(rsp_err(), -1);
		assert_int_equal(rsp_list("tools", NULL, 0, NULL, 0), 0);
	}
	{
		REQ_BEGIN(zs);
		put_u(zs, "off", (uint32_t)total + 1);
		send_enc(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_TOOLS, zs);
		assert_int_equal(rsp_err(), AGENT_MGMT_RC_ERANGE);
	}
}

/* A small response buffer pages the tool table: every tool exactly once, in order. */
static void test_tools_paging_in_a_small_buffer(void **state)
{
	static uint8_t small[300];
	size_t total = tool_registry_count();
	uint32_t off = 0;
	int pages = 0;

	(void)state;
	while (off < total) {
		REQ_BEGIN(zs);
		put_u(zs, "off", off);
		assert_true(zcbor_map_end_encode(zs, 8));
		size_t body = (size_t)(zs->payload_mut - (req_buf + AGENT_SMP_HDR_SIZE));

		header(AGENT_SMP_OP_READ, AGENT_MGMT_GROUP_ID, AGENT_MGMT_CMD_TOOLS, body);
		int n = agent_mgmt_handle(req_buf, AGENT_SMP_HDR_SIZE + body, small, sizeof(small));

		assert_true(n > 0 && (size_t)n <= sizeof(small));
		memcpy(rsp_buf, small, (size_t)n);
		rsp_len = (size_t)n;
		for (size_t i = 0;; i++) {
			char name[64] = "";
			size_t count = rsp_list("tools", "name", i, name, sizeof(name));

			if (i >= count) {
				assert_true(count >= 1);
				off += (uint32_t)count;
				break;
			}
			assert_string_equal(name, tool_registry_get(off + i)->name);
		}
		pages++;
	}
	assert_int_equal(off, total);
	assert_true(pages > 1);
}

/* ---- text strings are UTF-8 ------------------------------------------------------------------ */

/*
 * Walk one CBOR item at *p (definite or indefinite containers, as zcbor writes them) and
 * check every text string with strict_utf8(); false for anything malformed.
 */
static bool cbor_text_ok(const uint8_t **p, const uint8_t *end, int depth)
{
	uint8_t ib;
	uint8_t ai;
	uint64_t val;

	if (*p >= end || depth > 16) {
		return false;
	}
	ib = *(*p)++;
	ai = ib & 0x1f;
	val = ai;
	if (ai >= 24 && ai <= 27) {
		size_t len = (size_t)1 << (ai - 24);

		if ((size_t)(end - *p) < len) {
			return false;
		}
		val = 0;
		for (size_t i = 0; i < len; i++) {
			val = (val << 8) | *(*p)++;
		}
	}
	switch (ib >> 5) {
	case 2:
	case 3:
		if (ai == 31 || val > (uint64_t)(end - *p)) {
			return false;
		}
		if ((ib >> 5) == 3 && !strict_utf8(*p, (size_t)val)) {
			return false;
		}
		*p += val;
		return true;
	case 4:
	case 5:
		if (ai == 31) {
			while (*p < end && **p != 0xff) {
				if (!cbor_text_ok(p, end, depth + 1)) {
					return false;
				}
			}
			return *p < end && *(*p)++ == 0xff;
		}
		for (uint64_t i = 0; i < ((ib >> 5) == 5 ? val * 2 : val); i++) {
			if (!cbor_text_ok(p, end, depth + 1)) {
				return false;
			}
		}
		return true;
	case 6:
		return cbor_text_ok(p, end, depth + 1);
	default:
		return true;
	}
}

/* The whole response body is one CBOR item whose text strings are all strict UTF-8. */
static void assert_response_is_utf8(void)
{
	const uint8_t *p = rsp_buf + AGENT_SMP_HDR_SIZE;
	const uint8_t *end = rsp_buf + rsp_len;

	assert_true(rsp_len > AGENT_SMP_HDR_SIZE);
	assert_true(cbor_text_ok(&p, end, 0));
	assert_ptr_equal(p, end);
}

/* A stored title of every kind of ill-formed UTF-8, as `conversations` answers it. */
static void test_titles_are_sent_as_utf8(void **state)
{
	static const struct {
		const char *stored;
		const char *sent;
	} cases[] = {
		{"caf\xe9", "caf\xef\xbf\xbd"},			   /* Latin-1: a lead, cut at end */
		{"a\x80z", "a\xef\xbf\xbdz"},			   /* lone continuation byte */
		{"ab\xe2\x82", "ab\xef\xbf\xbd"},		   /* truncated sequence at the end */
		{"x\xf0\x9f\x98", "x\xef\xbf\xbd"},		   /* the same length once repaired */
		{"\xc0\xaf!", "\xef\xbf\xbd\xef\xbf\xbd!"},	   /* overlong "/" */
		{"\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* overlong, 3 bytes */
		{"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* surrogate U+D800 */
		{"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* U+110000 */
		{"\xff", "\xef\xbf\xbd"},			   /* a byte UTF-8 never uses */
		{"\xe2\x9c\x93 ok \xf0\x9f\x98\x80", "\xe2\x9c\x93 ok \xf0\x9f\x98\x80"}, /* valid */
	};
	char title[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(new_conversation(cases[i].stored, 1, 20, (unsigned int)i), 1);
		send_empty(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONVERSATIONS);
		assert_int_equal(rsp_err(), -1);
		assert_response_is_utf8();
		assert_int_equal(rsp_list("list", "title", 0, title, sizeof(title)), 1);
		if (strcmp(title, cases[i].sent) != 0) {
			fail_msg("case %zu: sent \"%s\"", i, title);
		}
		assert_int_equal(conv_store_delete(1), 0);
	}
}

/* The longest title, every byte of it ill-formed: three times as long on the wire, and the
 * page still holds every slot (the list of three full slots fits one answer). */
static void test_repaired_titles_fill_a_page(void **state)
{
	char stored[CONV_TITLE_MAX + 1];
	char title[3 * CONV_TITLE_MAX + 1];

	(void)state;
	memset(stored, 0xe9, CONV_TITLE_MAX);
	stored[CONV_TITLE_MAX] = '\0';
	for (unsigned int slot = 1; slot <= CONFIG_AGENT_CONV_FLASH_SLOTS; slot++) {
		assert_int_equal(new_conversation(stored, 1, 20, slot), (int)slot);
	}
	send_empty(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_CONVERSATIONS);
	assert_int_equal(rsp_err(), -1);
	assert_response_is_utf8();
	assert_int_equal(rsp_list("list", "title", CONFIG_AGENT_CONV_FLASH_SLOTS - 1, title,
				  sizeof(title)),
			 CONFIG_AGENT_CONV_FLASH_SLOTS);
	assert_int_equal(strlen(title), 3 * CONV_TITLE_MAX);
	for (size_t i = 0; i < 3 * CONV_TITLE_MAX; i += 3) {
		assert_memory_equal(title + i, "\xef\xbf\xbd", 3);
	}
	assert_int_equal(rsp_uint("next"), CONFIG_AGENT_CONV_FLASH_SLOTS);
}

/* A repaired entry that does not fit a small answer goes to the next page, whole. */
static void test_repaired_titles_page_in_a_small_buffer(void **state)
{
	static uint8_t small[400];
	char stored[CONV_TITLE_MAX + 1];
	char title[3 * CONV_TITLE_MAX + 1];
	uint32_t off = 0;
	int pages = 0;
	int seen = 0;

	(void)state;
	memset(stored, 0xe9, CONV_TITLE_MAX);
	stored[CONV_TITLE_MAX] = '\0';
	for (unsigned int slot = 1; slot <= CONFIG_AGENT_CONV_FLASH_SLOTS; slot++) {
		assert_int_equal(new_conversation(stored, 1, 20, slot), (int)slot);
	}
	while (off < CONFIG_AGENT_CONV_FLASH_SLOTS) {
		REQ_BEGIN(zs);
		put_u(zs, "off", off);
		assert_true(zcbor_map_end_encode(zs, 8));
		size_t body = (size_t)(zs->payload_mut - (req_buf + AGENT_SMP_HDR_SIZE));

		header(AGENT_SMP_OP_READ, AGENT_MGMT_GROUP_ID, AGENT_MGMT_CMD_CONVERSATIONS, body);
		memset(small, 0xee, sizeof(small));
		int n = agent_mgmt_handle(req_buf, AGENT_SMP_HDR_SIZE + body, small, sizeof(small));

		assert_true(n > 0 && (size_t)n <= sizeof(small));
		memcpy(rsp_buf, small, (size_t)n);
		rsp_len = (size_t)n;
		assert_response_is_utf8();
		size_t count = rsp_list("list", "title", 0, title, sizeof(title));

		assert_int_equal(count, 1); /* two entries of ~250 bytes do not fit 400 */
		assert_int_equal(strlen(title), 3 * CONV_TITLE_MAX);
		seen += (int)count;
		off = rsp_uint("next");
		pages++;
	}
	assert_int_equal(seen, CONFIG_AGENT_CONV_FLASH_SLOTS);
	assert_int_equal(pages, CONFIG_AGENT_CONV_FLASH_SLOTS);
}

/*
 * agent_mgmt_put_text() at its bound: the repaired text and its header fit exactly (N) or
 * miss by one byte (N - 1: nothing is written, not even past the end); and where the
 * repair makes the header one byte longer (23 -> 24 bytes of text).
 */
static void test_text_writer_bounds(void **state)
{
	static const struct {
		const char *text;
		size_t need; /* header + repaired bytes */
	} cases[] = {
		{"caf\xe9", 1 + 6},
		{"ok", 1 + 2},
		{"\xff\xff\xff\xff\xff\xff\xff" "ab", 1 + 23},	 /* 23 bytes: a 1-byte header */
		{"\xff\xff\xff\xff\xff\xff\xff\xff", 2 + 24}, /* 24 bytes: a 2-byte header */
	};
	uint8_t buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t room = cases[i].need - 1; room <= cases[i].need; room++) {
			zcbor_state_t zs[2];
			const uint8_t *p = buf;

			memset(buf, 0xee, sizeof(buf));
			zcbor_new_encode_state(zs, 2, buf, room, 0);
			bool ok = agent_mgmt_put_text(zs, cases[i].text, strlen(cases[i].text));

			for (size_t k = room; k < sizeof(buf); k++) {
				assert_int_equal(buf[k], 0xee); /* nothing past the end */
			}
			if (room < cases[i].need) {
				assert_false(ok);
				assert_ptr_equal(zs->payload_mut, buf);
				continue;
			}
			assert_true(ok);
			assert_ptr_equal(zs->payload_mut, buf + room);
			assert_true(cbor_text_ok(&p, buf + room, 0));
			assert_ptr_equal(p, buf + room);
		}
	}
}

/* A refusal's reason is cut between characters, never inside one. */
static void test_reason_is_cut_between_characters(void **state)
{
	char text[AGENT_MGMT_REASON_MAX + 8];
	struct refusal r;

	(void)state;
	/* 125 bytes + "é" = 127: fits whole. */
	memset(text, 'a', 125);
	memcpy(text + 125, "\xc3\xa9", 3);
	assert_int_equal(agent_mgmt_refuse(&r, AGENT_MGMT_RC_EINVAL, "%s", text), -EINVAL);
	assert_string_equal(r.reason, text);
	/* 127 and 128 ASCII bytes: the first 127 of them, whole characters all. */
	memset(text, 'a', 128);
	text[127] = '\0';
	agent_mgmt_refuse(&r, AGENT_MGMT_RC_EINVAL, "%s", text);
	assert_string_equal(r.reason, text);
	text[127] = 'b';
	text[128] = '\0';
	agent_mgmt_refuse(&r, AGENT_MGMT_RC_EINVAL, "%s", text);
	assert_int_equal(strlen(r.reason), 127);
	assert_memory_equal(r.reason, text, 127);
	/* 126 bytes + "é" = 128: one byte too long; "é" goes, not half of it. */
	memset(text, 'a', 126);
	memcpy(text + 126, "\xc3\xa9", 3);
	agent_mgmt_refuse(&r, AGENT_MGMT_RC_EINVAL, "%s", text);
	assert_int_equal(strlen(r.reason), 126);
	/* A 4-byte character cut after 1, 2 or 3 of its bytes. */
	for (size_t before = 124; before <= 126; before++) {
		memset(text, 'a', before);
		memcpy(text + before, "\xf0\x9f\x98\x80", 5);
		agent_mgmt_refuse(&r, AGENT_MGMT_RC_EINVAL, "%s", text);
		assert_int_equal(strlen(r.reason), before);
	}
	/* 123 + 4 = 127 bytes: fits whole. */
	memset(text, 'a', 123);
	memcpy(text + 123, "\xf0\x9f\x98\x80", 5);
	agent_mgmt_refuse(&r, AGENT_MGMT_RC_EINVAL, "%s", text);
	assert_string_equal(r.reason, text);
}

/* ---- the SMP layer ------------------------------------------------------------------------- */

static void test_unknown_commands_ops_and_groups(void **state)
{
	(void)state;
	/* status has no write handler, man no read handler; command 8 none at all: MCUmgr's
	 * ENOTSUP. */
	send_empty(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_MAN);
	assert_int_equal(rsp_rc(), AGENT_MGMT_ERR_ENOTSUP);
	send_empty(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_STATUS);
	assert_int_equal(rsp_rc(), AGENT_MGMT_ERR_ENOTSUP);
	send_empty(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_COUNT);
	assert_int_equal(rsp_rc(), AGENT_MGMT_ERR_ENOTSUP);
	req_buf[AGENT_SMP_HDR_SIZE] = 0xa0;
	assert_true(send_raw(AGENT_SMP_OP_READ, 65, 0, 1) > 0);
	assert_int_equal(rsp_rc(), AGENT_MGMT_ERR_ENOTSUP);
	/* MCUmgr parameters of the OS group, for clients that size their requests. */
	assert_true(send_raw(AGENT_SMP_OP_READ, AGENT_SMP_GROUP_OS, AGENT_SMP_OS_MCUMGR_PARAMS, 1) >
		    0);
	assert_int_equal(rsp_uint("buf_size"), AGENT_MGMT_BUF_SIZE);
	/* A response op is not answered; a short packet neither; a truncated body ECORRUPT. */
	header(AGENT_SMP_OP_READ_RSP, AGENT_MGMT_GROUP_ID, 0, 1);
	assert_true(agent_mgmt_handle(req_buf, 9, rsp_buf, sizeof(rsp_buf)) < 0);
	assert_true(agent_mgmt_handle(req_buf, 7, rsp_buf, sizeof(rsp_buf)) < 0);
	header(AGENT_SMP_OP_READ, AGENT_MGMT_GROUP_ID, 0, 20);
	assert_true(agent_mgmt_handle(req_buf, 12, rsp_buf, sizeof(rsp_buf)) > 0);
	rsp_len = AGENT_SMP_HDR_SIZE + ((rsp_buf[2] << 8) | rsp_buf[3]);
	assert_int_equal(rsp_rc(), AGENT_MGMT_ERR_ECORRUPT);
}

static void test_malformed_cbor(void **state)
{
	static const struct {
		uint8_t bytes[8];
		size_t len;
	} bodies[] = {
		{{0xa1, 0x64, 'n', 'a'}, 4},	       /* text cut short */
		{{0xa1}, 1},			       /* map without its pair */
		{{0xa2, 0x64, 'n', 'a', 'm', 'e'}, 6}, /* key without value */
		{{0x83, 1, 2, 3}, 4},		       /* a list, not a map */
		{{0x1c}, 1},			       /* reserved additional info */
		{{0xff}, 1},			       /* a lone break */
		{{0x64, 'n', 'a', 'm', 'e'}, 5},       /* a text string, not a map */
		{{0xbf, 0x64, 'n', 'a', 'm', 'e'}, 6}, /* indefinite map, cut */
		{{0xa1, 0x64, 'n', 'a', 'm', 'e', 0x7f}, 7}, /* indefinite text */
		{{0xa1, 0x61, 'x', 0x9f, 0x9f, 0x9f}, 6},    /* lists never closed */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		for (uint8_t cmd = 0; cmd < AGENT_MGMT_CMD_COUNT; cmd++) {
			bool write = !agent_mgmt_has_handler(cmd, false);

			memcpy(req_buf + AGENT_SMP_HDR_SIZE, bodies[i].bytes, bodies[i].len);
			assert_true(send_raw(write ? AGENT_SMP_OP_WRITE : AGENT_SMP_OP_READ,
					     AGENT_MGMT_GROUP_ID, cmd, bodies[i].len) > 0);
			assert_false(rsp_has("err"));
			assert_int_equal(rsp_rc(), AGENT_MGMT_ERR_EINVAL);
		}
	}
	/* An indefinite-length map that is complete is fine. */
	static const uint8_t indefinite[] = {0xbf, 0x64, 'n', 'a', 'm', 'e', 0x64,
					     'u',  's',	 'e', 'r', 0xff};

	/* Nesting deeper than the checker's bound, even where complete, is malformed. */
	uint8_t *deep = req_buf + AGENT_SMP_HDR_SIZE;

	deep[0] = 0xa1;
	deep[1] = 0x61;
	deep[2] = 'x';
	memset(deep + 3, 0x81, 1000);
	deep[1003] = 0x00;
	assert_true(send_raw(AGENT_SMP_OP_READ, AGENT_MGMT_GROUP_ID, AGENT_MGMT_CMD_STATUS, 1004) >
		    0);
	assert_int_equal(rsp_rc(), AGENT_MGMT_ERR_EINVAL);
	memcpy(req_buf + AGENT_SMP_HDR_SIZE, indefinite, sizeof(indefinite));
	assert_true(send_raw(AGENT_SMP_OP_READ, AGENT_MGMT_GROUP_ID, 0, sizeof(indefinite)) > 0);
	assert_string_equal(rsp_str("value"), "user");
}

/* A request as large as the buffer still gets its refusal; a response that cannot fit is
 * MCUmgr's EMSGSIZE. */
static void test_oversized(void **state)
{
	static char big[AGENT_MGMT_BUF_SIZE];

	(void)state;
	memset(big, 'x', sizeof(big) - 100);
	big[sizeof(big) - 100] = '\0';
	config_write("model", big);
	assert_int_equal(rsp_err(), AGENT_MGMT_RC_EINVAL);
	assert_non_null(strstr(rsp_str("reason"), "too long"));
	/* Status into a buffer too small for it. */
	req_buf[AGENT_SMP_HDR_SIZE] = 0xa0;
	header(AGENT_SMP_OP_READ, AGENT_MGMT_GROUP_ID, AGENT_MGMT_CMD_STATUS, 1);
	int n = agent_mgmt_handle(req_buf, AGENT_SMP_HDR_SIZE + 1, rsp_buf, 64);

	assert_true(n > 0 && n <= 64);
	rsp_len = (size_t)n;
	assert_int_equal(rsp_rc(), AGENT_MGMT_ERR_EMSGSIZE);
}

/* ---- serial framing -------------------------------------------------------------------------- */

static struct mgmt_serial_rx rx;
static uint8_t wire[MGMT_SERIAL_ENCODED_MAX(AGENT_MGMT_BUF_SIZE) + 64];
static int64_t serial_now; /* the made-up clock feed() passes */

/* Feed @p len bytes; the shell's bytes go to @p shell. Returns the packets completed. */
static int feed(const uint8_t *data, size_t len, uint8_t *shell, size_t *shell_len,
		uint8_t *pkt, size_t *pkt_len)
{
	int packets = 0;

	for (size_t i = 0; i < len; i++) {
		uint8_t out[2];
		size_t k = mgmt_serial_rx_byte(&rx, data[i], serial_now, out);

		memcpy(shell + *shell_len, out, k);
		*shell_len += k;
		if (rx.ready) {
			size_t n;
			const uint8_t *p = mgmt_serial_rx_packet(&rx, &n);

			memcpy(pkt, p, n);
			*pkt_len = n;
			mgmt_serial_rx_done(&rx);
			packets++;
		}
	}
	return packets;
}

static void test_serial_known_vector(void **state)
{
	/* smp's documented example: b"Hello, world!" frames as "AA9IZWxsbywgd29ybGQhet4=". */
	static const char expected[] = "\x06\x09" "AA9IZWxsbywgd29ybGQhet4=\n";
	int n = mgmt_serial_encode((const uint8_t *)"Hello, world!", 13, wire, sizeof(wire));

	(void)state;
	assert_int_equal(n, (int)strlen(expected));
	assert_memory_equal(wire, expected, (size_t)n);
	assert_int_equal(mgmt_serial_crc16((const uint8_t *)"123456789", 9), 0x31c3);
}

static void test_serial_round_trip_with_shell_bytes_between(void **state)
{
	static uint8_t pkt[AGENT_MGMT_BUF_SIZE];
	static uint8_t got[AGENT_MGMT_BUF_SIZE];
	static uint8_t stream[sizeof(wire) + 64];
	static uint8_t shell[sizeof(stream) * 2];

	(void)state;
	for (size_t len = 1; len <= AGENT_MGMT_BUF_SIZE - 4; len = len * 3 + 1) {
		size_t s = 0;
		size_t shell_len = 0;
		size_t got_len = 0;
		int n;

		for (size_t i = 0; i < len; i++) {
			pkt[i] = (uint8_t)(i * 31u + len);
		}
		n = mgmt_serial_encode(pkt, len, wire, sizeof(wire));
		assert_true(n > 0 && (size_t)n <= MGMT_SERIAL_ENCODED_MAX(len));
		/* Every line at most 127 bytes, each a marker, base64 and '\n'. */
		for (int i = 0, start = 0; i < n; i++) {
			if (wire[i] == '\n') {
				assert_true(i - start + 1 <= (int)MGMT_SERIAL_LINE_MAX);
				assert_true(wire[start] == 0x06 || wire[start] == 0x04);
				start = i + 1;
			}
		}
		/* Shell text before, between the lines and after, lone marker bytes included. */
		memcpy(stream + s, "ag\x06x", 4);
		s += 4;
		for (int i = 0; i < n; i++) {
			stream[s++] = wire[i];
			if (wire[i] == '\n' && i + 1 < n) {
				stream[s++] = 'Q';
			}
		}
		memcpy(stream + s, "ent\r", 4);
		s += 4;
		mgmt_serial_rx_init(&rx);
		assert_int_equal(feed(stream, s, shell, &shell_len, got, &got_len), 1);
		assert_int_equal(got_len, len);
		assert_memory_equal(got, pkt, len);
		assert_true(shell_len >= 8);
		assert_memory_equal(shell, "ag\x06x", 4);
		assert_memory_equal(shell + shell_len - 4, "ent\r", 4);
	}
}

static void test_serial_drops_bad_frames(void **state)
{
	static uint8_t got[AGENT_MGMT_BUF_SIZE];
	uint8_t shell[600];
	size_t shell_len = 0;
	size_t got_len = 0;
	int n;

	(void)state;
	mgmt_serial_rx_init(&rx);
	/* A flipped CRC. */
	n = mgmt_serial_encode((const uint8_t *)"abcdefgh", 8, wire, sizeof(wire));
	wire[5] = wire[5] == 'A' ? 'B' : 'A';
	assert_int_equal(feed(wire, (size_t)n, shell, &shell_len, got, &got_len), 0);
	/* A continuation without a start. */
	static const uint8_t frag[] = "\x04\x14QUJD\n";

	assert_int_equal(feed(frag, sizeof(frag) - 1, shell, &shell_len, got, &got_len), 0);
	/* Not base64. */
	static const uint8_t junk[] = "\x06\x09!!!!\n";

	assert_int_equal(feed(junk, sizeof(junk) - 1, shell, &shell_len, got, &got_len), 0);
	/* A line longer than 127 bytes. */
	uint8_t longline[200];

	longline[0] = 0x06;
	longline[1] = 0x09;
	memset(longline + 2, 'A', sizeof(longline) - 3);
	longline[sizeof(longline) - 1] = '\n';
	assert_int_equal(feed(longline, sizeof(longline), shell, &shell_len, got, &got_len), 0);
	/* A packet larger than the buffer: announced length too large. */
	static uint8_t big[AGENT_MGMT_BUF_SIZE + 100];
	static uint8_t big_wire[MGMT_SERIAL_ENCODED_MAX(sizeof(big))];

	memset(big, 7, sizeof(big));
	n = mgmt_serial_encode(big, sizeof(big), big_wire, sizeof(big_wire));
	assert_true(n > 0);
	assert_int_equal(feed(big_wire, (size_t)n, shell, &shell_len, got, &got_len), 0);
	assert_int_equal(shell_len, 0);
	assert_true(rx.dropped >= 4);
	/* And the next good packet goes through. */
	n = mgmt_serial_encode((const uint8_t *)"ok", 2, wire, sizeof(wire));
	assert_int_equal(feed(wire, (size_t)n, shell, &shell_len, got, &got_len), 1);
	assert_int_equal(got_len, 2);
}

/* Ctrl-F Tab (or Ctrl-D Ctrl-T) typed by hand: the line is dropped once it is older than the
 * timeout, and what comes then is the shell's again. At the timeout it is still a line. */
static void test_serial_line_times_out(void **state)
{
	static uint8_t got[AGENT_MGMT_BUF_SIZE];
	static const char *const starts[] = {"\x06\x09", "\x04\x14"};
	uint8_t shell[64];
	size_t shell_len;
	size_t got_len = 0;
	int n;

	(void)state;
	for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
		mgmt_serial_rx_init(&rx);
		shell_len = 0;
		serial_now = 5000;
		assert_int_equal(feed((const uint8_t *)starts[s], 2, shell, &shell_len, got,
				      &got_len),
				 0);
		serial_now = 5000 + MGMT_SERIAL_INPUT_TIMEOUT_MS;
		assert_int_equal(feed((const uint8_t *)"ab", 2, shell, &shell_len, got, &got_len),
				 0);
		assert_int_equal(shell_len, 0); /* still the frame's */
		serial_now = 5000 + MGMT_SERIAL_INPUT_TIMEOUT_MS + 1;
		assert_int_equal(feed((const uint8_t *)"help\r", 5, shell, &shell_len, got,
				      &got_len),
				 0);
		assert_int_equal(shell_len, 5);
		assert_memory_equal(shell, "help\r", 5);
		assert_int_equal(rx.state, MGMT_RX_IDLE);
	}
	/* A real frame's lines each have the timeout from their own markers. */
	mgmt_serial_rx_init(&rx);
	static uint8_t big[300];
	shell_len = 0;
	memset(big, 9, sizeof(big));
	n = mgmt_serial_encode(big, sizeof(big), wire, sizeof(wire));
	assert_true(n > 2 * (int)MGMT_SERIAL_LINE_MAX);
	int packets = 0;

	for (int i = 0; i < n; i++) {
		if (i > 0 && wire[i - 1] == '\n') {
			serial_now += MGMT_SERIAL_INPUT_TIMEOUT_MS; /* slow, but every line in time */
		}
		packets += feed(wire + i, 1, shell, &shell_len, got, &got_len);
	}
	assert_int_equal(packets, 1);
	assert_int_equal(got_len, sizeof(big));
	assert_int_equal(shell_len, 0);
	serial_now = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_config_read_all, setup),
		cmocka_unit_test_setup(test_config_write_every_name, setup),
		cmocka_unit_test_setup(test_config_refusals_are_the_shells, setup),
		cmocka_unit_test_setup(test_config_too_long_is_refused_by_the_validator, setup),
		cmocka_unit_test_setup(test_config_unknown_name_and_fields, setup),
		cmocka_unit_test_setup(test_config_missing_and_mistyped_fields, setup),
		cmocka_unit_test_setup(test_key_is_write_only, setup),
		cmocka_unit_test_setup(test_settings_failure_is_eio, setup),
		cmocka_unit_test_setup(test_status, setup),
		cmocka_unit_test_setup(test_forget, setup),
		cmocka_unit_test_setup(test_man_records_and_forgets_a_digest, setup),
		cmocka_unit_test_setup(test_conversations_list_and_paging, setup),
		cmocka_unit_test_setup(test_export_pages_reassemble_the_file, setup),
		cmocka_unit_test_setup(test_export_and_delete_errors, setup),
		cmocka_unit_test_setup(test_no_storage_is_enodev, setup),
		cmocka_unit_test_setup(test_tools_paging, setup),
		cmocka_unit_test_setup(test_tools_paging_in_a_small_buffer, setup),
		cmocka_unit_test_setup(test_unknown_commands_ops_and_groups, setup),
		cmocka_unit_test_setup(test_malformed_cbor, setup),
		cmocka_unit_test_setup(test_oversized, setup),
		cmocka_unit_test_setup(test_titles_are_sent_as_utf8, setup),
		cmocka_unit_test_setup(test_repaired_titles_fill_a_page, setup),
		cmocka_unit_test_setup(test_repaired_titles_page_in_a_small_buffer, setup),
		cmocka_unit_test(test_text_writer_bounds),
		cmocka_unit_test(test_reason_is_cut_between_characters),
		cmocka_unit_test(test_serial_known_vector),
		cmocka_unit_test(test_serial_round_trip_with_shell_bytes_between),
		cmocka_unit_test(test_serial_drops_bad_frames),
		cmocka_unit_test(test_serial_line_times_out),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
