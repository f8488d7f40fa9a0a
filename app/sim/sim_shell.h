/* The simulator's stand-in for the Zephyr shell: line editing, prompt, command dispatch. */
#ifndef SIM_SHELL_H
#define SIM_SHELL_H

#include <signal.h>

#include "agent_port.h"

#define SIM_SHELL_PROMPT "uart:~$ "

/**
 * Read the console until end of input or until @p stop becomes non-zero. Returns 0, or a
 * negative errno when the console failed.
 */
int sim_shell_run(struct agent_console *console, int in_fd, bool reconnecting,
		  volatile sig_atomic_t *stop);

/** Split @p line in place into at most @p max words; quotes group, '\' escapes. */
int sim_shell_split(char *line, char **argv, int max);

#endif /* SIM_SHELL_H */
