/*
 * `agent ask PROMPT`: one request to the configured provider, the answer streamed to the
 * console, token usage at the end, nothing stored. The request runs on the foreground worker
 * thread; the console is in bypass meanwhile, so Esc can cancel, and it stays there after
 * the answer until Esc or the app-exit key (Ctrl-X) returns to the shell.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent_board_prompt.h"
#include "agent_cmd.h"
#include "agent_cmd_internal.h"
#include "agent_confirm.h"
#include "agent_confirm_text.h"
#include "agent_jobs.h"
#include "agent_keys.h"
#include "agent_print.h"
#include "agent_request.h"
#include "agent_text.h"
#include "utf8.h"

#define CALL_SHOWN_MAX 200 /* bytes of a tool call's arguments shown */


static struct {
	volatile bool busy;	 /* from `agent ask` until the frontend closed */
	volatile bool running;	 /* the worker is in the request */
	volatile bool leave;	 /* Esc while running: return to the shell when it ends */
	struct agent_console *console;
	struct agent_thread *thread;
	struct agent_cancel cancel;
	char key[CONFIG_AGENT_KEY_MAX_LEN + 1];
	struct provider_usage usage;
	bool usage_seen;
	struct agent_text_filter filter;
	bool line_open; /* the last output did not end a line */
	struct agent_key_decoder keys;
} ask;
/* The prompt and the instructions: PSRAM-placed (the key and the cancel flag stay in ask). */
static struct {
	char prompt[CONFIG_AGENT_PROMPT_MAX_LEN + 1];
	char instructions[256];
} ask_text AGENT_PSRAM_ATTR;

static void out(const char *text, size_t len)
{
	if (len == 0) {
		return;
	}
	agent_console_write(ask.console, text, len);
	ask.line_open = text[len - 1] != '\n';
}

static void end_line(void)
{
	if (ask.line_open) {
		out("\n", 1);
	}
}

/* Untrusted text (from the model or the server) through the terminal-safe filter. */
struct safe_buf {
	char buf[64];
	size_t len;
};

static void safe_put(void *user, char c)
{
	struct safe_buf *b = user;

	b->buf[b->len++] = c;
	if (b->len == sizeof(b->buf)) {
		out(b->buf, b->len);
		b->len = 0;
	}
}

static void safe_out(const char *text, size_t len)
{
	struct safe_buf b = {.len = 0};

	agent_text_filter(&ask.filter, text, len, safe_put, &b);
	out(b.buf, b.len);
}

static void safe_outs(const char *text)
{
	safe_out(text, strlen(text));
	agent_text_filter_reset(&ask.filter);
}

static void on_text(void *user, const char *text, size_t len)
{
	(void)user;
	safe_out(text, len);
}

static void on_tool_call(void *user, const char *name, const char *arguments, size_t len)
{
	static char call_shown[6 * CALL_SHOWN_MAX + 1] AGENT_PSRAM_ATTR;
	size_t shown;

	(void)user;
	end_line();
	agent_text_filter_reset(&ask.filter);
	out("[tool call] ", 12);
	safe_outs(name);
	out(" ", 1);
	/* One line whatever the model sent: its line breaks and controls show as \u00XX. */
	shown = utf8_shown(call_shown, sizeof(call_shown), arguments, len, CALL_SHOWN_MAX);
	safe_out(call_shown, strlen(call_shown));
	agent_text_filter_reset(&ask.filter);
	out(shown < len ? "...\n" : "\n", shown < len ? 4 : 1);
}

static void on_tool_done(void *user, const char *name, enum agent_tool_outcome outcome,
			 const char *detail)
{
	(void)user;
	end_line();
	switch (outcome) {
	case AGENT_TOOL_EXECUTED:
		agent_printf(ask.console, "[tool] %s: done\n", name);
		break;
	case AGENT_TOOL_DENIED:
		agent_printf(ask.console, "[tool] %s: denied (", name);
		safe_outs(detail); /* may quote what the model sent */
		out(")\n", 2);
		break;
	case AGENT_TOOL_FAILED:
		agent_printf(ask.console, "[tool] %s: failed: ", name);
		safe_outs(detail);
		out("\n", 1);
		break;
	case AGENT_TOOL_RETRY:
		agent_printf(ask.console, "[tool] %s: activated; the model is asked to call it "
					  "again\n",
			     name);
		break;
	}
	ask.line_open = false;
}

static void confirm_line(void *user, const char *line, size_t len)
{
	(void)user;
	safe_out(line, len);
}

/* Show the call and wait for y (allow), n or Enter (deny), Esc (cancel). */
static int on_confirm(void *user, const char *name, const char *arguments, size_t len)
{
	uint16_t cols = 80;
	uint16_t rows = 24;
	bool timed_out;
	int answer;

	(void)user;
	end_line();
	agent_confirm_arm();
	/* The name and every argument, escaped, in lines that leave the question on the screen
	 * (agent_confirm_text.h): nothing in them can move the cursor, fake the question or
	 * push the name or a path out of sight. 80x24 unless the console knows its size. */
	if (agent_console_size(ask.console, &cols, &rows) != 0) {
		cols = 80;
		rows = 24;
	}
	agent_text_filter_reset(&ask.filter);
	(void)agent_confirm_text(name, arguments, len, cols, rows > 1 ? rows - 1u : 1u,
				 confirm_line, NULL);
	agent_text_filter_reset(&ask.filter);
	agent_puts(ask.console, "Allow once? [y/N] ");
	answer = agent_confirm_wait(&timed_out);
	if (timed_out) {
		agent_puts(ask.console, "\n(no answer: denied)\n");
		ask.line_open = false;
		return 0;
	}
	agent_puts(ask.console, answer > 0 ? "y\n" : answer == 0 ? "n\n" : "\n");
	ask.line_open = false;
	return answer;
}

static void on_usage(void *user, const struct provider_usage *usage)
{
	(void)user;
	ask.usage = *usage;
	ask.usage_seen = true;
}

static void on_error(void *user, const char *message)
{
	(void)user;
	end_line();
	agent_text_filter_reset(&ask.filter);
	out("agent: ", 7);
	safe_outs(message);
	out("\n", 1);
	ask.line_open = false;
}

static const struct agent_request_hooks hooks = {
	.text = on_text,
	.tool_call = on_tool_call,
	.tool_done = on_tool_done,
	.confirm = on_confirm,
	.usage = on_usage,
	.error = on_error,
};

static void worker(void *user_data)
{
	static struct agent_request req;
	struct agent_job_admission why;
	int n;
	int err = agent_job_begin("agent", "shell", &why);

	(void)user_data;
	if (err != 0) {
		agent_error(ask.console, "the request cannot start now: %s%s%s", why.reason,
			    why.detail[0] != '\0' ? " " : "", why.detail);
		agent_wipe(ask_text.prompt, sizeof(ask_text.prompt));
		ask.running = false;
		ask.busy = false;
		agent_console_set_bypass(ask.console, NULL, NULL);
		return;
	}
	n = agent_config_key_get(ask.key, sizeof(ask.key));
	req = (struct agent_request){
		.config = agent_session_config(),
		.key = n > 0 ? ask.key : NULL,
		.instructions = ask_text.instructions,
		.prompt = ask_text.prompt,
		.cwd = "/lfs",
		.cancel = &ask.cancel,
		.hooks = &hooks,
	};
	err = agent_request_run(&req);
	agent_job_end("agent", err);
	agent_wipe(ask.key, sizeof(ask.key));
	agent_wipe(ask_text.prompt, sizeof(ask_text.prompt));
	end_line();
	if (ask.usage_seen && ask.usage.reasoning_tokens > 0) {
		/* Output includes the reasoning (the provider folds it in: input + output = total). */
		agent_printf(ask.console, "tokens: input %u, output %u (reasoning %u), total %u\n",
			     (unsigned int)ask.usage.input_tokens,
			     (unsigned int)ask.usage.output_tokens,
			     (unsigned int)ask.usage.reasoning_tokens,
			     (unsigned int)ask.usage.total_tokens);
	} else if (ask.usage_seen) {
		agent_printf(ask.console, "tokens: input %u, output %u, total %u\n",
			     (unsigned int)ask.usage.input_tokens,
			     (unsigned int)ask.usage.output_tokens,
			     (unsigned int)ask.usage.total_tokens);
	}
	ask.running = false;
	if (ask.leave) {
		ask.busy = false;
		agent_console_set_bypass(ask.console, NULL, NULL);
		return;
	}
	agent_puts(ask.console, "[Esc or Ctrl-X returns to the shell]\n");
}

/* One key (agent_keys.h). Returns true when it closed the frontend. */
static bool ask_key(struct agent_console *console, const struct agent_key *key)
{
	if (key->type == AGENT_KEY_SEQUENCE) {
		return false; /* a cursor or function key: not Esc */
	}
	if (key->type == AGENT_KEY_CHAR &&
	    (agent_confirm_key(key->byte) ||
	     (key->byte != AGENT_KEY_APP_EXIT && key->byte != AGENT_KEY_CTRL_C))) {
		return false;
	}
	if (ask.running) {
		ask.leave = true;
		agent_cancel_raise(&ask.cancel);
		agent_confirm_cancel();
		return false;
	}
	ask.busy = false;
	agent_console_set_bypass(console, NULL, NULL);
	return true;
}

static size_t ask_input(struct agent_console *console, const uint8_t *data, size_t len,
			void *user_data)
{
	struct agent_key keys[2];
	int64_t now = agent_uptime_ms();
	int32_t wait;

	(void)user_data;
	/* Called without input when an ESC may have stayed alone (agent_console_wake_after()). */
	if (agent_key_expire(&ask.keys, now, &keys[0]) && ask_key(console, &keys[0])) {
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		size_t n = agent_key_feed(&ask.keys, data[i], now, keys);

		for (size_t k = 0; k < n; k++) {
			if (ask_key(console, &keys[k])) {
				/* A lone Esc is an earlier byte's key: byte i is not ours. */
				return keys[k].type == AGENT_KEY_LONE_ESC ? i : i + 1;
			}
		}
	}
	wait = agent_key_wait_ms(&ask.keys, now);
	if (wait >= 0) {
		agent_console_wake_after(console, (uint32_t)wait);
	}
	return len;
}

static int join_previous(struct agent_console *console)
{
	if (ask.thread == NULL) {
		return 0;
	}
	int err = agent_thread_join(ask.thread, 2000);

	if (err != 0) {
		agent_error(console, "the previous request has not ended yet");
		return err;
	}
	ask.thread = NULL;
	return 0;
}

static int join_prompt(int argc, char **argv, struct agent_console *console)
{
	size_t len = 0;

	for (int i = 2; i < argc; i++) {
		size_t n = strlen(argv[i]);

		if (len + (i > 2) + n > CONFIG_AGENT_PROMPT_MAX_LEN) {
			agent_error(console, "the prompt is too long (at most %d bytes)",
				    CONFIG_AGENT_PROMPT_MAX_LEN);
			return -EINVAL;
		}
		if (i > 2) {
			ask_text.prompt[len++] = ' ';
		}
		memcpy(ask_text.prompt + len, argv[i], n);
		len += n;
	}
	ask_text.prompt[len] = '\0';
	if (len == 0) {
		agent_error(console, "the prompt is empty");
		return -EINVAL;
	}
	return 0;
}

int agent_cmd_ask_exec(struct agent_console *console, int argc, char **argv)
{
	const struct agent_config *cfg = agent_session_config();
	int err;

	if (argc < 3) {
		agent_error(console, "usage: agent ask PROMPT");
		return -EINVAL;
	}
	if (ask.busy) {
		agent_error(console, "a request is already running");
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
	err = join_previous(console);
	if (err != 0) {
		return err;
	}
	err = join_prompt(argc, argv, console);
	if (err != 0) {
		return err;
	}
	agent_board_instructions(ask_text.instructions, sizeof(ask_text.instructions));
	ask.console = console;
	ask.usage_seen = false;
	agent_text_filter_reset(&ask.filter);
	ask.line_open = false;
	ask.leave = false;
	agent_key_decoder_reset(&ask.keys);
	agent_cancel_reset(&ask.cancel);
	ask.busy = true;
	ask.running = true;
	agent_console_set_bypass(console, ask_input, NULL);
	err = agent_thread_start(&ask.thread, "agent", CONFIG_AGENT_WORKER_STACK_SIZE, worker,
				 NULL);
	if (err != 0) {
		agent_console_set_bypass(console, NULL, NULL);
		ask.busy = false;
		ask.running = false;
		agent_wipe(ask_text.prompt, sizeof(ask_text.prompt));
		agent_error(console, "cannot start the request worker (error %d)", err);
		return err;
	}
	return 0;
}
