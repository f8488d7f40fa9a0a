/* Shared between the files of the `agent` command tree. */
#ifndef AGENT_CMD_INTERNAL_H
#define AGENT_CMD_INTERNAL_H

#include <stddef.h>

#include "agent_config.h"
#include "agent_port.h"

struct agent_subcmd {
	const char *name;
	const char *usage;
	const char *help;
	int (*run)(struct agent_console *console, int argc, char **argv);
};

/** The configuration loaded at boot and kept current by the commands. */
struct agent_config *agent_cmd_config(void);

/** Zero @p len bytes at @p buf through a volatile pointer (a key or prompt no longer needed). */
void agent_cmd_wipe(void *buf, size_t len);

/** `agent config ...`; argv[0] is "agent", argv[1] is "config". */
int agent_cmd_config_exec(struct agent_console *console, int argc, char **argv);

/** `agent ask PROMPT...` (agent_ask.c). */
int agent_cmd_ask_exec(struct agent_console *console, int argc, char **argv);

/** `agent tools` (agent_cmd_tools.c). */
int agent_cmd_tools_exec(struct agent_console *console, int argc, char **argv);

#endif /* AGENT_CMD_INTERNAL_H */
