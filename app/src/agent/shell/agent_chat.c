/*
 * The full-screen chat (bare `agent`, `agent new`, `agent resume SLOT`): the screen of
 * agent_screen.c, input through the console bypass, each message one request of the tool loop
 * on the foreground worker, and every completed turn committed to the conversation store.
 * See docs/chat.md.
 *
 * Keys (agent_keys.h decodes them): Enter sends; Backspace erases; Page Up / Page Down page
 * the transcript; Esc and the app-exit key (Ctrl-X) return to the shell, cancelling a running
 * request first.
 *
 * The conversation commands that open or touch a stored slot (`agent resume`, `agent delete`,
 * `agent list`) are in agent_chat_slots.c; both files share agent_chat_internal.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_board_prompt.h"
#include "agent_chat.h"
#include "agent_chat_internal.h"
#include "module_agents.h"
#include "agent_cmd_internal.h"
#include "agent_confirm.h"
#include "agent_confirm_text.h"
#include "agent_jobs.h"
#include "agent_keys.h"
#include "agent_print.h"
#include "agent_request.h"
#include "agent_screen.h"
#include "conv_store.h"
#include "http.h"
#include "json_writer.h"
#include "tool_ids.h"
#include "tool_registry.h"
#include "utf8.h"

#define DEFAULT_COLS	80
#define DEFAULT_ROWS	24
#define TOOL_LINE_MAX	127
#define CALL_SHOWN_MAX	200
#define CAPTURE_BYTES	CONFIG_AGENT_ASSISTANT_CAPTURE_SIZE

static char answer[CAPTURE_BYTES] AGENT_PSRAM_ATTR;
static char tool_lines[CONFIG_AGENT_MAX_TOOLS_LIMIT][TOOL_LINE_MAX + 1] AGENT_PSRAM_ATTR;
/* Each stored call's numeric tool id (docs/tools.md "Tool ids"): 0 for an imported tool. */
static uint16_t tool_ids[CONFIG_AGENT_MAX_TOOLS_LIMIT];
static struct conv_history history AGENT_PSRAM_ATTR;

struct agent_chat_state agent_chat;
/* The typed line, the prompt sent and the instructions: PSRAM-placed (no interrupt touches
 * them; agent_chat keeps its cancel flag and the key in internal RAM). */
static struct {
	char input[CONFIG_AGENT_PROMPT_MAX_LEN + 1];
	char prompt[CONFIG_AGENT_PROMPT_MAX_LEN + 1];
	char instructions[256];
} chat_text AGENT_PSRAM_ATTR;
static struct agent_key_decoder chat_keys;

/* ---- Transcript helpers -------------------------------------------------------------------- */

void agent_chat_say(const char *text)
{
	screen_end_line();
	screen_append(text, strlen(text), SCREEN_PLAIN);
	screen_end_line();
}

static void sayf(const char *fmt, const char *a, const char *b)
{
	char line[PROVIDER_MESSAGE_MAX + 64];

	snprintf(line, sizeof(line), fmt, a, b);
	agent_chat_say(line);
}

static void agent_label(void)
{
	screen_end_line();
	screen_append("agent:", 6, SCREEN_BOLD);
	screen_append(" ", 1, SCREEN_PLAIN);
	agent_chat.label_due = false;
}

static void user_line(const char *text, size_t len)
{
	screen_end_line();
	screen_append(agent_chat.cfg->user, strlen(agent_chat.cfg->user), SCREEN_PLAIN);
	screen_append(": ", 2, SCREEN_PLAIN);
	screen_append(text, len, SCREEN_PLAIN);
	screen_end_line();
}

/* ---- Request hooks (worker) --------------------------------------------------------------- */

static void on_text(void *user, const char *text, size_t len)
{
	(void)user;
	if (agent_chat.label_due) {
		agent_label();
	}
	screen_append(text, len, SCREEN_PLAIN);
	if (agent_chat.answer_len < sizeof(answer)) {
		size_t n = sizeof(answer) - agent_chat.answer_len;

		n = len < n ? len : n;
		memcpy(answer + agent_chat.answer_len, text, n);
		agent_chat.answer_len += n;
	}
}

static void on_tool_call(void *user, const char *name, const char *arguments, size_t len)
{
	/* One line whatever the model sent: its line breaks and controls show as \u00XX. */
	static char shown[6 * CALL_SHOWN_MAX + 1] AGENT_PSRAM_ATTR;
	static char line[sizeof(shown) + PROVIDER_NAME_MAX + 32] AGENT_PSRAM_ATTR;
	size_t n = utf8_shown(shown, sizeof(shown), arguments, len, CALL_SHOWN_MAX);

	(void)user;
	snprintf(line, sizeof(line), "[tool call] %s %s%s", name, shown, n < len ? "..." : "");
	agent_chat_say(line);
	agent_chat.label_due = true;
	if (agent_chat.tool_count < CONFIG_AGENT_MAX_TOOLS_LIMIT) {
		/* Whole characters only (the line is stored and replayed), within the line. */
		size_t name_len = strlen(name);
		size_t room = TOOL_LINE_MAX > name_len + 1 ? TOOL_LINE_MAX - name_len - 1 : 0;

		/* The name stays in the line: an imported tool (id 0) is known by it. */
		tool_ids[agent_chat.tool_count] = tool_numeric_id(tool_registry_find(name));
		snprintf(tool_lines[agent_chat.tool_count++], TOOL_LINE_MAX + 1, "%s %.*s", name,
			 (int)utf8_prefix(arguments, len, room < 100 ? room : 100), arguments);
	}
}

static void on_tool_done(void *user, const char *name, enum agent_tool_outcome outcome,
			 const char *detail)
{
	(void)user;
	switch (outcome) {
	case AGENT_TOOL_EXECUTED:
		sayf("[tool] %s: done%s", name, "");
		break;
	case AGENT_TOOL_DENIED:
		sayf("[tool] %s: denied (%s)", name, detail);
		break;
	case AGENT_TOOL_FAILED:
		sayf("[tool] %s: failed: %s", name, detail);
		break;
	case AGENT_TOOL_RETRY:
		sayf("[tool] %s: activated; the model is asked to call it again%s", name, "");
		break;
	}
	agent_chat.label_due = true;
}

static void confirm_line(void *user, const char *line, size_t len)
{
	(void)user;
	screen_append(line, len, SCREEN_PLAIN);
}

static int on_confirm(void *user, const char *name, const char *arguments, size_t len)
{
	uint16_t cols;
	uint16_t rows;
	bool timed_out;
	int answer_key;

	(void)user;
	agent_confirm_arm();
	screen_end_line();
	/* The name and every argument, escaped, in lines that leave the question on the
	 * transcript's screen (agent_confirm_text.h). */
	screen_transcript_size(&cols, &rows);
	(void)agent_confirm_text(name, arguments, len, cols, rows - 1u, confirm_line, NULL);
	screen_append("Allow once? [y/N] ", 18, SCREEN_PLAIN);
	screen_set_state("confirm?");
	answer_key = agent_confirm_wait(&timed_out);
	screen_set_state("working");
	screen_append(timed_out ? "(no answer: denied)" : answer_key > 0 ? "y" : "n", timed_out ? 19 : 1,
		      SCREEN_PLAIN);
	screen_end_line();
	agent_chat.label_due = true;
	return answer_key;
}

static void on_usage(void *user, const struct provider_usage *usage)
{
	(void)user;
	agent_chat.usage = *usage;
	screen_set_usage(usage->input_tokens, usage->output_tokens, usage->total_tokens);
}

static void on_error(void *user, const char *message)
{
	(void)user;
	sayf("error: %s%s", message, "");
}

static const struct agent_request_hooks hooks = {
	.text = on_text,
	.tool_call = on_tool_call,
	.tool_done = on_tool_done,
	.confirm = on_confirm,
	.usage = on_usage,
	.error = on_error,
};

/* Chat Completions: the conversation's earlier messages, oldest first. */
static void write_prior(void *user, struct json_writer *w)
{
	(void)user;
	for (uint32_t i = 0; i < history.count; i++) {
		const struct conv_history_msg *m = &history.msgs[i];

		jw_object_begin(w);
		jw_key(w, "role");
		jw_string(w, m->role == CONV_REC_USER ? "user" : "assistant");
		jw_key(w, "content");
		jw_string_n(w, history.raw + m->offset, m->len);
		jw_object_end(w);
	}
}

/* ---- The worker ---------------------------------------------------------------------------- */

static void lock(void);
static void unlock(void);

static void commit_turn(const struct agent_request *req)
{
	const char *lines[CONFIG_AGENT_MAX_TOOLS_LIMIT];
	struct conv_usage usage = {
		.input_tokens = agent_chat.usage.input_tokens,
		.output_tokens = agent_chat.usage.output_tokens,
		.total_tokens = agent_chat.usage.total_tokens,
		.reasoning_tokens = agent_chat.usage.reasoning_tokens,
	};
	struct conv_turn turn = {
		.user = chat_text.prompt,
		.user_len = strlen(chat_text.prompt),
		.assistant = answer,
		.assistant_len = agent_chat.answer_len,
		.tools = lines,
		.tool_count = agent_chat.tool_count,
		.tool_ids = tool_ids,
		.response_id = req->response_id,
		.usage = &usage,
	};
	const char *why = NULL;
	int err;

	for (size_t i = 0; i < agent_chat.tool_count; i++) {
		lines[i] = tool_lines[i];
	}
	if (!agent_chat.conv_active) {
		char host[HTTP_HOST_MAX + 1] = "";
		struct http_url url;
		struct conv_meta meta = {
			.protocol = (uint8_t)agent_config_protocol(agent_chat.cfg->endpoint),
			.provider = host,
			.model = agent_chat.cfg->model,
			.title = chat_text.prompt,
		};

		if (http_url_parse(agent_chat.cfg->endpoint, &url) == 0) {
			snprintf(host, sizeof(host), "%s", url.host);
		}
		err = conv_store_create(&agent_chat.conv, &meta);
		if (err < 0) {
			char number[12];

			snprintf(number, sizeof(number), "%d", err);
			sayf("agent: the conversation cannot be stored (error %s)%s", number, "");
			return;
		}
		/* A new conversation in this slot is a new agent: nothing of the old one's. */
		module_agent_forget(agent_chat.conv.slot);
		agent_chat.conv_active = true;
	}
	err = conv_store_commit(&agent_chat.conv, &turn, &why);
	if (err != 0) {
		sayf("agent: this turn was not saved: %s%s", why != NULL ? why : "store error", "");
		if (!agent_chat.conv_saved) {
			/* Nothing of this conversation is stored: its slot still holds another one,
			 * whose messages must never be sent as ours. The next turn tries again. */
			agent_chat.conv_active = false;
		}
		return;
	}
	agent_chat.conv_saved = true;
}

static void worker(void *user_data)
{
	static struct agent_request req;
	struct agent_job_admission why;
	int n;
	int err = agent_job_begin("chat", "shell", &why);

	(void)user_data;
	if (err != 0) {
		sayf("error: the request cannot start now: %s %s", why.reason, why.detail);
		goto done;
	}
	n = agent_config_key_get(agent_chat.key, sizeof(agent_chat.key));
	history.count = 0;
	if (agent_chat.conv_saved &&
	    agent_config_protocol(agent_chat.cfg->endpoint) == AGENT_PROTOCOL_CHAT &&
	    conv_store_history(agent_chat.conv.slot, &history) != 0) {
		history.count = 0;
		agent_chat_say(
			"agent: the earlier messages could not be read; sending this one alone");
	}
	req = (struct agent_request){
		.config = agent_chat.cfg,
		.key = n > 0 ? agent_chat.key : NULL,
		.instructions = chat_text.instructions,
		/* A stored conversation is the agent of its slot; a new one is agent 0's. */
		.agent_id = agent_chat.conv_saved ? agent_chat.conv.slot : 0u,
		.prompt = chat_text.prompt,
		.cwd = "/lfs",
		.previous_response_id =
			agent_chat.response_id[0] != '\0' ? agent_chat.response_id : NULL,
		.write_prior = history.count > 0 ? write_prior : NULL,
		.prior_bytes = history.serialized_bytes,
		.cancel = &agent_chat.cancel,
		.hooks = &hooks,
	};
	agent_chat.answer_len = 0;
	agent_chat.tool_count = 0;
	agent_chat.label_due = true;
	memset(&agent_chat.usage, 0, sizeof(agent_chat.usage));
	/* The status bar shows this turn's counts from now on, never an earlier turn's. */
	screen_set_usage(0, 0, 0);
	err = agent_request_run(&req);
	agent_wipe(agent_chat.key, sizeof(agent_chat.key));
	screen_end_line();
	if (err == 0) {
		/* Only completed turns are stored (spec). */
		commit_turn(&req);
		snprintf(agent_chat.response_id, sizeof(agent_chat.response_id), "%s",
			 req.response_id);
	} else if (err == -ECANCELED) {
		agent_chat_say("(cancelled; nothing stored)");
	}
	agent_job_end("chat", err);
done:
	lock();
	agent_chat.running = false;
	bool leave = agent_chat.leave;

	agent_chat.leave = false;
	unlock();
	screen_set_state("");
	if (leave) {
		agent_chat.open = false;
		screen_close();
		agent_console_set_bypass(agent_chat.console, NULL, NULL);
	}
}

/* ---- Input (console thread) ------------------------------------------------------------------ */

static void lock(void)
{
	if (agent_chat.lock != NULL) {
		agent_mutex_lock(agent_chat.lock);
	}
}

static void unlock(void)
{
	if (agent_chat.lock != NULL) {
		agent_mutex_unlock(agent_chat.lock);
	}
}

static void submit(void)
{
	int err;

	if (agent_chat.input_len == 0) {
		return;
	}
	memcpy(chat_text.prompt, chat_text.input, agent_chat.input_len);
	chat_text.prompt[agent_chat.input_len] = '\0';
	user_line(chat_text.input, agent_chat.input_len);
	agent_chat.input_len = 0;
	agent_chat.input_refused = false;
	screen_set_input(agent_chat.cfg->user, "", 0);
	if (agent_chat.thread != NULL && agent_thread_join(agent_chat.thread, 2000) == 0) {
		agent_chat.thread = NULL;
	}
	if (agent_chat.thread != NULL) {
		agent_chat_say("agent: the previous request has not ended yet");
		return;
	}
	agent_cancel_reset(&agent_chat.cancel);
	lock();
	agent_chat.running = true;
	agent_chat.leave = false;
	unlock();
	screen_set_state("working");
	err = agent_thread_start(&agent_chat.thread, "agent", CONFIG_AGENT_WORKER_STACK_SIZE,
				 worker, NULL);
	if (err != 0) {
		agent_chat.running = false;
		screen_set_state("");
		agent_chat_say("agent: cannot start the request worker");
	}
}

static void erase_char(void)
{
	while (agent_chat.input_len > 0) {
		char c = chat_text.input[--agent_chat.input_len];

		if (((unsigned char)c & 0xc0) != 0x80) {
			break; /* the lead byte of the character */
		}
	}
}

static void close_now(void)
{
	agent_chat.open = false;
	screen_close();
	agent_console_set_bypass(agent_chat.console, NULL, NULL);
}

/*
 * Esc, Ctrl-X or Ctrl-C: back to the shell (spec). A running request is cancelled first and
 * the worker closes the frontend when it has ended. Returns true when the frontend closed.
 */
static bool escape(void)
{
	lock();
	if (agent_chat.running) {
		/* The worker reads leave under the same lock after it stops running. */
		agent_chat.leave = true;
		unlock();
		agent_cancel_raise(&agent_chat.cancel);
		agent_confirm_cancel();
		return false;
	}
	unlock();
	close_now();
	return true;
}

static void typed_byte(uint8_t c, bool *typed)
{
	if (c == '\r' || c == '\n') {
		if (!agent_chat.running) {
			submit();
		}
		return;
	}
	if ((c == 0x7f || c == 0x08) && !agent_chat.running) {
		erase_char();
		*typed = true;
		return;
	}
	if (c < 0x20 || agent_chat.running) {
		/* No typing while a request runs: a letter meant for the next message must never
		 * answer a confirmation that appears meanwhile. */
		return;
	}
	/* A character goes in whole or not at all (its bytes may come in separate reads). */
	if (c >= 0xc0) {
		size_t need = c >= 0xf0 ? 4u : c >= 0xe0 ? 3u : 2u;

		agent_chat.input_refused = agent_chat.input_len + need > CONFIG_AGENT_PROMPT_MAX_LEN;
	} else if (c < 0x80) {
		agent_chat.input_refused = false;
	}
	if (!agent_chat.input_refused && agent_chat.input_len < CONFIG_AGENT_PROMPT_MAX_LEN) {
		chat_text.input[agent_chat.input_len++] = (char)c;
		*typed = true;
	}
}

/* One key (agent_keys.h). Returns true when it closed the frontend. */
static bool chat_key(const struct agent_key *key, bool *typed)
{
	switch (key->type) {
	case AGENT_KEY_SEQUENCE:
		if (agent_key_is(key, "[5~")) {
			screen_page(1);
		} else if (agent_key_is(key, "[6~")) {
			screen_page(-1);
		}
		return false; /* other cursor and function keys do nothing */
	case AGENT_KEY_LONE_ESC:
		return escape();
	default:
		break;
	}
	if (agent_confirm_key(key->byte)) {
		return false;
	}
	if (key->byte == AGENT_KEY_APP_EXIT || key->byte == AGENT_KEY_CTRL_C) {
		return escape();
	}
	typed_byte(key->byte, typed);
	return false;
}

size_t agent_chat_input(struct agent_console *console, const uint8_t *data, size_t len,
			void *user_data)
{
	struct agent_key keys[2];
	int64_t now = agent_uptime_ms();
	bool typed = false;
	int32_t wait;

	(void)user_data;
	/* Called without input when an ESC may have stayed alone (agent_console_wake_after()). */
	if (agent_key_expire(&chat_keys, now, &keys[0]) && chat_key(&keys[0], &typed)) {
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		size_t n = agent_key_feed(&chat_keys, data[i], now, keys);

		for (size_t k = 0; k < n; k++) {
			if (chat_key(&keys[k], &typed)) {
				/* A lone Esc is an earlier byte's key: byte i is not ours. */
				return keys[k].type == AGENT_KEY_LONE_ESC ? i : i + 1;
			}
		}
	}
	if (typed) {
		screen_set_input(agent_chat.cfg->user, chat_text.input, agent_chat.input_len);
	}
	wait = agent_key_wait_ms(&chat_keys, now);
	if (wait >= 0) {
		agent_console_wake_after(console, (uint32_t)wait);
	}
	return len;
}

/* ---- Commands ------------------------------------------------------------------------------ */

int agent_chat_open_screen(struct agent_console *console)
{
	uint16_t cols = DEFAULT_COLS;
	uint16_t rows = DEFAULT_ROWS;
	int err;

	if (agent_console_size(console, &cols, &rows) != 0) {
		cols = DEFAULT_COLS;
		rows = DEFAULT_ROWS;
	}
	err = screen_open(console, cols, rows);
	if (err != 0) {
		agent_error(console, "the chat screen is in use");
		return err;
	}
	agent_chat.console = console;
	agent_chat.input_len = 0;
	agent_chat.input_refused = false;
	agent_chat.leave = false;
	agent_key_decoder_reset(&chat_keys);
	agent_chat.open = true;
	if (agent_chat.lock == NULL) {
		/* Without it the flags are still written once. */
		(void)agent_mutex_init(&agent_chat.lock);
	}
	screen_set_input(agent_chat.cfg->user, "", 0);
	return 0;
}

int agent_chat_check_ready(struct agent_console *console)
{
	const struct agent_config *cfg = agent_session_config();

	if (agent_chat.open || agent_chat.running) {
		agent_error(console, "the chat is already open");
		return -EBUSY;
	}
	if (cfg->endpoint[0] == '\0') {
		agent_error(console, "no endpoint: set one with agent config endpoint URL");
		return -EINVAL;
	}
	if (cfg->model[0] == '\0') {
		agent_error(console, "no model: set one with agent config model NAME");
		return -EINVAL;
	}
	if (agent_chat.thread != NULL) {
		if (agent_thread_join(agent_chat.thread, 2000) != 0) {
			agent_error(console, "the previous request has not ended yet");
			return -EBUSY;
		}
		agent_chat.thread = NULL;
	}
	agent_chat.cfg = cfg;
	agent_board_instructions(chat_text.instructions, sizeof(chat_text.instructions));
	return 0;
}

int agent_chat_new(struct agent_console *console)
{
	int err = agent_chat_check_ready(console);

	if (err != 0) {
		return err;
	}
	memset(&agent_chat.conv, 0, sizeof(agent_chat.conv));
	agent_chat.conv_active = false;
	agent_chat.conv_saved = false;
	agent_chat.response_id[0] = '\0';
	err = agent_chat_open_screen(console);
	if (err != 0) {
		return err;
	}
	agent_chat_say(
		"New conversation. Enter sends, PgUp/PgDn scroll, Esc returns to the shell.");
	agent_console_set_bypass(console, agent_chat_input, NULL);
	return 0;
}

unsigned int agent_chat_open_slot(void)
{
	return agent_chat.open && agent_chat.conv_active ? agent_chat.conv.slot : 0u;
}
