/*
 * The tool loop (app/src/agent/request/agent_request.c) against a loopback HTTP server on a thread
 * of this test, with tools added to the registry at run time: on-demand activation of a
 * workflow dependency (the first call is not executed, the retry is confirmed), denial and
 * cancellation at the confirmation (the executor never runs), and the request bodies of
 * each turn. The end-to-end tests over the simulator cover the rest (tests/e2e/).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent_request.h"
#include "posix/posix_board.h"
#include "tool_registry.h"

/* ---- Loopback server: one scripted SSE answer per connection -------------------------- */

#define TURNS_MAX 6

static struct {
	int listen_fd;
	uint16_t port;
	pthread_t thread;
	const char *answers[TURNS_MAX];
	size_t count;
	char bodies[TURNS_MAX][32768];
	size_t served;
} srv;

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, timeout_ms) == 1;
}

static void read_request(int fd, char *body, size_t cap)
{
	static char buf[40000];
	size_t len = 0;
	size_t need = SIZE_MAX;

	while (len < need && len < sizeof(buf) - 1 && readable(fd, 5000)) {
		ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);

		if (n <= 0) {
			break;
		}
		len += (size_t)n;
		buf[len] = '\0';
		const char *end = strstr(buf, "\r\n\r\n");

		if (need == SIZE_MAX && end != NULL) {
			const char *cl = strstr(buf, "\r\nContent-Length: ");

			need = (size_t)(end + 4 - buf) + (cl != NULL ? strtoul(cl + 18, NULL, 10) : 0);
		}
	}
	const char *end = strstr(buf, "\r\n\r\n");

	snprintf(body, cap, "%s", end != NULL ? end + 4 : "");
}

static void *server_main(void *arg)
{
	(void)arg;
	for (size_t i = 0; i < srv.count; i++) {
		char head[160];
		int fd;

		if (!readable(srv.listen_fd, 5000)) {
			return NULL;
		}
		fd = accept(srv.listen_fd, NULL, NULL);
		if (fd < 0) {
			return NULL;
		}
		read_request(fd, srv.bodies[i], sizeof(srv.bodies[i]));
		snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			 strlen(srv.answers[i]));
		(void)!send(fd, head, strlen(head), MSG_NOSIGNAL);
		(void)!send(fd, srv.answers[i], strlen(srv.answers[i]), MSG_NOSIGNAL);
		srv.served = i + 1;
		close(fd);
	}
	return NULL;
}

static void server_start(const char *const *answers, size_t count)
{
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
	socklen_t alen = sizeof(addr);

	memset(&srv, 0, sizeof(srv));
	srv.count = count;
	for (size_t i = 0; i < count; i++) {
		srv.answers[i] = answers[i];
	}
	srv.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(srv.listen_fd >= 0);
	assert_int_equal(bind(srv.listen_fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(srv.listen_fd, 4), 0);
	assert_int_equal(getsockname(srv.listen_fd, (struct sockaddr *)&addr, &alen), 0);
	srv.port = ntohs(addr.sin_port);
	assert_int_equal(pthread_create(&srv.thread, NULL, server_main, NULL), 0);
}

static void server_stop(void)
{
	shutdown(srv.listen_fd, SHUT_RDWR);
	pthread_join(srv.thread, NULL);
	close(srv.listen_fd);
}

/* Chat Completions streams. */
#define CALL(id, name, args)                                                                     \
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"" id    \
	"\",\"type\":\"function\",\"function\":{\"name\":\"" name "\",\"arguments\":" args       \
	"}}]}}]}\n\n"                                                                            \
	"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"      \
	"data: [DONE]\n\n"
#define TEXT(text)                                                                               \
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" text "\"}}]}\n\n"               \
	"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"            \
	"data: [DONE]\n\n"

/* ---- A tool added at run time, and the hooks ---------------------------------------------- */

static int runs;
static int confirms;
static int confirm_answer;
static char last_error[200];
static char answer[200];

static int runner_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	(void)ctx;
	runs++;
	jw_object_begin(out);
	jw_key(out, "ran");
	jw_string_n(out, args->v[0].str, args->v[0].len);
	jw_object_end(out);
	return 0;
}

static const struct tool_param runner_params[] = {
	{.name = "path", .type = TOOL_PARAM_STRING, .required = true, .min = 1, .max = 64},
};

static const struct tool_def runner = {
	.name = "script_run_file",
	.description = "Run a saved script.",
	.domain = TOOL_DOMAIN_SCRIPT,
	.risk = TOOL_RISK_DISRUPTIVE,
	.params = runner_params,
	.param_count = 1,
	.exec = runner_exec,
	.workflow_dependency = true,
};

static void on_text(void *user, const char *text, size_t len)
{
	(void)user;
	strncat(answer, text, len < sizeof(answer) - strlen(answer) - 1
				      ? len
				      : sizeof(answer) - strlen(answer) - 1);
}

static void on_call(void *user, const char *name, const char *a, size_t len)
{
	(void)user;
	(void)name;
	(void)a;
	(void)len;
}

static void on_done(void *user, const char *name, enum agent_tool_outcome o, const char *d)
{
	(void)user;
	(void)name;
	(void)o;
	(void)d;
}

static int on_confirm(void *user, const char *name, const char *a, size_t len)
{
	(void)user;
	(void)a;
	(void)len;
	assert_string_equal(name, "script_run_file");
	confirms++;
	return confirm_answer;
}

static void on_error(void *user, const char *message)
{
	(void)user;
	snprintf(last_error, sizeof(last_error), "%s", message);
}

static const struct agent_request_hooks hooks = {
	.text = on_text,
	.tool_call = on_call,
	.tool_done = on_done,
	.confirm = on_confirm,
	.error = on_error,
};

static struct agent_config cfg;
static struct agent_cancel cancel;
static struct agent_request req;

/* The earlier messages of a chat conversation: one user message of prior_size bytes. */
static size_t prior_size;

static void write_prior(void *user, struct json_writer *w)
{
	static char text[16384];
	size_t n = prior_size - sizeof("{\"role\":\"user\",\"content\":\"\"}") + 1;

	(void)user;
	memset(text, 'p', n);
	jw_object_begin(w);
	jw_key(w, "role");
	jw_string(w, "user");
	jw_key(w, "content");
	jw_string_n(w, text, n);
	jw_object_end(w);
}

static int run(uint8_t max_tools)
{
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.endpoint, sizeof(cfg.endpoint), "http://127.0.0.1:%u/v1/chat/completions",
		 (unsigned int)srv.port);
	strcpy(cfg.model, "m");
	cfg.tools = AGENT_TOOLS_CONFIRM;
	cfg.max_tools = max_tools;
	agent_cancel_reset(&cancel);
	req = (struct agent_request){
		.config = &cfg,
		.instructions = "be brief",
		.prompt = "run a.py",
		.cwd = "/lfs",
		.cancel = &cancel,
		.hooks = &hooks,
		.write_prior = prior_size > 0 ? write_prior : NULL,
		.prior_bytes = prior_size,
	};
	runs = 0;
	confirms = 0;
	last_error[0] = '\0';
	answer[0] = '\0';
	return agent_request_run(&req);
}

static int setup(void **state)
{
	(void)state;
	return tool_registry_add(&runner);
}

static int teardown(void **state)
{
	(void)state;
	return tool_registry_remove(&runner);
}

static void test_registry_add_rules(void **state)
{
	struct tool_def nameless = runner;

	(void)state;
	assert_int_equal(tool_registry_add(&runner), -EEXIST);
	nameless.name = NULL;
	assert_int_equal(tool_registry_add(&nameless), -EINVAL);

	/* Params the argument parser cannot hold are refused. */
	static const struct tool_param five_fields[] = {
		{.name = "a", .type = TOOL_PARAM_STRING, .max = 1},
		{.name = "b", .type = TOOL_PARAM_STRING, .max = 1},
		{.name = "c", .type = TOOL_PARAM_STRING, .max = 1},
		{.name = "d", .type = TOOL_PARAM_STRING, .max = 1},
		{.name = "e", .type = TOOL_PARAM_STRING, .max = 1},
	};
	static const struct tool_param wide[] = {
		{.name = "items", .type = TOOL_PARAM_OBJECTS, .max = 2, .fields = five_fields,
		 .field_count = 5},
	};
	static const struct tool_param two_arrays[] = {
		{.name = "x", .type = TOOL_PARAM_STRINGS, .max = 2, .item_max_len = 4},
		{.name = "y", .type = TOOL_PARAM_STRINGS, .max = 2, .item_max_len = 4},
	};
	struct tool_def bad = runner;

	bad.name = "bad_tool";
	bad.params = wide;
	bad.param_count = 1;
	assert_int_equal(tool_registry_add(&bad), -EINVAL);
	bad.params = two_arrays;
	bad.param_count = 2;
	assert_int_equal(tool_registry_add(&bad), -EINVAL);
	bad.params = five_fields; /* five scalar top-level fields are fine */
	bad.param_count = 5;
	assert_int_equal(tool_registry_add(&bad), 0);
	assert_int_equal(tool_registry_remove(&bad), 0);
	assert_ptr_equal(tool_registry_find("script_run_file"), &runner);
}

static void test_workflow_dependency_activates_on_demand(void **state)
{
	static const char *const answers[] = {
		CALL("c1", "script_run_file", "\"{\\\"path\\\":\\\"a.py\\\"}\""),
		CALL("c2", "script_run_file", "\"{\\\"path\\\":\\\"a.py\\\"}\""),
		TEXT("done"),
	};

	(void)state;
	confirm_answer = 1;
	server_start(answers, 3);
	assert_int_equal(run(16), 0);
	server_stop();
	assert_int_equal(srv.served, 3);
	/* Not offered at first; the first call only activates it, the retry asks and runs. */
	assert_null(strstr(srv.bodies[0], "\"name\":\"script_run_file\""));
	assert_non_null(strstr(srv.bodies[1], "\"name\":\"script_run_file\""));
	assert_non_null(strstr(srv.bodies[1], "it is offered now: call it again"));
	assert_int_equal(confirms, 1);
	assert_int_equal(runs, 1);
	assert_non_null(strstr(srv.bodies[2], "{\\\"ran\\\":\\\"a.py\\\"}"));
	assert_string_equal(answer, "done");
}

static void test_denied_confirmation_never_runs(void **state)
{
	static const char *const answers[] = {
		CALL("c1", "script_run_file", "\"{\\\"path\\\":\\\"a.py\\\"}\""),
		CALL("c2", "script_run_file", "\"{\\\"path\\\":\\\"a.py\\\"}\""),
		TEXT("ok"),
	};
	struct agent_tool_stats before, after;

	(void)state;
	agent_tool_stats_get(&before);
	confirm_answer = 0;
	server_start(answers, 3);
	assert_int_equal(run(16), 0);
	server_stop();
	agent_tool_stats_get(&after);
	assert_int_equal(runs, 0);
	assert_int_equal(confirms, 1);
	assert_int_equal(after.denied, before.denied + 1);
	assert_int_equal(after.executed, before.executed);
	assert_non_null(strstr(srv.bodies[2], "{\\\"denied\\\":true"));
	assert_int_equal(after.last_used, 2);
	assert_int_equal(after.last_budget, 16);
}

static void test_cancel_at_confirmation(void **state)
{
	static const char *const answers[] = {
		CALL("c1", "script_run_file", "\"{\\\"path\\\":\\\"a.py\\\"}\""),
		CALL("c2", "script_run_file", "\"{\\\"path\\\":\\\"a.py\\\"}\""),
	};

	(void)state;
	confirm_answer = -ECANCELED;
	server_start(answers, 2);
	assert_int_equal(run(16), -ECANCELED);
	server_stop();
	assert_int_equal(runs, 0);
	assert_int_equal(srv.served, 2);
}

static void test_budget_reserves_a_final_turn_without_tools(void **state)
{
	static const char *const answers[] = {
		CALL("c1", "tool_search", "\"{\\\"query\\\":\\\"files\\\"}\""),
		CALL("c2", "tool_search", "\"{\\\"query\\\":\\\"files\\\"}\""),
	};

	(void)state;
	server_start(answers, 2);
	/* One call allowed: the second turn offers nothing, so a call there fails. */
	assert_int_equal(run(1), -EPROTO);
	server_stop();
	assert_non_null(strstr(srv.bodies[0], "\"tools\":["));
	assert_null(strstr(srv.bodies[1], "\"tools\""));
	assert_non_null(strstr(srv.bodies[1], "\"role\":\"tool\",\"tool_call_id\":\"c1\""));
	assert_string_equal(last_error,
			    "the model called tool_search although no tools were offered");
}

/*
 * On a board without GPIO (the empty board of posix_board_reset()), gpio_list is in no
 * request's tools, tool_search does not activate it, and a call to it anyway is answered
 * with an error result naming the reason; the request goes on to the answer.
 */
static void test_unavailable_tool_is_not_offered_and_answers_why(void **state)
{
	static const char *const answers[] = {
		CALL("c1", "tool_search", "\"{\\\"query\\\":\\\"gpio pins list\\\"}\""),
		CALL("c2", "gpio_list", "\"{}\""),
		TEXT("no pins"),
	};
	struct agent_tool_stats before, after;

	(void)state;
	posix_board_reset();
	agent_tool_stats_get(&before);
	server_start(answers, 3);
	assert_int_equal(run(16), 0);
	server_stop();
	agent_tool_stats_get(&after);
	assert_int_equal(srv.served, 3);
	for (size_t i = 0; i < 3; i++) {
		/* gpio_list's schema (its description) is offered in no turn. */
		assert_null(strstr(srv.bodies[i], "real GPIO slots"));
	}
	assert_non_null(strstr(srv.bodies[1], "\"role\":\"tool\",\"tool_call_id\":\"c1\""));
	assert_null(strstr(srv.bodies[1], "gpio_list"));
	assert_non_null(strstr(srv.bodies[2], "{\\\"error\\\":\\\"gpio_list is not available: "
					      "the board has no GPIO slot\\\"}"));
	assert_int_equal(after.failed, before.failed + 1);
	assert_string_equal(last_error, "");
	assert_string_equal(answer, "no pins");
}

/*
 * A Chat Completions turn calling tool_search with @pad newlines of JSON white space inside
 * its arguments (a server controls that): the arguments are re-escaped in the history, so
 * each newline takes two bytes there.
 */
static const char *padded_call(char *buf, size_t cap, const char *id, size_t pad)
{
	size_t n = (size_t)snprintf(buf, cap,
				    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
				    "\"index\":0,\"id\":\"%s\",\"type\":\"function\",\"function\":{"
				    "\"name\":\"tool_search\",\"arguments\":\"{\\\"query\\\":"
				    "\\\"files\\\"",
				    id);

	for (size_t i = 0; i < pad && n + 2 < cap; i++) {
		buf[n++] = '\\';
		buf[n++] = 'n';
	}
	snprintf(buf + n, cap - n,
		 "}\"}}]}}]}\n\n"
		 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}"
		 "\n\n"
		 "data: [DONE]\n\n");
	return buf;
}

/*
 * Three tool_search exchanges padded with @p1, @p2, @p3 newlines, then the answer; after
 * @prior bytes of earlier conversation (0: none, as `agent ask`; the chat sends its
 * conversation so).
 */
static void three_exchanges_fit(size_t prior, size_t p1, size_t p2, size_t p3)
{
	static char calls[3][9000];
	static const char *answers[4];

	answers[0] = padded_call(calls[0], sizeof(calls[0]), "c1", p1);
	answers[1] = padded_call(calls[1], sizeof(calls[1]), "c2", p2);
	answers[2] = padded_call(calls[2], sizeof(calls[2]), "c3", p3);
	answers[3] = TEXT("done");
	prior_size = prior;
	server_start(answers, 4);
	assert_int_equal(run(4), 0);
	server_stop();
	prior_size = 0;
	assert_string_equal(last_error, "");
	assert_string_equal(answer, "done");
	/* The last turn carries the newest exchange whole. */
	assert_non_null(strstr(srv.bodies[3], "\"tool_call_id\":\"c3\""));
	assert_int_equal(runs, 0);     /* tool_search is the registry's own, not the runner */
	assert_int_equal(confirms, 0); /* a read tool: nobody is asked */
}

/* The same, where the third exchange needs the oldest dropped. */
static void three_exchanges(size_t prior, size_t p1, size_t p2, size_t p3)
{
	three_exchanges_fit(prior, p1, p2, p3);
	assert_null(strstr(srv.bodies[3], "\"tool_call_id\":\"c1\""));
}

/*
 * The history of tool exchanges makes room by dropping the oldest ones. When the newest
 * exchange fits only once every older one is gone, the last drop used to take a stale offset
 * (an entry past the count): a memmove of the wrong length, and the request ended with a
 * wrong "does not fit" error (-ENOSPC). When the first exchange is larger than the second,
 * the stale offset exceeds what is held and the length goes negative: ASan's
 * negative-size-param (size=-100 before the fix, with the first loop). A tool_search exchange
 * is 542 bytes plus two per padding newline, so the sizes below sit around half the history
 * (16384 bytes), up to the 4095-byte arguments bound.
 */
static void test_history_drops_every_older_exchange_when_needed(void **state)
{
	/* '{"query":"files"' and '}' around the padding: 4095 bytes of arguments at most. */
	enum { PAD_MAX = 4095 - 17 };

	(void)state;
	/*
	 * The first larger than the second, the two together within the history, the second and
	 * the largest third beyond it: the third needs both dropped, and the stale offset (the
	 * first's size) exceeds what the second holds.
	 */
	for (size_t p1 = 3600; p1 <= 3900; p1 += 100) {
		for (size_t d = 50; d <= 250; d += 100) {
			three_exchanges(0, p1, p1 - d, PAD_MAX);
		}
	}
	/* A small exchange, then two that each take about half of the history. */
	for (size_t pad = PAD_MAX - 2; pad <= PAD_MAX; pad++) {
		three_exchanges(0, 10, pad, pad);
	}
}

/*
 * The same in the chat, whose earlier messages leave the exchanges less: with 14000 bytes of
 * conversation they get their floor, 9216 bytes (two 4096-byte arguments and 1024), so the
 * third exchange, at the bound, needs both earlier ones dropped however small they are.
 */
static void test_history_after_a_conversation_drops_every_older_exchange(void **state)
{
	enum { PAD_MAX = 4095 - 17 };

	(void)state;
	for (size_t p2 = 0; p2 <= 600; p2 += 200) {
		three_exchanges(14000, p2 + 100, p2, PAD_MAX);
		three_exchanges(14000, p2, p2 + 100, PAD_MAX);
	}
	assert_non_null(strstr(srv.bodies[3], "pppp"));
}

/*
 * Exchanges of every size class up to the bound, in every order, without and with a chat
 * conversation before them: each request succeeds and ends with the newest exchange whole.
 */
static void test_history_exchange_sizes_sweep(void **state)
{
	static const size_t pads[] = {0, 1, 1024, 2047, 3000, 3800, 4078};
	static const size_t priors[] = {0, 14000};
	enum { PADS = sizeof(pads) / sizeof(pads[0]) };

	(void)state;
	for (size_t q = 0; q < sizeof(priors) / sizeof(priors[0]); q++) {
		for (size_t i = 0; i < PADS * PADS * PADS; i++) {
			three_exchanges_fit(priors[q], pads[i / (PADS * PADS)], pads[i / PADS % PADS],
					    pads[i % PADS]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_add_rules),
		cmocka_unit_test(test_workflow_dependency_activates_on_demand),
		cmocka_unit_test(test_denied_confirmation_never_runs),
		cmocka_unit_test(test_cancel_at_confirmation),
		cmocka_unit_test(test_budget_reserves_a_final_turn_without_tools),
		cmocka_unit_test(test_unavailable_tool_is_not_offered_and_answers_why),
		cmocka_unit_test(test_history_drops_every_older_exchange_when_needed),
		cmocka_unit_test(test_history_after_a_conversation_drops_every_older_exchange),
		cmocka_unit_test(test_history_exchange_sizes_sweep),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
