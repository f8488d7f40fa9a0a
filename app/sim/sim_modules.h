/* The simulator's --modules DIR: the modules of its child directories imported at start-up. */
#ifndef SIM_MODULES_H
#define SIM_MODULES_H

#include "agent_port.h"

/**
 * Import each immediate child directory of @p dir in name order, one console line each
 * (accepted or the refusal reason). 0, or a negative errno when @p dir cannot be read.
 */
int sim_modules_import(struct agent_console *console, const char *dir);

#endif /* SIM_MODULES_H */
