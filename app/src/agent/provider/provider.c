/*
 * One provider turn: the request over HTTP, the response through SSE and the streaming
 * JSON tokenizer into the protocol's adapter (provider_responses.c, provider_chat.c), and
 * HTTP and network failures turned into one clear error event.
 */
#include "provider.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_mem.h"
#include "http.h"
#include "provider_internal.h"
#include "utf8.h"

/*
 * Strings of one event whose meaning is not known yet (pending, aux) and tool-call arguments:
 * each field takes a block at its first byte and gives it back when done, so a turn holds
 * blocks only while such text is on its way. One block per field: a field never waits.
 */
#define STREAM_BLOCK_BYTES  ((PROVIDER_CALL_ARGS_BYTES + 7) & ~7)
#define STREAM_BLOCKS	    PROVIDER_CALL_SLOTS
#define PRETYPE_BLOCKS	    2 /* pending and aux */
#define PRETYPE_BLOCK_BYTES ((CONFIG_AGENT_PROVIDER_PRETYPE_BYTES + 1 + 7) & ~7)
#define BODY_BYTES	   ((CONFIG_AGENT_PROVIDER_REQUEST_BODY_SIZE + 7) & ~7)

static uint8_t stream_buf[STREAM_BLOCKS * STREAM_BLOCK_BYTES] AGENT_PSRAM_ATTR;
static uint8_t pretype_buf[PRETYPE_BLOCKS * PRETYPE_BLOCK_BYTES] AGENT_PSRAM_ATTR;
static uint8_t body_buf[BODY_BYTES] AGENT_PSRAM_ATTR;
static struct agent_pool *stream_pool;
static struct agent_pool *pretype_pool;
static struct agent_pool *body_pool;
/* The parse state of the one turn that runs: the worker's alone, PSRAM-preferred. */
static struct provider_turn turn AGENT_PSRAM_ATTR;
/* The whole provider request, streaming included (a test hook may shorten it). */
static uint32_t request_deadline_ms = CONFIG_AGENT_REQUEST_DEADLINE_S * 1000u;

#if defined(CONFIG_AGENT_TOOL_TEST_HOOKS)
void provider_set_request_deadline_ms(uint32_t ms)
{
	request_deadline_ms = ms;
}
#endif

/* ---- captures ------------------------------------------------------------------------------ */

/* What a block field without its block reads as. */
static char capture_none[1];

void capture_init(struct capture *c, char *buf, size_t cap)
{
	c->buf = buf;
	c->pool = NULL;
	c->cap = cap;
	capture_reset(c);
}

void capture_init_block(struct capture *c, struct agent_pool *pool, size_t cap)
{
	c->buf = capture_none;
	c->pool = pool;
	c->cap = cap;
	capture_reset(c);
}

void capture_reset(struct capture *c)
{
	if (c->pool != NULL && c->buf != capture_none) {
		(void)agent_pool_free(c->pool, c->buf);
		c->buf = capture_none;
	}
	c->len = 0;
	c->truncated = false;
	c->lost = 0;
	if (c->buf != capture_none) {
		c->buf[0] = '\0';
	}
}

void capture_add(struct capture *c, const char *text, size_t len)
{
	size_t room;

	if (len == 0) {
		return; /* nothing to keep: capture_none, the empty text, is never written */
	}
	if (c->pool != NULL && c->buf == capture_none) {
		char *block = agent_pool_alloc(c->pool);

		if (block == NULL) {
			/* Not reached: the pool has a block for every block field of the turn. */
			c->lost += len;
			c->truncated = true;
			return;
		}
		c->buf = block;
	}
	room = c->cap - c->len;

	if (len > room) {
		/* Cut between characters (the fragments are whole ones), and count the rest. */
		size_t keep = utf8_prefix(text, len, room);

		c->lost += len - keep;
		len = keep;
		c->truncated = true;
	}
	memcpy(c->buf + c->len, text, len);
	c->len += len;
	c->buf[c->len] = '\0';
}

bool capture_is(const struct capture *c, const char *text)
{
	return !c->truncated && c->len == strlen(text) && memcmp(c->buf, text, c->len) == 0;
}

int32_t parse_int32(const char *text, size_t len)
{
	int64_t value = 0;

	if (len == 0) {
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9' || value > INT32_MAX / 10) {
			return -1;
		}
		value = value * 10 + (text[i] - '0');
	}
	return value > INT32_MAX ? -1 : (int32_t)value;
}

/* ---- emitters ------------------------------------------------------------------------------ */

static int emit(struct provider_turn *t, const struct provider_event *ev)
{
	int ret = t->req->emit(t->req->user_data, ev);

	if (ret != 0 && t->stop == 0) {
		t->stop = ret;
	}
	return t->stop;
}

int turn_emit_text(struct provider_turn *t, const char *text, size_t len, bool reasoning)
{
	struct provider_event ev = {.type = reasoning ? PROVIDER_REASONING : PROVIDER_TEXT};

	if (t->failed || len == 0) {
		return t->stop;
	}
	if (t->output_bytes + len > CONFIG_AGENT_MODEL_OUTPUT_MAX) {
		len = CONFIG_AGENT_MODEL_OUTPUT_MAX - t->output_bytes;
		if (len > 0) {
			ev.text.text = text;
			ev.text.len = len;
			emit(t, &ev);
		}
		t->output_bytes = CONFIG_AGENT_MODEL_OUTPUT_MAX;
		turn_emit_error(t, PROVIDER_ERR_LIMIT,
				"model output reached the limit of this turn; the rest was not read");
		return t->stop;
	}
	t->output_bytes += len;
	if (!reasoning) {
		t->text_seen = true;
	}
	ev.text.text = text;
	ev.text.len = len;
	return emit(t, &ev);
}

int turn_emit_error(struct provider_turn *t, enum provider_error kind, const char *message)
{
	struct provider_event ev = {.type = PROVIDER_ERROR};

	if (t->failed) {
		return t->stop;
	}
	t->failed = true;
	ev.error.kind = kind;
	ev.error.status = t->status_code;
	ev.error.retry_after_s = t->retry_after_s;
	ev.error.message = (message != NULL && message[0] != '\0') ? message : "unknown error";
	emit(t, &ev);
	/* Nothing follows an error: stop reading the stream. */
	if (t->stop == 0) {
		t->stop = 1;
	}
	return t->stop;
}

bool turn_caller_args_free(const struct provider_turn *t)
{
	if (t->caller_args == NULL || t->call_seen || t->aux.buf == t->caller_args) {
		return false;
	}
	for (size_t i = 0; i < PROVIDER_CALL_SLOTS; i++) {
		if (t->calls[i].used && t->calls[i].args.buf == t->caller_args) {
			return false;
		}
	}
	return true;
}

static struct call_slot *caller_args_holder(struct provider_turn *t)
{
	for (size_t i = 0; i < PROVIDER_CALL_SLOTS; i++) {
		if (t->calls[i].used && t->calls[i].args.buf == t->caller_args) {
			return &t->calls[i];
		}
	}
	return NULL;
}

/*
 * The turn's first emitted call is the one the tool loop runs: its arguments end in the tool
 * loop's buffer. They are there already when it is the first call made (the usual case);
 * else the holder of that buffer and this call trade places (its text moves to this call's
 * block).
 */
static bool lend_caller_args(struct provider_turn *t, struct call_slot *slot)
{
	struct call_slot *holder;
	char *block;

	if (t->caller_args == NULL || slot->args.buf == t->caller_args) {
		return true;
	}
	if (t->aux.buf == t->caller_args) {
		/* An element's arguments wait there: they move to a pre-type block (cut there). */
		struct capture moved;

		capture_init_block(&moved, pretype_pool, CONFIG_AGENT_PROVIDER_PRETYPE_BYTES);
		capture_add(&moved, t->aux.buf, t->aux.len);
		moved.truncated = moved.truncated || t->aux.truncated;
		moved.lost += t->aux.lost;
		t->aux = moved;
	}
	holder = caller_args_holder(t);
	block = slot->args.buf;
	if (holder == NULL) {
		struct capture kept = slot->args;

		memcpy(t->caller_args, slot->args.buf, slot->args.len + 1);
		capture_reset(&slot->args);
		slot->args = kept;
		slot->args.buf = t->caller_args;
		slot->args.pool = NULL;
		return true;
	}
	if (block == capture_none) {
		block = agent_pool_alloc(slot->args.pool);
		if (block == NULL) {
			/* Not reached (a block per field). Copying into the tool loop's buffer over
			 * the holder's text is not an option: the call is refused. */
			return false;
		}
		block[0] = '\0';
	}
	for (size_t i = 0, n = (slot->args.len > holder->args.len ? slot->args.len
								    : holder->args.len) + 1;
	     i < n; i++) {
		char c = block[i];

		block[i] = t->caller_args[i];
		t->caller_args[i] = c;
	}
	holder->args.buf = block;
	holder->args.pool = slot->args.pool;
	slot->args.buf = t->caller_args;
	slot->args.pool = NULL;
	return true;
}

int turn_emit_call(struct provider_turn *t, struct call_slot *slot)
{
	struct provider_event ev = {.type = PROVIDER_TOOL_CALL};

	if (slot->emitted || t->failed) {
		return t->stop;
	}
	slot->emitted = true;
	if (slot->args_pretype_cut) {
		char line[PROVIDER_LINE_MAX];

		snprintf(line, sizeof(line),
			 "tool call arguments came before their event's type or index and exceed "
			 "the %d-byte buffer for such text",
			 CONFIG_AGENT_PROVIDER_PRETYPE_BYTES);
		return turn_emit_error(t, PROVIDER_ERR_LIMIT, line);
	}
	if (slot->args.truncated) {
		return turn_emit_error(t, PROVIDER_ERR_LIMIT,
				       "tool call arguments exceed the limit of 4095 bytes");
	}
	if (!t->call_seen && !lend_caller_args(t, slot)) {
		return turn_emit_error(t, PROVIDER_ERR_LIMIT,
				       "no memory for the tool call's arguments: its buffers are in use");
	}
	t->call_seen = true;
	ev.call.call_id = slot->call_id[0] != '\0' ? slot->call_id : slot->item_id;
	ev.call.name = slot->name;
	ev.call.name_len = slot->name_len;
	ev.call.arguments = slot->args.buf;
	ev.call.arguments_len = slot->args.len;
	(void)emit(t, &ev);
	/*
	 * Emitted: its block goes back, and a call in the tool loop's buffer lets go of it, so
	 * text the server sends for this call later (a second done event, late deltas) lands in a
	 * block of its own and never changes the arguments the tool loop was shown and runs.
	 */
	if (slot->args.pool != NULL) {
		capture_reset(&slot->args);
	} else if (slot->args.buf == t->caller_args) {
		capture_init_block(&slot->args, stream_pool, CONFIG_AGENT_TOOL_ARGS_MAX_LEN);
	}
	return t->stop;
}

int turn_emit_pending(struct provider_turn *t, bool reasoning, const char *what)
{
	const struct capture *p = &t->pending;
	char line[PROVIDER_LINE_MAX];

	turn_emit_text(t, p->buf, p->len, reasoning);
	/* Reasoning is never shown, so only a cut of the answer is worth a word. */
	if (!p->truncated || reasoning) {
		return t->stop;
	}
	snprintf(line, sizeof(line),
		 "text cut: a piece of the answer came before %s and exceeds the %d-byte "
		 "buffer; not shown: %u of %u bytes",
		 what, CONFIG_AGENT_PROVIDER_PRETYPE_BYTES, (unsigned int)p->lost,
		 (unsigned int)(p->len + p->lost));
	return turn_emit_error(t, PROVIDER_ERR_LIMIT, line);
}

bool turn_id_fits(struct provider_turn *t, const struct capture *id, const char *what)
{
	char line[PROVIDER_LINE_MAX];

	if (id->truncated) {
		snprintf(line, sizeof(line),
			 "the %s from the server exceeds the limit of %d bytes (it has %u)", what,
			 PROVIDER_ID_MAX, (unsigned int)(id->len + id->lost));
	} else if (memchr(id->buf, '\0', id->len) != NULL) {
		snprintf(line, sizeof(line), "the %s from the server contains a NUL byte", what);
	} else {
		return true;
	}
	turn_emit_error(t, PROVIDER_ERR_LIMIT, line);
	return false;
}

bool turn_name_fits(struct provider_turn *t, const struct capture *name)
{
	char line[PROVIDER_LINE_MAX];

	if (!name->truncated) {
		return true; /* a NUL in it is the tool loop's to refuse: no tool has that name */
	}
	snprintf(line, sizeof(line),
		 "the tool name from the server exceeds the limit of %d bytes (it has %u)",
		 PROVIDER_NAME_MAX, (unsigned int)(name->len + name->lost));
	turn_emit_error(t, PROVIDER_ERR_LIMIT, line);
	return false;
}

/*
 * A call that has no slot: count it once (by its key, or a hash of its item id), so that the
 * tool loop can say how many calls the turn made. Its arguments are not kept.
 */
static void note_dropped(struct provider_turn *t, int32_t key, const char *item_id)
{
	size_t kept = t->calls_dropped < PROVIDER_CALLS_COUNTED ? t->calls_dropped
							       : PROVIDER_CALLS_COUNTED;

	if (key < 0) {
		uint32_t h = 2166136261u;

		for (const char *p = item_id != NULL ? item_id : ""; *p != '\0'; p++) {
			h = (h ^ (uint8_t)*p) * 16777619u;
		}
		key = (int32_t)(h | 0x40000000u) & 0x7fffffff;
	}
	for (size_t i = 0; i < kept; i++) {
		if (t->dropped_keys[i] == key) {
			return;
		}
	}
	if (kept == PROVIDER_CALLS_COUNTED) {
		/* No room to tell new keys from old ones: the turn made more calls than counted. */
		t->calls_more = true;
		return;
	}
	t->dropped_keys[kept] = key;
	t->calls_dropped++;
}

struct call_slot *turn_call_find(struct provider_turn *t, int32_t key, const char *item_id,
				 bool create)
{
	struct call_slot *free_slot = NULL;

	for (size_t i = 0; i < PROVIDER_CALL_SLOTS; i++) {
		struct call_slot *s = &t->calls[i];

		if (!s->used) {
			if (free_slot == NULL) {
				free_slot = s;
			}
			continue;
		}
		if (key >= 0 && s->key == key) {
			return s;
		}
		if (key < 0 && item_id != NULL && item_id[0] != '\0' &&
		    strcmp(s->item_id, item_id) == 0) {
			return s;
		}
	}
	if (!create) {
		return NULL;
	}
	if (free_slot == NULL) {
		note_dropped(t, key, item_id);
		return NULL;
	}
	free_slot->used = true;
	free_slot->emitted = false;
	free_slot->key = key;
	free_slot->call_id[0] = '\0';
	free_slot->name[0] = '\0';
	free_slot->name_len = 0;
	snprintf(free_slot->item_id, sizeof(free_slot->item_id), "%s",
		 item_id != NULL ? item_id : "");
	capture_reset(&free_slot->args);
	free_slot->args_pretype_cut = false;
	if (turn_caller_args_free(t)) {
		capture_init(&free_slot->args, t->caller_args, CONFIG_AGENT_TOOL_ARGS_MAX_LEN);
	} else {
		capture_init_block(&free_slot->args, stream_pool, CONFIG_AGENT_TOOL_ARGS_MAX_LEN);
	}
	return free_slot;
}

void turn_aux_reset(struct provider_turn *t)
{
	if (t->aux.buf == t->caller_args && t->caller_args != NULL) {
		/* The tool loop's buffer is not a block: aux lets go of it, nothing to free. */
		capture_init_block(&t->aux, pretype_pool, CONFIG_AGENT_PROVIDER_PRETYPE_BYTES);
	} else {
		capture_reset(&t->aux);
	}
}

void turn_event_reset(struct provider_turn *t)
{
	capture_reset(&t->type_cap);
	t->type_kind = 0;
	capture_reset(&t->item_id_cap);
	capture_reset(&t->pending);
	turn_aux_reset(t);
	capture_reset(&t->item_type_cap);
	capture_reset(&t->call_id_cap);
	capture_reset(&t->name_cap);
	capture_reset(&t->err_message_cap);
	capture_reset(&t->err_code_cap);
	capture_reset(&t->status_cap);
	capture_reset(&t->reason_cap);
	t->pending_kind = PENDING_NONE;
	t->output_index = -1;
	t->element_index = -1;
	t->choice_index = -1;
	t->err_seen = false;
	t->json_error = false;
	t->done_marker = false;
	t->probe_len = 0;
	t->probing = true;
}

/* ---- SSE and JSON glue --------------------------------------------------------------------- */

static int on_json(void *user_data, const struct json_stream *js, const struct json_value *v);

static void json_feed(struct provider_turn *t, const char *data, size_t len)
{
	if (t->json_error || len == 0) {
		return;
	}
	int ret = json_stream_feed(&t->json, data, len);

	if (ret < 0) {
		/* Not JSON: the event is skipped (servers send the odd keep-alive payload). */
		t->json_error = true;
	}
}

/* Hold the first bytes of an event's data until they can no longer be "[DONE]". */
static void probe_flush(struct provider_turn *t)
{
	t->probing = false;
	json_feed(t, t->probe, t->probe_len);
}

/*
 * What the SSE callbacks return: a callback's stop, or non-zero once the turn has ended, so
 * that nothing after the protocol's end ([DONE], a terminal event) is read at all.
 */
static int sse_result(const struct provider_turn *t)
{
	return t->stop != 0 ? t->stop : t->ended ? 1 : 0;
}

static int sse_on_data(void *user_data, const char *data, size_t len, bool first)
{
	static const char done[] = "[DONE]";
	struct provider_turn *t = user_data;

	if (first) {
		turn_event_reset(t);
		json_stream_reset(&t->json);
	}
	while (t->probing && len > 0) {
		if (t->probe_len == sizeof(done) - 1 || data[0] != done[t->probe_len]) {
			probe_flush(t);
			break;
		}
		t->probe[t->probe_len++] = data[0];
		data++;
		len--;
	}
	if (!t->probing) {
		json_feed(t, data, len);
	}
	return sse_result(t);
}

static int sse_on_event(void *user_data, const char *event_type)
{
	struct provider_turn *t = user_data;

	(void)event_type; /* dispatch is on the JSON "type": servers differ in event lines */
	if (t->probing && t->probe_len == 6) {
		t->terminal = true;
	} else {
		if (t->probing) {
			probe_flush(t);
		}
		if (!t->json_error && json_stream_finish(&t->json) == 0) {
			t->adapter->on_event_end(t);
		}
	}
	/* [DONE] or a terminal event ends the turn: what a server sends after it is not read. */
	t->ended = t->terminal;
	return sse_result(t);
}

static void sse_on_discard(void *user_data)
{
	turn_event_reset(user_data);
}

static const struct sse_callbacks sse_cb = {
	.on_data = sse_on_data,
	.on_event = sse_on_event,
	.on_discard = sse_on_discard,
};

/* ---- HTTP glue ----------------------------------------------------------------------------- */

static bool status_ok(const struct provider_turn *t)
{
	return t->status_code >= 200 && t->status_code < 300;
}

/* A 2xx answer that is an event stream (or does not say what it is): read as the turn. */
static bool body_is_stream(const struct provider_turn *t)
{
	return status_ok(t) && !t->not_stream;
}

/* Whether the media type of a Content-Type value (any case, parameters after ';') is @p type. */
static bool media_type_is(const char *value, const char *type)
{
	size_t n = strlen(type);

	for (size_t i = 0; i < n; i++) {
		char c = value[i];

		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		if (c != type[i]) {
			return false;
		}
	}
	return value[n] == '\0' || value[n] == ';' || value[n] == ' ' || value[n] == '\t';
}

static int on_json(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct provider_turn *t = user_data;

	if (body_is_stream(t)) {
		return t->adapter->on_value(t, js, v);
	}
	/* An error body: OpenAI {"error":{"message","type","code"}}, vLLM {"message",...}. */
	if (v->token == JSON_STRING &&
	    (json_stream_path_is(js, "error.message") || json_stream_path_is(js, "message"))) {
		if (v->first) {
			capture_reset(&t->err_message_cap);
		}
		capture_add(&t->err_message_cap, v->text, v->len);
		t->err_seen = true;
	} else if ((v->token == JSON_STRING || v->token == JSON_NUMBER) &&
		   (json_stream_path_is(js, "error.code") || json_stream_path_is(js, "error.type"))) {
		/* A code names the cause best; the type serves when the code is null. */
		if (json_stream_path_is(js, "error.type") && t->err_code_cap.len > 0) {
			return 0;
		}
		if (v->first || v->token == JSON_NUMBER) {
			capture_reset(&t->err_code_cap);
		}
		capture_add(&t->err_code_cap, v->text, v->len);
	}
	return 0;
}

/* The request body goes back to its pool (sent, or no answer came). */
static void body_release(struct provider_turn *t)
{
	if (t->body_block != NULL) {
		(void)agent_pool_free(body_pool, t->body_block);
		t->body_block = NULL;
	}
}

static int http_on_status(void *user_data, int status)
{
	struct provider_turn *t = user_data;

	t->status_code = status;
	body_release(t); /* sent whole before the answer is read; a retry builds it again */
	turn_event_reset(t);
	json_stream_reset(&t->json);
	return 0;
}

static int http_on_header(void *user_data, const char *name, const char *value)
{
	struct provider_turn *t = user_data;

	if (strcmp(name, "retry-after") == 0) {
		int32_t s = parse_int32(value, strlen(value));

		t->retry_after_s = s > 0 ? (uint32_t)s : 0;
	} else if (strcmp(name, "content-type") == 0) {
		size_t n = 0;

		t->not_stream = !media_type_is(value, "text/event-stream");
		/* Kept for the error line, printable and cut. */
		for (; value[n] != '\0' && n < sizeof(t->content_type) - 1; n++) {
			t->content_type[n] = (value[n] >= 0x20 && value[n] < 0x7f) ? value[n] : ' ';
		}
		t->content_type[n] = '\0';
	}
	return 0;
}

static int http_on_body(void *user_data, const char *data, size_t len)
{
	struct provider_turn *t = user_data;

	if (body_is_stream(t)) {
		int ret;

		/* agent status: lowest internal free while streaming (rate-limited: a reading
		 * walks the heap) */
		(void)agent_mem_stream_chunk(agent_uptime_ms());
		ret = sse_feed(&t->sse, data, len);

		return ret != 0 ? ret : t->stop;
	}
	/* Keep the start of the body for servers that answer errors (or pages) in plain text. */
	for (size_t i = 0; i < len && t->http_raw_len < sizeof(t->http_raw) - 1; i++) {
		char c = data[i];

		t->http_raw[t->http_raw_len++] = (c >= 0x20 && c < 0x7f) ? c : ' ';
	}
	t->http_raw[t->http_raw_len] = '\0';
	json_feed(t, data, len);
	return 0;
}

static const struct http_callbacks http_cb = {
	.on_status = http_on_status,
	.on_header = http_on_header,
	.on_body = http_on_body,
};

static bool code_is(const struct provider_turn *t, const char *code)
{
	return strcmp(t->err_code, code) == 0;
}

static const char *body_detail(const struct provider_turn *t)
{
	return t->err_message_cap.len > 0 ? t->err_message
	       : t->http_raw_len > 0	   ? t->http_raw
					   : "no details";
}

static void http_error(struct provider_turn *t, char *line, size_t len)
{
	const char *detail = body_detail(t);
	const char *what;
	int s = t->status_code;

	if (s == 400) {
		what = "bad request";
	} else if (s == 401) {
		what = "authentication failed (check agent config key)";
	} else if (s == 403) {
		what = "forbidden";
	} else if (s == 404) {
		what = "not found (check the endpoint URL and the model)";
	} else if (s == 429 && (code_is(t, "insufficient_quota"))) {
		what = "insufficient quota; retrying will not help";
	} else if (s == 429) {
		what = "rate limited";
	} else if (s == 503) {
		what = "service unavailable";
	} else if (s >= 500) {
		what = "server error";
	} else {
		what = "unexpected status";
	}
	if (t->retry_after_s > 0) {
		snprintf(line, len, "HTTP %d %s, retry after %u s: %s", s, what,
			 (unsigned int)t->retry_after_s, detail);
	} else {
		snprintf(line, len, "HTTP %d %s: %s", s, what, detail);
	}
}

static void network_error(struct provider_turn *t, int err, const struct http_url *url,
			  char *line, size_t len)
{
	enum provider_error kind = PROVIDER_ERR_NETWORK;

	switch (err) {
	case -ETIMEDOUT:
		kind = PROVIDER_ERR_TIMEOUT;
		snprintf(line, len, "no data from %s for %d s", url->host, CONFIG_AGENT_IO_TIMEOUT_S);
		break;
	case -ETIME:
		kind = PROVIDER_ERR_TIMEOUT;
		if (request_deadline_ms % 1000u == 0) {
			snprintf(line, len, "the request took longer than %u s",
				 (unsigned int)(request_deadline_ms / 1000u));
		} else {
			snprintf(line, len, "the request took longer than %u ms",
				 (unsigned int)request_deadline_ms);
		}
		break;
	case -ECANCELED:
		kind = PROVIDER_ERR_CANCELLED;
		snprintf(line, len, "cancelled");
		break;
	case -EHOSTUNREACH:
		snprintf(line, len, "cannot resolve %s", url->host);
		break;
	case -ECONNREFUSED:
		snprintf(line, len, "connection refused by %s:%u", url->host,
			 (unsigned int)url->port);
		break;
	case -EACCES:
		snprintf(line, len, "TLS: the certificate of %s is not trusted", url->host);
		break;
	case -ECONNABORTED:
		snprintf(line, len, "TLS handshake with %s failed", url->host);
		break;
	case -ECONNRESET:
		kind = status_ok(t) ? PROVIDER_ERR_TRUNCATED : PROVIDER_ERR_NETWORK;
		snprintf(line, len, "the connection closed before the %s ended",
			 status_ok(t) ? "turn" : "response");
		break;
	case -ENOMEM:
		/* No connection slot, or the TLS stack found its heap short (docs/jobs.md). */
		snprintf(line, len, "no memory for a connection to %s", url->host);
		break;
	case -EPROTONOSUPPORT:
		snprintf(line, len, "this firmware has no TLS: use an http:// endpoint or a "
			 "build with TLS (docs/tls.md)");
		break;
	case -ENETDOWN:
		snprintf(line, len, "the network is down (no interface is up)");
		break;
	case -EPROTO:
		snprintf(line, len, "malformed HTTP response from %s", url->host);
		break;
	case -EMSGSIZE:
		snprintf(line, len, "HTTP response headers from %s are too large", url->host);
		break;
	default:
		snprintf(line, len, "network error %d talking to %s", err, url->host);
		break;
	}
	turn_emit_error(t, kind, line);
}

static void turn_init(struct provider_turn *t, const struct provider_request *req, char *body)
{
	memset(t, 0, sizeof(*t));
	t->req = req;
	t->caller_args = req->call_args;
	t->body_block = body;
	t->protocol = agent_config_protocol(req->config->endpoint);
	t->adapter = t->protocol == AGENT_PROTOCOL_RESPONSES ? &provider_responses_adapter
							      : &provider_chat_adapter;
	capture_init(&t->type_cap, t->type, FIELD_SMALL);
	capture_init(&t->item_id_cap, t->item_id, PROVIDER_ID_MAX);
	capture_init(&t->item_type_cap, t->item_type, FIELD_SMALL);
	capture_init(&t->call_id_cap, t->call_id, PROVIDER_ID_MAX);
	capture_init(&t->name_cap, t->name, PROVIDER_NAME_MAX);
	capture_init(&t->err_message_cap, t->err_message, PROVIDER_MESSAGE_MAX);
	capture_init(&t->err_code_cap, t->err_code, FIELD_SMALL);
	capture_init(&t->status_cap, t->status, FIELD_SMALL);
	capture_init(&t->reason_cap, t->reason, FIELD_SMALL);
	capture_init(&t->response_id_cap, t->response_id, PROVIDER_ID_MAX);
	capture_init_block(&t->pending, pretype_pool, CONFIG_AGENT_PROVIDER_PRETYPE_BYTES);
	capture_init_block(&t->aux, pretype_pool, CONFIG_AGENT_PROVIDER_PRETYPE_BYTES);
	for (size_t i = 0; i < PROVIDER_CALL_SLOTS; i++) {
		capture_init_block(&t->calls[i].args, stream_pool, CONFIG_AGENT_TOOL_ARGS_MAX_LEN);
	}
	sse_init(&t->sse, &sse_cb, t);
	json_stream_init(&t->json, on_json, t);
	turn_event_reset(t);
}

/*
 * The turn is over: every block it still holds goes back. The tool loop's buffer is left as
 * it is: the first call's arguments are read from it after the turn.
 */
static void turn_release(struct provider_turn *t)
{
	body_release(t);
	capture_reset(&t->pending);
	turn_aux_reset(t);
	for (size_t i = 0; i < PROVIDER_CALL_SLOTS; i++) {
		if (t->calls[i].args.pool != NULL) {
			capture_reset(&t->calls[i].args);
		}
	}
}

/* ---- one turn ------------------------------------------------------------------------------ */

int provider_init(void)
{
	int err = 0;

	if (stream_pool == NULL) {
		err = agent_pool_init(&stream_pool, "stream", stream_buf, STREAM_BLOCK_BYTES,
				      STREAM_BLOCKS, AGENT_MEM_PSRAM);
	}
	if (err == 0 && pretype_pool == NULL) {
		err = agent_pool_init(&pretype_pool, "pretype", pretype_buf, PRETYPE_BLOCK_BYTES,
				      PRETYPE_BLOCKS, AGENT_MEM_PSRAM);
	}
	if (err == 0 && body_pool == NULL) {
		err = agent_pool_init(&body_pool, "request", body_buf, BODY_BYTES, 1,
				      AGENT_MEM_PSRAM);
	}
	return err;
}

void provider_memory_get(struct provider_memory *out)
{
	struct agent_pool_stats s;

	memset(out, 0, sizeof(*out));
	if (stream_pool != NULL && agent_pool_stats_get(stream_pool, &s) == 0) {
		out->stream_held_peak = s.held_peak_bytes;
		out->stream_written_peak = s.written_peak_bytes;
	}
	if (pretype_pool != NULL && agent_pool_stats_get(pretype_pool, &s) == 0) {
		out->stream_held_peak += s.held_peak_bytes;
		out->stream_written_peak += s.written_peak_bytes;
	}
	if (body_pool != NULL && agent_pool_stats_get(body_pool, &s) == 0) {
		out->body_held_peak = s.held_peak_bytes;
		out->body_written_peak = s.written_peak_bytes;
	}
	out->parse_state = sizeof(turn);
}

/*
 * Output tokens include the reasoning ones (OpenAI: total = input + output). A server that
 * counts reasoning apart (total = input + output + reasoning) gets it folded into the output,
 * so that input + output = total on every server.
 */
static void usage_normalize(struct provider_usage *u)
{
	uint64_t io = (uint64_t)u->input_tokens + u->output_tokens;

	if (u->reasoning_tokens > 0 && io != u->total_tokens &&
	    io + u->reasoning_tokens == u->total_tokens) {
		u->output_tokens += u->reasoning_tokens;
	}
}

/* Returns 0 when the turn completed (the caller emits usage and done), else negative. */
static int turn_settle(struct provider_turn *t);

static int run_turn(const struct provider_request *req, const struct http_url *url,
		    char *body, size_t body_len)
{
	struct provider_turn *t = &turn;
	char line[PROVIDER_LINE_MAX];
	struct http_request hreq = {
		.url = url,
		.bearer = req->key,
		.content_type = "application/json",
		.accept = "text/event-stream",
		.body = body,
		.body_len = body_len,
		.io_timeout_ms = CONFIG_AGENT_IO_TIMEOUT_S * 1000u,
		.deadline_ms = request_deadline_ms,
		.cancel = req->cancel,
	};
	int ret;

	turn_init(t, req, body);
	agent_mem_http_request(); /* agent status counts every HTTP request, each attempt */
	ret = http_post(&hreq, &http_cb, t);
	body_release(t); /* when no answer came */
	if (t->failed) {
		return -EIO;
	}
	if (ret < 0 && !(ret == -ECONNRESET && t->terminal)) {
		network_error(t, ret, url, line, sizeof(line));
		return ret;
	}
	if (t->stop != 0) {
		return -EIO;
	}
	return turn_settle(t);
}

/* The response was read whole: its status, its type, the stream's end. */
static int turn_settle(struct provider_turn *t)
{
	char line[PROVIDER_LINE_MAX];

	if (!status_ok(t)) {
		json_stream_finish(&t->json);
		http_error(t, line, sizeof(line));
		turn_emit_error(t, PROVIDER_ERR_HTTP, line);
		return -EIO;
	}
	if (t->not_stream) {
		/* A login page, a proxy's notice, an answer that ignored "stream": say so. */
		json_stream_finish(&t->json);
		snprintf(line, sizeof(line),
			 "the server did not send an event stream (HTTP %d, Content-Type: %.63s): %.199s",
			 t->status_code, t->content_type, body_detail(t));
		turn_emit_error(t, PROVIDER_ERR_INVALID, line);
		return -EIO;
	}
	sse_finish(&t->sse);
	t->adapter->on_stream_end(t);
	if (t->failed) {
		return -EIO;
	}
	if (!t->terminal) {
		turn_emit_error(t, PROVIDER_ERR_TRUNCATED,
				"the stream ended before the turn completed");
		return -EIO;
	}
	return 0;
}

#if defined(CONFIG_AGENT_TOOL_TEST_HOOKS)
int provider_feed_for_test(const struct provider_request *req, const char *content_type,
			   const char *body, size_t len, size_t piece)
{
	struct provider_turn *t = &turn;
	int ret = provider_init();

	if (ret != 0) {
		return ret;
	}
	if (piece == 0) {
		piece = 1;
	}
	turn_init(t, req, NULL);
	ret = http_on_status(t, 200);
	if (ret == 0 && content_type != NULL) {
		ret = http_on_header(t, "content-type", content_type);
	}
	for (size_t off = 0; ret == 0 && off < len; off += piece) {
		ret = http_on_body(t, body + off, len - off < piece ? len - off : piece);
	}
	if (t->failed || (ret == 0 && t->stop != 0)) {
		ret = -EIO;
	} else if (ret == 0) {
		ret = turn_settle(t);
	}
	turn_release(t);
	return ret;
}
#endif

/* The request body in a block of its own; its length, or -ENOMEM / -ENOSPC (emitted). */
static int body_build(const struct provider_request *req, const struct http_url *url,
		      char **out)
{
	struct provider_event ev = {.type = PROVIDER_ERROR};
	struct json_writer w;
	char *body = agent_pool_alloc(body_pool);
	int ret;

	ev.error.kind = PROVIDER_ERR_LIMIT;
	if (body == NULL) {
		ev.error.message = "no memory for the request: its buffers are in use";
		req->emit(req->user_data, &ev);
		return -ENOMEM;
	}
	jw_init(&w, body, BODY_BYTES);
	if (agent_config_protocol(req->config->endpoint) == AGENT_PROTOCOL_RESPONSES) {
		ret = provider_responses_body(req, &w);
	} else {
		ret = provider_chat_body(req, url->host, &w);
	}
	if (ret < 0) {
		(void)agent_pool_free(body_pool, body);
		ev.error.message = "the request does not fit the request buffer";
		req->emit(req->user_data, &ev);
		return ret;
	}
	*out = body;
	return ret;
}

int provider_run(const struct provider_request *req)
{
	struct http_url url;
	int ret;

	ret = provider_init();
	if (ret != 0) {
		return ret;
	}
	ret = http_url_parse(req->config->endpoint, &url);
	if (ret != 0) {
		struct provider_event ev = {.type = PROVIDER_ERROR};

		ev.error.kind = PROVIDER_ERR_INVALID;
		ev.error.message = "no usable endpoint: set one with agent config endpoint URL";
		req->emit(req->user_data, &ev);
		return ret;
	}
	agent_mem_request_begin(); /* PSRAM free before its buffers are taken */
	for (int attempt = 0; attempt < 2; attempt++) {
		char *body = NULL;

		/*
		 * The body is held only until it is sent (the answer's status line gives it back);
		 * the one retry below builds it again from the same request, so the same bytes go.
		 */
		ret = body_build(req, &url, &body);
		if (ret < 0) {
			break;
		}
		ret = run_turn(req, &url, body, (size_t)ret);
		turn_release(&turn);
		if (ret != 0) {
			break;
		}
		/*
		 * A turn with neither text nor a tool call is asked once more, on either protocol
		 * (local servers such as LM Studio and llama.cpp send such turns on Responses too);
		 * the same body is sent, so a Responses retry continues from the same id.
		 */
		if (!turn.text_seen && !turn.call_seen) {
			if (attempt == 0) {
				continue;
			}
			turn_emit_error(&turn, PROVIDER_ERR_INVALID,
					"invalid response: the provider returned an empty turn twice");
			ret = -EIO;
			break;
		}
		struct provider_event ev = {.type = PROVIDER_USAGE};

		if (turn.usage_seen) {
			ev.usage = turn.usage;
			usage_normalize(&ev.usage);
			emit(&turn, &ev);
		}
		ev = (struct provider_event){.type = PROVIDER_DONE};
		ev.done.response_id = turn.response_id;
		ev.done.finish_reason = turn.finish_reason;
		ev.done.calls_dropped = turn.calls_dropped;
		ev.done.calls_more = turn.calls_more;
		emit(&turn, &ev);
		ret = 0;
		break;
	}
	agent_mem_request_end(); /* PSRAM free at completion */
	return ret;
}
