/*
 * Request bodies of the two wire protocols (provider_request.c): the fields the spec asks
 * for, on the turns the simulator's end-to-end tests cannot reach (a Responses continuation,
 * the official OpenAI Chat endpoint), and a body that does not fit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "provider_internal.h"

static char body[CONFIG_AGENT_PROVIDER_REQUEST_BODY_SIZE];

static struct agent_config config(void)
{
	struct agent_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	strcpy(cfg.model, "gpt-test");
	cfg.reasoning = AGENT_REASONING_LOW;
	return cfg;
}

static void test_responses_continuation(void **state)
{
	struct agent_config cfg = config();
	struct provider_request req = {
		.config = &cfg,
		.instructions = "be brief",
		.prompt = "and then?",
		.previous_response_id = "resp_123",
	};
	struct json_writer w;
	int len;

	(void)state;
	jw_init(&w, body, sizeof(body));
	len = provider_responses_body(&req, &w);
	assert_true(len > 0);
	assert_string_equal(body,
			    "{\"model\":\"gpt-test\",\"instructions\":\"be brief\",\"input\":"
			    "[{\"role\":\"user\",\"content\":\"and then?\"}],"
			    "\"previous_response_id\":\"resp_123\",\"reasoning\":{\"effort\":\"low\"},"
			    "\"store\":true,\"stream\":true}");
	assert_int_equal(len, (int)strlen(body));
}

static void test_chat_reasoning_effort_only_for_openai(void **state)
{
	struct agent_config cfg = config();
	struct provider_request req = {.config = &cfg, .instructions = "i", .prompt = "p"};
	struct json_writer w;

	(void)state;
	jw_init(&w, body, sizeof(body));
	assert_true(provider_chat_body(&req, "api.openai.com", &w) > 0);
	assert_non_null(strstr(body, ",\"reasoning_effort\":\"none\"}"));
	jw_init(&w, body, sizeof(body));
	assert_true(provider_chat_body(&req, "openrouter.ai", &w) > 0);
	assert_null(strstr(body, "reasoning"));
	/* Not a suffix match: a look-alike host is another endpoint. */
	jw_init(&w, body, sizeof(body));
	assert_true(provider_chat_body(&req, "api.openai.com.example", &w) > 0);
	assert_null(strstr(body, "reasoning"));
	jw_init(&w, body, sizeof(body));
	assert_true(provider_chat_body(&req, "api.openai.co", &w) > 0);
	assert_null(strstr(body, "reasoning"));
}

/* Host names have no letter case (RFC 4343): the official endpoint in capitals is the same. */
static void test_chat_reasoning_effort_host_in_any_case(void **state)
{
	static const char *const hosts[] = {"API.OPENAI.COM", "Api.OpenAI.com", "api.openai.coM"};
	struct agent_config cfg = config();
	struct provider_request req = {.config = &cfg, .instructions = "i", .prompt = "p"};
	struct json_writer w;

	(void)state;
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		jw_init(&w, body, sizeof(body));
		assert_true(provider_chat_body(&req, hosts[i], &w) > 0);
		assert_non_null(strstr(body, ",\"reasoning_effort\":\"none\"}"));
	}
	jw_init(&w, body, sizeof(body));
	assert_true(provider_chat_body(&req, "API.OPENAI.COM.EXAMPLE", &w) > 0);
	assert_null(strstr(body, "reasoning"));
}

static void test_tools_and_continuations(void **state)
{
	struct agent_config cfg = config();
	struct provider_request req = {
		.config = &cfg,
		.instructions = "i",
		.prompt = "p",
		.tools_json = "[{\"type\":\"function\",\"name\":\"t\"}]",
		.tools_len = 32,
		.previous_response_id = "resp_1",
		.call_id = "call_1",
		.call_output = "{\"ok\":true}",
	};
	struct json_writer w;

	(void)state;
	jw_init(&w, body, sizeof(body));
	assert_true(provider_responses_body(&req, &w) > 0);
	assert_non_null(strstr(body, "\"input\":[{\"type\":\"function_call_output\",\"call_id\":"
				     "\"call_1\",\"output\":\"{\\\"ok\\\":true}\"}],"
				     "\"tools\":[{\"type\":\"function\",\"name\":\"t\"}],"));
	assert_non_null(strstr(body, "\"instructions\":\"i\""));
	assert_null(strstr(body, "\"role\":\"user\""));
	assert_non_null(strstr(body, "\"tools\":[{\"type\":\"function\",\"name\":\"t\"}],"
				     "\"parallel_tool_calls\":false,"));
	/* Chat: tools with parallel_tool_calls false on every endpoint (one call per turn). */
	jw_init(&w, body, sizeof(body));
	assert_true(provider_chat_body(&req, "api.openai.com", &w) > 0);
	assert_non_null(strstr(body, "\"tools\":[{\"type\":\"function\",\"name\":\"t\"}],"
				     "\"parallel_tool_calls\":false,"));
	jw_init(&w, body, sizeof(body));
	assert_true(provider_chat_body(&req, "localhost", &w) > 0);
	assert_non_null(strstr(body, "\"tools\":[{\"type\":\"function\",\"name\":\"t\"}],"
				     "\"parallel_tool_calls\":false,"));
	/* No tools offered (the final turn, tools off): no such field. */
	req.tools_json = NULL;
	jw_init(&w, body, sizeof(body));
	assert_true(provider_chat_body(&req, "localhost", &w) > 0);
	assert_null(strstr(body, "parallel_tool_calls"));
	assert_null(strstr(body, "\"tools\""));
	jw_init(&w, body, sizeof(body));
	assert_true(provider_responses_body(&req, &w) > 0);
	assert_null(strstr(body, "parallel_tool_calls"));
	assert_null(strstr(body, "\"tools\""));
}

static void test_body_that_does_not_fit(void **state)
{
	struct agent_config cfg = config();
	struct provider_request req = {.config = &cfg, .instructions = "i", .prompt = "p"};
	struct json_writer w;
	char small[64];

	(void)state;
	jw_init(&w, small, sizeof(small));
	assert_int_equal(provider_responses_body(&req, &w), -ENOSPC);
	jw_init(&w, small, sizeof(small));
	assert_int_equal(provider_chat_body(&req, "h", &w), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_responses_continuation),
		cmocka_unit_test(test_chat_reasoning_effort_only_for_openai),
		cmocka_unit_test(test_chat_reasoning_effort_host_in_any_case),
		cmocka_unit_test(test_tools_and_continuations),
		cmocka_unit_test(test_body_that_does_not_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
