/*
 * The configuration module (app/src/agent/state/agent_config.c) over the real POSIX settings
 * store on a LittleFS image: validation at the bounds, persistence, nothing changed on
 * failure, invalid stored values, forget.
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

#include "agent_config.h"
#include "agent_port.h"
#include "posix/posix_port.h"

#include "flash_fixture.h"

static int setup(void **state)
{
	(void)state;
	return flash_fixture_setup("test_config");
}

static int teardown(void **state)
{
	(void)state;
	return flash_fixture_teardown();
}

static void remount(void)
{
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(posix_flash_mount(image_path, 0, false), 0);
}

static void fill(char *buf, char c, size_t n)
{
	memset(buf, c, n);
	buf[n] = '\0';
}

static void test_defaults(void **state)
{
	struct agent_config cfg;

	(void)state;
	assert_int_equal(agent_config_load(&cfg), 0);
	assert_string_equal(cfg.endpoint, "");
	assert_string_equal(cfg.model, "");
	assert_string_equal(cfg.user, "user");
	assert_false(cfg.key_set);
	assert_int_equal(cfg.reasoning, AGENT_REASONING_MEDIUM);
	assert_int_equal(cfg.tools, AGENT_TOOLS_CONFIRM);
	assert_int_equal(cfg.max_tools, 16);
	assert_int_equal(cfg.invalid_loaded, 0);
	assert_int_equal(agent_config_protocol(cfg.endpoint), AGENT_PROTOCOL_NONE);
}

static void test_endpoint_bounds(void **state)
{
	char url[CONFIG_AGENT_ENDPOINT_MAX_LEN + 2];
	const char *prefix = "https://h/";
	const char *why = NULL;
	size_t plen = strlen(prefix);

	(void)state;
	memcpy(url, prefix, plen);
	/* N-1, N accepted; N+1 refused. */
	fill(url + plen, 'a', CONFIG_AGENT_ENDPOINT_MAX_LEN - 1 - plen);
	assert_int_equal(agent_config_check_endpoint(url, &why), 0);
	fill(url + plen, 'a', CONFIG_AGENT_ENDPOINT_MAX_LEN - plen);
	assert_int_equal(agent_config_check_endpoint(url, &why), 0);
	fill(url + plen, 'a', CONFIG_AGENT_ENDPOINT_MAX_LEN + 1 - plen);
	assert_int_equal(agent_config_check_endpoint(url, &why), -EINVAL);
	assert_string_equal(why, "endpoint is too long (at most 255 bytes)");
}

static void test_endpoint_forms(void **state)
{
	static const char *const good[] = {
		"http://a/x",
		"https://api.openai.com/v1/chat/completions",
		"http://127.0.0.1:1/v1/responses",
		"http://127.0.0.1:65535/v1/responses",
		"http://[::1]/v1/responses",
		"http://[fe80::1]:8080/v1/responses",
		"https://r.openai.azure.com/openai/responses?api-version=2025-04-01-preview",
		"HtTpS://x.y/z",
	};
	static const char *const bad[] = {
		"", "http:/a/x", "http//a/x", "mailto:a@b", "http://", "http:///x", "http://a",
		"http://a/", "http://a?x", "http://a/?x", "http://a:/x", "http://a:0/x",
		"http://a:65536/x", "http://a:123456/x", "http://u@a/x", "http://[]/x",
		"http://[::1/x", "http://[::g]/x", "http://[::1]x/x", "http://a b/x",
		"http://a/x y", "http://a/x\ty", "http://a/x#f", "http://a/x|y", "http://a/x\"",
		"http://a\x7f/x", "http://é/x", "http://./x", "http://-/x", "http://.-_:80/x",
	};
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		why = NULL;
		if (agent_config_check_endpoint(good[i], &why) != 0) {
			fail_msg("refused %s: %s", good[i], why);
		}
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (agent_config_check_endpoint(bad[i], &why) != -EINVAL || why == NULL) {
			fail_msg("accepted %s", bad[i]);
		}
	}
}

static void test_protocol(void **state)
{
	(void)state;
	assert_int_equal(agent_config_protocol("https://a/v1/responses"), AGENT_PROTOCOL_RESPONSES);
	assert_int_equal(agent_config_protocol("https://a/v1/responses?x=1"),
			 AGENT_PROTOCOL_RESPONSES);
	assert_int_equal(agent_config_protocol("https://a/responses"), AGENT_PROTOCOL_RESPONSES);
	assert_int_equal(agent_config_protocol("https://a/v1/responses/"), AGENT_PROTOCOL_CHAT);
	assert_int_equal(agent_config_protocol("https://a/v1/myresponses"), AGENT_PROTOCOL_CHAT);
	assert_int_equal(agent_config_protocol("https://a/v1/chat/completions?r=/responses"),
			 AGENT_PROTOCOL_CHAT);
	assert_string_equal(agent_protocol_name(AGENT_PROTOCOL_RESPONSES), "responses");
	assert_string_equal(agent_protocol_name(AGENT_PROTOCOL_CHAT), "chat-completions");
}

static void test_max_tools_parse(void **state)
{
	static const char *const bad[] = {"", "0", "00", "33", "100", "1234", "-1", "+1",
					  " 1", "1 ", "1.0", "x", "0x10"};
	const char *why;
	uint8_t n = 0;

	(void)state;
	assert_int_equal(agent_config_parse_max_tools("1", &n, &why), 0);
	assert_int_equal(n, 1);
	assert_int_equal(agent_config_parse_max_tools("31", &n, &why), 0);
	assert_int_equal(n, 31);
	assert_int_equal(agent_config_parse_max_tools("032", &n, &why), 0);
	assert_int_equal(n, 32);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = 99;
		if (agent_config_parse_max_tools(bad[i], &n, &why) != -EINVAL || n != 99) {
			fail_msg("accepted '%s'", bad[i]);
		}
	}
	assert_string_equal(why, "max-tools must be a whole number from 1 to 32");
}

static void test_names(void **state)
{
	enum agent_reasoning r;
	enum agent_tools_policy p;
	const char *why;

	(void)state;
	for (int i = 0; i < AGENT_REASONING_COUNT; i++) {
		assert_int_equal(agent_config_parse_reasoning(agent_reasoning_name(i), &r, &why), 0);
		assert_int_equal(r, i);
	}
	assert_int_equal(agent_config_parse_reasoning("Medium", &r, &why), -EINVAL);
	assert_int_equal(agent_config_parse_reasoning("", &r, &why), -EINVAL);
	for (int i = 0; i < AGENT_TOOLS_POLICY_COUNT; i++) {
		assert_int_equal(agent_config_parse_tools(agent_tools_policy_name(i), &p, &why), 0);
		assert_int_equal(p, i);
	}
	assert_int_equal(agent_config_parse_tools("readonly", &p, &why), -EINVAL);
}

static void test_token_bounds(void **state)
{
	char text[CONFIG_AGENT_KEY_MAX_LEN + 2];
	const char *why;

	(void)state;
	fill(text, 'm', CONFIG_AGENT_MODEL_MAX_LEN);
	assert_int_equal(agent_config_check_model(text, &why), 0);
	fill(text, 'm', CONFIG_AGENT_MODEL_MAX_LEN + 1);
	assert_int_equal(agent_config_check_model(text, &why), -EINVAL);
	fill(text, 'k', CONFIG_AGENT_KEY_MAX_LEN);
	assert_int_equal(agent_config_check_key(text, &why), 0);
	fill(text, 'k', CONFIG_AGENT_KEY_MAX_LEN + 1);
	assert_int_equal(agent_config_check_key(text, &why), -EINVAL);
	fill(text, 'u', CONFIG_AGENT_USER_MAX_LEN);
	assert_int_equal(agent_config_check_user(text, &why), 0);
	fill(text, 'u', CONFIG_AGENT_USER_MAX_LEN + 1);
	assert_int_equal(agent_config_check_user(text, &why), -EINVAL);
	assert_int_equal(agent_config_check_key("sk x", &why), -EINVAL);
	assert_int_equal(agent_config_check_key("", &why), -EINVAL);
	assert_int_equal(agent_config_check_model("gpt\n", &why), -EINVAL);
	assert_int_equal(agent_config_check_user("a+b", &why), -EINVAL);
}

/* The memory tools' embedding pass (docs/memory.md): validated like the endpoint, its own
 * words in the reasons, stored under agent/embeddings and agent/embeddings_model. */
static void test_embeddings(void **state)
{
	char url[CONFIG_AGENT_ENDPOINT_MAX_LEN + 2];
	struct agent_config cfg;
	struct agent_config again;
	const char *why;

	(void)state;
	assert_int_equal(agent_config_load(&cfg), 0);
	assert_string_equal(agent_config_show(&cfg, "embeddings", NULL, 0), "");
	assert_string_equal(agent_config_show(&cfg, "embeddings-model", NULL, 0), "");
	assert_int_equal(agent_config_set(&cfg, "embeddings", "http://h", &why), -EINVAL);
	assert_string_equal(why, "embeddings URL needs the complete path, such as /v1/embeddings");
	assert_int_equal(agent_config_set(&cfg, "embeddings", "ftp://h/v1/embeddings", &why),
			 -EINVAL);
	assert_string_equal(why, "embeddings URL must be a complete http:// or https:// URL");
	assert_int_equal(agent_config_set(&cfg, "embeddings", "http://u:p@h/v1/embeddings", &why),
			 -EINVAL);
	assert_string_equal(why, "embeddings URL must not contain credentials; use agent config key");
	strcpy(url, "http://h/");
	fill(url + 9, 'p', CONFIG_AGENT_ENDPOINT_MAX_LEN - 9);
	assert_int_equal(agent_config_check_embeddings(url, &why), 0);
	fill(url + 9, 'p', CONFIG_AGENT_ENDPOINT_MAX_LEN - 8);
	assert_int_equal(agent_config_check_embeddings(url, &why), -EINVAL);
	assert_int_equal(agent_config_set(&cfg, "embeddings-model", "a b", &why), -EINVAL);
	assert_string_equal(why, "embeddings-model contains a space or a control character");
	fill(url, 'm', CONFIG_AGENT_MODEL_MAX_LEN + 1);
	assert_int_equal(agent_config_set(&cfg, "embeddings-model", url, &why), -EINVAL);
	fill(url, 'm', CONFIG_AGENT_MODEL_MAX_LEN);
	assert_int_equal(agent_config_set(&cfg, "embeddings-model", url, &why), 0);
	assert_int_equal(agent_config_set(&cfg, "embeddings", "https://h:8/v1/embeddings", &why),
			 0);
	remount();
	assert_int_equal(agent_config_load(&again), 0);
	assert_string_equal(again.embeddings, "https://h:8/v1/embeddings");
	assert_string_equal(again.embeddings_model, url);
	assert_int_equal(agent_settings_get("agent/embeddings_model", url, sizeof(url)),
			 CONFIG_AGENT_MODEL_MAX_LEN);
}

static void test_set_persists(void **state)
{
	struct agent_config cfg;
	struct agent_config again;
	const char *why;

	(void)state;
	assert_int_equal(agent_config_load(&cfg), 0);
	assert_int_equal(agent_config_set(&cfg, "endpoint", "http://h:8/v1/responses", &why), 0);
	assert_int_equal(agent_config_set(&cfg, "model", "m", &why), 0);
	assert_int_equal(agent_config_set(&cfg, "reasoning", "max", &why), 0);
	assert_int_equal(agent_config_set(&cfg, "tools", "off", &why), 0);
	assert_int_equal(agent_config_set(&cfg, "max-tools", "07", &why), 0);
	assert_int_equal(agent_config_set(&cfg, "user", "ada", &why), 0);
	assert_int_equal(agent_config_key_set(&cfg, "sk-1", &why), 0);
	remount();
	assert_int_equal(agent_config_load(&again), 0);
	assert_memory_equal(&cfg, &again, sizeof(cfg));
	assert_true(again.key_set);

	char stored[8];

	/* Canonical form on flash. */
	assert_int_equal(agent_settings_get("agent/max_tools", stored, sizeof(stored)), 1);
	assert_memory_equal(stored, "7", 1);
}

static void test_failed_set_changes_nothing(void **state)
{
	struct agent_config cfg;
	struct agent_config before;
	struct agent_config loaded;
	const char *why = NULL;

	(void)state;
	assert_int_equal(agent_config_load(&cfg), 0);
	assert_int_equal(agent_config_set(&cfg, "model", "keep", &why), 0);
	before = cfg;
	assert_int_equal(agent_config_set(&cfg, "model", "a b", &why), -EINVAL);
	assert_string_equal(why, "model contains a space or a control character");
	assert_int_equal(agent_config_set(&cfg, "max-tools", "33", &why), -EINVAL);
	assert_int_equal(agent_config_set(&cfg, "endpoint", "ftp://x/y", &why), -EINVAL);
	assert_int_equal(agent_config_set(&cfg, "colour", "red", &why), -ENOENT);
	assert_int_equal(agent_config_set(&cfg, "key", "sk", &why), -ENOENT);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
	assert_int_equal(agent_config_load(&loaded), 0);
	assert_memory_equal(&loaded, &before, sizeof(cfg));
}

static void test_invalid_stored_values(void **state)
{
	struct agent_config cfg;

	(void)state;
	assert_int_equal(agent_settings_set("agent/max_tools", "99", 2), 0);
	assert_int_equal(agent_settings_set("agent/reasoning", "huge", 4), 0);
	assert_int_equal(agent_settings_set("agent/model", "ok-model", 8), 0);
	assert_int_equal(agent_settings_set("agent/user", "a\0b", 3), 0);
	assert_int_equal(agent_config_load(&cfg), 0);
	assert_int_equal(cfg.invalid_loaded, 3);
	assert_int_equal(cfg.max_tools, 16);
	assert_int_equal(cfg.reasoning, AGENT_REASONING_MEDIUM);
	assert_string_equal(cfg.user, "user");
	assert_string_equal(cfg.model, "ok-model");
}

static void test_key(void **state)
{
	struct agent_config cfg;
	char key[CONFIG_AGENT_KEY_MAX_LEN + 1];
	char small[4];
	const char *why;

	(void)state;
	assert_int_equal(agent_config_load(&cfg), 0);
	assert_int_equal(agent_config_key_get(key, sizeof(key)), -ENOENT);
	assert_int_equal(agent_config_key_set(&cfg, "sk-secret", &why), 0);
	assert_int_equal(agent_config_key_get(key, sizeof(key)), 9);
	assert_string_equal(key, "sk-secret");
	assert_int_equal(agent_config_key_get(small, sizeof(small)), -E2BIG);
	/* Nothing the display path uses returns it. */
	assert_null(agent_config_show(&cfg, "key", key, sizeof(key)));
	assert_int_equal(agent_config_key_clear(&cfg), 0);
	assert_false(cfg.key_set);
	assert_int_equal(agent_config_key_get(key, sizeof(key)), -ENOENT);
	assert_int_equal(agent_config_key_clear(&cfg), 0);
}

static void test_forget(void **state)
{
	struct agent_config cfg;
	const char *why;
	char buf[8];

	(void)state;
	assert_int_equal(agent_config_load(&cfg), 0);
	assert_int_equal(agent_config_set(&cfg, "model", "m", &why), 0);
	assert_int_equal(agent_config_key_set(&cfg, "sk", &why), 0);
	assert_int_equal(agent_settings_set("agent/from_newer_build", "x", 1), 0);
	assert_int_equal(agent_settings_set("agents/other", "y", 1), 0);
	assert_int_equal(agent_settings_set("net/ssid", "z", 1), 0);
	assert_int_equal(agent_config_forget(&cfg), 0);
	assert_false(cfg.key_set);
	assert_string_equal(cfg.model, "");
	assert_int_equal(agent_settings_get("agent/from_newer_build", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(agent_settings_get("agent/key", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(agent_settings_get("agents/other", buf, sizeof(buf)), 1);
	assert_int_equal(agent_settings_get("net/ssid", buf, sizeof(buf)), 1);
	remount();
	assert_int_equal(agent_config_load(&cfg), 0);
	assert_string_equal(cfg.model, "");
	assert_false(cfg.key_set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_endpoint_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_endpoint_forms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protocol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_tools_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_embeddings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_persists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_set_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_stored_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
