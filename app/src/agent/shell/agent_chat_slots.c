/*
 * The conversation commands of the chat (docs/chat.md): `agent resume SLOT` replays a stored
 * conversation into the full-screen chat and goes on with it when the configured endpoint
 * can, `agent delete SLOT` removes one that is not open, `agent list` shows every slot.
 * A slot is checked against the store's count (conv_store.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_chat.h"
#include "agent_chat_internal.h"
#include "agent_print.h"
#include "agent_screen.h"
#include "conv_format.h"
#include "conv_store.h"
#include "http.h"
#include "module_agents.h"
#include "module_catalog.h"

/*
 * Replay the stored transcript record by record (bounded pieces, never the whole file). The
 * status bar ends with the latest turn's token counts: each turn starts at zero (a turn
 * stored without counts shows none) and its usage record sets them.
 */
static int replay_chunk(const struct conv_chunk *chunk, void *user_data)
{
	uint32_t *usage = user_data; /* input, output, total */

	if (chunk->type == CONV_REC_USER && chunk->offset == 0) {
		memset(usage, 0, 3 * sizeof(*usage));
	}
	if (chunk->type == CONV_REC_USAGE && chunk->offset == 0 && chunk->len == CONV_USAGE_BYTES) {
		for (size_t i = 0; i < 3; i++) {
			usage[i] = conv_get_le32(chunk->data + 4 * i);
		}
		return 0;
	}
	if (chunk->offset == 0) {
		screen_end_line();
		switch (chunk->type) {
		case CONV_REC_USER:
			screen_append(agent_chat.cfg->user, strlen(agent_chat.cfg->user),
				      SCREEN_PLAIN);
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
	enum agent_protocol now = agent_config_protocol(agent_chat.cfg->endpoint);
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
	if (now == AGENT_PROTOCOL_RESPONSES &&
	    http_url_parse(agent_chat.cfg->endpoint, &url) == 0 &&
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
	static struct conv_handle h AGENT_PSRAM_ATTR; /* the shell thread, one resume at a time */
	uint32_t usage[3] = {0, 0, 0};
	uint8_t slot;
	int err = parse_slot(console, slot_text, &slot);

	if (err != 0) {
		return err;
	}
	err = agent_chat_check_ready(console);
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
	agent_chat.conv = h;
	agent_chat.conv_active = true;
	agent_chat.conv_saved = true;
	agent_chat.response_id[0] = '\0';
	(void)conv_store_last_response_id(slot, agent_chat.response_id,
					  sizeof(agent_chat.response_id));
	err = agent_chat_open_screen(console);
	if (err != 0) {
		return err;
	}
	err = conv_store_read(slot, replay_chunk, usage);
	screen_set_usage(usage[0], usage[1], usage[2]);
	screen_end_line();
	if (err != 0) {
		agent_chat_say("agent: the rest of this conversation is damaged and was not shown");
	}
	agent_chat_say("Resumed. Enter sends, PgUp/PgDn scroll, Esc returns to the shell.");
	agent_console_set_bypass(console, agent_chat_input, NULL);
	return 0;
}

int agent_chat_delete(struct agent_console *console, const char *slot_text)
{
	uint8_t slot;
	int err = parse_slot(console, slot_text, &slot);

	if (err != 0) {
		return err;
	}
	if (agent_chat.open && agent_chat.conv_active && agent_chat.conv.slot == slot) {
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
	module_agent_forget(slot); /* the agent of that slot goes with it */
	agent_printf(console, "slot %u deleted\n", (unsigned int)slot);
	return 0;
}

static int list_one(const struct conv_summary *s, void *user_data)
{
	struct agent_console *console = user_data;

	if (s->damaged) {
		agent_printf(console, "%-4u (damaged, %u bytes)\n", (unsigned int)s->slot,
			     (unsigned int)s->bytes);
		return 0;
	}
	bool assigned = false;
	int role = module_agent_role(s->slot, &assigned);

	agent_printf(console, "%-4u %-5u %-6u %-12.12s %-20.20s %s\n", (unsigned int)s->slot,
		     (unsigned int)s->turns, (unsigned int)s->bytes,
		     role >= 0 ? module_catalog_entry(role)->name : "-", s->model, s->title);
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
	agent_printf(console, "%-4s %-5s %-6s %-12s %-20s %s\n", "slot", "turns", "bytes", "role",
		     "model", "title");
	return conv_store_list(list_one, console);
}
