/* The agent's live configuration and the wipe of secrets (agent_session.h). */
#include "agent_session.h"

static struct agent_config config;

struct agent_config *agent_session_config(void)
{
	return &config;
}

void agent_session_wipe(void *buf, size_t len)
{
	volatile unsigned char *p = buf;

	while (len-- > 0) {
		*p++ = 0;
	}
}
