/* The instructions the agent sends with every request. */
#ifndef AGENT_BOARD_PROMPT_H
#define AGENT_BOARD_PROMPT_H

#include <stddef.h>

/** Write the instructions for this device into @p buf (always NUL-terminated). */
void agent_board_instructions(char *buf, size_t len);

#endif /* AGENT_BOARD_PROMPT_H */
