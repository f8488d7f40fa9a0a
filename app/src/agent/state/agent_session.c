/* The agent's live configuration (agent_session.h). */
#include "agent_session.h"

static struct agent_config config;

struct agent_config *agent_session_config(void)
{
	return &config;
}
