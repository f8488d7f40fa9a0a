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
	const char *content_type; /* NULL: text/event-stream; "": no Content-Type header */
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
		char head[256];
		char type[128] = "";
		int fd;

		if (!readable(srv.listen_fd, 5000)) {
			return NULL;
		}
		fd = accept(srv.listen_fd, NULL, NULL);
		if (fd < 0) {
			return NULL;
		}
		read_request(fd, srv.bodies[i], sizeof(srv.bodies[i]));
		if (srv.content_type == NULL || srv.content_type[0] != '\0') {
			snprintf(type, sizeof(type), "Content-Type: %s\r\n",
				 srv.content_type != NULL ? srv.content_type : "text/event-stream");
		}
		snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\n%sContent-Length: %zu\r\nConnection: close\r\n\r\n",
			 type, strlen(srv.answers[i]));
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
	const char *content_type = srv.content_type;

	memset(&srv, 0, sizeof(srv));
	srv.content_type = content_type;
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
static char last_error[400];
static char answer[20000];
static size_t answer_len;
static char last_call[400]; /* the name the tool_call hook was given */
static struct provider_usage usage;

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
	.description = PACKED_TEXT_PLAIN("Run a saved script."),
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
	assert_true(answer_len + len < sizeof(answer));
	memcpy(answer + answer_len, text, len);
	answer_len += len;
	answer[answer_len] = '\0';
}

/* The arguments of the calls each request showed, in the order they came. */
static char shown_args[3][64];
static size_t shown_count;
static char first_args[CONFIG_AGENT_TOOL_ARGS_MAX_LEN + 1]; /* the first call's, whole */
static size_t first_args_len;

static void on_call(void *user, const char *name, const char *a, size_t len)
{
	(void)user;
	if (shown_count == 0) {
		memcpy(first_args, a, len);
		first_args[len] = '\0';
		first_args_len = len;
	}
	if (shown_count < 3) {
		snprintf(shown_args[shown_count++], sizeof(shown_args[0]), "%.*s", (int)len, a);
	}
	snprintf(last_call, sizeof(last_call), "%s", name);
}

static void on_usage(void *user, const struct provider_usage *u)
{
	(void)user;
	usage = *u;
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
	.usage = on_usage,
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

static const char *api_path = "/v1/chat/completions";

static int run(uint8_t max_tools)
{
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.endpoint, sizeof(cfg.endpoint), "http://127.0.0.1:%u%s",
		 (unsigned int)srv.port, api_path);
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
	last_call[0] = '\0';
	shown_count = 0;
	answer[0] = '\0';
	answer_len = 0;
	memset(&usage, 0, sizeof(usage));
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

/* ---- Issue 12: the stream protocol, loose matching and silent cuts -------------------------- */

/* Responses streams: a response with text, an empty one, and a function call. */
#define R_CREATED(id)                                                                            \
	"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"" id \
	"\",\"status\":\"in_progress\"}}\n\n"
#define R_COMPLETED(id)                                                                          \
	"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"" \
	id "\",\"status\":\"completed\"}}\n\n"
#define R_DELTA(text)                                                                            \
	"data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"" text      \
	"\"}\n\n"
#define R_CALL_DONE(cid, name, args)                                                             \
	"data: {\"type\":\"response.output_item.done\",\"output_index\":1,\"item\":{\"type\":"      \
	"\"function_call\",\"id\":\"fc_1\",\"call_id\":\"" cid "\",\"name\":\"" name                \
	"\",\"arguments\":" args "}}\n\n"
#define R_TEXT(id, text) R_CREATED(id) R_DELTA(text) R_COMPLETED(id)

static void use_responses(void)
{
	api_path = "/v1/responses";
}

/* The stream path's pool of argument blocks (provider.c), by name. */
static int find_stream_pool(const struct agent_pool_stats *st, void *user)
{
	if (strcmp(st->name, "stream") == 0) {
		*(struct agent_pool_stats *)user = *st;
		return 1;
	}
	return 0;
}

static int stream_pool_stats(struct agent_pool_stats *out)
{
	memset(out, 0, sizeof(*out));
	agent_pool_foreach(find_stream_pool, out);
	return out->name != NULL ? 0 : -ENOENT;
}

static void use_chat(void)
{
	api_path = "/v1/chat/completions";
}

/* Each test starts on Chat Completions with event-stream answers, whatever one before did. */
static int each(void **state)
{
	(void)state;
	use_chat();
	srv.content_type = NULL;
	return 0;
}

/* One Chat tool call with the id, name and arguments (a JSON string's inside) given. */
static const char *chat_call(char *buf, size_t cap, const char *id, const char *name,
			     const char *args)
{
	snprintf(buf, cap,
		 "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":"
		 "\"%s\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"%s\"}}]}}]}"
		 "\n\n"
		 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
		 "data: [DONE]\n\n",
		 id, name, args);
	return buf;
}

static void repeat(char *out, char c, size_t n)
{
	memset(out, c, n);
	out[n] = '\0';
}

/*
 * A tool name matches only in full: a NUL and what follows it, or one byte more, is
 * another name. Before, "system_status\u0000ANYTHING" ran system_status.
 */
static void test_a_tool_name_must_match_exactly(void **state)
{
	static const char *const nul[] = {
		CALL("c1", "system_status\\u0000ANYTHING", "\"{}\""),
		TEXT("it ran"),
	};
	static const char *const lead[] = {
		CALL("c1", "\\u0000system_status", "\"{}\""),
		TEXT("it ran"),
	};
	static const char *const exact[] = {
		CALL("c1", "system_status", "\"{}\""),
		TEXT("it ran"),
	};

	(void)state;
	server_start(nul, 2);
	assert_int_equal(run(4), -EPROTO);
	server_stop();
	assert_int_equal(srv.served, 1);
	assert_string_equal(last_call, "system_status\\u0000ANYTHING");
	assert_string_equal(last_error,
			    "the model called an unknown tool: system_status\\u0000ANYTHING");

	server_start(lead, 2);
	assert_int_equal(run(4), -EPROTO);
	server_stop();
	assert_string_equal(last_error, "the model called an unknown tool: \\u0000system_status");

	server_start(exact, 2);
	assert_int_equal(run(4), 0);
	server_stop();
	assert_string_equal(answer, "it ran");
}

/* One call of a tool named @p name (JSON string text) answered with "no": run's result. */
static int call_named(const char *name)
{
	static char call[512];
	const char *answers[2] = {chat_call(call, sizeof(call), "c1", name, "{}"), TEXT("no")};
	int err;

	server_start(answers, 2);
	err = run(4);
	server_stop();
	return err;
}

/* Whether the error line names the unknown tool as @p shown. */
static void assert_unknown_tool(const char *shown)
{
	char want[300];

	snprintf(want, sizeof(want), "the model called an unknown tool: %s", shown);
	assert_string_equal(last_error, want);
}

/*
 * An unknown tool's name as the person sees it (utf8_shown()): C1 controls (U+009B is a
 * one-byte CSI) as \u00XX like the C0 ones, and the error line's 120 bytes of it cut between
 * whole escapes. Before, U+009B went out raw and the line ended in half an escape.
 */
static void test_an_unknown_name_is_shown_visible_and_whole(void **state)
{
	char name[200];

	(void)state;
	assert_int_equal(call_named("run\\u009b2J\\u0085"), -EPROTO);
	assert_string_equal(last_call, "run\\u009b2J\\u0085");
	assert_unknown_tool("run\\u009b2J\\u0085");
	/* 20 NULs are 120 bytes shown: whole. "a" and 20 NULs would be 121: the last escape
	 * is left out, not cut. */
	for (size_t lead = 0; lead <= 1; lead++) {
		strcpy(name, lead ? "a" : "");
		for (size_t i = 0; i < 20; i++) {
			strcat(name, "\\u0000");
		}
		assert_int_equal(call_named(name), -EPROTO);
		name[strlen(name) - (lead ? 6 : 0)] = '\0';
		assert_unknown_tool(name);
	}
}

/* Tool names: 63 bytes (PROVIDER_NAME_MAX) are read whole, a longer one ends the turn. */
static void test_a_tool_name_at_its_bound(void **state)
{
	char name[80];

	(void)state;
	repeat(name, 'n', 63);
	assert_int_equal(call_named(name), -EPROTO);
	assert_unknown_tool(name);
	repeat(name, 'n', 64);
	assert_int_equal(call_named(name), -EIO);
	assert_int_equal(srv.served, 1);
	assert_string_equal(last_error,
			    "the tool name from the server exceeds the limit of 63 bytes (it has 64)");
}

/* A Chat turn with @n tool calls, indexes 0 .. n-1, one chunk each. */
static const char *many_calls(size_t n)
{
	static char buf[200000];
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		len += (size_t)snprintf(
			buf + len, sizeof(buf) - len,
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%zu,"
			"\"id\":\"c%zu\",\"type\":\"function\",\"function\":{\"name\":\"tool_search\","
			"\"arguments\":\"{}\"}}]}}]}\n\n",
			i, i);
		assert_true(len < sizeof(buf) - 200);
	}
	snprintf(buf + len, sizeof(buf) - len,
		 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}"
		 "\n\ndata: [DONE]\n\n");
	return buf;
}

/*
 * The calls of one turn are counted up to what can be told apart (2 kept, 16 more counted by
 * their index); beyond that the line says "more than". Before, 19 or 1000 calls were "18".
 */
static void test_many_tool_calls_are_counted_or_said_to_be_more(void **state)
{
	static const struct {
		size_t calls;
		const char *line;
	} cases[] = {
		{2, "the model asked for 2 tool calls at once; only one at a time is supported"},
		{18, "the model asked for 18 tool calls at once; only one at a time is supported"},
		{19, "the model asked for more than 18 tool calls at once; only one at a time is "
		     "supported"},
		{1000, "the model asked for more than 18 tool calls at once; only one at a time is "
		       "supported"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *answers[] = {many_calls(cases[i].calls)};

		server_start(answers, 1);
		assert_int_equal(run(4), -EPROTO);
		server_stop();
		assert_string_equal(last_error, cases[i].line);
	}
}

/*
 * Nothing after the protocol's end is read: a tool call after [DONE] (Chat) or after
 * response.completed (Responses) does not run. Before, it ran and the loop went on.
 */
static void test_a_call_after_the_end_does_not_run(void **state)
{
	static const char *const chat[] = {
		TEXT("done")
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":"
		"\"c9\",\"type\":\"function\",\"function\":{\"name\":\"system_status\",\"arguments\":"
		"\"{}\"}}]}}]}\n\n"
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
		TEXT("again"),
	};
	static const char *const responses[] = {
		R_TEXT("resp_1", "done") R_CALL_DONE("call_9", "system_status", "\"{}\""),
		R_TEXT("resp_2", "again"),
	};

	(void)state;
	server_start(chat, 2);
	assert_int_equal(run(4), 0);
	server_stop();
	assert_int_equal(srv.served, 1);
	assert_string_equal(answer, "done");
	assert_string_equal(last_call, "");

	use_responses();
	server_start(responses, 2);
	assert_int_equal(run(4), 0);
	server_stop();
	use_chat();
	assert_int_equal(srv.served, 1);
	assert_string_equal(answer, "done");
	assert_string_equal(last_call, "");
	assert_string_equal(req.response_id, "resp_1");
}

/*
 * Server ids are used whole or not at all: a call id of 95 bytes (PROVIDER_ID_MAX) goes back
 * as it came; one byte more (also when that byte ends a character) or a NUL ends the turn.
 * Before, it was cut (mid-character) and the loop answered an id the server never issued.
 */
static void test_a_call_id_at_its_bound(void **state)
{
	static char calls[2][512];
	char id[120];
	char want[160];
	const char *answers[2];

	(void)state;
	repeat(id, 'i', 95);
	answers[0] = chat_call(calls[0], sizeof(calls[0]), id, "tool_search",
			       "{\\\"query\\\":\\\"files\\\"}");
	answers[1] = TEXT("done");
	server_start(answers, 2);
	assert_int_equal(run(4), 0);
	server_stop();
	snprintf(want, sizeof(want), "\"tool_call_id\":\"%s\"", id);
	assert_non_null(strstr(srv.bodies[1], want));

	repeat(id, 'i', 96);
	answers[0] = chat_call(calls[0], sizeof(calls[0]), id, "tool_search",
			       "{\\\"query\\\":\\\"files\\\"}");
	server_start(answers, 2);
	assert_int_equal(run(4), -EIO);
	server_stop();
	assert_int_equal(srv.served, 1);
	assert_string_equal(last_error,
			    "the call id from the server exceeds the limit of 95 bytes (it has 96)");

	repeat(id, 'i', 94);
	strcat(id, "\xc3\xa9"); /* 96 bytes, the last character cut by the bound */
	answers[0] = chat_call(calls[0], sizeof(calls[0]), id, "tool_search",
			       "{\\\"query\\\":\\\"files\\\"}");
	server_start(answers, 2);
	assert_int_equal(run(4), -EIO);
	server_stop();
	assert_string_equal(last_error,
			    "the call id from the server exceeds the limit of 95 bytes (it has 96)");

	answers[0] = chat_call(calls[0], sizeof(calls[0]), "call\\u0000x", "tool_search",
			       "{\\\"query\\\":\\\"files\\\"}");
	server_start(answers, 2);
	assert_int_equal(run(4), -EIO);
	server_stop();
	assert_string_equal(last_error, "the call id from the server contains a NUL byte");
}

/* The Responses response id, which the next turn continues from: 95 bytes whole, 96 refused. */
static void test_a_response_id_at_its_bound(void **state)
{
	static char stream[1024];
	char id[120];
	const char *answers[1] = {stream};

	(void)state;
	use_responses();
	repeat(id, 'r', 95);
	snprintf(stream, sizeof(stream), R_CREATED("%s") R_DELTA("hi") R_COMPLETED("%s"), id, id);
	server_start(answers, 1);
	assert_int_equal(run(4), 0);
	server_stop();
	assert_string_equal(req.response_id, id);

	repeat(id, 'r', 96);
	snprintf(stream, sizeof(stream), R_CREATED("%s") R_DELTA("hi") R_COMPLETED("%s"), id, id);
	server_start(answers, 1);
	assert_int_equal(run(4), -EIO);
	server_stop();
	use_chat();
	assert_string_equal(last_error,
			    "the response id from the server exceeds the limit of 95 bytes (it has 96)");
	assert_string_equal(req.response_id, "");
}

/*
 * A 200 answer that is not an event stream (a login page, a proxy's notice) says so, with
 * its Content-Type and the start of the body. An event stream's media type is matched in any
 * case and with parameters; an answer without a Content-Type is read as a stream.
 */
static void test_an_answer_that_is_not_an_event_stream(void **state)
{
	static const char *const page[] = {"<html><body>Sign in</body></html>"};
	static const char *const text[] = {TEXT("ok")};
	static const char *const streams[] = {"Text/Event-Stream; charset=utf-8", ""};

	(void)state;
	srv.content_type = "text/html; charset=utf-8";
	server_start(page, 1);
	assert_int_equal(run(4), -EIO);
	server_stop();
	assert_string_equal(last_error,
			    "the server did not send an event stream (HTTP 200, Content-Type: "
			    "text/html; charset=utf-8): <html><body>Sign in</body></html>");

	srv.content_type = "text/event-streams";
	server_start(text, 1);
	assert_int_equal(run(4), -EIO);
	server_stop();
	assert_non_null(strstr(last_error, "(HTTP 200, Content-Type: text/event-streams): "));

	for (size_t i = 0; i < 2; i++) {
		srv.content_type = streams[i];
		server_start(text, 1);
		assert_int_equal(run(4), 0);
		server_stop();
		assert_string_equal(answer, "ok");
	}
	srv.content_type = NULL;
}

/*
 * Text that comes before what says where it belongs (Chat: the choice's index; Responses:
 * the event's type, as with sorted keys) waits in the pre-type block
 * (CONFIG_AGENT_PROVIDER_PRETYPE_BYTES, 1024): up to that it is shown
 * whole; beyond it the turn ends with a line saying what was not shown, cut between
 * characters. Before, the rest was dropped without a word.
 */
static void text_before_its_key(bool responses, size_t len, const char *tail, int want,
				const char *error)
{
	static char stream[20000];
	static char text[10000];
	const char *answers[] = {stream};

	repeat(text, 'x', len);
	strcat(text, tail);
	if (responses) {
		snprintf(stream, sizeof(stream),
			 R_CREATED("resp_1") "data: {\"content_index\":0,\"delta\":\"%s\","
					     "\"item_id\":\"msg_1\",\"output_index\":0,"
					     "\"type\":\"response.output_text.delta\"}\n\n"
			 R_COMPLETED("resp_1"),
			 text);
		use_responses();
	} else {
		snprintf(stream, sizeof(stream),
			 "data: {\"choices\":[{\"delta\":{\"content\":\"%s\"},\"finish_reason\":null,"
			 "\"index\":0}]}\n\n"
			 "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\",\"index\":0}]}"
			 "\n\ndata: [DONE]\n\n",
			 text);
	}
	server_start(answers, 1);
	assert_int_equal(run(4), want);
	server_stop();
	use_chat();
	assert_string_equal(last_error, error);
	assert_true(answer_len <= strlen(text));
	assert_memory_equal(answer, text, answer_len);
	if (want == 0) {
		assert_int_equal(answer_len, strlen(text));
	}
}

/*
 * Arguments that come before what says where they belong. Chat with sorted keys (the
 * element's index after its function): up to 4095 bytes, held in the tool loop's buffer, so
 * the stream path takes no block. Responses with sorted keys: a done event's whole arguments
 * wait in the pre-type block (CONFIG_AGENT_PROVIDER_PRETYPE_BYTES); beyond it the deltas'
 * text stands when it matches, else the call fails saying why.
 */
static void sorted_args(char *text, size_t len)
{
	repeat(text, 'a', len);
}

static void test_arguments_before_their_key(void **state)
{
	static char stream[3 * 4200 + 2000];
	static char text[4200];
	const char *answers[] = {stream};
	const size_t n = CONFIG_AGENT_PROVIDER_PRETYPE_BYTES;
	struct agent_pool_stats before;
	struct agent_pool_stats after;
	char want[200];

	(void)state;
	/* Chat, sorted keys, 4095 bytes in one element: shown whole, no stream block taken. */
	sorted_args(text, 4095);
	snprintf(stream, sizeof(stream),
		 "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":"
		 "\"%s\",\"name\":\"system_status\"},\"id\":\"c1\",\"index\":0,"
		 "\"type\":\"function\"}]},\"index\":0}]}\n\n"
		 "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\",\"index\":0}]}"
		 "\n\ndata: [DONE]\n\n",
		 text);
	assert_int_equal(stream_pool_stats(&before), 0);
	server_start(answers, 1);
	(void)run(4);
	server_stop();
	assert_int_equal(stream_pool_stats(&after), 0);
	assert_int_equal(first_args_len, 4095);
	assert_memory_equal(first_args, text, 4095);
	assert_int_equal(after.written_peak_bytes, before.written_peak_bytes);
	assert_int_equal(after.blocks_free_min, before.blocks_free_min);

	/* Responses, sorted keys, the done event alone: n bytes whole, n + 1 refused. */
	use_responses();
	for (size_t len = n; len <= n + 1; len++) {
		sorted_args(text, len);
		snprintf(stream, sizeof(stream),
			 R_CREATED("resp_s") "data: {\"item\":{\"arguments\":\"\",\"call_id\":\"c1\","
			 "\"id\":\"fc_1\",\"name\":\"system_status\",\"type\":\"function_call\"},"
			 "\"output_index\":0,\"type\":\"response.output_item.added\"}\n\n"
			 "data: {\"arguments\":\"%s\",\"item_id\":\"fc_1\",\"output_index\":0,"
			 "\"type\":\"response.function_call_arguments.done\"}\n\n"
			 "data: {\"item\":{\"call_id\":\"c1\",\"id\":\"fc_1\",\"name\":\"system_status\","
			 "\"type\":\"function_call\"},\"output_index\":0,"
			 "\"type\":\"response.output_item.done\"}\n\n" R_COMPLETED("resp_s"),
			 text);
		server_start(answers, 1);
		(void)run(4);
		server_stop();
		if (len == n) {
			assert_int_equal(first_args_len, n);
			assert_memory_equal(first_args, text, n);
		} else {
			snprintf(want, sizeof(want),
				 "tool call arguments came before their event's type or index and exceed the "
				 "%zu-byte buffer for such text",
				 n);
			assert_string_equal(last_error, want);
		}
	}
	/* 4000 bytes in deltas (type first), repeated whole in the done event with sorted keys:
	 * the deltas' text stands. */
	sorted_args(text, 4000);
	{
		int used = snprintf(stream, sizeof(stream),
				    R_CREATED("resp_d") "data: {\"type\":\"response.output_item.added\","
				    "\"output_index\":0,\"item\":{\"type\":\"function_call\","
				    "\"id\":\"fc_1\",\"call_id\":\"c1\",\"name\":\"system_status\","
				    "\"arguments\":\"\"}}\n\n");

		for (int i = 0; i < 4; i++) {
			used += snprintf(stream + used, sizeof(stream) - (size_t)used,
					 "data: {\"type\":\"response.function_call_arguments.delta\","
					 "\"output_index\":0,\"item_id\":\"fc_1\",\"delta\":\"%.1000s\"}"
					 "\n\n",
					 text);
		}
		snprintf(stream + used, sizeof(stream) - (size_t)used,
			 "data: {\"arguments\":\"%s\",\"item_id\":\"fc_1\",\"output_index\":0,"
			 "\"type\":\"response.function_call_arguments.done\"}\n\n"
			 "data: {\"item\":{\"call_id\":\"c1\",\"id\":\"fc_1\",\"name\":\"system_status\","
			 "\"type\":\"function_call\"},\"output_index\":0,"
			 "\"type\":\"response.output_item.done\"}\n\n" R_COMPLETED("resp_d"),
			 text);
	}
	server_start(answers, 1);
	(void)run(4);
	server_stop();
	use_chat();
	assert_int_equal(first_args_len, 4000);
	assert_memory_equal(first_args, text, 4000);
	assert_null(strstr(last_error, "came before"));
}

/*
 * Once a call is emitted, what the server sends for it later (its done event again with other
 * arguments, a second item done, a late delta) changes nothing: the tool runs the arguments
 * the tool loop was shown. The first call's arguments live in the tool loop's buffer, so the
 * call lets go of it when emitted.
 */
static void test_arguments_sent_after_the_call_change_nothing(void **state)
{
	static const char *const answers[] = {
		R_CREATED("resp_1") R_CALL_DONE("c1", "script_run_file",
						"\"{\\\"path\\\":\\\"a.py\\\"}\"") R_COMPLETED("resp_1"),
		R_CREATED("resp_2") R_CALL_DONE("c2", "script_run_file",
						"\"{\\\"path\\\":\\\"a.py\\\"}\"")
		"data: {\"type\":\"response.function_call_arguments.done\",\"output_index\":1,"
		"\"item_id\":\"fc_1\",\"arguments\":\"{\\\"path\\\":\\\"b.py\\\"}\"}\n\n"
		R_CALL_DONE("c2", "script_run_file", "\"{\\\"path\\\":\\\"c.py\\\"}\"")
		"data: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":1,"
		"\"item_id\":\"fc_1\",\"delta\":\"zzzz\"}\n\n" R_COMPLETED("resp_2"),
		R_TEXT("resp_3", "done"),
	};

	(void)state;
	confirm_answer = 1;
	use_responses();
	server_start(answers, 3);
	assert_int_equal(run(16), 0);
	server_stop();
	use_chat();
	assert_int_equal(srv.served, 3);
	assert_int_equal(runs, 1);
	assert_string_equal(first_args, "{\"path\":\"a.py\"}");
	assert_non_null(strstr(srv.bodies[2], "{\\\"ran\\\":\\\"a.py\\\"}"));
	assert_null(strstr(srv.bodies[2], "b.py"));
	assert_null(strstr(srv.bodies[2], "c.py"));
}

static void test_text_before_its_key_is_shown_or_its_cut_reported(void **state)
{
	const size_t n = CONFIG_AGENT_PROVIDER_PRETYPE_BYTES;

	(void)state;
	for (int r = 0; r <= 1; r++) {
		const char *chat = "text cut: a piece of the answer came before its choice's index "
				   "and exceeds the %zu-byte buffer; not shown: %s";
		const char *resp = "text cut: a piece of the answer came before its event's type and "
				   "exceeds the %zu-byte buffer; not shown: %s";
		char counts[40];
		char line[300];

		text_before_its_key(r, n, "", 0, "");
		snprintf(counts, sizeof(counts), "1 of %zu bytes", n + 1);
		snprintf(line, sizeof(line), r ? resp : chat, n, counts);
		text_before_its_key(r, n + 1, "", -EIO, line);
		assert_int_equal(answer_len, n);
		snprintf(counts, sizeof(counts), "%zu of %zu bytes", n + 2, 2 * n + 2);
		snprintf(line, sizeof(line), r ? resp : chat, n, counts);
		text_before_its_key(r, 2 * n + 2, "", -EIO, line);
		assert_int_equal(answer_len, n);
		/* n - 1 bytes and a 2-byte character: the character is not cut in half. */
		snprintf(counts, sizeof(counts), "2 of %zu bytes", n + 1);
		snprintf(line, sizeof(line), r ? resp : chat, n, counts);
		text_before_its_key(r, n - 1, "\xc3\xa9", -EIO, line);
		assert_int_equal(answer_len, n - 1);
	}
}

/* Chat's finish reasons "length" and "content_filter" end the turn as incomplete; an empty
 * turn cut so is not asked again as an empty one. */
static void test_chat_length_and_content_filter_are_incomplete(void **state)
{
	static const char *const reasons[] = {"length", "content_filter"};
	static char streams[2][512];
	char line[80];

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		const char *answers[] = {streams[0], TEXT("more")};

		snprintf(streams[0], sizeof(streams[0]),
			 "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"The answer is"
			 "\"}}]}\n\n"
			 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"%s\"}]}"
			 "\n\ndata: [DONE]\n\n",
			 reasons[i]);
		server_start(answers, 2);
		assert_int_equal(run(4), -EIO);
		server_stop();
		snprintf(line, sizeof(line), "the response is incomplete: %s", reasons[i]);
		assert_string_equal(last_error, line);
		assert_string_equal(answer, "The answer is");

		snprintf(streams[0], sizeof(streams[0]),
			 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"%s\"}]}"
			 "\n\ndata: [DONE]\n\n",
			 reasons[i]);
		server_start(answers, 2);
		assert_int_equal(run(4), -EIO);
		server_stop();
		assert_int_equal(srv.served, 1);
		assert_string_equal(last_error, line);
	}
}

/* A Responses turn with neither text nor a call is asked once more, then is invalid. */
/*
 * The first call's arguments stream into the tool loop's buffer (provider_request.call_args);
 * when the server finishes a later call first, the two trade places, so each call is shown
 * with its own arguments. Here call 1 ends first, then call 0: two calls at once, refused.
 */
#define R_ADDED(i)                                                                               \
	"data: {\"type\":\"response.output_item.added\",\"output_index\":" #i ",\"item\":{"    \
	"\"type\":\"function_call\",\"id\":\"fc_" #i "\",\"call_id\":\"call_" #i "\",\"name\":"   \
	"\"system_status\",\"arguments\":\"\"}}\n\n"
#define R_ARGS(i, text)                                                                          \
	"data: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":" #i        \
	",\"item_id\":\"fc_" #i "\",\"delta\":\"" text "\"}\n\n"
#define R_ITEM_DONE(i)                                                                           \
	"data: {\"type\":\"response.output_item.done\",\"output_index\":" #i ",\"item\":{"     \
	"\"type\":\"function_call\",\"id\":\"fc_" #i "\",\"call_id\":\"call_" #i "\",\"name\":"   \
	"\"system_status\"}}\n\n"

static void test_a_later_call_finished_first_keeps_each_calls_arguments(void **state)
{
	static const char *const first_ends_first[] = {
		R_CREATED("resp_a") R_ADDED(0) R_ADDED(1) R_ARGS(0, "{\\\"a\\\":") R_ARGS(1, "{")
			R_ARGS(0, "1}") R_ITEM_DONE(0) R_ARGS(1, "}") R_ITEM_DONE(1)
				R_COMPLETED("resp_a"),
	};
	static const char *const second_ends_first[] = {
		R_CREATED("resp_b") R_ADDED(0) R_ADDED(1) R_ARGS(0, "{\\\"a\\\":") R_ARGS(1, "{")
			R_ARGS(1, "}") R_ITEM_DONE(1) R_ARGS(0, "1}") R_ITEM_DONE(0)
				R_COMPLETED("resp_b"),
	};

	(void)state;
	use_responses();
	server_start(first_ends_first, 1);
	assert_int_equal(run(4), -EPROTO);
	server_stop();
	assert_int_equal(shown_count, 2);
	assert_string_equal(shown_args[0], "{\"a\":1}");
	assert_string_equal(shown_args[1], "{}");

	server_start(second_ends_first, 1);
	assert_int_equal(run(4), -EPROTO);
	server_stop();
	use_chat();
	assert_int_equal(shown_count, 2);
	assert_string_equal(shown_args[0], "{}");
	assert_string_equal(shown_args[1], "{\"a\":1}");
	assert_non_null(strstr(last_error, "2 tool calls at once"));
}

static void test_an_empty_responses_turn_is_retried_once(void **state)
{
	static const char *const once[] = {
		R_CREATED("resp_1") R_COMPLETED("resp_1"),
		R_TEXT("resp_2", "here"),
	};
	static const char *const twice[] = {
		R_CREATED("resp_1") R_COMPLETED("resp_1"),
		R_CREATED("resp_2") R_COMPLETED("resp_2"),
	};

	(void)state;
	use_responses();
	server_start(once, 2);
	assert_int_equal(run(4), 0);
	server_stop();
	assert_int_equal(srv.served, 2);
	assert_string_equal(answer, "here");
	assert_string_equal(srv.bodies[0], srv.bodies[1]); /* the same request again */

	server_start(twice, 2);
	assert_int_equal(run(4), -EIO);
	server_stop();
	use_chat();
	assert_int_equal(srv.served, 2);
	assert_string_equal(last_error,
			    "invalid response: the provider returned an empty turn twice");
}

/*
 * Output tokens include the reasoning ones, so input + output = total: a server that counts
 * reasoning apart gets it folded in; one that includes it (OpenAI) is left as it is.
 */
static void test_reasoning_tokens_add_up(void **state)
{
	static const struct {
		unsigned int prompt, completion, total, reasoning, output;
	} cases[] = {
		{10, 20, 530, 500, 520},  /* reasoning apart: folded in */
		{10, 520, 530, 500, 520}, /* OpenAI: already in the output */
		{10, 20, 999, 500, 20},	  /* neither adds up: left as reported */
	};
	static char stream[1024];
	const char *answers[] = {stream};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(stream, sizeof(stream),
			 "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
			 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}"
			 "\n\n"
			 "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%u,\"completion_tokens\":"
			 "%u,\"total_tokens\":%u,\"completion_tokens_details\":{\"reasoning_tokens\":"
			 "%u}}}\n\ndata: [DONE]\n\n",
			 cases[i].prompt, cases[i].completion, cases[i].total, cases[i].reasoning);
		server_start(answers, 1);
		assert_int_equal(run(4), 0);
		server_stop();
		assert_int_equal(usage.input_tokens, cases[i].prompt);
		assert_int_equal(usage.output_tokens, cases[i].output);
		assert_int_equal(usage.total_tokens, cases[i].total);
		assert_int_equal(usage.reasoning_tokens, cases[i].reasoning);
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
		cmocka_unit_test_setup(test_a_tool_name_must_match_exactly, each),
		cmocka_unit_test_setup(test_an_unknown_name_is_shown_visible_and_whole, each),
		cmocka_unit_test_setup(test_a_tool_name_at_its_bound, each),
		cmocka_unit_test_setup(test_many_tool_calls_are_counted_or_said_to_be_more, each),
		cmocka_unit_test_setup(test_a_call_after_the_end_does_not_run, each),
		cmocka_unit_test_setup(test_a_call_id_at_its_bound, each),
		cmocka_unit_test_setup(test_a_response_id_at_its_bound, each),
		cmocka_unit_test_setup(test_an_answer_that_is_not_an_event_stream, each),
		cmocka_unit_test_setup(test_text_before_its_key_is_shown_or_its_cut_reported, each),
		cmocka_unit_test_setup(test_chat_length_and_content_filter_are_incomplete, each),
		cmocka_unit_test_setup(test_a_later_call_finished_first_keeps_each_calls_arguments, each),
		cmocka_unit_test_setup(test_arguments_before_their_key, each),
		cmocka_unit_test_setup(test_arguments_sent_after_the_call_change_nothing, each),
		cmocka_unit_test_setup(test_an_empty_responses_turn_is_retried_once, each),
		cmocka_unit_test_setup(test_reasoning_tokens_add_up, each),
		cmocka_unit_test(test_history_exchange_sizes_sweep),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
