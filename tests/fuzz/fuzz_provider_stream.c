/*
 * The stream path after HTTP: SSE, the JSON tokenizer and either protocol's adapter, with its
 * blocks taken when needed (provider.c) and the first call's arguments written into the tool
 * loop's buffer. Over any response body, in pieces of any size: every event is well formed,
 * the first call's arguments are in the caller's buffer when it gave one and stay as its event
 * showed them to the end of the turn, and every block of the stream path is back in its pool
 * after the turn.
 *
 * Input: byte 0 chooses the protocol (bit 0), whether a caller buffer is given (bit 1) and the
 * piece size (bits 2..7, plus 1); the rest is the response body (text/event-stream).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"

static char call_args[PROVIDER_CALL_ARGS_BYTES];
static char first_seen[PROVIDER_CALL_ARGS_BYTES]; /* the first call's, as its event gave them */
static size_t first_len;
static unsigned int calls;
static bool caller_given;

static int on_event(void *user_data, const struct provider_event *ev)
{
	(void)user_data;
	if (ev->type == PROVIDER_TEXT || ev->type == PROVIDER_REASONING) {
		if (ev->text.len > 0 && ev->text.text == NULL) {
			abort();
		}
	} else if (ev->type == PROVIDER_TOOL_CALL) {
		if (ev->call.arguments == NULL || ev->call.arguments_len > CONFIG_AGENT_TOOL_ARGS_MAX_LEN ||
		    ev->call.arguments[ev->call.arguments_len] != '\0' || ev->call.name == NULL ||
		    ev->call.call_id == NULL) {
			abort();
		}
		/* The tool loop runs the first call: its arguments are where it reads them. */
		if (calls++ == 0) {
			if (caller_given && ev->call.arguments != call_args) {
				abort();
			}
			memcpy(first_seen, ev->call.arguments, ev->call.arguments_len);
			first_len = ev->call.arguments_len;
		}
	} else if (ev->type == PROVIDER_ERROR && ev->error.message == NULL) {
		abort();
	}
	return 0;
}

static int check_pool(const struct agent_pool_stats *s, void *user_data)
{
	(void)user_data;
	if (s->blocks_free != s->blocks_total || s->bad_frees != 0 || s->alloc_failures != 0) {
		abort(); /* a block kept after the turn, a bad free, or a field without its block */
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct agent_config cfg;
	struct provider_request req = {0};

	if (size < 1) {
		return 0;
	}
	memset(&cfg, 0, sizeof(cfg));
	strcpy(cfg.endpoint, (data[0] & 1u) != 0u ? "http://h/v1/chat/completions"
						 : "http://h/v1/responses");
	strcpy(cfg.model, "m");
	caller_given = (data[0] & 2u) != 0u;
	calls = 0;
	req.config = &cfg;
	req.instructions = "i";
	req.prompt = "p";
	req.emit = on_event;
	req.call_args = caller_given ? call_args : NULL;
	(void)provider_feed_for_test(&req, "text/event-stream", (const char *)data + 1, size - 1,
				     (size_t)(data[0] >> 2) + 1u);
	agent_pool_foreach(check_pool, NULL);
	/* Nothing the stream sent after the first call changed the arguments the tool loop runs. */
	if (caller_given && calls > 0 && memcmp(call_args, first_seen, first_len) != 0) {
		abort();
	}
	return 0;
}
