/*
 * The Chat Completions adapter. Each chunk is one JSON object; text comes from
 * choices[].delta.content (a string, or an array of typed parts), reasoning from
 * reasoning_content / reasoning / thinking parts, tool calls from choices[].delta.tool_calls
 * keyed by their index (the element's position when a server sends none, as Mistral does).
 * Keys may come in any order, so what depends on an index seen later waits in a buffer
 * until its element ends. The turn ends with [DONE], or with a finish_reason and the end
 * of the stream.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "provider_internal.h"
#include "provider_keys.h"

#define CHOICE_PATH "choices.#"
#define DELTA_PATH  "choices.#.delta"
#define CALL_PATH   "choices.#.delta.tool_calls.#"

static void capture_string(struct capture *c, const struct json_value *v)
{
	if (v->first) {
		capture_reset(c);
	}
	capture_add(c, v->text, v->len);
}

/* Text of choice 0; other choices (n > 1, never requested) are not shown. */
static void choice_text(struct provider_turn *t, const struct json_value *v, bool reasoning)
{
	if (t->choice_index > 0) {
		return;
	}
	if (t->choice_index < 0) {
		/*
		 * The index may still come: hold the text until the choice ends. The buffer holds
		 * one kind; the answer's text wins over reasoning, which is never shown.
		 */
		if (reasoning && t->pending_kind == PENDING_TEXT) {
			return;
		}
		if (!reasoning && t->pending_kind == PENDING_REASONING) {
			capture_reset(&t->pending);
		}
		t->pending_kind = reasoning ? PENDING_REASONING : PENDING_TEXT;
		capture_add(&t->pending, v->text, v->len);
		return;
	}
	turn_emit_text(t, v->text, v->len, reasoning);
}

static void element_begin(struct provider_turn *t)
{
	t->element_index = -1;
	capture_reset(&t->call_id_cap);
	capture_reset(&t->name_cap);
	turn_aux_reset(t);
}

/*
 * Arguments of a tool_calls element: straight into its call when the choice and the element's
 * index came first (the usual order), else held in aux until the element ends: in the tool
 * loop's buffer while no call has it (the element then takes it over), else in a block.
 */
static void call_arguments(struct provider_turn *t, const struct json_value *v)
{
	struct call_slot *slot = NULL;

	if (t->choice_index == 0 && t->element_index >= 0 && t->aux.len == 0 &&
	    !t->aux.truncated) {
		slot = turn_call_find(t, t->element_index, NULL, true);
		if (slot == NULL) {
			return; /* no slot: counted, its arguments are not kept */
		}
		capture_add(&slot->args, v->text, v->len);
		return;
	}
	if (t->aux.len == 0 && !t->aux.truncated && turn_caller_args_free(t)) {
		capture_init(&t->aux, t->caller_args, CONFIG_AGENT_TOOL_ARGS_MAX_LEN);
	}
	capture_add(&t->aux, v->text, v->len);
}

/* A tool_calls element ended: merge it into its call. */
static void element_end(struct provider_turn *t, const struct json_stream *js)
{
	int depth = json_stream_depth(js);
	int32_t key = t->element_index >= 0 ? t->element_index : json_stream_index(js, depth);
	struct call_slot *slot = turn_call_find(t, key, NULL, true);

	if (slot == NULL || !turn_id_fits(t, &t->call_id_cap, "call id") ||
	    !turn_name_fits(t, &t->name_cap)) {
		return;
	}
	/* Continuation deltas may repeat an empty id or name: never overwrite with those. */
	if (t->call_id_cap.len > 0 && slot->call_id[0] == '\0') {
		memcpy(slot->call_id, t->call_id, t->call_id_cap.len + 1);
	}
	if (t->name_cap.len > 0 && slot->name_len == 0) {
		memcpy(slot->name, t->name, t->name_cap.len + 1);
		slot->name_len = t->name_cap.len;
	}
	if (t->caller_args != NULL && t->aux.buf == t->caller_args && slot->args.len == 0 &&
	    !slot->args.truncated) {
		/* The arguments are in the tool loop's buffer already: the call takes it over. */
		capture_reset(&slot->args);
		slot->args = t->aux;
		turn_aux_reset(t);
		return;
	}
	capture_add(&slot->args, t->aux.buf, t->aux.len);
	if (t->aux.truncated) {
		slot->args.truncated = true;
		/* cut at the pre-type block rather than at the limit of 4095 bytes */
		slot->args_pretype_cut = t->aux.pool != NULL;
	}
}

/* The last keys of the paths below and their depths (provider_keys.h): others are passed over. */
enum { N_INDEX, N_PROMPT, N_COMPLETION, N_TOTAL, N_REASONING, N_CODE };
static const struct provider_key number_keys[] = {
	[N_INDEX] = PROVIDER_KEY("index", PROVIDER_AT(3) | PROVIDER_AT(6)),
	[N_PROMPT] = PROVIDER_KEY("prompt_tokens", PROVIDER_AT(2)),
	[N_COMPLETION] = PROVIDER_KEY("completion_tokens", PROVIDER_AT(2)),
	[N_TOTAL] = PROVIDER_KEY("total_tokens", PROVIDER_AT(2)),
	[N_REASONING] = PROVIDER_KEY("reasoning_tokens", PROVIDER_AT(3)),
	[N_CODE] = PROVIDER_KEY("code", PROVIDER_AT(2)),
};
enum { S_CONTENT, S_REFUSAL, S_TEXT, S_REASONING_CONTENT, S_REASONING, S_ARGUMENTS, S_NAME,
       S_ID, S_FINISH_REASON, S_MESSAGE, S_CODE, S_TYPE };
static const struct provider_key string_keys[] = {
	[S_CONTENT] = PROVIDER_KEY("content", PROVIDER_AT(4)),
	[S_REFUSAL] = PROVIDER_KEY("refusal", PROVIDER_AT(4)),
	[S_TEXT] = PROVIDER_KEY("text", PROVIDER_AT(6) | PROVIDER_AT(8)),
	[S_REASONING_CONTENT] = PROVIDER_KEY("reasoning_content", PROVIDER_AT(4)),
	[S_REASONING] = PROVIDER_KEY("reasoning", PROVIDER_AT(4)),
	[S_ARGUMENTS] = PROVIDER_KEY("arguments", PROVIDER_AT(7)),
	[S_NAME] = PROVIDER_KEY("name", PROVIDER_AT(7)),
	[S_ID] = PROVIDER_KEY("id", PROVIDER_AT(6)),
	[S_FINISH_REASON] = PROVIDER_KEY("finish_reason", PROVIDER_AT(3)),
	[S_MESSAGE] = PROVIDER_KEY("message", PROVIDER_AT(2)),
	[S_CODE] = PROVIDER_KEY("code", PROVIDER_AT(2)),
	[S_TYPE] = PROVIDER_KEY("type", PROVIDER_AT(2)),
};

static int on_value(struct provider_turn *t, const struct json_stream *js,
		    const struct json_value *v)
{
	int key; /* the last key's index in number_keys or string_keys: only its paths are tried */

	switch (v->token) {
	case JSON_OBJECT_BEGIN:
		if (json_stream_depth(js) != 2 && json_stream_depth(js) != 5) {
			return t->stop; /* the depths of CHOICE_PATH and CALL_PATH */
		}
		if (json_stream_depth(js) == 2 && json_stream_path_is(js, CHOICE_PATH)) {
			t->choice_index = -1;
			capture_reset(&t->reason_cap);
		} else if (json_stream_depth(js) == 5 && json_stream_path_is(js, CALL_PATH)) {
			element_begin(t);
		}
		return t->stop;
	case JSON_OBJECT_END:
		if (json_stream_depth(js) != 2 && json_stream_depth(js) != 5) {
			return t->stop;
		}
		if (json_stream_depth(js) == 5 && json_stream_path_is(js, CALL_PATH)) {
			if (t->choice_index <= 0) {
				element_end(t, js);
			}
		} else if (json_stream_depth(js) == 2 && json_stream_path_is(js, CHOICE_PATH)) {
			if (t->choice_index <= 0 && t->pending_kind != PENDING_NONE) {
				turn_emit_pending(t, t->pending_kind == PENDING_REASONING,
						  "its choice's index");
			}
			capture_reset(&t->pending);
			t->pending_kind = PENDING_NONE;
			/* The finish reason of choice 0 is the turn's (other choices are not shown). */
			if (t->choice_index <= 0 && t->reason_cap.len > 0) {
				memcpy(t->finish_reason, t->reason, t->reason_cap.len + 1);
			}
		}
		return t->stop;
	case JSON_NUMBER: {
		key = provider_key_find(js, number_keys, ARRAY_SIZE_OF(number_keys));
		if (key < 0) {
			return t->stop;
		}
		int32_t n = parse_int32(v->text, v->len);

		if (key == N_INDEX && json_stream_path_is(js, "choices.#.index")) {
			t->choice_index = n;
		} else if (key == N_INDEX && json_stream_path_is(js, CALL_PATH ".index")) {
			t->element_index = n;
		} else if (key == N_PROMPT && json_stream_path_is(js, "usage.prompt_tokens")) {
			t->usage.input_tokens = (uint32_t)(n < 0 ? 0 : n);
			t->usage_seen = true;
		} else if (key == N_COMPLETION && json_stream_path_is(js, "usage.completion_tokens")) {
			t->usage.output_tokens = (uint32_t)(n < 0 ? 0 : n);
		} else if (key == N_TOTAL && json_stream_path_is(js, "usage.total_tokens")) {
			t->usage.total_tokens = (uint32_t)(n < 0 ? 0 : n);
		} else if (key == N_REASONING &&
			   json_stream_path_is(js, "usage.completion_tokens_details.reasoning_tokens")) {
			t->usage.reasoning_tokens = (uint32_t)(n < 0 ? 0 : n);
		} else if (key == N_CODE && json_stream_path_is(js, "error.code")) {
			capture_reset(&t->err_code_cap);
			capture_add(&t->err_code_cap, v->text, v->len);
			t->err_seen = true;
		}
		return t->stop;
	}
	case JSON_STRING:
		key = provider_key_find(js, string_keys, ARRAY_SIZE_OF(string_keys));
		if (key < 0) {
			return t->stop;
		}
		break;
	default:
		return t->stop;
	}

	if ((key == S_CONTENT && json_stream_path_is(js, DELTA_PATH ".content")) ||
	    (key == S_REFUSAL && json_stream_path_is(js, DELTA_PATH ".refusal")) ||
	    (key == S_TEXT && json_stream_path_is(js, DELTA_PATH ".content.#.text"))) {
		choice_text(t, v, false);
	} else if ((key == S_REASONING_CONTENT &&
		    json_stream_path_is(js, DELTA_PATH ".reasoning_content")) ||
		   (key == S_REASONING && json_stream_path_is(js, DELTA_PATH ".reasoning")) ||
		   (key == S_TEXT &&
		    json_stream_path_is(js, DELTA_PATH ".content.#.thinking.#.text"))) {
		choice_text(t, v, true);
	} else if (key == S_ARGUMENTS && json_stream_path_is(js, CALL_PATH ".function.arguments")) {
		call_arguments(t, v);
	} else if (key == S_NAME && json_stream_path_is(js, CALL_PATH ".function.name")) {
		capture_string(&t->name_cap, v);
	} else if (key == S_ID && json_stream_path_is(js, CALL_PATH ".id")) {
		capture_string(&t->call_id_cap, v);
	} else if (key == S_FINISH_REASON && json_stream_path_is(js, "choices.#.finish_reason")) {
		capture_string(&t->reason_cap, v);
	} else if (key == S_MESSAGE && json_stream_path_is(js, "error.message")) {
		capture_string(&t->err_message_cap, v);
		t->err_seen = true;
	} else if ((key == S_CODE && json_stream_path_is(js, "error.code")) ||
		   (key == S_TYPE && json_stream_path_is(js, "error.type"))) {
		if (json_stream_path_is(js, "error.type") && t->err_code_cap.len > 0) {
			return t->stop;
		}
		capture_string(&t->err_code_cap, v);
		t->err_seen = true;
	}
	return t->stop;
}

static int on_event_end(struct provider_turn *t)
{
	char line[PROVIDER_LINE_MAX];

	if (t->err_seen) {
		const char *msg = t->err_message_cap.len > 0 ? t->err_message : "no details";

		if (t->err_code_cap.len > 0) {
			snprintf(line, sizeof(line), "the provider reported an error (%s): %s",
				 t->err_code, msg);
		} else {
			snprintf(line, sizeof(line), "the provider reported an error: %s", msg);
		}
		turn_emit_error(t, PROVIDER_ERR_STREAM, line);
	}
	return t->stop;
}

static void on_stream_end(struct provider_turn *t)
{
	if (t->failed) {
		return;
	}
	/* Servers that send a finish reason but no [DONE] (Groq on errors) still finished. */
	if (t->finish_reason[0] != '\0') {
		t->terminal = true;
	}
	if (!t->terminal) {
		return;
	}
	/*
	 * Cut by the token limit or a filter: the answer shown is partial (and a call's
	 * arguments may be), so the turn is incomplete, as Responses' response.incomplete.
	 */
	if (strcmp(t->finish_reason, "length") == 0 ||
	    strcmp(t->finish_reason, "content_filter") == 0) {
		char line[PROVIDER_LINE_MAX];

		snprintf(line, sizeof(line), "the response is incomplete: %s", t->finish_reason);
		turn_emit_error(t, PROVIDER_ERR_INCOMPLETE, line);
		return;
	}
	for (size_t i = 0; i < PROVIDER_CALL_SLOTS; i++) {
		if (t->calls[i].used) {
			turn_emit_call(t, &t->calls[i]);
		}
	}
}

const struct provider_adapter provider_chat_adapter = {
	.on_value = on_value,
	.on_event_end = on_event_end,
	.on_stream_end = on_stream_end,
};
