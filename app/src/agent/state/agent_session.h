/*
 * The agent's live state that the shell and the SMP group share: the configuration loaded at
 * boot and kept current by `agent config` and the SMP config command.
 */
#ifndef AGENT_SESSION_H
#define AGENT_SESSION_H

#include <stddef.h>

#include "agent_config.h"

/** The configuration loaded at boot and kept current by the commands. */
struct agent_config *agent_session_config(void);

/** Zero @p len bytes at @p buf through a volatile pointer (a key or prompt no longer needed). */
void agent_session_wipe(void *buf, size_t len);

#endif /* AGENT_SESSION_H */
