/*
 * The Responses API adapter. Events are dispatched on their JSON "type", which may come
 * last (some servers sort keys), so a string whose meaning depends on the type is held in
 * the turn's pending buffer until the event ends; in the usual order it streams through.
 * Per-item state is keyed on output_index, falling back to item_id.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "provider_internal.h"
#include "provider_keys.h"

/*
 * The event types the adapter acts on. The type is classified once, when its string is whole,
 * so the many tests of it per event compare a number, not the string.
 */
enum event_type {
	T_OTHER, /* not known yet, or a type the adapter passes over */
	T_OUTPUT_TEXT_DELTA,
	T_REFUSAL_DELTA,
	T_REASONING_TEXT_DELTA,
	T_REASONING_SUMMARY_TEXT_DELTA,
	T_OUTPUT_TEXT_DONE,
	T_ARGUMENTS_DELTA,
	T_ARGUMENTS_DONE,
	T_ITEM_ADDED,
	T_ITEM_DONE,
	T_COMPLETED,
	T_INCOMPLETE,
	T_FAILED,
	T_ERROR,
};

static const char *const event_type_name[] = {
	[T_OUTPUT_TEXT_DELTA] = "response.output_text.delta",
	[T_REFUSAL_DELTA] = "response.refusal.delta",
	[T_REASONING_TEXT_DELTA] = "response.reasoning_text.delta",
	[T_REASONING_SUMMARY_TEXT_DELTA] = "response.reasoning_summary_text.delta",
	[T_OUTPUT_TEXT_DONE] = "response.output_text.done",
	[T_ARGUMENTS_DELTA] = "response.function_call_arguments.delta",
	[T_ARGUMENTS_DONE] = "response.function_call_arguments.done",
	[T_ITEM_ADDED] = "response.output_item.added",
	[T_ITEM_DONE] = "response.output_item.done",
	[T_COMPLETED] = "response.completed",
	[T_INCOMPLETE] = "response.incomplete",
	[T_FAILED] = "response.failed",
	[T_ERROR] = "error",
};

static uint8_t event_type_of(const struct capture *type)
{
	for (uint8_t k = T_OTHER + 1; k < ARRAY_SIZE_OF(event_type_name); k++) {
		if (capture_is(type, event_type_name[k])) {
			return k;
		}
	}
	return T_OTHER;
}

static bool type_is(const struct provider_turn *t, enum event_type type)
{
	return t->type_kind == type;
}

static bool type_known(const struct provider_turn *t)
{
	return t->type_cap.len > 0;
}

static bool is_text_delta(const struct provider_turn *t)
{
	return type_is(t, T_OUTPUT_TEXT_DELTA) || type_is(t, T_REFUSAL_DELTA);
}

static bool is_reasoning_delta(const struct provider_turn *t)
{
	return type_is(t, T_REASONING_TEXT_DELTA) ||
	       type_is(t, T_REASONING_SUMMARY_TEXT_DELTA);
}

/* The call an argument delta belongs to, when the event has said which. */
static struct call_slot *delta_call(struct provider_turn *t)
{
	if (t->output_index < 0 && t->item_id_cap.len == 0) {
		return NULL;
	}
	/* The item id may stand in for a call id (llama.cpp): only a whole one. */
	if (t->item_id_cap.len > 0 && !turn_id_fits(t, &t->item_id_cap, "item id")) {
		return NULL;
	}
	return turn_call_find(t, t->output_index, t->item_id, true);
}

static void pend(struct provider_turn *t, int kind, const struct json_value *v)
{
	if (v->first) {
		capture_reset(&t->pending);
		t->pending_kind = kind;
	}
	capture_add(&t->pending, v->text, v->len);
}

static void capture_string(struct capture *c, const struct json_value *v)
{
	if (v->first) {
		capture_reset(c);
	}
	capture_add(c, v->text, v->len);
}

static void on_delta(struct provider_turn *t, const struct json_value *v)
{
	if (type_known(t) && is_text_delta(t)) {
		turn_emit_text(t, v->text, v->len, false);
	} else if (type_known(t) && is_reasoning_delta(t)) {
		turn_emit_text(t, v->text, v->len, true);
	} else if (type_is(t, T_ARGUMENTS_DELTA) && delta_call(t) != NULL) {
		struct call_slot *slot = delta_call(t);

		capture_add(&slot->args, v->text, v->len);
	} else if (!type_known(t) || type_is(t, T_ARGUMENTS_DELTA)) {
		pend(t, PENDING_DELTA, v);
	}
	/* Deltas of other types (hosted tools, audio, ...) are not kept. */
}

/* The last keys of the paths below and their depths (provider_keys.h): others are passed over. */
enum { S_TYPE, S_DELTA, S_ITEM_ID, S_TEXT, S_ARGUMENTS, S_ID, S_CALL_ID, S_NAME, S_STATUS,
       S_REASON, S_MESSAGE, S_CODE };
static const struct provider_key string_keys[] = {
	[S_TYPE] = PROVIDER_KEY("type", PROVIDER_AT(1) | PROVIDER_AT(2)),
	[S_DELTA] = PROVIDER_KEY("delta", PROVIDER_AT(1)),
	[S_ITEM_ID] = PROVIDER_KEY("item_id", PROVIDER_AT(1)),
	[S_TEXT] = PROVIDER_KEY("text", PROVIDER_AT(1)),
	[S_ARGUMENTS] = PROVIDER_KEY("arguments", PROVIDER_AT(1) | PROVIDER_AT(2)),
	[S_ID] = PROVIDER_KEY("id", PROVIDER_AT(2)),
	[S_CALL_ID] = PROVIDER_KEY("call_id", PROVIDER_AT(2)),
	[S_NAME] = PROVIDER_KEY("name", PROVIDER_AT(2)),
	[S_STATUS] = PROVIDER_KEY("status", PROVIDER_AT(2)),
	[S_REASON] = PROVIDER_KEY("reason", PROVIDER_AT(3)),
	[S_MESSAGE] = PROVIDER_KEY("message", PROVIDER_AT(1) | PROVIDER_AT(2) | PROVIDER_AT(3)),
	[S_CODE] = PROVIDER_KEY("code", PROVIDER_AT(1) | PROVIDER_AT(2) | PROVIDER_AT(3)),
};
enum { N_OUTPUT_INDEX, N_INPUT, N_OUTPUT, N_TOTAL, N_REASONING, N_CODE };
static const struct provider_key number_keys[] = {
	[N_OUTPUT_INDEX] = PROVIDER_KEY("output_index", PROVIDER_AT(1)),
	[N_INPUT] = PROVIDER_KEY("input_tokens", PROVIDER_AT(3)),
	[N_OUTPUT] = PROVIDER_KEY("output_tokens", PROVIDER_AT(3)),
	[N_TOTAL] = PROVIDER_KEY("total_tokens", PROVIDER_AT(3)),
	[N_REASONING] = PROVIDER_KEY("reasoning_tokens", PROVIDER_AT(4)),
	[N_CODE] = PROVIDER_KEY("code", PROVIDER_AT(1) | PROVIDER_AT(2)),
};

static void on_string(struct provider_turn *t, const struct json_stream *js,
		      const struct json_value *v)
{
	/* Dispatched on the last key first: then only that key's paths are matched in full. */
	switch (provider_key_find(js, string_keys, ARRAY_SIZE_OF(string_keys))) {
	case S_TYPE:
		if (json_stream_path_is(js, "type")) {
			capture_string(&t->type_cap, v);
			if (v->last) {
				t->type_kind = event_type_of(&t->type_cap);
			}
		} else if (json_stream_path_is(js, "item.type")) {
			capture_string(&t->item_type_cap, v);
		}
		break;
	case S_DELTA:
		if (json_stream_path_is(js, "delta")) {
			on_delta(t, v);
		}
		break;
	case S_ITEM_ID:
		if (json_stream_path_is(js, "item_id")) {
			capture_string(&t->item_id_cap, v);
		}
		break;
	case S_TEXT:
		if (json_stream_path_is(js, "text") &&
		    (!t->text_seen || t->pending_kind == PENDING_STREAMED)) {
			/* Final text: needed only from a server that streamed no delta. */
			if (type_is(t, T_OUTPUT_TEXT_DONE)) {
				t->pending_kind = PENDING_STREAMED;
				turn_emit_text(t, v->text, v->len, false);
			} else if (!type_known(t)) {
				pend(t, PENDING_TEXT, v);
			}
		}
		break;
	case S_ARGUMENTS:
		if (json_stream_path_is(js, "arguments")) {
			pend(t, PENDING_ARGS, v);
		} else if (json_stream_path_is(js, "item.arguments")) {
			pend(t, PENDING_ITEM_ARGS, v);
		}
		break;
	case S_ID:
		if (json_stream_path_is(js, "item.id")) {
			capture_string(&t->item_id_cap, v);
		} else if (json_stream_path_is(js, "response.id")) {
			capture_string(&t->response_id_cap, v);
		}
		break;
	case S_CALL_ID:
		if (json_stream_path_is(js, "item.call_id")) {
			capture_string(&t->call_id_cap, v);
		}
		break;
	case S_NAME:
		if (json_stream_path_is(js, "item.name")) {
			capture_string(&t->name_cap, v);
		}
		break;
	case S_STATUS:
		if (json_stream_path_is(js, "response.status")) {
			capture_string(&t->status_cap, v);
		}
		break;
	case S_REASON:
		if (json_stream_path_is(js, "response.incomplete_details.reason")) {
			capture_string(&t->reason_cap, v);
		}
		break;
	case S_MESSAGE:
		if (json_stream_path_is(js, "response.error.message") ||
		    json_stream_path_is(js, "error.message") || json_stream_path_is(js, "message")) {
			capture_string(&t->err_message_cap, v);
			t->err_seen = true;
		}
		break;
	case S_CODE:
		if (json_stream_path_is(js, "response.error.code") ||
		    json_stream_path_is(js, "error.code") || json_stream_path_is(js, "code")) {
			capture_string(&t->err_code_cap, v);
		}
		break;
	default:
		break;
	}
}

static void on_number(struct provider_turn *t, const struct json_stream *js,
		      const struct json_value *v)
{
	int key = provider_key_find(js, number_keys, ARRAY_SIZE_OF(number_keys));
	int32_t n;

	if (key < 0) {
		return;
	}
	n = parse_int32(v->text, v->len);
	if (key == N_OUTPUT_INDEX && json_stream_path_is(js, "output_index")) {
		t->output_index = n;
	} else if (key == N_INPUT && json_stream_path_is(js, "response.usage.input_tokens")) {
		t->usage.input_tokens = (uint32_t)(n < 0 ? 0 : n);
		t->usage_seen = true;
	} else if (key == N_OUTPUT && json_stream_path_is(js, "response.usage.output_tokens")) {
		t->usage.output_tokens = (uint32_t)(n < 0 ? 0 : n);
	} else if (key == N_TOTAL && json_stream_path_is(js, "response.usage.total_tokens")) {
		t->usage.total_tokens = (uint32_t)(n < 0 ? 0 : n);
	} else if (key == N_REASONING &&
		   json_stream_path_is(js, "response.usage.output_tokens_details.reasoning_tokens")) {
		t->usage.reasoning_tokens = (uint32_t)(n < 0 ? 0 : n);
	} else if (key == N_CODE &&
		   (json_stream_path_is(js, "error.code") || json_stream_path_is(js, "code"))) {
		capture_reset(&t->err_code_cap);
		capture_add(&t->err_code_cap, v->text, v->len);
	}
}

static int on_value(struct provider_turn *t, const struct json_stream *js,
		    const struct json_value *v)
{
	if (v->token == JSON_STRING) {
		on_string(t, js, v);
	} else if (v->token == JSON_NUMBER) {
		on_number(t, js, v);
	}
	return t->stop;
}

static void error_message(struct provider_turn *t, const char *what, char *line, size_t len)
{
	const char *msg = t->err_message_cap.len > 0 ? t->err_message : "no details";

	if (t->err_code_cap.len > 0) {
		snprintf(line, len, "%s (%s): %s", what, t->err_code, msg);
	} else {
		snprintf(line, len, "%s: %s", what, msg);
	}
}

/* llama.cpp's items have a call_id ("fc_...") and no id; its deltas name that as item_id. */
static const char *item_key(const struct provider_turn *t)
{
	return t->item_id_cap.len > 0 ? t->item_id : t->call_id;
}

static struct call_slot *item_added(struct provider_turn *t)
{
	struct call_slot *slot;

	if (!capture_is(&t->item_type_cap, "function_call")) {
		return NULL;
	}
	if (!turn_id_fits(t, &t->item_id_cap, "item id") ||
	    !turn_id_fits(t, &t->call_id_cap, "call id") || !turn_name_fits(t, &t->name_cap)) {
		return NULL;
	}
	slot = turn_call_find(t, t->output_index, item_key(t), true);
	if (slot == NULL) {
		return NULL;
	}
	if (item_key(t)[0] != '\0') {
		snprintf(slot->item_id, sizeof(slot->item_id), "%s", item_key(t));
	}
	if (t->call_id_cap.len > 0) {
		memcpy(slot->call_id, t->call_id, t->call_id_cap.len + 1);
	}
	if (t->name_cap.len > 0) {
		memcpy(slot->name, t->name, t->name_cap.len + 1);
		slot->name_len = t->name_cap.len;
	}
	return slot;
}

/*
 * Whole arguments held while their event's type was not known yet replace what the deltas
 * built. When they were cut at the pre-type block, the deltas' text stands if it is as long
 * and begins the same (the usual case: the done event repeats the deltas); else the call
 * fails, saying why.
 */
static void args_from_pending(struct provider_turn *t, struct call_slot *slot)
{
	const struct capture *p = &t->pending;

	if (p->truncated && !slot->args.truncated && slot->args.len == p->len + p->lost &&
	    memcmp(slot->args.buf, p->buf, p->len) == 0) {
		return;
	}
	capture_reset(&slot->args);
	capture_add(&slot->args, p->buf, p->len);
	slot->args.truncated = slot->args.truncated || p->truncated;
	slot->args_pretype_cut = p->truncated;
}

static void item_done(struct provider_turn *t)
{
	struct call_slot *slot = item_added(t);

	if (slot == NULL) {
		return;
	}
	/* The finished item carries the whole arguments: they win over what deltas built. */
	if (t->pending_kind == PENDING_ITEM_ARGS) {
		args_from_pending(t, slot);
	}
	turn_emit_call(t, slot);
}

static int on_event_end(struct provider_turn *t)
{
	char line[PROVIDER_LINE_MAX];
	struct call_slot *slot;

	/* The id to continue from must be the server's, whole. */
	if (!turn_id_fits(t, &t->response_id_cap, "response id")) {
		return t->stop;
	}
	if (is_text_delta(t) && t->pending_kind == PENDING_DELTA) {
		turn_emit_pending(t, false, "its event's type");
	} else if (is_reasoning_delta(t) && t->pending_kind == PENDING_DELTA) {
		turn_emit_pending(t, true, "its event's type");
	} else if (type_is(t, T_OUTPUT_TEXT_DONE)) {
		/* Only a server that streamed no delta needs the final text. */
		if (!t->text_seen && t->pending_kind == PENDING_TEXT) {
			turn_emit_pending(t, false, "its event's type");
		}
	} else if (type_is(t, T_ARGUMENTS_DELTA)) {
		slot = delta_call(t);
		if (slot != NULL && t->pending_kind == PENDING_DELTA) {
			capture_add(&slot->args, t->pending.buf, t->pending.len);
			if (t->pending.truncated) {
				slot->args.truncated = true; /* reported when the call is emitted */
				slot->args_pretype_cut = true;
			}
		}
	} else if (type_is(t, T_ARGUMENTS_DONE)) {
		slot = delta_call(t);
		if (slot != NULL && t->pending_kind == PENDING_ARGS) {
			args_from_pending(t, slot);
		}
	} else if (type_is(t, T_ITEM_ADDED)) {
		item_added(t);
	} else if (type_is(t, T_ITEM_DONE)) {
		item_done(t);
	} else if (type_is(t, T_COMPLETED)) {
		t->terminal = true;
	} else if (type_is(t, T_INCOMPLETE)) {
		t->terminal = true;
		snprintf(line, sizeof(line), "the response is incomplete: %s",
			 t->reason_cap.len > 0 ? t->reason : "no reason given");
		turn_emit_error(t, PROVIDER_ERR_INCOMPLETE, line);
	} else if (type_is(t, T_FAILED)) {
		t->terminal = true;
		error_message(t, "the response failed", line, sizeof(line));
		turn_emit_error(t, PROVIDER_ERR_FAILED, line);
	} else if (type_is(t, T_ERROR)) {
		error_message(t, "the provider reported an error", line, sizeof(line));
		turn_emit_error(t, PROVIDER_ERR_STREAM, line);
	}
	return t->stop;
}

static void on_stream_end(struct provider_turn *t)
{
	/* Servers that never close their items (llama.cpp) still end with their calls. */
	for (size_t i = 0; i < PROVIDER_CALL_SLOTS; i++) {
		if (t->calls[i].used && !t->calls[i].emitted && t->terminal) {
			turn_emit_call(t, &t->calls[i]);
		}
	}
}

const struct provider_adapter provider_responses_adapter = {
	.on_value = on_value,
	.on_event_end = on_event_end,
	.on_stream_end = on_stream_end,
};
