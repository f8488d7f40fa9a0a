/*
 * Shared by the two files of the full-screen chat (docs/chat.md): agent_chat.c (the screen,
 * the input, the request worker and `agent new`) and agent_chat_slots.c (`agent resume`,
 * `agent delete`, `agent list`). agent_chat.h is their API.
 */
#ifndef AGENT_CHAT_INTERNAL_H
#define AGENT_CHAT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_config.h"
#include "agent_port.h"
#include "conv_store.h"
#include "provider.h"

/* The chat's state: one chat at a time. */
struct agent_chat_state {
	volatile bool open;
	volatile bool running;
	volatile bool leave; /* return to the shell when the running request has ended */
	struct agent_console *console;
	struct agent_thread *thread;
	struct agent_cancel cancel;
	const struct agent_config *cfg;
	size_t input_len; /* the line being typed is in agent_chat.c (PSRAM-placed) */
	bool input_refused; /* the bytes of a character that did not fit are being dropped */
	char key[CONFIG_AGENT_KEY_MAX_LEN + 1];
	struct conv_handle conv;
	bool conv_active; /* conv was created or opened */
	bool conv_saved;  /* conv holds at least one committed turn (its history is ours) */
	struct agent_mutex *lock; /* orders running/leave between the input and the worker */
	char response_id[PROVIDER_ID_MAX + 1];
	size_t answer_len;
	size_t tool_count;
	bool label_due; /* the next text starts a new "agent:" line */
	struct provider_usage usage;
};

extern struct agent_chat_state agent_chat;

/* A line of its own in the transcript. */
void agent_chat_say(const char *text);
/* 0, with the configuration and instructions taken, when the chat can open; otherwise the
 * error, its message shown on @p console. */
int agent_chat_check_ready(struct agent_console *console);
/* Open the screen on @p console with an empty input (the message shown when it is in use). */
int agent_chat_open_screen(struct agent_console *console);
/* The console bypass while the chat is open: keys, typing, Enter. */
size_t agent_chat_input(struct agent_console *console, const uint8_t *data, size_t len,
			void *user_data);

#endif /* AGENT_CHAT_INTERNAL_H */
