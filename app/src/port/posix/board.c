/*
 * Board description of the POSIX port: the host simulator.
 */
#include "agent_port.h"

const char *agent_board_name(void)
{
	return "host_sim";
}
