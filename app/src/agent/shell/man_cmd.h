/*
 * The `man` shell command over the reference registry (app/src/tools/reference.h), shared
 * by the Zephyr shell registration and the simulator's shell. Present when
 * CONFIG_AGENT_TOOLS_REFERENCE is set.
 */
#ifndef AGENT_MAN_CMD_H
#define AGENT_MAN_CMD_H

#include "agent_port.h"

/**
 * Run one `man ...` command line split into words (argv[0] is "man"): `man TOPIC` prints
 * the page, `man -k WORD...` lists up to CONFIG_AGENT_MAN_RESULTS_MAX matching pages as
 * `topic - summary`. Errors are one line `man: ...`. Returns 0, 1 when it printed its
 * usage on request, -EINVAL for bad usage, -ENOENT for an unknown topic or no match.
 */
int agent_man_exec(struct agent_console *console, int argc, char **argv);

#endif /* AGENT_MAN_CMD_H */
