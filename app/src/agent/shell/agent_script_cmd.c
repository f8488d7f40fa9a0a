/*
 * `agent script python|lua -c SOURCE` and `agent script python|lua PATH [ARG...]`: one run
 * of the script runner (script_runner.h) on the foreground worker thread, its output
 * captured (at most CONFIG_AGENT_MANUAL_SCRIPT_OUTPUT_MAX_LEN bytes, PSRAM preferred) and
 * printed when it ends, then one status line. The console is in bypass while it runs, so
 * Esc or Ctrl-X cancels it; the deadline is CONFIG_AGENT_MANUAL_SCRIPT_DEADLINE_S.
 * docs/scripting.md, "agent script".
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent_cmd_internal.h"
#include "agent_keys.h"
#include "agent_print.h"
#include "agent_text.h"
#include "script_runner.h"
#include "storage_path.h"

/* The command's words, copied for the worker (the shell's argv does not outlive the call). */
#define SCRIPT_WORDS_MAX 1024

static char script_out[CONFIG_AGENT_MANUAL_SCRIPT_OUTPUT_MAX_LEN + 1] AGENT_PSRAM_ATTR;

static struct {
	volatile bool busy; /* from the command until the status line */
	struct agent_console *console;
	struct agent_thread *thread;
	struct agent_cancel cancel;
	struct agent_key_decoder keys;
	struct agent_text_filter filter;
	struct script_request req;
	struct script_status status;
	const char *argv[CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX];
} run;
/* The command's words and the script's path: PSRAM-placed (the cancel flag stays in run). */
static struct {
	char words[SCRIPT_WORDS_MAX];
	char path[STORAGE_PATH_MAX + 1];
} run_text AGENT_PSRAM_ATTR;

struct safe_chunk {
	char buf[64];
	size_t len;
};

static void safe_put(void *user, char c)
{
	struct safe_chunk *chunk = user;

	chunk->buf[chunk->len++] = c;
	if (chunk->len == sizeof(chunk->buf)) {
		agent_console_write(run.console, chunk->buf, chunk->len);
		chunk->len = 0;
	}
}

/* The script's output through the terminal-safe filter: it cannot move the cursor. */
static void print_output(const char *text, size_t len)
{
	struct safe_chunk chunk = {.len = 0};

	agent_text_filter_reset(&run.filter);
	agent_text_filter(&run.filter, text, len, safe_put, &chunk);
	agent_console_write(run.console, chunk.buf, chunk.len);
	if (len > 0u && text[len - 1u] != '\n') {
		agent_console_write(run.console, "\n", 1);
	}
}

static void print_status(const struct script_status *st)
{
	char tail[64] = "";

	if (st->truncated) {
		(void)snprintf(tail, sizeof(tail), "; output truncated: %u of %u bytes shown",
			       (unsigned int)st->out_len, (unsigned int)st->out_total);
	}
	switch (st->outcome) {
	case SCRIPT_COMPLETED:
		agent_printf(run.console, "[script] completed in %u ms%s\n",
			     (unsigned int)st->elapsed_ms, tail);
		break;
	case SCRIPT_EXCEPTION:
		if (st->line > 0) {
			agent_printf(run.console, "[script] exception: %s at line %d: %s%s\n",
				     st->exc_type, (int)st->line, st->message, tail);
		} else {
			agent_printf(run.console, "[script] exception: %s: %s%s\n", st->exc_type,
				     st->message, tail);
		}
		break;
	default:
		agent_printf(run.console, "[script] %s after %u ms: %s%s\n",
			     script_outcome_name(st->outcome), (unsigned int)st->elapsed_ms,
			     st->message, tail);
		break;
	}
}

static void worker(void *user_data)
{
	(void)user_data;
	(void)script_run(&run.req, &run.status);
	print_output(script_out, run.status.out_len);
	print_status(&run.status);
	agent_wipe(run_text.words, sizeof(run_text.words));
	run.busy = false;
	agent_console_set_bypass(run.console, NULL, NULL);
}

static size_t script_input(struct agent_console *console, const uint8_t *data, size_t len,
			   void *user_data)
{
	struct agent_key keys[2];
	int64_t now = agent_uptime_ms();
	int32_t wait;

	(void)console;
	(void)user_data;
	if (agent_key_expire(&run.keys, now, &keys[0])) {
		agent_cancel_raise(&run.cancel);
	}
	for (size_t i = 0; i < len; i++) {
		size_t n = agent_key_feed(&run.keys, data[i], now, keys);

		for (size_t k = 0; k < n; k++) {
			if (keys[k].type == AGENT_KEY_LONE_ESC ||
			    (keys[k].type == AGENT_KEY_CHAR &&
			     (keys[k].byte == AGENT_KEY_APP_EXIT ||
			      keys[k].byte == AGENT_KEY_CTRL_C))) {
				agent_cancel_raise(&run.cancel);
			}
		}
	}
	wait = agent_key_wait_ms(&run.keys, now);
	if (wait >= 0) {
		agent_console_wake_after(run.console, (uint32_t)wait);
	}
	return len; /* everything typed while a script runs is the runner's */
}

/* Copy @p text into the words area at *@p used; NULL when it does not fit. */
static const char *keep_word(const char *text, size_t *used)
{
	size_t len = strlen(text);
	char *at = run_text.words + *used;

	if (*used + len + 1u > sizeof(run_text.words)) {
		return NULL;
	}
	memcpy(at, text, len + 1u);
	*used += len + 1u;
	return at;
}

static int parse(struct agent_console *console, int argc, char **argv)
{
	size_t used = 0;

	if (argc < 4 || script_lang_parse(argv[2], &run.req.lang) != 0) {
		agent_error(console, "usage: agent script python|lua -c SOURCE | PATH [ARG...]");
		return -EINVAL;
	}
	if (strcmp(argv[3], "-c") == 0) {
		if (argc != 5) {
			agent_error(console, "usage: agent script %s -c SOURCE (quote the source)",
				    argv[2]);
			return -EINVAL;
		}
		run.req.source = keep_word(argv[4], &used);
		if (run.req.source == NULL) {
			agent_error(console, "the source is longer than %d bytes",
				    SCRIPT_WORDS_MAX - 1);
			return -E2BIG;
		}
		run.req.source_len = strlen(run.req.source);
		return 0;
	}
	struct tool_ctx ctx = {.cwd = STORAGE_DEFAULT_CWD};

	if (argc - 4 > CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX) {
		agent_error(console, "at most %d arguments", CONFIG_AGENT_SCRIPT_FILE_ARGS_MAX);
		return -E2BIG;
	}
	if (storage_path_resolve(&ctx, argv[3], strlen(argv[3]), run_text.path) != 0) {
		agent_error(console, "%s", ctx.error);
		return -EINVAL;
	}
	run.req.path = run_text.path;
	for (int i = 4; i < argc; i++) {
		if (strlen(argv[i]) > SCRIPT_ARG_MAX_LEN) {
			agent_error(console, "argument %d is longer than %d bytes", i - 3,
				    SCRIPT_ARG_MAX_LEN);
			return -E2BIG;
		}
		run.argv[i - 4] = keep_word(argv[i], &used);
		if (run.argv[i - 4] == NULL) {
			agent_error(console, "the arguments are longer than %d bytes in all",
				    SCRIPT_WORDS_MAX - 1);
			return -E2BIG;
		}
	}
	run.req.argv = run.argv;
	run.req.argc = (uint8_t)(argc - 4);
	return 0;
}

int agent_cmd_script_exec(struct agent_console *console, int argc, char **argv)
{
	int err;

	if (run.busy) {
		agent_error(console, "a script is already running");
		return -EBUSY;
	}
	if (run.thread != NULL) {
		if (agent_thread_join(run.thread, 2000) != 0) {
			agent_error(console, "the previous script has not ended yet");
			return -EBUSY;
		}
		run.thread = NULL;
	}
	memset(&run.req, 0, sizeof(run.req));
	err = parse(console, argc, argv);
	if (err != 0) {
		agent_wipe(run_text.words, sizeof(run_text.words));
		return err;
	}
	if (!script_lang_available(run.req.lang)) {
		agent_error(console, "%s is not built into this firmware (%s)", argv[2],
			    run.req.lang == SCRIPT_LANG_LUA ? "CONFIG_AGENT_SCRIPT_LUA"
							    : "CONFIG_AGENT_SCRIPT_PYTHON");
		return -ENOTSUP;
	}
	run.req.out = script_out;
	run.req.out_cap = sizeof(script_out);
	run.req.deadline_ms = script_deadline_ms();
	run.req.cancel = &run.cancel;
	run.req.owner = "shell";
	run.console = console;
	agent_cancel_reset(&run.cancel);
	agent_key_decoder_reset(&run.keys);
	run.busy = true;
	agent_console_set_bypass(console, script_input, NULL);
	err = agent_thread_start(&run.thread, "script", CONFIG_AGENT_WORKER_STACK_SIZE, worker,
				 NULL);
	if (err != 0) {
		agent_console_set_bypass(console, NULL, NULL);
		run.busy = false;
		agent_error(console, "cannot start the script worker (error %d)", err);
		return err;
	}
	return 0;
}
