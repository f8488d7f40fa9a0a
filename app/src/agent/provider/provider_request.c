/*
 * Request bodies of the two wire protocols, written with the bounded JSON writer. See
 * docs/providers.md for the fields and why each is there.
 */
#include <string.h>

#include "provider_internal.h"

/* The official endpoint's host: it alone gets Chat's reasoning_effort (spec). */
#define OPENAI_HOST "api.openai.com"

/* Host names compare without regard to letter case (RFC 4343): API.OpenAI.com is the same. */
static bool host_is(const char *host, const char *name)
{
	for (;; host++, name++) {
		char c = *host;

		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		if (c != *name) {
			return false;
		}
		if (c == '\0') {
			return true;
		}
	}
}

/* {"role": ROLE, "content": TEXT}: an input item (Responses) or a message (Chat). */
static void write_message(struct json_writer *w, const char *role, const char *text)
{
	jw_object_begin(w);
	jw_key(w, "role");
	jw_string(w, role);
	jw_key(w, "content");
	jw_string(w, text);
	jw_object_end(w);
}

int provider_responses_body(const struct provider_request *req, struct json_writer *w)
{
	const struct agent_config *cfg = req->config;

	jw_object_begin(w);
	jw_key(w, "model");
	jw_string(w, cfg->model);
	/* Responses does not carry instructions over a continuation: send them every time. */
	jw_key(w, "instructions");
	jw_string(w, req->instructions);
	jw_key(w, "input");
	jw_array_begin(w);
	if (req->call_id != NULL) {
		/* A tool continuation: the server holds the rest (previous_response_id). */
		jw_object_begin(w);
		jw_key(w, "type");
		jw_string(w, "function_call_output");
		jw_key(w, "call_id");
		jw_string(w, req->call_id);
		jw_key(w, "output");
		jw_string(w, req->call_output);
		jw_object_end(w);
	} else {
		write_message(w, "user", req->prompt);
	}
	jw_array_end(w);
	if (req->tools_json != NULL) {
		jw_key(w, "tools");
		jw_raw(w, req->tools_json, req->tools_len);
		/* One call per turn; a body without tools says nothing about tools. */
		jw_key(w, "parallel_tool_calls");
		jw_bool(w, false);
	}
	if (req->previous_response_id != NULL && req->previous_response_id[0] != '\0') {
		jw_key(w, "previous_response_id");
		jw_string(w, req->previous_response_id);
	}
	jw_key(w, "reasoning");
	jw_object_begin(w);
	jw_key(w, "effort");
	jw_string(w, agent_reasoning_name(cfg->reasoning));
	jw_object_end(w);
	/* Stored, so that the next turn can continue with previous_response_id. */
	jw_key(w, "store");
	jw_bool(w, true);
	jw_key(w, "stream");
	jw_bool(w, true);
	jw_object_end(w);
	return jw_finish(w);
}

int provider_chat_body(const struct provider_request *req, const char *host,
		       struct json_writer *w)
{
	const struct agent_config *cfg = req->config;

	jw_object_begin(w);
	jw_key(w, "model");
	jw_string(w, cfg->model);
	jw_key(w, "messages");
	jw_array_begin(w);
	if (req->instructions != NULL && req->instructions[0] != '\0') {
		write_message(w, "system", req->instructions);
	}
	if (req->write_prior != NULL) {
		req->write_prior(req->prior_user, w);
	}
	write_message(w, "user", req->prompt);
	if (req->write_history != NULL) {
		req->write_history(req->history_user, w);
	}
	jw_array_end(w);
	if (req->tools_json != NULL) {
		jw_key(w, "tools");
		jw_raw(w, req->tools_json, req->tools_len);
		/* The tool loop takes one call per turn (as Responses' parallel_tool_calls). */
		jw_key(w, "parallel_tool_calls");
		jw_bool(w, false);
	}
	jw_key(w, "stream");
	jw_bool(w, true);
	jw_key(w, "stream_options");
	jw_object_begin(w);
	jw_key(w, "include_usage");
	jw_bool(w, true);
	jw_object_end(w);
	/*
	 * The official endpoint gets reasoning_effort "none" so that function tools stay
	 * usable there; other Chat endpoints get no such field (spec).
	 */
	if (host_is(host, OPENAI_HOST)) {
		jw_key(w, "reasoning_effort");
		jw_string(w, "none");
	}
	jw_object_end(w);
	return jw_finish(w);
}
