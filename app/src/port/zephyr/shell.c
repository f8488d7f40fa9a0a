/*
 * The `agent` shell command: registered with the Zephyr shell, it hands the words of the
 * command line to the portable core (agent_cmd.h), which prints on the same shell.
 */
#include <errno.h>
#include <limits.h>

#include <zephyr/shell/shell.h>

#include "agent_cmd.h"
#include "zephyr_port.h"
#if defined(CONFIG_AGENT_TOOLS_REFERENCE)
#include "man_cmd.h"
#endif

static int cmd_agent(const struct shell *sh, size_t argc, char **argv)
{
	struct agent_console *console = zephyr_console_get(sh);

	if (console == NULL) {
		shell_error(sh, "agent: no console slot left for this shell");
		return -ENOMEM;
	}
	if (argc > (size_t)INT_MAX) {
		return -E2BIG;
	}
	/* 0, a negative errno, or 1 when help was printed: the shell's own conventions. */
	return agent_cmd_exec(console, (int)argc, argv);
}

/*
 * One mandatory word (the command name) and any number of optional ones: the core checks
 * its own arguments. The shell still caps a line at CONFIG_SHELL_ARGC_MAX words and
 * CONFIG_SHELL_CMD_BUFF_SIZE bytes (see prj.conf).
 */
SHELL_CMD_ARG_REGISTER(agent, NULL, "LLM agent; `agent help` lists the subcommands.", cmd_agent,
		       1, SHELL_OPT_ARG_CHECK_SKIP);

#if defined(CONFIG_AGENT_TOOLS_REFERENCE)
/* `man TOPIC` and `man -k WORD...` over the reference pages built into the image. */
static int cmd_man(const struct shell *sh, size_t argc, char **argv)
{
	struct agent_console *console = zephyr_console_get(sh);

	if (console == NULL) {
		shell_error(sh, "man: no console slot left for this shell");
		return -ENOMEM;
	}
	if (argc > (size_t)INT_MAX) {
		return -E2BIG;
	}
	return agent_man_exec(console, (int)argc, argv);
}

SHELL_CMD_ARG_REGISTER(man, NULL, "Reference pages: `man TOPIC`, `man -k WORD...`.", cmd_man, 1,
		       SHELL_OPT_ARG_CHECK_SKIP);
#endif
