/*
 * The full-screen chat (bare `agent`, `agent new`, `agent resume SLOT`): the screen of
 * agent_screen.c, input through the console bypass, each message one request of the tool loop
 * on the foreground worker, and every completed turn committed to the conversation store.
 * See docs/chat.md.
 *
 * Keys: Enter sends; Backspace erases; Page Up / Page Down page the transcript; Esc while a
 * request runs cancels it, otherwise returns to the shell; the app-exit key (Ctrl-X) cancels
 * any request and returns to the shell.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_board_prompt.h"
#include "agent_chat.h"
#include "agent_cmd_internal.h"
#include "agent_confirm.h"
#include "agent_jobs.h"
#include "agent_keys.h"
#include "agent_print.h"
#include "agent_request.h"
#include "agent_screen.h"
#include "conv_store.h"
#include "http.h"
#include "json_writer.h"
#include "utf8.h"

#define DEFAULT_COLS	80
#define DEFAULT_ROWS	24
#define TOOL_LINE_MAX	127
#define CALL_SHOWN_MAX	200
#define CAPTURE_BYTES	CONFIG_AGENT_ASSISTANT_CAPTURE_SIZE

static char answer[CAPTURE_BYTES] AGENT_PSRAM_ATTR;
static char tool_lines[CONFIG_AGENT_MAX_TOOLS_LIMIT][TOOL_LINE_MAX + 1] AGENT_PSRAM_ATTR;
static struct conv_history history AGENT_PSRAM_ATTR;

static struct {
	volatile bool open;
	volatile bool running;
	volatile bool leave; /* return to the shell when the running request has ended */
	struct agent_console *console;
	struct agent_thread *thread;
	struct agent_cancel cancel;
	const struct agent_config *cfg;
	char input[CONFIG_AGENT_PROMPT_MAX_LEN + 1];
	size_t input_len;
	bool input_refused; /* the bytes of a character that did not fit are being dropped */
	char prompt[CONFIG_AGENT_PROMPT_MAX_LEN + 1];
	char key[CONFIG_AGENT_KEY_MAX_LEN + 1];
	char instructions[256];
	struct conv_handle conv;
	bool conv_active; /* conv was created or opened */
	bool conv_saved;  /* conv holds at least one committed turn (its history is ours) */
	struct agent_mutex *lock; /* orders running/leave between the input and the worker */
	char response_id[PROVIDER_ID_MAX + 1];
	size_t answer_len;
	size_t tool_count;
	bool label_due; /* the next text starts a new "agent:" line */
	struct provider_usage usage;
} chat;

/* ---- Transcript helpers -------------------------------------------------------------------- */

static void say(const char *text)
{
	screen_end_line();
	screen_append(text, strlen(text), SCREEN_PLAIN);
	screen_end_line();
}

static void sayf(const char *fmt, const char *a, const char *b)
{
	char line[PROVIDER_MESSAGE_MAX + 64];

	snprintf(line, sizeof(line), fmt, a, b);
	say(line);
}

static void agent_label(void)
{
	screen_end_line();
	screen_append("agent:", 6, SCREEN_BOLD);
	screen_append(" ", 1, SCREEN_PLAIN);
	chat.label_due = false;
}

static void user_line(const char *text, size_t len)
{
	screen_end_line();
	screen_append(chat.cfg->user, strlen(chat.cfg->user), SCREEN_PLAIN);
	screen_append(": ", 2, SCREEN_PLAIN);
	screen_append(text, len, SCREEN_PLAIN);
	screen_end_line();
}

/* ---- Request hooks (worker) --------------------------------------------------------------- */

static void on_text(void *user, const char *text, size_t len)
{
	(void)user;
	if (chat.label_due) {
		agent_label();
	}
	screen_append(text, len, SCREEN_PLAIN);
	if (chat.answer_len < sizeof(answer)) {
		size_t n = sizeof(answer) - chat.answer_len;

		n = len < n ? len : n;
		memcpy(answer + chat.answer_len, text, n);
		chat.answer_len += n;
	}
}

static void on_tool_call(void *user, const char *name, const char *arguments, size_t len)
{
	char line[CALL_SHOWN_MAX + PROVIDER_NAME_MAX + 32];

	(void)user;
	snprintf(line, sizeof(line), "[tool call] %s %.*s%s", name,
		 (int)utf8_prefix(arguments, len, CALL_SHOWN_MAX), arguments,
		 len > CALL_SHOWN_MAX ? "..." : "");
	say(line);
	chat.label_due = true;
	if (chat.tool_count < CONFIG_AGENT_MAX_TOOLS_LIMIT) {
		/* Whole characters only (the line is stored and replayed), within the line. */
		size_t name_len = strlen(name);
		size_t room = TOOL_LINE_MAX > name_len + 1 ? TOOL_LINE_MAX - name_len - 1 : 0;

		snprintf(tool_lines[chat.tool_count++], TOOL_LINE_MAX + 1, "%s %.*s", name,
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
	chat.label_due = true;
}

static int on_confirm(void *user, const char *name, const char *arguments, size_t len)
{
	char head[PROVIDER_NAME_MAX + 16];
	bool timed_out;
	int answer_key;

	(void)user;
	agent_confirm_arm();
	screen_end_line();
	snprintf(head, sizeof(head), "[confirm] %s ", name);
	screen_append(head, strlen(head), SCREEN_PLAIN);
	screen_append(arguments, len, SCREEN_PLAIN);
	screen_end_line();
	screen_append("Allow once? [y/N] ", 18, SCREEN_PLAIN);
	screen_set_state("confirm?");
	answer_key = agent_confirm_wait(&timed_out);
	screen_set_state("working");
	screen_append(timed_out ? "(no answer: denied)" : answer_key > 0 ? "y" : "n", timed_out ? 19 : 1,
		      SCREEN_PLAIN);
	screen_end_line();
	chat.label_due = true;
	return answer_key;
}

static void on_usage(void *user, const struct provider_usage *usage)
{
	(void)user;
	chat.usage = *usage;
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
		.input_tokens = chat.usage.input_tokens,
		.output_tokens = chat.usage.output_tokens,
		.total_tokens = chat.usage.total_tokens,
		.reasoning_tokens = chat.usage.reasoning_tokens,
	};
	struct conv_turn turn = {
		.user = chat.prompt,
		.user_len = strlen(chat.prompt),
		.assistant = answer,
		.assistant_len = chat.answer_len,
		.tools = lines,
		.tool_count = chat.tool_count,
		.response_id = req->response_id,
		.usage = &usage,
	};
	const char *why = NULL;
	int err;

	for (size_t i = 0; i < chat.tool_count; i++) {
		lines[i] = tool_lines[i];
	}
	if (!chat.conv_active) {
		char host[HTTP_HOST_MAX + 1] = "";
		struct http_url url;
		struct conv_meta meta = {
			.protocol = (uint8_t)agent_config_protocol(chat.cfg->endpoint),
			.provider = host,
			.model = chat.cfg->model,
			.title = chat.prompt,
		};

		if (http_url_parse(chat.cfg->endpoint, &url) == 0) {
			snprintf(host, sizeof(host), "%s", url.host);
		}
		err = conv_store_create(&chat.conv, &meta);
		if (err < 0) {
			char number[12];

			snprintf(number, sizeof(number), "%d", err);
			sayf("agent: the conversation cannot be stored (error %s)%s", number, "");
			return;
		}
		chat.conv_active = true;
	}
	err = conv_store_commit(&chat.conv, &turn, &why);
	if (err != 0) {
		sayf("agent: this turn was not saved: %s%s", why != NULL ? why : "store error", "");
		if (!chat.conv_saved) {
			/* Nothing of this conversation is stored: its slot still holds another one,
			 * whose messages must never be sent as ours. The next turn tries again. */
			chat.conv_active = false;
		}
		return;
	}
	chat.conv_saved = true;
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
	n = agent_config_key_get(chat.key, sizeof(chat.key));
	history.count = 0;
	if (chat.conv_saved && agent_config_protocol(chat.cfg->endpoint) == AGENT_PROTOCOL_CHAT &&
	    conv_store_history(chat.conv.slot, &history) != 0) {
		history.count = 0;
		say("agent: the earlier messages could not be read; sending this one alone");
	}
	req = (struct agent_request){
		.config = chat.cfg,
		.key = n > 0 ? chat.key : NULL,
		.instructions = chat.instructions,
		.prompt = chat.prompt,
		.cwd = "/lfs",
		.previous_response_id = chat.response_id[0] != '\0' ? chat.response_id : NULL,
		.write_prior = history.count > 0 ? write_prior : NULL,
		.prior_bytes = history.serialized_bytes,
		.cancel = &chat.cancel,
		.hooks = &hooks,
	};
	chat.answer_len = 0;
	chat.tool_count = 0;
	chat.label_due = true;
	memset(&chat.usage, 0, sizeof(chat.usage));
	err = agent_request_run(&req);
	memset(chat.key, 0, sizeof(chat.key));
	screen_end_line();
	if (err == 0) {
		/* Only completed turns are stored (spec). */
		commit_turn(&req);
		snprintf(chat.response_id, sizeof(chat.response_id), "%s", req.response_id);
	} else if (err == -ECANCELED) {
		say("(cancelled; nothing stored)");
	}
	agent_job_end("chat", err);
done:
	lock();
	chat.running = false;
	bool leave = chat.leave;

	chat.leave = false;
	unlock();
	screen_set_state("");
	if (leave) {
		chat.open = false;
		screen_close();
		agent_console_set_bypass(chat.console, NULL, NULL);
	}
}

/* ---- Input (console thread) ------------------------------------------------------------------ */

static void lock(void)
{
	if (chat.lock != NULL) {
		agent_mutex_lock(chat.lock);
	}
}

static void unlock(void)
{
	if (chat.lock != NULL) {
		agent_mutex_unlock(chat.lock);
	}
}

static void submit(void)
{
	int err;

	if (chat.input_len == 0) {
		return;
	}
	memcpy(chat.prompt, chat.input, chat.input_len);
	chat.prompt[chat.input_len] = '\0';
	user_line(chat.input, chat.input_len);
	chat.input_len = 0;
	chat.input_refused = false;
	screen_set_input(chat.cfg->user, "", 0);
	if (chat.thread != NULL && agent_thread_join(chat.thread, 2000) == 0) {
		chat.thread = NULL;
	}
	if (chat.thread != NULL) {
		say("agent: the previous request has not ended yet");
		return;
	}
	agent_cancel_reset(&chat.cancel);
	lock();
	chat.running = true;
	chat.leave = false;
	unlock();
	screen_set_state("working");
	err = agent_thread_start(&chat.thread, "agent", CONFIG_AGENT_WORKER_STACK_SIZE, worker,
				 NULL);
	if (err != 0) {
		chat.running = false;
		screen_set_state("");
		say("agent: cannot start the request worker");
	}
}

static void erase_char(void)
{
	while (chat.input_len > 0) {
		char c = chat.input[--chat.input_len];

		if (((unsigned char)c & 0xc0) != 0x80) {
			break; /* the lead byte of the character */
		}
	}
}

static void close_now(void)
{
	chat.open = false;
	screen_close();
	agent_console_set_bypass(chat.console, NULL, NULL);
}

/* Esc or Ctrl-X. Returns true when the frontend closed. */
static bool escape(bool app_exit)
{
	lock();
	if (chat.running) {
		/* The worker reads leave under the same lock after it stops running. */
		if (app_exit) {
			chat.leave = true;
		}
		unlock();
		agent_cancel_raise(&chat.cancel);
		agent_confirm_cancel();
		return false;
	}
	unlock();
	close_now();
	return true;
}

static size_t chat_input(struct agent_console *console, const uint8_t *data, size_t len,
			 void *user_data)
{
	bool typed = false;

	(void)console;
	(void)user_data;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = data[i];

		if (agent_confirm_key(c)) {
			continue;
		}
		if (c == AGENT_KEY_ESC) {
			size_t csi = agent_key_csi_length(data + i + 1, len - i - 1);

			if (csi > 0) {
				if (csi == 3 && data[i + 1] == '[' && data[i + 3] == '~') {
					if (data[i + 2] == '5') {
						screen_page(1);
					} else if (data[i + 2] == '6') {
						screen_page(-1);
					}
				}
				i += csi;
				continue;
			}
			if (escape(false)) {
				return i + 1;
			}
			continue;
		}
		if (c == AGENT_KEY_APP_EXIT || c == AGENT_KEY_CTRL_C) {
			if (escape(true)) {
				return i + 1;
			}
			continue;
		}
		if (c == '\r' || c == '\n') {
			if (!chat.running) {
				submit();
			}
			continue;
		}
		if ((c == 0x7f || c == 0x08) && !chat.running) {
			erase_char();
			typed = true;
			continue;
		}
		if (c < 0x20) {
			continue;
		}
		if (chat.running) {
			/* No typing while a request runs: a letter meant for the next message must
			 * never answer a confirmation that appears meanwhile. */
			continue;
		}
		/* A character goes in whole or not at all (its bytes may come in separate reads). */
		if (c >= 0xc0) {
			size_t need = c >= 0xf0 ? 4u : c >= 0xe0 ? 3u : 2u;

			chat.input_refused = chat.input_len + need > CONFIG_AGENT_PROMPT_MAX_LEN;
		} else if (c < 0x80) {
			chat.input_refused = false;
		}
		if (!chat.input_refused && chat.input_len < CONFIG_AGENT_PROMPT_MAX_LEN) {
			chat.input[chat.input_len++] = (char)c;
			typed = true;
		}
	}
	if (typed) {
		screen_set_input(chat.cfg->user, chat.input, chat.input_len);
	}
	return len;
}

/* ---- Commands ------------------------------------------------------------------------------ */

static int open_screen(struct agent_console *console)
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
	chat.console = console;
	chat.input_len = 0;
	chat.input_refused = false;
	chat.leave = false;
	chat.open = true;
	if (chat.lock == NULL) {
		(void)agent_mutex_init(&chat.lock); /* without it the flags are still written once */
	}
	screen_set_input(chat.cfg->user, "", 0);
	return 0;
}

static int check_ready(struct agent_console *console)
{
	const struct agent_config *cfg = agent_cmd_config();

	if (chat.open || chat.running) {
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
	if (chat.thread != NULL) {
		if (agent_thread_join(chat.thread, 2000) != 0) {
			agent_error(console, "the previous request has not ended yet");
			return -EBUSY;
		}
		chat.thread = NULL;
	}
	chat.cfg = cfg;
	agent_board_instructions(chat.instructions, sizeof(chat.instructions));
	return 0;
}

int agent_chat_new(struct agent_console *console)
{
	int err = check_ready(console);

	if (err != 0) {
		return err;
	}
	memset(&chat.conv, 0, sizeof(chat.conv));
	chat.conv_active = false;
	chat.conv_saved = false;
	chat.response_id[0] = '\0';
	err = open_screen(console);
	if (err != 0) {
		return err;
	}
	say("New conversation. Enter sends, PgUp/PgDn scroll, Esc returns to the shell.");
	agent_console_set_bypass(console, chat_input, NULL);
	return 0;
}

/* Replay the stored transcript record by record (bounded pieces, never the whole file). */
static int replay_chunk(const struct conv_chunk *chunk, void *user_data)
{
	(void)user_data;
	if (chunk->offset == 0) {
		screen_end_line();
		switch (chunk->type) {
		case CONV_REC_USER:
			screen_append(chat.cfg->user, strlen(chat.cfg->user), SCREEN_PLAIN);
			screen_append(": ", 2, SCREEN_PLAIN);
			break;
		case CONV_REC_ASSISTANT:
			screen_append("agent:", 6, SCREEN_BOLD);
			screen_append(" ", 1, SCREEN_PLAIN);
			break;
		case CONV_REC_TOOL:
			screen_append("[tool] ", 7, SCREEN_PLAIN);
			break;
		default:
			return 0; /* header data, ids and usage are not shown */
		}
	}
	if (chunk->type == CONV_REC_USER || chunk->type == CONV_REC_ASSISTANT ||
	    chunk->type == CONV_REC_TOOL) {
		screen_append((const char *)chunk->data, chunk->len, SCREEN_PLAIN);
	}
	return 0;
}

static int parse_slot(struct agent_console *console, const char *text, uint8_t *slot)
{
	struct conv_store_info info;
	char *end;
	long v;

	if (conv_store_info_get(&info) != 0) {
		agent_error(console, "conversations are not available (no storage)");
		return -ENODEV;
	}
	v = strtol(text, &end, 10);
	if (*text == '\0' || *end != '\0' || v < 1 || v > info.slots) {
		agent_error(console, "slot must be a number from 1 to %u", (unsigned int)info.slots);
		return -EINVAL;
	}
	*slot = (uint8_t)v;
	return 0;
}

/*
 * Whether the stored conversation can go on with the endpoint configured now: the same wire
 * protocol, and for Responses the same provider (its continuation id means nothing
 * elsewhere). Chat Completions rebuilds its context locally, so any provider will do.
 */
static int check_continuable(struct agent_console *console, const struct conv_handle *h)
{
	enum agent_protocol now = agent_config_protocol(chat.cfg->endpoint);
	struct http_url url;

	if (h->protocol != (uint8_t)now) {
		agent_error(console,
			    "slot %u is a %s conversation but the endpoint speaks %s: configure "
			    "a %s endpoint or start a new conversation",
			    (unsigned int)h->slot, agent_protocol_name((enum agent_protocol)h->protocol),
			    agent_protocol_name(now),
			    agent_protocol_name((enum agent_protocol)h->protocol));
		return -EINVAL;
	}
	/* The stored provider is the endpoint's host, cut to CONV_PROVIDER_MAX bytes. */
	if (now == AGENT_PROTOCOL_RESPONSES && http_url_parse(chat.cfg->endpoint, &url) == 0 &&
	    strncmp(url.host, h->provider, CONV_PROVIDER_MAX) != 0) {
		agent_error(console,
			    "slot %u continues at %s, not at the configured endpoint's host",
			    (unsigned int)h->slot, h->provider);
		return -EINVAL;
	}
	return 0;
}

int agent_chat_resume(struct agent_console *console, const char *slot_text)
{
	static struct conv_handle h;
	uint8_t slot;
	int err = parse_slot(console, slot_text, &slot);

	if (err != 0) {
		return err;
	}
	err = check_ready(console);
	if (err != 0) {
		return err;
	}
	err = conv_store_open(&h, slot);
	if (err == -ENOENT) {
		agent_error(console, "slot %u holds no conversation", (unsigned int)slot);
		return err;
	}
	if (err != 0) {
		agent_error(console, "slot %u cannot be read (error %d)", (unsigned int)slot, err);
		return err;
	}
	err = check_continuable(console, &h);
	if (err != 0) {
		return err;
	}
	chat.conv = h;
	chat.conv_active = true;
	chat.conv_saved = true;
	chat.response_id[0] = '\0';
	(void)conv_store_last_response_id(slot, chat.response_id, sizeof(chat.response_id));
	err = open_screen(console);
	if (err != 0) {
		return err;
	}
	err = conv_store_read(slot, replay_chunk, NULL);
	screen_end_line();
	if (err != 0) {
		say("agent: the rest of this conversation is damaged and was not shown");
	}
	say("Resumed. Enter sends, PgUp/PgDn scroll, Esc returns to the shell.");
	agent_console_set_bypass(console, chat_input, NULL);
	return 0;
}

int agent_chat_delete(struct agent_console *console, const char *slot_text)
{
	uint8_t slot;
	int err = parse_slot(console, slot_text, &slot);

	if (err != 0) {
		return err;
	}
	if (chat.open && chat.conv_active && chat.conv.slot == slot) {
		agent_error(console, "slot %u is open in the chat", (unsigned int)slot);
		return -EBUSY;
	}
	err = conv_store_delete(slot);
	if (err == -ENOENT) {
		agent_error(console, "slot %u holds no conversation", (unsigned int)slot);
		return err;
	}
	if (err != 0) {
		agent_error(console, "slot %u could not be deleted (error %d)", (unsigned int)slot,
			    err);
		return err;
	}
	agent_printf(console, "slot %u deleted\n", (unsigned int)slot);
	return 0;
}

unsigned int agent_chat_open_slot(void)
{
	return chat.open && chat.conv_active ? chat.conv.slot : 0u;
}

static int list_one(const struct conv_summary *s, void *user_data)
{
	struct agent_console *console = user_data;

	if (s->damaged) {
		agent_printf(console, "%-4u (damaged, %u bytes)\n", (unsigned int)s->slot,
			     (unsigned int)s->bytes);
		return 0;
	}
	agent_printf(console, "%-4u %-5u %-6u %-20.20s %s\n", (unsigned int)s->slot,
		     (unsigned int)s->turns, (unsigned int)s->bytes, s->model, s->title);
	return 0;
}

int agent_chat_list(struct agent_console *console)
{
	struct conv_store_info info;

	if (conv_store_info_get(&info) != 0) {
		agent_error(console, "conversations are not available (no storage)");
		return -ENODEV;
	}
	agent_printf(console, "conversations in %s (%u slots)\n", info.dir,
		     (unsigned int)info.slots);
	agent_printf(console, "%-4s %-5s %-6s %-20s %s\n", "slot", "turns", "bytes", "model",
		     "title");
	return conv_store_list(list_one, console);
}
