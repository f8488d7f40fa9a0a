/*
 * The `agent` command tree of the shell, shared by the Zephyr shell registration and the
 * host simulator's shell.
 */
#ifndef AGENT_CMD_H
#define AGENT_CMD_H

#include <stddef.h>

#include <stdint.h>

#include "agent_port.h"

/**
 * Load the agent configuration from settings. Call once at boot, after the filesystem is
 * mounted and settings are ready. Returns 0 or a negative errno.
 */
int agent_init(void);

/**
 * What agent_init() restored of the modules, as one line for the boot output ("modules:
 * journal replayed, N modules from M records" and, when it happened, the incomplete import
 * that was cleared) into @p buf; its length.
 */
size_t agent_modules_boot_line(char *buf, size_t len);

/**
 * Run one `agent ...` command line already split into words (argv[0] is "agent").
 * Prints its own output and errors on @p console. Returns 0 on success, a negative errno
 * for an error it has reported (-EINVAL for bad input; nothing was changed), or 1 when it
 * printed help.
 */
int agent_cmd_exec(struct agent_console *console, int argc, char **argv);

/**
 * Run one `tool ...` command line (argv[0] is "tool"): the instance defaults of the tool
 * selection (docs/tools.md "Tool selection"). Returns as agent_cmd_exec().
 */
int agent_tool_exec(struct agent_console *console, int argc, char **argv);

#if defined(CONFIG_AGENT_TOOL_TEST_HOOKS)
/** Test hook: the tool confirmation deadline (CONFIG_AGENT_CONFIRM_TIMEOUT_S otherwise). */
void agent_ask_set_confirm_timeout_ms(uint32_t ms);
#endif

#endif /* AGENT_CMD_H */
