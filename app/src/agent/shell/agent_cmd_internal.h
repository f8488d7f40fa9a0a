/* Shared between the files of the `agent` command tree. */
#ifndef AGENT_CMD_INTERNAL_H
#define AGENT_CMD_INTERNAL_H

#include <stddef.h>

#include "agent_port.h"
#include "agent_session.h"

struct agent_subcmd {
	const char *name;
	const char *usage;
	const char *help;
	int (*run)(struct agent_console *console, int argc, char **argv);
};

/** `agent config ...`; argv[0] is "agent", argv[1] is "config". */
int agent_cmd_config_exec(struct agent_console *console, int argc, char **argv);

/** `agent ask PROMPT...` (agent_ask.c). */
int agent_cmd_ask_exec(struct agent_console *console, int argc, char **argv);

/** `agent script python|lua -c SOURCE | PATH [ARG...]` (agent_script_cmd.c). */
int agent_cmd_script_exec(struct agent_console *console, int argc, char **argv);

/** `agent tools` (agent_cmd_tools.c). */
int agent_cmd_tools_exec(struct agent_console *console, int argc, char **argv);

/** `agent import PATH`, `agent remove NAME`, `agent modules`, `agent skills` and
 *  `agent ID role ...` (agent_modules_cmd.c). */
int agent_cmd_import_exec(struct agent_console *console, int argc, char **argv);
int agent_cmd_remove_exec(struct agent_console *console, int argc, char **argv);
int agent_cmd_modules_exec(struct agent_console *console, int argc, char **argv);
int agent_cmd_skills_exec(struct agent_console *console, int argc, char **argv);
int agent_cmd_id_exec(struct agent_console *console, int argc, char **argv);
/** 0 when agent @p id exists (0, or a slot holding a conversation), else -ENOENT, reported. */
int agent_cmd_agent_exists(struct agent_console *console, unsigned int id);
/** `agent ID tools [NAME|all on|off|inherit]` (agent_select_cmd.c); argv[2] is "tools". */
int agent_cmd_tools_select(struct agent_console *console, unsigned int id, int argc, char **argv);
/** The agent status lines of the modules: agent 0's role, the catalog, the instructions. */
void agent_cmd_modules_status(struct agent_console *console);

#endif /* AGENT_CMD_INTERNAL_H */
