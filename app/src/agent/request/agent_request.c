/*
 * The tool loop (agent_request.h). One request runs at a time (the foreground worker), so
 * its buffers are static, in PSRAM where the board has it: the tool descriptors of a turn,
 * the call's arguments, its result and, for Chat Completions, the earlier exchanges.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "agent_request.h"
#include "json_writer.h"
#include "tool_exec.h"
#include "tool_registry.h"
#include "tool_session.h"
#include "module_agents.h"
#include "module_selection.h"
#include "utf8.h"

#define HISTORY_BYTES	CONFIG_AGENT_CHAT_HISTORY_FRAGMENT_SIZE
#define HISTORY_RECORDS (2 * CONFIG_AGENT_MAX_TOOLS_LIMIT)

#define STR_(x)		#x
#define STR(x)		STR_(x)
#define STRINGIFY_DESC	STR(CONFIG_AGENT_TOOL_DESCRIPTOR_BUF_SIZE)

static char descriptors[CONFIG_AGENT_TOOL_DESCRIPTOR_BUF_SIZE] AGENT_PSRAM_ATTR;
static char call_args[PROVIDER_CALL_ARGS_BYTES] AGENT_PSRAM_ATTR;
static char result[CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1] AGENT_PSRAM_ATTR;
static char history[HISTORY_BYTES] AGENT_PSRAM_ATTR;
static struct tool_args args AGENT_PSRAM_ATTR;

static struct agent_tool_stats stats;

/* Chat Completions: the messages of earlier turns, each one JSON object. */
static struct {
	uint32_t off[HISTORY_RECORDS];
	uint32_t len[HISTORY_RECORDS];
	size_t count;
	size_t used;
	size_t limit; /* bytes the exchanges may use in this request (history_limit()) */
} hist;

/* A tool name in an error line: at most 120 bytes of what utf8_shown() makes of it. */
#define SHOWN_IN_ERROR 121u

/* What the current provider turn produced. */
struct turn_state {
	struct agent_request *req;
	unsigned int calls;
	bool calls_more; /* more calls than counted */
	char call_id[PROVIDER_ID_MAX + 1];
	char name[PROVIDER_NAME_MAX + 1];
	size_t name_len; /* the name as the model wrote it: a NUL in it is kept */
	char shown[SHOWN_IN_ERROR]; /* the name as utf8_shown() shows it in an error line */
	size_t args_len;
	char response_id[PROVIDER_ID_MAX + 1];
	struct provider_usage usage; /* summed over the request */
	bool failed;
};

void agent_tool_stats_get(struct agent_tool_stats *out)
{
	*out = stats;
}

static void say_error(struct agent_request *req, const char *fmt, const char *a, const char *b)
{
	char line[256]; /* the longest format below with its bounded arguments fits */

	snprintf(line, sizeof(line), fmt, a, b);
	req->hooks->error(req->user, line);
}

static int on_event(void *user_data, const struct provider_event *ev)
{
	struct turn_state *st = user_data;
	struct agent_request *req = st->req;

	switch (ev->type) {
	case PROVIDER_TEXT:
		req->hooks->text(req->user, ev->text.text, ev->text.len);
		break;
	case PROVIDER_TOOL_CALL: {
		size_t name_len = ev->call.name_len < sizeof(st->name) ? ev->call.name_len
								       : sizeof(st->name) - 1;

		(void)utf8_shown(st->shown, sizeof(st->shown), ev->call.name, name_len, name_len);
		req->hooks->tool_call(req->user, st->shown, ev->call.arguments,
				      ev->call.arguments_len);
		if (st->calls++ == 0) {
			snprintf(st->call_id, sizeof(st->call_id), "%s", ev->call.call_id);
			memcpy(st->name, ev->call.name, name_len);
			st->name[name_len] = '\0';
			st->name_len = name_len;
			/* The provider bounds arguments to CONFIG_AGENT_TOOL_ARGS_MAX_LEN and writes
			 * the first call's into call_args (provider_request.call_args). */
			st->args_len = ev->call.arguments_len < sizeof(call_args)
					       ? ev->call.arguments_len
					       : sizeof(call_args) - 1;
			if (ev->call.arguments != call_args) {
				memcpy(call_args, ev->call.arguments, st->args_len);
			}
			call_args[st->args_len] = '\0';
		}
		break;
	}
	case PROVIDER_USAGE:
		st->usage.input_tokens += ev->usage.input_tokens;
		st->usage.output_tokens += ev->usage.output_tokens;
		st->usage.total_tokens += ev->usage.total_tokens;
		st->usage.reasoning_tokens += ev->usage.reasoning_tokens;
		if (req->hooks->usage != NULL) {
			req->hooks->usage(req->user, &st->usage);
		}
		break;
	case PROVIDER_DONE:
		snprintf(st->response_id, sizeof(st->response_id), "%s",
			 ev->done.response_id != NULL ? ev->done.response_id : "");
		st->calls += ev->done.calls_dropped;
		st->calls_more = ev->done.calls_more;
		break;
	case PROVIDER_ERROR:
		st->failed = true;
		req->hooks->error(req->user, ev->error.message);
		break;
	default:
		break;
	}
	return 0;
}

/* ---- Chat Completions history ---------------------------------------------------------- */

static void history_write(void *user, struct json_writer *w)
{
	(void)user;
	for (size_t i = 0; i < hist.count; i++) {
		jw_raw(w, history + hist.off[i], hist.len[i]);
	}
}

/*
 * Drop the oldest @records records. Dropping all of them empties the history: off[count] is
 * no record's offset (entries past count keep stale values from earlier states), so it
 * must not be read as the place where the kept records start.
 */
static void history_drop_first(size_t records)
{
	size_t shift;

	if (records >= hist.count) {
		hist.count = 0;
		hist.used = 0;
		return;
	}
	shift = hist.off[records];

	memmove(history, history + shift, hist.used - shift);
	for (size_t i = records; i < hist.count; i++) {
		hist.off[i - records] = (uint32_t)(hist.off[i] - shift);
		hist.len[i - records] = hist.len[i];
	}
	hist.count -= records;
	hist.used -= shift;
}

/*
 * Append one exchange: the assistant message with the call, then the tool message with the
 * result. Older exchanges make room when the buffer is full.
 */
static int history_add(const struct turn_state *st)
{
	for (;;) {
		struct json_writer w;
		size_t start = hist.used;
		int n1, n2;

		if (hist.count + 2 <= HISTORY_RECORDS) {
			jw_init(&w, history + start, hist.limit - start);
			jw_object_begin(&w);
			jw_key(&w, "role");
			jw_string(&w, "assistant");
			jw_key(&w, "tool_calls");
			jw_array_begin(&w);
			jw_object_begin(&w);
			jw_key(&w, "id");
			jw_string(&w, st->call_id);
			jw_key(&w, "type");
			jw_string(&w, "function");
			jw_key(&w, "function");
			jw_object_begin(&w);
			jw_key(&w, "name");
			jw_string(&w, st->name);
			jw_key(&w, "arguments");
			jw_string_n(&w, call_args, st->args_len);
			jw_object_end(&w);
			jw_object_end(&w);
			jw_array_end(&w);
			jw_object_end(&w);
			n1 = jw_finish(&w);
			if (n1 > 0) {
				size_t second = start + (size_t)n1;

				jw_init(&w, history + second, hist.limit - second);
				jw_object_begin(&w);
				jw_key(&w, "role");
				jw_string(&w, "tool");
				jw_key(&w, "tool_call_id");
				jw_string(&w, st->call_id);
				jw_key(&w, "content");
				jw_string(&w, result);
				jw_object_end(&w);
				n2 = jw_finish(&w);
				if (n2 > 0) {
					hist.off[hist.count] = (uint32_t)start;
					hist.len[hist.count++] = (uint32_t)n1;
					hist.off[hist.count] = (uint32_t)second;
					hist.len[hist.count++] = (uint32_t)n2;
					hist.used = second + (size_t)n2;
					return 0;
				}
			}
		}
		if (hist.count == 0) {
			return -ENOSPC;
		}
		history_drop_first(2); /* the oldest exchange makes room */
	}
}

/*
 * The exchanges share the request body with the conversation's earlier messages, the tool
 * schemas, the prompt and the instructions: they get what the body has left, at least one
 * exchange's worth and at most their buffer, so that the whole request fits its 32 KiB.
 */
#define BODY_OTHER_BYTES                                                                     \
	(CONFIG_AGENT_TOOL_DESCRIPTOR_BUF_SIZE + 2 * CONFIG_AGENT_PROMPT_MAX_LEN + 2048)
#define EXCHANGE_FLOOR (2 * (CONFIG_AGENT_TOOL_ARGS_MAX_LEN + 1) + 1024)

static size_t history_limit(size_t prior_bytes)
{
	size_t avail = CONFIG_AGENT_PROVIDER_REQUEST_BODY_SIZE > BODY_OTHER_BYTES + prior_bytes
			       ? CONFIG_AGENT_PROVIDER_REQUEST_BODY_SIZE - BODY_OTHER_BYTES -
					 prior_bytes
			       : 0;

	if (avail < EXCHANGE_FLOOR) {
		avail = EXCHANGE_FLOOR;
	}
	return avail < HISTORY_BYTES ? avail : HISTORY_BYTES;
}

/* ---- One tool call ----------------------------------------------------------------------- */

static void structured(const char *key, const char *value, const char *key2, const char *value2)
{
	struct json_writer w;

	jw_init(&w, result, sizeof(result));
	jw_object_begin(&w);
	jw_key(&w, key);
	if (value == NULL) {
		jw_bool(&w, true);
	} else {
		jw_string(&w, value);
	}
	if (key2 != NULL) {
		jw_key(&w, key2);
		jw_string(&w, value2);
	}
	jw_object_end(&w);
	(void)jw_finish(&w);
}

/* A call refused before anything runs: {"refused": why} for the model, counted as denied. */
static int refuse_call(struct agent_request *req, const struct tool_def *def, const char *why)
{
	stats.denied++;
	structured("refused", why, NULL, NULL);
	req->hooks->tool_done(req->user, def->name, AGENT_TOOL_DENIED, why);
	return 0;
}

/*
 * Answer the turn's one call into `result`. Returns 0 when the loop goes on, or a negative
 * errno that ends the request (after hooks->error).
 */
static int handle_call(struct agent_request *req, struct tool_session *session,
		       struct turn_state *st)
{
	static struct tool_ctx ctx;
	/* Names match exactly: every byte, so a NUL and what follows it must match too. */
	const struct tool_def *def =
		strlen(st->name) == st->name_len ? tool_registry_find(st->name) : NULL;
	const char *unavailable;
	char why[PROVIDER_MESSAGE_MAX - 40];
	enum tool_disposition d;
	bool confirmed = false;
	int err;

	if (def == NULL) {
		(void)utf8_shown(st->shown, sizeof(st->shown), st->name, st->name_len, st->name_len);
		say_error(req, "the model called an unknown tool: %s%s", st->shown, "");
		return -EPROTO;
	}
	if (session->granted != NULL && !session->granted(session->role, def)) {
		/* The agent's role does not grant it: refused, nothing runs (docs/modules.md). */
		snprintf(why, sizeof(why), "%s is not granted to this agent's role", def->name);
		return refuse_call(req, def, why);
	}
	if (!tool_session_selected(session, def)) {
		/* Disabled by the tool selection this request started with: refused, nothing
		 * runs (docs/tools.md "Tool selection"). */
		const char *group = tool_group_of(def);

		if (group != NULL) {
			snprintf(why, sizeof(why), "%s is disabled by the tool selection (group %s "
				 "is off for this agent)", def->name, group);
		} else {
			snprintf(why, sizeof(why), "%s is disabled by the tool selection (every "
				 "group is off for this agent)", def->name);
		}
		return refuse_call(req, def, why);
	}
	unavailable = tool_unavailable_reason(def);
	if (unavailable != NULL) {
		/* Never offered and never run; the model learns why, as after a denial, so it can
		 * explain instead of losing the turn (docs/tools.md "Availability"). */
		snprintf(why, sizeof(why), "%s is not available: %s", def->name, unavailable);
		stats.failed++;
		structured("error", why, NULL, NULL);
		req->hooks->tool_done(req->user, def->name, AGENT_TOOL_FAILED, why);
		return 0;
	}
	if (!tool_session_is_advertised(session, def)) {
		if (def->workflow_dependency && tool_session_offerable(session, def)) {
			/* Offered from the next turn on; this call is not executed (spec). */
			tool_session_activate(session, def);
			structured("error", "this tool was not active; it is offered now: call it "
					    "again",
				   "tool", def->name);
			req->hooks->tool_done(req->user, def->name, AGENT_TOOL_RETRY, "");
			return 0;
		}
		say_error(req, "the model called %.60s, which was not offered%s (tool_search "
			       "activates tools)",
			  st->name, "");
		return -EPROTO;
	}
	if (tool_args_parse(def, call_args, st->args_len, &args, why, sizeof(why)) != 0) {
		say_error(req, "invalid arguments for %.60s: %.120s", st->name, why);
		return -EPROTO;
	}
	d = tool_policy_disposition(req->config->tools, def->risk);
	if (agent_cancel_is_raised(req->cancel)) {
		return -ECANCELED; /* Esc came before the question: do not ask */
	}
	if (d == TOOL_ASKS) {
		err = req->hooks->confirm(req->user, def->name, call_args, st->args_len);
		if (err < 0) {
			return err;
		}
		if (err == 0) {
			stats.denied++;
			structured("denied", NULL, "reason",
				   "the person at the device did not allow this call");
			req->hooks->tool_done(req->user, def->name, AGENT_TOOL_DENIED,
					      "not allowed");
			return 0;
		}
		confirmed = true;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.cwd = req->cwd != NULL ? req->cwd : "/lfs";
	ctx.cancel = req->cancel;
	ctx.session = session;
	ctx.config = req->config;
	ctx.key = req->key;
	err = tool_execute(def, req->config->tools, confirmed, &ctx, &args, result,
			   sizeof(result));
	if (agent_cancel_is_raised(req->cancel)) {
		return -ECANCELED;
	}
	if (err == -EPERM) {
		stats.denied++;
		structured("denied", NULL, "reason", ctx.error);
		req->hooks->tool_done(req->user, def->name, AGENT_TOOL_DENIED, ctx.error);
		return 0;
	}
	if (err < 0) {
		stats.failed++;
		if (err != -ENOSPC && err != -EBADMSG) {
			structured("error", ctx.error, NULL, NULL);
		}
		req->hooks->tool_done(req->user, def->name, AGENT_TOOL_FAILED, ctx.error);
		return 0;
	}
	stats.executed++;
	req->hooks->tool_done(req->user, def->name, AGENT_TOOL_EXECUTED, "");
	return 0;
}

/* ---- The loop ---------------------------------------------------------------------------- */

/*
 * The tool-use instructions: after the board line while the request may offer tools (a
 * selection group on, the policy not off); with every group off there are no tools and none
 * of this (docs/tools.md "Tool selection").
 */
#define TOOL_USE_INSTRUCTIONS                                                                  \
	"Tools: call the device's tools as functions, one call at a time; find one with "       \
	"tool_search before saying something cannot be done. Tools that write files or run "   \
	"code ask the person at the console first; if a call is denied, say what you would "   \
	"have done and offer another way."

/* One request runs at a time: its instructions with the role's overlay and skills. */
static char instructions[CONFIG_AGENT_INSTRUCTIONS_MAX_LEN + 1] AGENT_PSRAM_ATTR;

static int request_run(struct agent_request *req)
{
	static struct tool_session session;
	static struct turn_state st;
	enum agent_protocol protocol = agent_config_protocol(req->config->endpoint);
	unsigned int budget = req->config->max_tools;
	unsigned int used = 0;
	char prev_id[PROVIDER_ID_MAX + 1];
	char answered_id[PROVIDER_ID_MAX + 1];
	bool continuation = false;
	int err;

	tool_session_init(&session, req->config->tools, req->prompt);
	session.role = module_agent_role(req->agent_id, NULL);
	session.granted = module_role_grants;
	/* The selection is read once: a change applies when the next request starts. */
	session.groups = module_selection_effective(req->agent_id);
	/* The role's overlay and its skills' text follow the frontend's instructions. */
	/* The exchanges make room for them (escaped, at most twice their bytes). */
	/* Whether the request may offer tools at all: some group on and the policy not off. */
	bool offers_tools = session.groups != 0u && req->config->tools != AGENT_TOOLS_OFF;
	size_t instructions_bytes =
		2u * module_instructions(req->agent_id, req->instructions,
					 offers_tools ? TOOL_USE_INSTRUCTIONS : NULL,
					 instructions, sizeof(instructions), NULL);
	memset(&hist, 0, sizeof(hist));
	hist.limit = history_limit((req->write_prior != NULL ? req->prior_bytes : 0) +
				   instructions_bytes);
	memset(&st, 0, sizeof(st));
	st.req = req;
	req->response_id[0] = '\0';
	snprintf(prev_id, sizeof(prev_id), "%s",
		 req->previous_response_id != NULL ? req->previous_response_id : "");
	stats.last_used = 0;
	stats.last_budget = budget;

	for (;;) {
		bool final = used >= budget || req->config->tools == AGENT_TOOLS_OFF;
		struct provider_request pr = {
			.config = req->config,
			.key = req->key,
			.instructions = instructions,
			.prompt = req->prompt,
			.previous_response_id = prev_id[0] != '\0' ? prev_id : NULL,
			.cancel = req->cancel,
			.emit = on_event,
			.user_data = &st,
			.write_prior = req->write_prior,
			.prior_user = req->prior_user,
			.call_args = call_args,
		};

		if (!final) {
			struct json_writer w;
			int n;

			jw_init(&w, descriptors, sizeof(descriptors));
			tool_session_write_tools(&session, protocol, &w);
			n = jw_finish(&w);
			if (n < 0) {
				say_error(req, "the tool schemas exceed the %s-byte descriptor "
					       "buffer%s",
					  STRINGIFY_DESC, "");
				return -ENOSPC;
			}
			/* Every group off: no tools at all, and nothing about tools. */
			pr.tools_json = session.groups != 0u ? descriptors : NULL;
			pr.tools_len = session.groups != 0u ? (size_t)n : 0u;
		}
		if (continuation && protocol == AGENT_PROTOCOL_RESPONSES) {
			pr.call_id = answered_id;
			pr.call_output = result;
		}
		if (protocol == AGENT_PROTOCOL_CHAT && hist.count > 0) {
			pr.write_history = history_write;
		}
		st.calls = 0;
		st.calls_more = false;
		st.failed = false;
		st.response_id[0] = '\0';
		err = provider_run(&pr);
		if (err != 0 || st.failed) {
			return err != 0 ? err : -EIO;
		}
		snprintf(req->response_id, sizeof(req->response_id), "%s", st.response_id);
		if (st.calls == 0) {
			return 0; /* the final answer */
		}
		if (st.calls > 1) {
			char n[12];

			snprintf(n, sizeof(n), "%u", st.calls);
			say_error(req, "the model asked for %s%s tool calls at once; only one at "
				       "a time is supported",
				  st.calls_more ? "more than " : "", n);
			return -EPROTO;
		}
		if (final) {
			(void)utf8_shown(st.shown, sizeof(st.shown), st.name, st.name_len,
					 st.name_len);
			say_error(req, "the model called %s although no tools were offered%s",
				  st.shown, "");
			return -EPROTO;
		}
		err = handle_call(req, &session, &st);
		if (err != 0) {
			return err;
		}
		used++;
		stats.last_used = used;
		if (protocol == AGENT_PROTOCOL_RESPONSES) {
			snprintf(prev_id, sizeof(prev_id), "%s", st.response_id);
			snprintf(answered_id, sizeof(answered_id), "%s", st.call_id);
		} else if (history_add(&st) != 0) {
			char room[16];

			snprintf(room, sizeof(room), "%u", (unsigned int)hist.limit);
			say_error(req, "the tool exchange does not fit the %s bytes left for the "
				       "history%s",
				  room, "");
			return -ENOSPC;
		}
		continuation = true;
	}
}

/* Requests running now: one at a time (request_run's state is static), counted for
 * agent_request_active(). */
static atomic_int active_requests;

int agent_request_run(struct agent_request *req)
{
	int err;

	atomic_fetch_add(&active_requests, 1);
	err = request_run(req);
	atomic_fetch_sub(&active_requests, 1);
	return err;
}

bool agent_request_active(void)
{
	return atomic_load(&active_requests) > 0;
}
