/*
 * Line editing and dispatch for the simulator's console, behaving like the Zephyr shell
 * where the tests and users can see it: the "uart:~$ " prompt, echo, backspace, Ctrl-C
 * and Ctrl-U, quoting, "command not found", and raw input handed to a bypass callback.
 */
#include "sim_shell.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "agent_cmd.h"
#include "agent_keys.h"
#include "agent_print.h"
#include "posix_console.h"
#include "sim_smp.h"
#if defined(CONFIG_AGENT_TOOLS_REFERENCE)
#include "man_cmd.h"
#endif

/* Room for `agent ask` with a maximal prompt. */
#define LINE_MAX_BYTES	(CONFIG_AGENT_PROMPT_MAX_LEN + 64)
#define ARGV_MAX	255 /* as CONFIG_SHELL_ARGC_MAX in prj.conf: a prompt is many words */
#define POLL_PERIOD_MS	100

struct line_editor {
	char text[LINE_MAX_BYTES + 1];
	size_t len;
	bool overflow; /* characters were refused: the line is not run */
	/* Cursor and function keys are not edited here; the Esc key does nothing, and the key
	 * typed after it is typed (an ESC and what follows within the timeout is one key). */
	struct agent_key_decoder keys;
	bool after_cr;
};

int sim_shell_split(char *line, char **argv, int max)
{
	int argc = 0;
	char *in = line;
	char *out = line;

	for (;;) {
		while (*in == ' ' || *in == '\t') {
			in++;
		}
		if (*in == '\0') {
			return argc;
		}
		if (argc == max) {
			return -E2BIG;
		}
		argv[argc++] = out;
		char quote = 0;

		while (*in != '\0' && (quote != 0 || (*in != ' ' && *in != '\t'))) {
			if (quote == 0 && (*in == '"' || *in == '\'')) {
				quote = *in++;
			} else if (quote != 0 && *in == quote) {
				quote = 0;
				in++;
			} else if (*in == '\\' && in[1] != '\0') {
				in++;
				*out++ = *in++;
			} else {
				*out++ = *in++;
			}
		}
		if (quote != 0) {
			return -EINVAL;
		}
		if (*in != '\0') {
			in++;
		}
		*out++ = '\0';
	}
}

static void print_help(struct agent_console *console)
{
	agent_puts(console, "Available commands:\n"
			    "  agent  LLM agent: configuration and status (agent help)\n"
			    "  tool   tool selection defaults (tool all|NAME on|off)\n"
#if defined(CONFIG_AGENT_TOOLS_REFERENCE)
			    "  man    reference pages of this firmware (man man)\n"
#endif
			    "  help   this list\n");
}

static void execute(struct agent_console *console, char *line)
{
	char *argv[ARGV_MAX];
	int argc = sim_shell_split(line, argv, ARGV_MAX);

	if (argc == -E2BIG) {
		agent_puts(console, "too many arguments\n");
		return;
	}
	if (argc < 0) {
		agent_puts(console, "unterminated quote\n");
		return;
	}
	if (argc == 0) {
		return;
	}
	if (strcmp(argv[0], "agent") == 0) {
		agent_cmd_exec(console, argc, argv);
	} else if (strcmp(argv[0], "tool") == 0) {
		agent_tool_exec(console, argc, argv);
#if defined(CONFIG_AGENT_TOOLS_REFERENCE)
	} else if (strcmp(argv[0], "man") == 0) {
		agent_man_exec(console, argc, argv);
#endif
	} else if (strcmp(argv[0], "help") == 0) {
		print_help(console);
	} else {
		agent_printf(console, "%.32s: command not found\n", argv[0]);
	}
}

/* One key that is a byte. Returns true when a command ran (the caller then shows a prompt
 * unless bypassed). */
static bool edit(struct agent_console *console, struct line_editor *ed, uint8_t c)
{
	bool after_cr = ed->after_cr;

	ed->after_cr = false;
	switch (c) {
	case '\r':
	case '\n':
		if (c == '\n' && after_cr) {
			return false;
		}
		ed->after_cr = c == '\r';
		agent_puts(console, "\n");
		ed->text[ed->len] = '\0';
		if (ed->overflow) {
			agent_printf(console, "line too long (at most %d bytes); not run\n",
				     LINE_MAX_BYTES);
		} else {
			execute(console, ed->text);
		}
		/* The line may have held a key: leave nothing of it behind. */
		memset(ed->text, 0, sizeof(ed->text));
		ed->len = 0;
		ed->overflow = false;
		return true;
	case 0x03: /* Ctrl-C: abandon the line */
		agent_puts(console, "^C\n");
		ed->len = 0;
		ed->overflow = false;
		return true;
	case 0x15: /* Ctrl-U: erase the line */
		while (ed->len > 0) {
			ed->len--;
			agent_puts(console, "\b \b");
		}
		ed->overflow = false;
		return false;
	case 0x08:
	case 0x7f:
		if (ed->len > 0) {
			ed->len--;
			agent_puts(console, "\b \b");
		}
		return false;
	default:
		if (c < 0x20 || c >= 0x7f) {
			return false;
		}
		if (ed->len == LINE_MAX_BYTES) {
			ed->overflow = true;
			agent_puts(console, "\a");
			return false;
		}
		ed->text[ed->len++] = (char)c;
		agent_console_write(console, (const char *)&c, 1);
		return false;
	}
}

static void prompt(struct agent_console *console)
{
	agent_puts(console, SIM_SHELL_PROMPT);
}

/* A bypass (hidden prompt, full-screen app) that ended gives the shell its prompt back. */
static void bypass_check(struct agent_console *console, struct line_editor *ed,
			 bool *was_bypassed)
{
	bool bypassed = posix_console_bypassed(console);

	if (*was_bypassed && !bypassed) {
		/* The Enter that closed it may be followed by the '\n' of a CR LF pair. */
		ed->after_cr = true;
		prompt(console);
	}
	*was_bypassed = bypassed;
}

struct shell_feed {
	struct agent_console *console;
	struct line_editor *ed;
	bool *was_bypassed;
};

/* Shell input (SMP frames already taken out): the bypass callback or the line editor. */
static void feed_shell(const uint8_t *data, size_t len, void *user_data)
{
	struct shell_feed *f = user_data;

	for (size_t i = 0; i < len;) {
		bypass_check(f->console, f->ed, f->was_bypassed);
		if (*f->was_bypassed) {
			/* What the callback leaves goes to the line editor once it is done. */
			i += posix_console_deliver(f->console, data + i, len - i);
			continue;
		}
		struct agent_key keys[2];
		size_t n = agent_key_feed(&f->ed->keys, data[i], agent_uptime_ms(), keys);

		for (size_t k = 0; k < n; k++) {
			if (keys[k].type == AGENT_KEY_CHAR && edit(f->console, f->ed, keys[k].byte) &&
			    !posix_console_bypassed(f->console)) {
				prompt(f->console);
			}
		}
		i++;
	}
}

int sim_shell_run(struct agent_console *console, int in_fd, bool reconnecting,
		  volatile sig_atomic_t *stop)
{
	static struct line_editor ed;
	uint8_t buf[256];
	uint8_t shell_bytes[2 * sizeof(buf)];
	bool was_bypassed = false;

	prompt(console);
	while (*stop == 0) {
		struct pollfd pfd = {.fd = in_fd, .events = POLLIN};
		int wake_in = posix_console_wake_in(console);
		int ready = poll(&pfd, 1,
				 wake_in >= 0 && wake_in < POLL_PERIOD_MS ? wake_in : POLL_PERIOD_MS);

		if (ready == 0 && posix_console_wake_in(console) == 0) {
			/* No input in time: the bypass asked to know (an Esc that stayed alone). */
			posix_console_wake(console);
		}
		bypass_check(console, &ed, &was_bypassed);
		if (ready < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -errno;
		}
		if (ready == 0) {
			continue;
		}
		if ((pfd.revents & POLLIN) == 0) {
			/* A pseudo terminal with no client hangs up until one attaches. */
			if (reconnecting) {
				agent_sleep_ms(POLL_PERIOD_MS);
				continue;
			}
			return 0;
		}
		ssize_t n = read(in_fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				continue;
			}
			if (errno == EIO && reconnecting) {
				agent_sleep_ms(POLL_PERIOD_MS);
				continue;
			}
			return -errno;
		}
		if (n == 0) {
			return 0;
		}
		/* SMP frames are taken out first, as Zephyr's shell transport does; the rest is
		 * the shell's, delivered before each request is answered. */
		struct shell_feed feed = {console, &ed, &was_bypassed};
		size_t left = sim_smp_filter(console, buf, (size_t)n, shell_bytes, feed_shell,
					     &feed);

		feed_shell(shell_bytes, left, &feed);
		/* The chunk may have held a key typed at the hidden prompt. */
		memset(buf, 0, sizeof(buf));
		memset(shell_bytes, 0, sizeof(shell_bytes));
		bypass_check(console, &ed, &was_bypassed);
	}
	return 0;
}
