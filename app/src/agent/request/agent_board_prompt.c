#include "agent_board_prompt.h"

#include <stdio.h>

#include "agent_port.h"
#include "agent_version.h"

void agent_board_instructions(char *buf, size_t len)
{
	snprintf(buf, len,
		 "You are the assistant inside a Zephyr RTOS device (board %s, agent %s). "
		 "Your answer is shown on a serial console: answer briefly in plain text.",
		 agent_board_name(), AGENT_VERSION_STRING);
}
