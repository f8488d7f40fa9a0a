/* The full-screen chat and the conversation commands (agent_chat.c, agent_chat_slots.c,
 * docs/chat.md). */
#ifndef AGENT_CHAT_H
#define AGENT_CHAT_H

#include "agent_port.h"

/** Bare `agent` and `agent new`: a new conversation in the full-screen frontend. */
int agent_chat_new(struct agent_console *console);
/** `agent resume SLOT`. */
int agent_chat_resume(struct agent_console *console, const char *slot_text);
/** `agent delete SLOT`. */
int agent_chat_delete(struct agent_console *console, const char *slot_text);
/** `agent list`. */
int agent_chat_list(struct agent_console *console);
/** The slot of the conversation open in the chat, 0 when none is. */
unsigned int agent_chat_open_slot(void);

#endif /* AGENT_CHAT_H */
