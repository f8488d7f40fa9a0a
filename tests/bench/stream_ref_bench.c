/*
 * Benchmark driver of the CPU side by side (not a test): the core's stream path and a
 * reference pipeline of the spec's design, on the same stream, over the same transport.
 * scripts/bench_stream.py runs both modes under callgrind and reports the ratio.
 *
 *   core: provider_run(), i.e. http.c -> sse.c -> json_stream.c -> the protocol's adapter.
 *   ref:  http_post() (the same http.c, so the same sockets, reads and de-chunking) with a
 *         body callback that is the spec's design: the body read into a 24 KiB line buffer,
 *         SSE lines split there, each event's data parsed whole with cJSON_ParseWithLength,
 *         the fields the adapters use picked out of the tree, text and tool calls produced as
 *         the core's adapters produce them, cJSON_Delete per event.
 *
 * Both modes print the same summary of what the turn produced (text and reasoning bytes and
 * their FNV-1a hashes, tool calls and a hash of their ids, names and arguments, usage, the
 * response id, the finish reason, errors), so the benchmark can check that the work is equal.
 * A line longer than the 24 KiB buffer (the 1 MiB event) grows the reference's buffer on the
 * heap rather than failing, so that it does the same work; ref_line_peak reports the size.
 *
 * Usage: stream_ref_bench core|ref URL REPETITIONS
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_config.h"
#include "http.h"
#include "provider.h"

#define REF_LINE_BUFFER (24 * 1024) /* the spec's stream-line buffer */
#define REF_CALL_SLOTS	PROVIDER_CALL_SLOTS
#define REF_ARGS_MAX	CONFIG_AGENT_TOOL_ARGS_MAX_LEN
#define REF_OUTPUT_MAX	CONFIG_AGENT_MODEL_OUTPUT_MAX
#define PROVIDER_LINE_MAX_BENCH (PROVIDER_MESSAGE_MAX + 200)

/* ---- what a turn produced (both modes) ------------------------------------------------------ */

struct summary {
	size_t text_bytes, reasoning_bytes;
	uint64_t text_hash, reasoning_hash, calls_hash;
	unsigned int calls, errors;
	struct provider_usage usage;
	char response_id[PROVIDER_ID_MAX + 1];
	char finish[64];
	char last_error[PROVIDER_LINE_MAX_BENCH];
};

#define FNV_BASIS 14695981039346656037ull

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h = (h ^ p[i]) * 1099511628211ull;
	}
	return h;
}

static void summary_reset(struct summary *s)
{
	memset(s, 0, sizeof(*s));
	s->text_hash = s->reasoning_hash = s->calls_hash = FNV_BASIS;
}

static void summary_text(struct summary *s, const char *text, size_t len, bool reasoning)
{
	if (reasoning) {
		s->reasoning_bytes += len;
		s->reasoning_hash = fnv(s->reasoning_hash, text, len);
	} else {
		s->text_bytes += len;
		s->text_hash = fnv(s->text_hash, text, len);
	}
}

static void summary_call(struct summary *s, const char *id, const char *name, size_t name_len,
			 const char *args, size_t args_len)
{
	s->calls++;
	s->calls_hash = fnv(s->calls_hash, id, strlen(id) + 1);
	s->calls_hash = fnv(s->calls_hash, name, name_len + 1);
	s->calls_hash = fnv(s->calls_hash, args, args_len);
	s->calls_hash = fnv(s->calls_hash, "", 1);
}

static void summary_error(struct summary *s, const char *message)
{
	s->errors++;
	snprintf(s->last_error, sizeof(s->last_error), "%s", message);
}

static void summary_print(const struct summary *s)
{
	printf("text_bytes=%zu text_hash=%016llx reasoning_bytes=%zu reasoning_hash=%016llx "
	       "calls=%u calls_hash=%016llx usage=%u/%u/%u/%u response_id=%s finish=%s errors=%u",
	       s->text_bytes, (unsigned long long)s->text_hash, s->reasoning_bytes,
	       (unsigned long long)s->reasoning_hash, s->calls, (unsigned long long)s->calls_hash,
	       (unsigned int)s->usage.input_tokens, (unsigned int)s->usage.output_tokens,
	       (unsigned int)s->usage.total_tokens, (unsigned int)s->usage.reasoning_tokens,
	       s->response_id[0] != '\0' ? s->response_id : "-", s->finish[0] != '\0' ? s->finish : "-",
	       s->errors);
}

/* As the core does (provider.c): reasoning counted apart is folded into the output. */
static void usage_normalize(struct provider_usage *u)
{
	uint64_t io = (uint64_t)u->input_tokens + u->output_tokens;

	if (u->reasoning_tokens > 0 && io != u->total_tokens &&
	    io + u->reasoning_tokens == u->total_tokens) {
		u->output_tokens += u->reasoning_tokens;
	}
}

/* ---- core mode --------------------------------------------------------------------------- */

static int on_event(void *user_data, const struct provider_event *ev)
{
	struct summary *s = user_data;

	switch (ev->type) {
	case PROVIDER_TEXT:
	case PROVIDER_REASONING:
		summary_text(s, ev->text.text, ev->text.len, ev->type == PROVIDER_REASONING);
		break;
	case PROVIDER_TOOL_CALL:
		summary_call(s, ev->call.call_id, ev->call.name, ev->call.name_len, ev->call.arguments,
			     ev->call.arguments_len);
		break;
	case PROVIDER_USAGE:
		s->usage = ev->usage;
		break;
	case PROVIDER_DONE:
		snprintf(s->response_id, sizeof(s->response_id), "%s", ev->done.response_id);
		snprintf(s->finish, sizeof(s->finish), "%s", ev->done.finish_reason);
		break;
	case PROVIDER_ERROR:
		summary_error(s, ev->error.message);
		break;
	}
	return 0;
}

static void run_core(const struct agent_config *cfg, struct summary *s)
{
	struct provider_request req = {
		.config = cfg,
		.instructions = "bench",
		.prompt = "bench",
		.emit = on_event,
		.user_data = s,
	};

	provider_run(&req);
}

/* ---- reference pipeline ------------------------------------------------------------------ */

struct ref_slot {
	bool used, emitted;
	int key; /* output_index (Responses) or tool_calls index (Chat), -1 when unknown */
	char item_id[PROVIDER_ID_MAX + 1];
	char call_id[PROVIDER_ID_MAX + 1];
	char name[PROVIDER_NAME_MAX + 1];
	char args[REF_ARGS_MAX + 1];
	size_t args_len;
	bool args_cut;
};

struct ref_turn {
	bool responses;
	struct summary *out;
	/* The line buffer: 24 KiB, grown on the heap only for a longer line (see the top). */
	char *line;
	size_t line_cap, line_len, line_peak;
	/* The turn. */
	int status;
	struct ref_slot slots[REF_CALL_SLOTS];
	size_t output_bytes;
	bool text_seen, call_seen, terminal, failed, ended;
	char finish[64];
	struct provider_usage usage; /* reported only when the turn completes, as the core does */
};

static void ref_error(struct ref_turn *t, const char *message)
{
	if (!t->failed) {
		t->failed = true;
		summary_error(t->out, message);
	}
}

static void ref_text(struct ref_turn *t, const char *text, size_t len, bool reasoning)
{
	if (t->failed || len == 0) {
		return;
	}
	if (t->output_bytes + len > REF_OUTPUT_MAX) {
		summary_text(t->out, text, REF_OUTPUT_MAX - t->output_bytes, reasoning);
		t->output_bytes = REF_OUTPUT_MAX;
		ref_error(t, "model output reached the limit of this turn; the rest was not read");
		return;
	}
	t->output_bytes += len;
	t->text_seen |= !reasoning;
	summary_text(t->out, text, len, reasoning);
}

static void ref_copy(char *dst, size_t cap, const char *src)
{
	size_t n = src != NULL ? strlen(src) : 0;

	n = n < cap ? n : cap - 1;
	memcpy(dst, src != NULL ? src : "", n);
	dst[n] = '\0';
}

static struct ref_slot *ref_slot(struct ref_turn *t, int key, const char *item_id)
{
	struct ref_slot *free_slot = NULL;

	for (size_t i = 0; i < REF_CALL_SLOTS; i++) {
		struct ref_slot *s = &t->slots[i];

		if (!s->used) {
			free_slot = free_slot != NULL ? free_slot : s;
		} else if (key >= 0 && s->key == key) {
			return s;
		} else if (key < 0 && item_id != NULL && item_id[0] != '\0' &&
			   strcmp(s->item_id, item_id) == 0) {
			return s;
		}
	}
	if (free_slot != NULL) {
		memset(free_slot, 0, sizeof(*free_slot));
		free_slot->used = true;
		free_slot->key = key;
		ref_copy(free_slot->item_id, sizeof(free_slot->item_id), item_id);
	}
	return free_slot;
}

static void ref_args(struct ref_slot *s, const char *text, bool replace)
{
	size_t len = text != NULL ? strlen(text) : 0;

	if (replace) {
		s->args_len = 0;
		s->args_cut = false;
	}
	if (s->args_len + len > REF_ARGS_MAX) {
		len = REF_ARGS_MAX - s->args_len;
		s->args_cut = true;
	}
	memcpy(s->args + s->args_len, text, len);
	s->args_len += len;
}

static void ref_emit_call(struct ref_turn *t, struct ref_slot *s)
{
	if (s->emitted || t->failed) {
		return;
	}
	s->emitted = true;
	if (s->args_cut) {
		ref_error(t, "tool call arguments exceed the limit of 4095 bytes");
		return;
	}
	t->call_seen = true;
	summary_call(t->out, s->call_id[0] != '\0' ? s->call_id : s->item_id, s->name,
		     strlen(s->name), s->args, s->args_len);
}

/* A string member, or NULL. */
static const char *str_of(const cJSON *obj, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

static int int_of(const cJSON *obj, const char *key)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(n) ? n->valueint : -1;
}

static void usage_of(struct ref_turn *t, const cJSON *u, const char *in, const char *out,
		     const char *details)
{
	if (!cJSON_IsObject(u)) {
		return;
	}
	t->usage.input_tokens = (uint32_t)(int_of(u, in) < 0 ? 0 : int_of(u, in));
	t->usage.output_tokens = (uint32_t)(int_of(u, out) < 0 ? 0 : int_of(u, out));
	t->usage.total_tokens =
		(uint32_t)(int_of(u, "total_tokens") < 0 ? 0 : int_of(u, "total_tokens"));
	int r = int_of(cJSON_GetObjectItemCaseSensitive(u, details), "reasoning_tokens");

	t->usage.reasoning_tokens = (uint32_t)(r < 0 ? 0 : r);
}

static void error_line(struct ref_turn *t, const char *what, const cJSON *err)
{
	char line[PROVIDER_LINE_MAX_BENCH];
	const char *msg = str_of(err, "message");
	const char *code = str_of(err, "code");

	if (code != NULL) {
		snprintf(line, sizeof(line), "%s (%s): %s", what, code, msg ? msg : "no details");
	} else {
		snprintf(line, sizeof(line), "%s: %s", what, msg ? msg : "no details");
	}
	ref_error(t, line);
}

/* One Responses event: dispatched on its "type". */
static void ref_responses(struct ref_turn *t, const cJSON *ev)
{
	const char *type = str_of(ev, "type");
	const cJSON *resp = cJSON_GetObjectItemCaseSensitive(ev, "response");
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(ev, "item");
	int index = int_of(ev, "output_index");
	const char *item_id = str_of(ev, "item_id");

	if (type == NULL) {
		return;
	}
	if (str_of(resp, "id") != NULL) {
		ref_copy(t->out->response_id, sizeof(t->out->response_id), str_of(resp, "id"));
	}
	if (strcmp(type, "response.output_text.delta") == 0 ||
	    strcmp(type, "response.refusal.delta") == 0) {
		const char *d = str_of(ev, "delta");

		ref_text(t, d, d ? strlen(d) : 0, false);
	} else if (strcmp(type, "response.reasoning_text.delta") == 0 ||
		   strcmp(type, "response.reasoning_summary_text.delta") == 0) {
		const char *d = str_of(ev, "delta");

		ref_text(t, d, d ? strlen(d) : 0, true);
	} else if (strcmp(type, "response.output_text.done") == 0) {
		const char *text = str_of(ev, "text");

		if (!t->text_seen && text != NULL) {
			ref_text(t, text, strlen(text), false);
		}
	} else if (strcmp(type, "response.function_call_arguments.delta") == 0 ||
		   strcmp(type, "response.function_call_arguments.done") == 0) {
		struct ref_slot *s = NULL;
		bool done = type[sizeof("response.function_call_arguments.") - 1] == 'd' &&
			    type[sizeof("response.function_call_arguments.") + 1] == 'n';

		if (index >= 0 || (item_id != NULL && item_id[0] != '\0')) {
			s = ref_slot(t, index, item_id);
		}
		if (s != NULL) {
			const char *text = str_of(ev, done ? "arguments" : "delta");

			if (text != NULL) {
				ref_args(s, text, done);
			}
		}
	} else if (strcmp(type, "response.output_item.added") == 0 ||
		   strcmp(type, "response.output_item.done") == 0) {
		const char *id = str_of(item, "id");
		const char *key = id != NULL && id[0] != '\0' ? id : str_of(item, "call_id");
		struct ref_slot *s;

		if (str_of(item, "type") == NULL || strcmp(str_of(item, "type"), "function_call") != 0) {
			return;
		}
		s = ref_slot(t, index, key);
		if (s == NULL) {
			return;
		}
		if (key != NULL && key[0] != '\0') {
			ref_copy(s->item_id, sizeof(s->item_id), key);
		}
		if (str_of(item, "call_id") != NULL && str_of(item, "call_id")[0] != '\0') {
			ref_copy(s->call_id, sizeof(s->call_id), str_of(item, "call_id"));
		}
		if (str_of(item, "name") != NULL && str_of(item, "name")[0] != '\0') {
			ref_copy(s->name, sizeof(s->name), str_of(item, "name"));
		}
		if (type[sizeof("response.output_item.") - 1] == 'd') {
			if (str_of(item, "arguments") != NULL) {
				ref_args(s, str_of(item, "arguments"), true);
			}
			ref_emit_call(t, s);
		}
	} else if (strcmp(type, "response.completed") == 0) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(resp, "usage");

		usage_of(t, u, "input_tokens", "output_tokens", "output_tokens_details");
		t->terminal = true;
	} else if (strcmp(type, "response.incomplete") == 0) {
		char line[PROVIDER_LINE_MAX_BENCH];
		const char *why = str_of(cJSON_GetObjectItemCaseSensitive(resp, "incomplete_details"),
					 "reason");

		t->terminal = true;
		snprintf(line, sizeof(line), "the response is incomplete: %s",
			 why != NULL ? why : "no reason given");
		ref_error(t, line);
	} else if (strcmp(type, "response.failed") == 0) {
		t->terminal = true;
		error_line(t, "the response failed", cJSON_GetObjectItemCaseSensitive(resp, "error"));
	} else if (strcmp(type, "error") == 0) {
		const cJSON *err = cJSON_GetObjectItemCaseSensitive(ev, "error");

		error_line(t, "the provider reported an error", err != NULL ? err : ev);
	}
}

/* A choice's delta content: a string, or an array of typed parts. */
static void ref_chat_content(struct ref_turn *t, const cJSON *content)
{
	const cJSON *part;

	if (cJSON_IsString(content)) {
		ref_text(t, content->valuestring, strlen(content->valuestring), false);
		return;
	}
	cJSON_ArrayForEach(part, content) {
		const cJSON *thinking = cJSON_GetObjectItemCaseSensitive(part, "thinking");
		const cJSON *sub;
		const char *text = str_of(part, "text");

		if (text != NULL) {
			ref_text(t, text, strlen(text), false);
		}
		cJSON_ArrayForEach(sub, thinking) {
			text = str_of(sub, "text");
			if (text != NULL) {
				ref_text(t, text, strlen(text), true);
			}
		}
	}
}

/* One Chat Completions chunk. */
static void ref_chat(struct ref_turn *t, const cJSON *chunk)
{
	const cJSON *choice;
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(chunk, "error");

	cJSON_ArrayForEach(choice, cJSON_GetObjectItemCaseSensitive(chunk, "choices")) {
		const cJSON *delta = cJSON_GetObjectItemCaseSensitive(choice, "delta");
		const cJSON *call;
		const char *reason = str_of(choice, "finish_reason");
		int position = 0;

		if (int_of(choice, "index") > 0) {
			continue; /* other choices (n > 1, never requested) are not shown */
		}
		ref_chat_content(t, cJSON_GetObjectItemCaseSensitive(delta, "content"));
		for (const char *const *k = (const char *const[]){"refusal", NULL}; *k; k++) {
			const char *text = str_of(delta, *k);

			if (text != NULL) {
				ref_text(t, text, strlen(text), false);
			}
		}
		for (const char *const *k = (const char *const[]){"reasoning_content", "reasoning",
								   NULL};
		     *k; k++) {
			const char *text = str_of(delta, *k);

			if (text != NULL) {
				ref_text(t, text, strlen(text), true);
			}
		}
		cJSON_ArrayForEach(call, cJSON_GetObjectItemCaseSensitive(delta, "tool_calls")) {
			const cJSON *fn = cJSON_GetObjectItemCaseSensitive(call, "function");
			int key = int_of(call, "index") >= 0 ? int_of(call, "index") : position;
			struct ref_slot *s = ref_slot(t, key, NULL);
			const char *id = str_of(call, "id");
			const char *name = str_of(fn, "name");

			position++;
			if (s == NULL) {
				continue;
			}
			if (id != NULL && id[0] != '\0' && s->call_id[0] == '\0') {
				ref_copy(s->call_id, sizeof(s->call_id), id);
			}
			if (name != NULL && name[0] != '\0' && s->name[0] == '\0') {
				ref_copy(s->name, sizeof(s->name), name);
			}
			if (str_of(fn, "arguments") != NULL) {
				ref_args(s, str_of(fn, "arguments"), false);
			}
		}
		if (reason != NULL) {
			ref_copy(t->finish, sizeof(t->finish), reason);
		}
	}
	usage_of(t, cJSON_GetObjectItemCaseSensitive(chunk, "usage"), "prompt_tokens",
		 "completion_tokens", "completion_tokens_details");
	if (cJSON_IsObject(err)) {
		error_line(t, "the provider reported an error", err);
	}
}

/* One whole line of the stream, without its line end. */
static void ref_line(struct ref_turn *t, const char *line, size_t len)
{
	cJSON *doc;

	if (len < 5 || memcmp(line, "data:", 5) != 0) {
		return; /* event:, id:, comments, the blank line between events */
	}
	line += 5;
	len -= 5;
	if (len > 0 && line[0] == ' ') {
		line++;
		len--;
	}
	if (len == 6 && memcmp(line, "[DONE]", 6) == 0) {
		t->terminal = true;
		t->ended = true;
		return;
	}
	doc = cJSON_ParseWithLength(line, len);
	if (doc == NULL) {
		return; /* not JSON: skipped, as the core skips it */
	}
	if (t->responses) {
		ref_responses(t, doc);
	} else {
		ref_chat(t, doc);
	}
	cJSON_Delete(doc);
	t->ended = t->terminal && t->responses;
}

static char ref_line_buffer[REF_LINE_BUFFER];

static void line_append(struct ref_turn *t, const char *data, size_t len)
{
	if (t->line_len + len > t->line_cap) {
		size_t cap = t->line_cap;
		char *grown;

		while (cap < t->line_len + len) {
			cap *= 2;
		}
		grown = malloc(cap);
		if (grown == NULL) {
			abort();
		}
		memcpy(grown, t->line, t->line_len);
		if (t->line != ref_line_buffer) {
			free(t->line);
		}
		t->line = grown;
		t->line_cap = cap;
	}
	memcpy(t->line + t->line_len, data, len);
	t->line_len += len;
	t->line_peak = t->line_len > t->line_peak ? t->line_len : t->line_peak;
}

static int ref_on_body(void *user_data, const char *data, size_t len)
{
	struct ref_turn *t = user_data;

	if (t->status < 200 || t->status > 299) {
		return 0;
	}
	while (len > 0 && !t->ended && !t->failed) {
		const char *end = memchr(data, '\n', len);
		size_t n = end != NULL ? (size_t)(end - data) : len;

		line_append(t, data, n);
		if (end == NULL) {
			break;
		}
		if (t->line_len > 0 && t->line[t->line_len - 1] == '\r') {
			t->line_len--;
		}
		ref_line(t, t->line, t->line_len);
		t->line_len = 0;
		data += n + 1;
		len -= n + 1;
	}
	return t->ended || t->failed ? 1 : 0;
}

static int ref_on_status(void *user_data, int status)
{
	((struct ref_turn *)user_data)->status = status;
	return 0;
}

static const struct http_callbacks ref_cb = {
	.on_status = ref_on_status,
	.on_body = ref_on_body,
};

static struct ref_turn ref_turn_state;

static void run_ref(const struct agent_config *cfg, struct summary *s, size_t *line_peak)
{
	static const char body[] = "{\"model\":\"bench\",\"input\":\"bench\",\"stream\":true}";
	struct ref_turn *t = &ref_turn_state;
	struct http_url url;
	struct http_request hreq = {
		.url = &url,
		.content_type = "application/json",
		.accept = "text/event-stream",
		.body = body,
		.body_len = sizeof(body) - 1,
		.io_timeout_ms = HTTP_IO_TIMEOUT_MS_DEFAULT,
		.deadline_ms = HTTP_DEADLINE_MS_DEFAULT,
	};
	int ret;

	memset(t, 0, sizeof(*t));
	t->line = ref_line_buffer;
	t->line_cap = sizeof(ref_line_buffer);
	t->out = s;
	t->responses = agent_config_protocol(cfg->endpoint) == AGENT_PROTOCOL_RESPONSES;
	if (http_url_parse(cfg->endpoint, &url) != 0) {
		summary_error(s, "bad URL");
		return;
	}
	ret = http_post(&hreq, &ref_cb, t);
	if (t->line_len > 0 && !t->ended && !t->failed) {
		ref_line(t, t->line, t->line_len); /* a last line without a line end */
	}
	if (t->line != ref_line_buffer) {
		free(t->line);
	}
	*line_peak = t->line_peak > *line_peak ? t->line_peak : *line_peak;
	if (t->failed) {
		return;
	}
	if (ret < 0 && !t->terminal) {
		summary_error(s, "network error");
		return;
	}
	if (!t->responses && t->finish[0] != '\0') {
		t->terminal = true;
	}
	if (!t->terminal) {
		summary_error(s, "the stream ended before the turn completed");
		return;
	}
	if (!t->responses &&
	    (strcmp(t->finish, "length") == 0 || strcmp(t->finish, "content_filter") == 0)) {
		ref_error(t, "the response is incomplete");
		return;
	}
	for (size_t i = 0; i < REF_CALL_SLOTS; i++) {
		if (t->slots[i].used && (!t->responses || !t->slots[i].emitted)) {
			ref_emit_call(t, &t->slots[i]);
		}
	}
	if (t->failed) {
		return;
	}
	if (!t->text_seen && !t->call_seen) {
		summary_error(s, "an empty turn (the reference does not retry)");
		return;
	}
	s->usage = t->usage;
	usage_normalize(&s->usage);
	ref_copy(s->finish, sizeof(s->finish), t->responses ? "" : t->finish);
}

int main(int argc, char **argv)
{
	struct agent_config cfg;
	struct summary s;
	const char *why;
	size_t line_peak = 0;
	bool ref;
	int reps;

	if (argc != 4 || (strcmp(argv[1], "core") != 0 && strcmp(argv[1], "ref") != 0) ||
	    (reps = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: %s core|ref URL REPETITIONS\n", argv[0]);
		return 2;
	}
	ref = strcmp(argv[1], "ref") == 0;
	memset(&cfg, 0, sizeof(cfg));
	if (agent_config_check_endpoint(argv[2], &why) != 0) {
		fprintf(stderr, "bad URL: %s\n", why);
		return 2;
	}
	snprintf(cfg.endpoint, sizeof(cfg.endpoint), "%s", argv[2]);
	snprintf(cfg.model, sizeof(cfg.model), "bench");
	cfg.reasoning = AGENT_REASONING_MEDIUM;
	if (provider_init() != 0) {
		return 1;
	}
	/* Every turn is summarised afresh: the last one is printed. */
	for (int i = 0; i < reps; i++) {
		summary_reset(&s);
		if (ref) {
			run_ref(&cfg, &s, &line_peak);
		} else {
			run_core(&cfg, &s);
		}
	}
	summary_print(&s);
	if (ref) {
		printf(" ref_line_peak=%zu", line_peak);
	}
	printf("\n");
	if (s.errors != 0) {
		printf("last_error=%s\n", s.last_error);
	}
	return 0;
}
