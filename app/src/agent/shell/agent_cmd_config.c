/*
 * `agent config NAME [VALUE]`, `agent config key [KEY|clear]` and the hidden key prompt.
 * The key is never echoed: not when typed, not in errors, not by any display command.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "agent_cmd_internal.h"
#include "agent_keys.h"
#include "agent_print.h"

#define KEY_NAME "key"

/* The hidden prompt's state; input arrives through the console bypass, byte by byte. */
static struct {
	char text[CONFIG_AGENT_KEY_MAX_LEN + 1];
	size_t len;
	size_t typed; /* characters typed, also those past the buffer, so we can refuse them */
	struct agent_key_decoder keys;
} secret;

static void print_names(struct agent_console *console)
{
	agent_puts(console, "settings:");
	for (const char *const *name = agent_config_names; *name != NULL; name++) {
		agent_printf(console, " %s", *name);
	}
	agent_puts(console, " " KEY_NAME "\n");
}

static void print_usage(struct agent_console *console)
{
	agent_puts(console, "usage: agent config NAME [VALUE]\n"
			    "  endpoint URL       complete http:// or https:// URL; a path ending\n"
			    "                     in /responses selects the Responses API, any\n"
			    "                     other path Chat Completions\n"
			    "  model NAME         model name sent to the endpoint\n"
			    "  key [KEY|clear]    API key (bearer token); without KEY, prompts with\n"
			    "                     hidden input; never shown by any command\n"
			    "  reasoning LEVEL    none minimal low medium high xhigh max\n"
			    "  tools POLICY       off read-only confirm\n"
			    "  max-tools N        tool calls per request, 1 to 32\n"
			    "  user NAME          name shown at the chat prompt\n"
			    "  embeddings URL     the memory tools' /v1/embeddings URL (the key\n"
			    "                     is the agent's)\n"
			    "  embeddings-model NAME  model the embeddings endpoint uses\n"
			    "Without VALUE, shows the current value.\n");
}

static void secret_finish(struct agent_console *console, bool save)
{
	struct agent_config *cfg = agent_session_config();
	const char *why;

	agent_console_set_bypass(console, NULL, NULL);
	agent_puts(console, "\n");
	if (!save) {
		agent_puts(console, "cancelled; key unchanged\n");
	} else if (secret.typed == 0) {
		agent_puts(console, "nothing entered; key unchanged\n");
	} else if (secret.typed > CONFIG_AGENT_KEY_MAX_LEN) {
		agent_error(console, "key is too long (at most %d bytes); key unchanged",
			    CONFIG_AGENT_KEY_MAX_LEN);
	} else {
		secret.text[secret.len] = '\0';
		if (agent_config_key_set(cfg, secret.text, &why) == 0) {
			agent_puts(console, "key set\n");
		} else {
			agent_error(console, "%s; key unchanged", why);
		}
	}
	agent_wipe(&secret, sizeof(secret));
}

/* One key at the hidden prompt. Returns true when it ended the prompt. */
static bool secret_key(struct agent_console *console, const struct agent_key *key)
{
	uint8_t c = key->byte;

	if (key->type != AGENT_KEY_CHAR || c == AGENT_KEY_CTRL_C) {
		/* Esc cancels, and so does a cursor key (its bytes must not reach the shell). */
		secret_finish(console, false);
		return true;
	}
	if (c == '\r' || c == '\n') {
		secret_finish(console, true);
		return true;
	}
	if (c == 0x7f || c == 0x08) {
		if (secret.typed > 0) {
			secret.typed--;
			if (secret.len > secret.typed) {
				secret.len = secret.typed;
			}
			agent_puts(console, "\b \b");
		}
		return false;
	}
	if (c < 0x20 || c >= 0x7f) {
		return false;
	}
	if (secret.len < CONFIG_AGENT_KEY_MAX_LEN) {
		secret.text[secret.len++] = (char)c;
	}
	secret.typed++;
	agent_puts(console, "*");
	return false;
}

/*
 * The keys of @p data, each decoded into @p keys (the caller's, so that it can wipe them:
 * they are characters of the key). Returns the bytes taken and sets @p ended when the prompt
 * ended.
 */
static size_t secret_keys(struct agent_console *console, const uint8_t *data, size_t len,
			  int64_t now, struct agent_key keys[2], bool *ended)
{
	*ended = true;
	/* Called without input when an ESC may have stayed alone (agent_console_wake_after()). */
	if (agent_key_expire(&secret.keys, now, &keys[0]) && secret_key(console, &keys[0])) {
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		size_t n = agent_key_feed(&secret.keys, data[i], now, keys);

		for (size_t k = 0; k < n; k++) {
			if (!secret_key(console, &keys[k])) {
				continue;
			}
			if (keys[k].type == AGENT_KEY_LONE_ESC) {
				return i; /* an earlier byte's key: byte i is the shell's */
			}
			/* What follows Enter is the shell's again; the LF of a CR LF Enter is still
			 * this Enter (the shell would take it for a second, empty line). */
			return i + 1 +
			       (data[i] == '\r' && i + 1 < len && data[i + 1] == '\n');
		}
	}
	*ended = false;
	return len;
}

static size_t secret_input(struct agent_console *console, const uint8_t *data, size_t len,
			   void *user_data)
{
	struct agent_key keys[2];
	int64_t now = agent_uptime_ms();
	bool ended;
	size_t taken = secret_keys(console, data, len, now, keys, &ended);

	(void)user_data;
	agent_wipe(keys, sizeof(keys));
	if (!ended) {
		int32_t wait = agent_key_wait_ms(&secret.keys, now);

		if (wait >= 0) {
			agent_console_wake_after(console, (uint32_t)wait);
		}
	}
	return taken;
}

static int key_command(struct agent_console *console, int argc, char **argv)
{
	struct agent_config *cfg = agent_session_config();
	const char *why;
	int err;

	if (argc == 3) {
		agent_wipe(&secret, sizeof(secret));
		agent_puts(console, "API key (hidden; Enter saves, Esc cancels): ");
		agent_console_set_bypass(console, secret_input, NULL);
		return 0;
	}
	if (strcmp(argv[3], "clear") == 0) {
		err = agent_config_key_clear(cfg);
		if (err != 0) {
			agent_error(console, "could not clear the key (error %d)", err);
			return err;
		}
		agent_puts(console, "key cleared\n");
		return 0;
	}
	err = agent_config_key_set(cfg, argv[3], &why);
	if (err != 0) {
		agent_error(console, "%s; key unchanged", why);
		return err == -ENOENT ? -EINVAL : err;
	}
	agent_puts(console, "key set\n");
	return 0;
}

int agent_cmd_config_exec(struct agent_console *console, int argc, char **argv)
{
	struct agent_config *cfg = agent_session_config();
	char number[4];
	const char *name;
	const char *why;
	const char *shown;
	int err;

	if (argc == 2) {
		print_usage(console);
		return 1;
	}
	name = argv[2];
	if (argc > 4) {
		agent_error(console, "config %.16s takes one value; nothing changed", name);
		return -EINVAL;
	}
	if (strcmp(name, KEY_NAME) == 0) {
		return key_command(console, argc, argv);
	}
	shown = agent_config_show(cfg, name, number, sizeof(number));
	if (shown == NULL) {
		agent_error(console, "unknown setting '%.32s'", name);
		print_names(console);
		return -EINVAL;
	}
	if (argc == 3) {
		agent_printf(console, "%s: %s\n", name, shown[0] != '\0' ? shown : "(not set)");
		return 0;
	}
	err = agent_config_set(cfg, name, argv[3], &why);
	if (err != 0) {
		agent_error(console, "%s; nothing changed", why);
		return err == -ENOENT ? -EINVAL : err;
	}
	shown = agent_config_show(cfg, name, number, sizeof(number));
	if (strcmp(name, "endpoint") == 0) {
		agent_printf(console, "endpoint set (protocol: %s)\n",
			     agent_protocol_name(agent_config_protocol(cfg->endpoint)));
	} else {
		agent_printf(console, "%s set to %s\n", name, shown);
	}
	return 0;
}
