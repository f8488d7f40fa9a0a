/*
 * The agent's live state that the shell and the SMP group share: the configuration loaded at
 * boot and kept current by `agent config` and the SMP config command.
 */
#ifndef AGENT_SESSION_H
#define AGENT_SESSION_H

#include "agent_config.h"

/** The configuration loaded at boot and kept current by the commands. */
struct agent_config *agent_session_config(void);

#endif /* AGENT_SESSION_H */
