/*
 * One provider turn over either wire protocol: the request body is written here, the
 * response stream (HTTP body -> SSE -> streaming JSON) is read by the protocol's adapter,
 * and the caller receives provider-neutral events. See docs/providers.md.
 */
#ifndef AGENT_PROVIDER_H
#define AGENT_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_config.h"
#include "agent_port.h"
#include "json_writer.h"

#define PROVIDER_ID_MAX	      95  /* response ids, call ids */
#define PROVIDER_NAME_MAX     63  /* tool names */
#define PROVIDER_MESSAGE_MAX  199 /* provider error messages shown to the user */
#define PROVIDER_CALL_SLOTS   2	  /* tool calls tracked in one turn */
#define PROVIDER_CALLS_COUNTED 16 /* tool calls beyond the slots told apart, for the count */

enum provider_event_type {
	PROVIDER_TEXT,	    /* a piece of the answer */
	PROVIDER_REASONING, /* a piece of reasoning text the server chose to stream */
	PROVIDER_TOOL_CALL, /* one complete tool call */
	PROVIDER_USAGE,	    /* token counts of the turn */
	PROVIDER_DONE,	    /* the turn completed */
	PROVIDER_ERROR,	    /* the turn failed; nothing follows */
};

enum provider_error {
	PROVIDER_ERR_NONE = 0,
	PROVIDER_ERR_NETWORK,	 /* connect, TLS, reset, malformed HTTP */
	PROVIDER_ERR_TIMEOUT,	 /* per-I/O timeout or request deadline */
	PROVIDER_ERR_CANCELLED,	 /* Esc */
	PROVIDER_ERR_HTTP,	 /* a non-2xx status; see status and message */
	PROVIDER_ERR_STREAM,	 /* an error object or event inside a 200 stream */
	PROVIDER_ERR_FAILED,	 /* response.failed */
	PROVIDER_ERR_INCOMPLETE, /* response.incomplete */
	PROVIDER_ERR_TRUNCATED,	 /* the stream ended before the turn completed */
	PROVIDER_ERR_INVALID,	 /* malformed stream, or an empty turn twice */
	PROVIDER_ERR_LIMIT,	 /* a bound was reached (output, arguments) */
};

struct provider_usage {
	uint32_t input_tokens;
	uint32_t output_tokens;
	uint32_t total_tokens;
	uint32_t reasoning_tokens;
};

struct provider_event {
	enum provider_event_type type;
	union {
		struct {
			const char *text;
			size_t len;
		} text; /* PROVIDER_TEXT, PROVIDER_REASONING */
		struct {
			const char *call_id;
			const char *name; /* NUL-terminated, but may hold a NUL of its own */
			size_t name_len;  /* the name's bytes: compare all of them */
			const char *arguments; /* JSON text as the model wrote it */
			size_t arguments_len;
		} call;
		struct provider_usage usage;
		struct {
			const char *response_id; /* continuation id (Responses), "" otherwise */
			const char *finish_reason;
			/* tool calls of the turn beyond those emitted (more than the slots) */
			uint32_t calls_dropped;
			/* still more calls than these: the turn made more than emitted + dropped */
			bool calls_more;
		} done;
		struct {
			enum provider_error kind;
			int status;	     /* HTTP status, 0 when none */
			int code;	     /* negative errno for network kinds, else 0 */
			uint32_t retry_after_s; /* Retry-After, 0 when absent */
			const char *message; /* one line, bounded, never empty */
		} error;
	};
};

typedef int (*provider_event_fn)(void *user_data, const struct provider_event *event);

/* What to ask. */
struct provider_request {
	const struct agent_config *config;
	const char *key;	 /* NULL without a key */
	const char *instructions;
	const char *prompt;
	const char *previous_response_id; /* Responses continuation, or NULL */
	/*
	 * Tools offered in this turn: a JSON array in the protocol's form, sent as the "tools"
	 * member; NULL for none (the reserved final turn, or tools off).
	 */
	const char *tools_json;
	size_t tools_len;
	/*
	 * Responses continuation: the answer to the previous turn's tool call (its call_id and
	 * the result, JSON text sent as the output string) instead of the user prompt.
	 */
	const char *call_id;
	const char *call_output;
	/*
	 * Chat Completions: writes the messages of earlier turns of this request (assistant
	 * tool_calls and tool results) into the messages array, after the user message.
	 */
	void (*write_history)(void *history_user, struct json_writer *w);
	void *history_user;
	/*
	 * Chat Completions: writes the messages of earlier requests of the conversation (user
	 * and assistant), between the system message and the user message.
	 */
	void (*write_prior)(void *prior_user, struct json_writer *w);
	void *prior_user;
	const struct agent_cancel *cancel;
	provider_event_fn emit;
	void *user_data;
	/*
	 * The tool loop's buffer for the arguments of the turn's first tool call, at least
	 * PROVIDER_CALL_ARGS_BYTES: the stream writes them there once, and that call's event
	 * points into it. NULL: the stream path keeps them in a block of its own.
	 */
	char *call_args;
};

/* The arguments of one call and their NUL (CONFIG_AGENT_TOOL_ARGS_MAX_LEN + 1 bytes). */
#define PROVIDER_CALL_ARGS_BYTES (CONFIG_AGENT_TOOL_ARGS_MAX_LEN + 1)

/**
 * Run one turn (with the one retry of an empty stateless turn). One turn runs at a time: the
 * stream path's state and buffers are single (the caller, the foreground worker, ensures it). Every outcome arrives as
 * events: text, reasoning and tool calls as they come, then usage and done, or one error.
 * Returns 0 when the turn completed, or the negative errno / PROVIDER_ERR_* that ended it
 * (as -EIO for the provider's own errors).
 */
int provider_run(const struct provider_request *req);

/** Make the stream path's pools (once; later calls do nothing). */
int provider_init(void);

/*
 * What the stream path used, since boot (docs/providers.md, "Memory of the stream path"):
 * the peak bytes its pools lent at once (held) and the most bytes written into them in one
 * turn (written), for its blocks (stream) and for the request body (body), and the size of
 * its parse state (a static struct, whatever the streams).
 */
struct provider_memory {
	size_t stream_held_peak;
	size_t stream_written_peak;
	size_t body_held_peak;
	size_t body_written_peak;
	size_t parse_state;
};

void provider_memory_get(struct provider_memory *out);

#if defined(CONFIG_AGENT_TOOL_TEST_HOOKS)
/**
 * Test hook (tests/fuzz/fuzz_provider_stream.c): one turn over a response body given whole,
 * fed in pieces of @p piece bytes, answered 200 with @p content_type (NULL: no header), as
 * provider_run reads one from the network; every block is given back after it.
 */
int provider_feed_for_test(const struct provider_request *req, const char *content_type,
			   const char *body, size_t len, size_t piece);

/** Test hook: the request deadline (CONFIG_AGENT_REQUEST_DEADLINE_S seconds otherwise). */
void provider_set_request_deadline_ms(uint32_t ms);
#endif

#endif /* AGENT_PROVIDER_H */
