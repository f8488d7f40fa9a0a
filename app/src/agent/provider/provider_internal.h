/* Shared by the provider files: the state of one turn and the helpers the adapters use. */
#ifndef AGENT_PROVIDER_INTERNAL_H
#define AGENT_PROVIDER_INTERNAL_H

#include "json_stream.h"
#include "json_writer.h"
#include "provider.h"
#include "sse.h"

/*
 * A bounded text field filled from string fragments. A field of its own buffer (capture_init)
 * or of a pool block (capture_init_block): that one takes its block at its first byte and
 * gives it back when reset, so a turn holds blocks only while a field has text.
 */
struct capture {
	char *buf; /* never NULL: an empty text when a block field holds no block */
	struct agent_pool *pool; /* the pool of a block field, else NULL */
	size_t cap; /* bytes available for text; buf has one more for the NUL */
	size_t len;
	bool truncated;
	size_t lost; /* bytes offered beyond cap, not kept */
};

void capture_init(struct capture *c, char *buf, size_t cap);
void capture_init_block(struct capture *c, struct agent_pool *pool, size_t cap);
/* Empty it; a block field gives its block back. */
void capture_reset(struct capture *c);
void capture_add(struct capture *c, const char *text, size_t len);
/* The whole captured text is @p text: every byte, none cut, no NUL of its own. */
bool capture_is(const struct capture *c, const char *text);

#define FIELD_SMALL 63

/* One error line: a fixed text, a code or host name, and the provider's message. */
#define PROVIDER_LINE_MAX (PROVIDER_MESSAGE_MAX + 200)

struct call_slot {
	bool used;
	bool emitted;
	int32_t key; /* output_index (Responses) or tool-call index (Chat); -1 when unknown */
	char item_id[PROVIDER_ID_MAX + 1];
	char call_id[PROVIDER_ID_MAX + 1];
	char name[PROVIDER_NAME_MAX + 1];
	size_t name_len; /* the name may hold a NUL: its length, not strlen() */
	struct capture args;
	bool args_pretype_cut; /* they came before their event's type and did not fit its block */
};

struct provider_turn;

struct provider_adapter {
	/** A JSON token of the current event's data. */
	int (*on_value)(struct provider_turn *t, const struct json_stream *js,
			const struct json_value *v);
	/** The event's data ended (the JSON document is complete). */
	int (*on_event_end)(struct provider_turn *t);
	/** The body ended; settle what the stream left open. */
	void (*on_stream_end)(struct provider_turn *t);
};

struct provider_turn {
	const struct provider_request *req;
	const struct provider_adapter *adapter;
	enum agent_protocol protocol;

	/* Stream decoding. */
	struct sse_decoder sse;
	struct json_stream json;
	bool json_error;    /* this event's data was not JSON */
	bool done_marker;   /* this event's data is [DONE] */
	char probe[8];	    /* the first bytes of an event's data, to recognise [DONE] */
	uint8_t probe_len;
	bool probing;

	/* Per event (reset at each event). */
	char type[FIELD_SMALL + 1];
	struct capture type_cap;
	int32_t output_index;
	char item_id[PROVIDER_ID_MAX + 1];
	struct capture item_id_cap;
	/* A string whose meaning depends on a field not seen yet (keys may come sorted). */
	struct capture pending;
	/* PENDING_STREAMED: nothing held, this event's final text streams straight out. */
	enum { PENDING_NONE, PENDING_DELTA, PENDING_TEXT, PENDING_ARGS, PENDING_ITEM_ARGS,
	       PENDING_REASONING, PENDING_STREAMED } pending_kind;
	struct capture aux; /* Chat: arguments of one tool_calls element before its index */
	/* Item fields (Responses output_item.*) and Chat tool_calls element fields. */
	char item_type[FIELD_SMALL + 1];
	struct capture item_type_cap;
	char call_id[PROVIDER_ID_MAX + 1];
	struct capture call_id_cap;
	char name[PROVIDER_NAME_MAX + 1];
	struct capture name_cap;
	int32_t element_index; /* Chat: tool_calls[].index, -1 when absent */
	int32_t choice_index;  /* Chat: choices[].index, -1 until seen */
	/* Errors and status inside the event. */
	char err_message[PROVIDER_MESSAGE_MAX + 1];
	struct capture err_message_cap;
	char err_code[FIELD_SMALL + 1];
	struct capture err_code_cap;
	bool err_seen;
	uint8_t type_kind; /* Responses: type_cap classified once it is whole (0: another type) */
	char status[FIELD_SMALL + 1];
	struct capture status_cap;
	char reason[FIELD_SMALL + 1]; /* incomplete_details.reason, finish_reason */
	struct capture reason_cap;

	/* Per turn. */
	struct call_slot calls[PROVIDER_CALL_SLOTS];
	char response_id[PROVIDER_ID_MAX + 1];
	struct capture response_id_cap;
	char finish_reason[FIELD_SMALL + 1];
	struct provider_usage usage;
	bool usage_seen;
	bool terminal;	  /* the protocol's end: completed event, [DONE] or finish_reason */
	bool failed;	  /* an error event was emitted */
	bool text_seen;
	bool call_seen;
	/* Tool calls beyond PROVIDER_CALL_SLOTS: counted (by their distinct keys), not kept. */
	uint32_t calls_dropped;
	int32_t dropped_keys[PROVIDER_CALLS_COUNTED];
	bool calls_more; /* a call beyond those counted: say "more than" */
	size_t output_bytes;
	int stop; /* non-zero: a callback asked to stop */
	bool ended; /* past the protocol's end: nothing more is read */

	/* The tool loop's buffer for the first call's arguments (provider_request.call_args):
	 * lent to the first call slot made; NULL when the request gave none. */
	char *caller_args;

	/* HTTP. */
	char *body_block; /* the request body's block until the answer's status line */
	int status_code;
	uint32_t retry_after_s;
	bool not_stream; /* a Content-Type other than text/event-stream */
	char content_type[FIELD_SMALL + 1];
	char http_raw[PROVIDER_MESSAGE_MAX + 1]; /* start of a non-JSON error body */
	size_t http_raw_len;
};

extern const struct provider_adapter provider_responses_adapter;
extern const struct provider_adapter provider_chat_adapter;

/* Emitters shared by the adapters; they keep the turn's bookkeeping. */
int turn_emit_text(struct provider_turn *t, const char *text, size_t len, bool reasoning);
int turn_emit_error(struct provider_turn *t, enum provider_error kind, const char *message);
int turn_emit_call(struct provider_turn *t, struct call_slot *slot);
/*
 * Emit the text (or reasoning) held in the pending buffer; a cut of the answer's text ends
 * the turn with an error saying so (@p what: what the text waited for).
 */
int turn_emit_pending(struct provider_turn *t, bool reasoning, const char *what);
/* Ids and names from the server must be whole: a cut one ends the turn (false). */
bool turn_id_fits(struct provider_turn *t, const struct capture *id, const char *what);
bool turn_name_fits(struct provider_turn *t, const struct capture *name);
struct call_slot *turn_call_find(struct provider_turn *t, int32_t key, const char *item_id,
				 bool create);
void turn_event_reset(struct provider_turn *t);
/* Empty aux; when it held the tool loop's buffer, it lets go of it. */
void turn_aux_reset(struct provider_turn *t);
/* The tool loop's buffer is there and neither a call nor aux holds it (no call emitted yet). */
bool turn_caller_args_free(const struct provider_turn *t);

/* Request bodies. */
int provider_responses_body(const struct provider_request *req, struct json_writer *w);
int provider_chat_body(const struct provider_request *req, const char *host,
		       struct json_writer *w);

/* Text helpers. */
int32_t parse_int32(const char *text, size_t len);

#endif /* AGENT_PROVIDER_INTERNAL_H */
