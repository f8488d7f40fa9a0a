/*
 * The feeder queue of imported host tools (app/src/modules/module_host.c) through the
 * management group's feed (13) and result (14) (app/src/agent/mgmt/mgmt_feeder.c;
 * docs/mgmt-group.md, docs/modules.md "Host tools"): a tool call waits in a thread while the
 * test plays the feeder with SMP requests through agent_mgmt_handle(). No feeder, the call as
 * fetched, output at output_max and output_max + 1, a non-zero exit, the timeout and the late
 * answer, a wrong id, cancellation, the argument bounds, the result's field types.
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

#include "agent_port.h"
#include "json_writer.h"
#include "mgmt_group.h"
#include "mgmt_smp.h"
#include "module_host.h"
#include "sha256.h"

static uint8_t req_buf[AGENT_MGMT_BUF_SIZE];
static uint8_t rsp_buf[AGENT_MGMT_BUF_SIZE];
static size_t rsp_len;
static uint8_t seq;

#include "mgmt_rsp.h"

/* ---- the tool side: one call in a thread --------------------------------------------------- */

static const uint8_t DIGEST[32] = {0xab, 0x01, 0x02, 0x03, [31] = 0xff};
static char result_buf[CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1];

struct run {
	struct module_host_call call;
	struct tool_ctx ctx;
	struct agent_cancel cancel;
	struct json_writer out;
	struct agent_thread *thread;
	int err;
};

static void run_fn(void *user)
{
	struct run *r = user;

	r->err = module_host_run(&r->ctx, &r->call, &r->out);
	if (r->err == 0) {
		(void)jw_finish(&r->out);
	}
}

static void run_start(struct run *r, const char *const *argv, uint8_t argc, uint32_t output_max)
{
	memset(r, 0, sizeof(*r));
	r->call = (struct module_host_call){.tool = "greet",
					    .entry = "greet.sh",
					    .digest = DIGEST,
					    .argv = argv,
					    .argc = argc,
					    .output_max = output_max};
	r->ctx.cancel = &r->cancel;
	jw_init(&r->out, result_buf, sizeof(result_buf));
	assert_int_equal(agent_thread_start(&r->thread, "host-call", 64 * 1024, run_fn, r), 0);
}

static int run_end(struct run *r)
{
	assert_int_equal(agent_thread_join(r->thread, 10000), 0);
	return r->err;
}

/* ---- the feeder side: SMP requests ---------------------------------------------------------- */

static int send(uint8_t op, uint8_t cmd, size_t body_len)
{
	int n;

	req_buf[0] = (uint8_t)((AGENT_SMP_VERSION_2 << 3) | op);
	req_buf[1] = 0;
	req_buf[2] = (uint8_t)(body_len >> 8);
	req_buf[3] = (uint8_t)body_len;
	req_buf[4] = 0;
	req_buf[5] = AGENT_MGMT_GROUP_ID;
	req_buf[6] = ++seq;
	req_buf[7] = cmd;
	n = agent_mgmt_handle(req_buf, AGENT_SMP_HDR_SIZE + body_len, rsp_buf, sizeof(rsp_buf));
	assert_true(n > (int)AGENT_SMP_HDR_SIZE);
	assert_int_equal(rsp_buf[AGENT_SMP_HDR_SIZE] & 0xe0u, 0xa0u); /* a map, every response */
	rsp_len = (size_t)n;
	return n;
}

static void feed(void)
{
	req_buf[AGENT_SMP_HDR_SIZE] = 0xa0;
	(void)send(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_FEED, 1);
}

static zcbor_state_t enc[2];

/* A request body encoded into req_buf after the header. */
static zcbor_state_t *body_start(void)
{
	zcbor_new_encode_state(enc, ZCBOR_ARRAY_SIZE(enc), req_buf + AGENT_SMP_HDR_SIZE,
			       sizeof(req_buf) - AGENT_SMP_HDR_SIZE, 0);
	return enc;
}

static void body_send(uint8_t op, uint8_t cmd)
{
	(void)send(op, cmd, (size_t)(enc->payload_mut - (req_buf + AGENT_SMP_HDR_SIZE)));
}

/* result {id, exit, output (a byte string, or a text string when @p text), truncated?}. */
static void result(uint32_t id, int32_t status, const void *output, size_t len, bool text,
		   int truncated)
{
	zcbor_state_t *zs = body_start();

	assert_true(zcbor_map_start_encode(zs, 4));
	assert_true(zcbor_tstr_put_lit(zs, "id") && zcbor_uint32_put(zs, id));
	assert_true(zcbor_tstr_put_lit(zs, "exit") && zcbor_int32_put(zs, status));
	if (output != NULL) {
		assert_true(zcbor_tstr_put_lit(zs, "output"));
		assert_true(text ? zcbor_tstr_encode_ptr(zs, output, len)
				 : zcbor_bstr_encode_ptr(zs, output, len));
	}
	if (truncated >= 0) {
		assert_true(zcbor_tstr_put_lit(zs, "truncated") && zcbor_bool_put(zs, truncated));
	}
	assert_true(zcbor_map_end_encode(zs, 4));
	body_send(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_RESULT);
}

/* The group error's rc (the reason into @p reason), or -1 without one. */
static int rsp_err(char *reason, size_t len)
{
	zcbor_state_t *zs = rsp_at("err");
	uint32_t rc = 0;

	if (zs == NULL) {
		return -1;
	}
	assert_true(zcbor_map_start_decode(zs));
	for (int i = 0; i < 2; i++) {
		struct zcbor_string k;
		uint32_t v;

		assert_true(zcbor_tstr_decode(zs, &k));
		assert_true(zcbor_uint32_decode(zs, &v));
		if (k.len == 2) {
			rc = v;
		}
	}
	if (reason != NULL) {
		(void)snprintf(reason, len, "%s", rsp_str("reason"));
	}
	return (int)rc;
}

static bool rsp_empty(void)
{
	return rsp_at("id") == NULL && rsp_err(NULL, 0) == -1;
}

/* Mark the feeder attached without a long-poll. */
static void attach(void)
{
	uint32_t id;
	const struct module_host_call *call;
	uint32_t left;

	assert_int_equal(module_host_feed(0, &id, &call, &left), -EAGAIN);
}

/* Feed until the call arrives; its id. */
static uint32_t fetch(void)
{
	for (int i = 0; i < 50; i++) {
		feed();
		if (rsp_at("id") != NULL) {
			return rsp_uint("id");
		}
	}
	fail_msg("the call never came");
	return 0;
}

/* Attach, start the call and feed until it arrives; its id. */
static uint32_t start_and_fetch(struct run *r, const char *const *argv, uint8_t argc,
				uint32_t output_max)
{
	attach();
	run_start(r, argv, argc, output_max);
	return fetch();
}

/* The group error of the last response: rc @p rc and @p want as its reason. */
static void expect_err(int rc, const char *want)
{
	char reason[AGENT_MGMT_REASON_MAX];

	assert_int_equal(rsp_err(reason, sizeof(reason)), rc);
	assert_string_equal(reason, want);
}

/* ---- tests ----------------------------------------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	assert_int_equal(module_host_init(), 0);
	module_host_set_timeout_ms(5000);
	return 0;
}

static void test_no_feeder_is_an_error_at_once(void **state)
{
	struct run r;
	int64_t t0 = agent_uptime_ms();

	(void)state;
	agent_sleep_ms(MODULE_HOST_ATTACHED_MS + 100); /* whatever an earlier test fed is stale */
	run_start(&r, NULL, 0, 100);
	assert_int_equal(run_end(&r), -ENOTCONN);
	assert_string_equal(r.ctx.error,
			    "host tool greet: no feeder attached (run `agent-host feed`)");
	assert_true(agent_uptime_ms() - t0 < MODULE_HOST_ATTACHED_MS + 1000);
}

static void test_an_empty_feed_waits_the_long_poll(void **state)
{
	int64_t t0 = agent_uptime_ms();

	(void)state;
	feed();
	assert_true(rsp_empty());
	assert_true(agent_uptime_ms() - t0 >= CONFIG_AGENT_HOST_FEED_WAIT_MS - 10);
	assert_true(agent_uptime_ms() - t0 < CONFIG_AGENT_HOST_FEED_WAIT_MS + 1000);
}

static void test_the_call_as_fetched_and_its_result(void **state)
{
	static const char *const argv[] = {"Ada Lovelace", "3", "true"};
	char hex[SHA256_HEX_LEN + 1];
	struct run r;
	uint32_t id;
	zcbor_state_t *zs;
	struct zcbor_string s;

	(void)state;
	id = start_and_fetch(&r, argv, 3, 100);
	assert_string_equal(rsp_str("tool"), "greet");
	assert_string_equal(rsp_str("entry"), "greet.sh");
	sha256_hex(DIGEST, hex);
	assert_string_equal(rsp_str("sha256"), hex);
	assert_int_equal(rsp_uint("output_max"), 100);
	assert_true(rsp_uint("timeout_ms") <= 5000 && rsp_uint("timeout_ms") > 4000);
	zs = rsp_at("args");
	assert_true(zcbor_list_start_decode(zs));
	for (int i = 0; i < 3; i++) {
		assert_true(zcbor_tstr_decode(zs, &s));
		assert_int_equal(s.len, strlen(argv[i]));
		assert_memory_equal(s.value, argv[i], s.len);
	}
	assert_true(zcbor_list_end_decode(zs));
	/* Fetched once: the next feed does not carry it again. */
	module_host_set_timeout_ms(5000);
	result(id, 0, "hello \"Ada\"\n", 12, false, -1);
	assert_int_equal(rsp_err(NULL, 0), -1);
	assert_int_equal(rsp_uint("id"), id);
	assert_int_equal(run_end(&r), 0);
	assert_string_equal(result_buf,
			    "{\"exit\":0,\"output\":\"hello \\\"Ada\\\"\\n\",\"truncated\":false}");
}

static void test_a_call_is_fetched_once(void **state)
{
	struct run r;
	uint32_t id;

	(void)state;
	id = start_and_fetch(&r, NULL, 0, 10);
	feed();
	assert_true(rsp_empty());
	result(id, 0, "ok", 2, true, 0); /* output as a text string */
	assert_int_equal(run_end(&r), 0);
	assert_string_equal(result_buf, "{\"exit\":0,\"output\":\"ok\",\"truncated\":false}");
}

/* Output at output_max (N) is whole; N + 1 is cut to N; the feeder's own flag is kept. */
static void test_output_at_and_over_output_max(void **state)
{
	char out[64];
	char want[160];
	struct run r;
	uint32_t id;

	(void)state;
	memset(out, 'x', sizeof(out));
	for (int over = 0; over <= 1; over++) {
		id = start_and_fetch(&r, NULL, 0, 40);
		result(id, 0, out, 40 + (size_t)over, false, -1);
		assert_int_equal(rsp_err(NULL, 0), -1);
		assert_int_equal(run_end(&r), 0);
		(void)snprintf(want, sizeof(want), "{\"exit\":0,\"output\":\"%.40s\",\"truncated\":%s}",
			       out, over ? "true" : "false");
		assert_string_equal(result_buf, want);
	}
	id = start_and_fetch(&r, NULL, 0, 40);
	result(id, 0, out, 40, false, 1); /* the feeder cut it already */
	assert_int_equal(run_end(&r), 0);
	(void)snprintf(want, sizeof(want), "{\"exit\":0,\"output\":\"%.40s\",\"truncated\":true}",
		       out);
	assert_string_equal(result_buf, want);
}

/* An output_max as large as the result: escapes cut the output to what the result holds. */
static void test_output_is_cut_to_the_results_room(void **state)
{
	static uint8_t out[1800];
	struct run r;
	uint32_t id;

	(void)state;
	memset(out, '\x01', sizeof(out)); /* six bytes each as \u0001 */
	id = start_and_fetch(&r, NULL, 0, CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
	result(id, 0, out, sizeof(out), false, -1);
	assert_int_equal(run_end(&r), 0);
	assert_true(strlen(result_buf) <= CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
	assert_non_null(strstr(result_buf, "\"truncated\":true}"));
}

static void test_a_non_zero_exit_is_an_error(void **state)
{
	struct run r;
	uint32_t id;

	(void)state;
	id = start_and_fetch(&r, NULL, 0, 100);
	result(id, 3, "boom\tbad\nsecond line", 20, false, -1);
	assert_int_equal(rsp_err(NULL, 0), -1);
	assert_int_equal(run_end(&r), -EIO);
	assert_string_equal(r.ctx.error, "host tool greet: exit status 3: boom?bad");
	id = start_and_fetch(&r, NULL, 0, 100);
	result(id, -9, NULL, 0, false, -1); /* killed by a signal, no output */
	assert_int_equal(run_end(&r), -EIO);
	assert_string_equal(r.ctx.error, "host tool greet: exit status -9");
}

static void test_timeout_and_the_late_answer(void **state)
{
	char reason[AGENT_MGMT_REASON_MAX];
	struct run r;
	uint32_t id;
	int64_t t0;

	(void)state;
	module_host_set_timeout_ms(400);
	attach();
	t0 = agent_uptime_ms();
	run_start(&r, NULL, 0, 100);
	id = fetch();
	assert_true(rsp_uint("timeout_ms") <= 400);
	assert_int_equal(run_end(&r), -ETIMEDOUT);
	assert_true(agent_uptime_ms() - t0 >= 400);
	assert_string_equal(r.ctx.error, "host tool greet: no answer from the feeder within 400 ms");
	result(id, 0, "late", 4, false, -1);
	assert_int_equal(rsp_err(reason, sizeof(reason)), 4 /* ENOENT */);
	(void)snprintf(result_buf, sizeof(result_buf),
		       "no host tool call %lu waits for an answer (late or unknown); dropped",
		       (unsigned long)id);
	assert_string_equal(reason, result_buf);
	module_host_set_timeout_ms(5000);
}

static void test_a_wrong_id_is_refused_and_the_call_still_waits(void **state)
{
	struct run r;
	uint32_t id;

	(void)state;
	id = start_and_fetch(&r, NULL, 0, 100);
	result(id + 1, 0, "x", 1, false, -1);
	assert_int_equal(rsp_err(NULL, 0), 4);
	result(id, 0, "y", 1, false, -1);
	assert_int_equal(rsp_err(NULL, 0), -1);
	assert_int_equal(run_end(&r), 0);
	assert_string_equal(result_buf, "{\"exit\":0,\"output\":\"y\",\"truncated\":false}");
}

static void test_an_answer_before_the_fetch_is_refused(void **state)
{
	struct run r;
	uint32_t id;

	(void)state;
	attach();
	run_start(&r, NULL, 0, 100);
	agent_sleep_ms(50);
	result(0, 0, "x", 1, false, -1); /* the ids start at 1 */
	assert_int_equal(rsp_err(NULL, 0), 4);
	id = fetch();
	result(id, 0, "z", 1, false, -1);
	assert_int_equal(run_end(&r), 0);
}

static void test_cancel_ends_the_wait(void **state)
{
	struct run r;

	(void)state;
	attach();
	run_start(&r, NULL, 0, 100);
	(void)fetch();
	agent_cancel_raise(&r.cancel);
	assert_int_equal(run_end(&r), -ECANCELED);
	assert_string_equal(r.ctx.error, "host tool greet: cancelled");
}

static void test_a_feeder_that_goes_away_before_the_fetch(void **state)
{
	struct run r;

	(void)state;
	attach();
	run_start(&r, NULL, 0, 100);
	assert_int_equal(run_end(&r), -ENOTCONN);
	assert_string_equal(r.ctx.error,
			    "host tool greet: the feeder went away before it took the call");
}

/* MODULE_TOOL_ARGS_MAX arguments and MODULE_HOST_ARGS_BYTES of them go; one more does not. */
static void test_argument_bounds(void **state)
{
	static char big[MODULE_HOST_ARGS_BYTES + 2];
	const char *argv[8] = {"a", "b", "c", "d", "e", "f", "g", "h"};
	struct run r;
	uint32_t id;

	(void)state;
	attach();
	run_start(&r, argv, 8, 100);
	assert_int_equal(run_end(&r), -E2BIG);
	assert_string_equal(r.ctx.error, "host tool greet: 8 arguments, at most 7");

	memset(big, 'q', sizeof(big) - 1);
	big[MODULE_HOST_ARGS_BYTES - 1] = '\0'; /* with "a": exactly the bound */
	argv[0] = "a";
	argv[1] = big;
	id = start_and_fetch(&r, argv, 2, 100);
	result(id, 0, "", 0, false, -1);
	assert_int_equal(run_end(&r), 0);

	big[MODULE_HOST_ARGS_BYTES - 1] = 'q';
	big[MODULE_HOST_ARGS_BYTES] = '\0'; /* one byte more */
	attach();
	run_start(&r, argv, 2, 100);
	assert_int_equal(run_end(&r), -E2BIG);
	assert_string_equal(r.ctx.error, "host tool greet: the arguments take 1025 bytes, at most 1024");
}

static void test_result_fields_are_checked(void **state)
{
	zcbor_state_t *zs;

	(void)state;
	/* exit as a text string */
	zs = body_start();
	assert_true(zcbor_map_start_encode(zs, 2));
	assert_true(zcbor_tstr_put_lit(zs, "id") && zcbor_uint32_put(zs, 1));
	assert_true(zcbor_tstr_put_lit(zs, "exit") && zcbor_tstr_put_lit(zs, "0"));
	assert_true(zcbor_map_end_encode(zs, 2));
	body_send(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_RESULT);
	expect_err(2, "exit must be an integer");
	/* no exit */
	zs = body_start();
	assert_true(zcbor_map_start_encode(zs, 1));
	assert_true(zcbor_tstr_put_lit(zs, "id") && zcbor_uint32_put(zs, 1));
	assert_true(zcbor_map_end_encode(zs, 1));
	body_send(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_RESULT);
	expect_err(2, "id and exit are required");
	/* output of another type, an unknown field in feed */
	zs = body_start();
	assert_true(zcbor_map_start_encode(zs, 3));
	assert_true(zcbor_tstr_put_lit(zs, "id") && zcbor_uint32_put(zs, 1));
	assert_true(zcbor_tstr_put_lit(zs, "exit") && zcbor_int32_put(zs, 0));
	assert_true(zcbor_tstr_put_lit(zs, "output") && zcbor_uint32_put(zs, 5));
	assert_true(zcbor_map_end_encode(zs, 3));
	body_send(AGENT_SMP_OP_WRITE, AGENT_MGMT_CMD_RESULT);
	expect_err(2, "output must be a byte string or a text string");
	zs = body_start();
	assert_true(zcbor_map_start_encode(zs, 1));
	assert_true(zcbor_tstr_put_lit(zs, "wait") && zcbor_uint32_put(zs, 1));
	assert_true(zcbor_map_end_encode(zs, 1));
	body_send(AGENT_SMP_OP_READ, AGENT_MGMT_CMD_FEED);
	expect_err(1, "unknown field 'wait'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_no_feeder_is_an_error_at_once, setup),
		cmocka_unit_test_setup(test_an_empty_feed_waits_the_long_poll, setup),
		cmocka_unit_test_setup(test_the_call_as_fetched_and_its_result, setup),
		cmocka_unit_test_setup(test_a_call_is_fetched_once, setup),
		cmocka_unit_test_setup(test_output_at_and_over_output_max, setup),
		cmocka_unit_test_setup(test_output_is_cut_to_the_results_room, setup),
		cmocka_unit_test_setup(test_a_non_zero_exit_is_an_error, setup),
		cmocka_unit_test_setup(test_timeout_and_the_late_answer, setup),
		cmocka_unit_test_setup(test_a_wrong_id_is_refused_and_the_call_still_waits, setup),
		cmocka_unit_test_setup(test_an_answer_before_the_fetch_is_refused, setup),
		cmocka_unit_test_setup(test_cancel_ends_the_wait, setup),
		cmocka_unit_test_setup(test_a_feeder_that_goes_away_before_the_fetch, setup),
		cmocka_unit_test_setup(test_argument_bounds, setup),
		cmocka_unit_test_setup(test_result_fields_are_checked, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
