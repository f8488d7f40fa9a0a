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

/* Hand a command line to the core function @p run on this shell's console. */
static int run_core(const struct shell *sh, size_t argc, char **argv,
		    int (*run)(struct agent_console *console, int argc, char **argv))
{
	struct agent_console *console = zephyr_console_get(sh);

	if (console == NULL) {
		shell_error(sh, "%s: no console slot left for this shell", argv[0]);
		return -ENOMEM;
	}
	if (argc > (size_t)INT_MAX) {
		return -E2BIG;
	}
	/* 0, a negative errno, or 1 when help was printed: the shell's own conventions. */
	return run(console, (int)argc, argv);
}

static int cmd_agent(const struct shell *sh, size_t argc, char **argv)
{
	return run_core(sh, argc, argv, agent_cmd_exec);
}

/*
 * One mandatory word (the command name) and any number of optional ones: the core checks
 * its own arguments. The shell still caps a line at CONFIG_SHELL_ARGC_MAX words and
 * CONFIG_SHELL_CMD_BUFF_SIZE bytes (see prj.conf).
 */
SHELL_CMD_ARG_REGISTER(agent, NULL, "LLM agent; `agent help` lists the subcommands.", cmd_agent,
		       1, SHELL_OPT_ARG_CHECK_SKIP);

/* `tool ...`: the tool selection's instance defaults (docs/tools.md "Tool selection"). */
static int cmd_tool(const struct shell *sh, size_t argc, char **argv)
{
	return run_core(sh, argc, argv, agent_tool_exec);
}

SHELL_CMD_ARG_REGISTER(tool, NULL,
		       "Tool selection defaults: `tool`, `tool all off`, `tool NAME on|off`.",
		       cmd_tool, 1, SHELL_OPT_ARG_CHECK_SKIP);

#if defined(CONFIG_AGENT_TOOLS_REFERENCE)
/*
 * `man` takes the rest of its line raw (SHELL_OPT_ARG_RAW): the shell then neither splits it
 * nor looks at it, so `man -h` and `man --help` reach the core, which prints the same usage
 * as on the simulator. With ordinary arguments the shell answers -h itself with the help
 * string below (subsys/shell/shell.c, execute()). The port splits the raw text at spaces and
 * tabs; man's words are topics and search words, which never need quotes. Past MAN_WORDS_MAX
 * words the rest of the line is the last word: so many words exceed the core's query bound
 * (CONFIG_AGENT_TOOL_QUERY_MAX_LEN) or its one-topic rule, and it answers as on the simulator.
 */
#define MAN_WORDS_MAX 64

static int cmd_man(const struct shell *sh, size_t argc, char **argv)
{
	struct agent_console *console = zephyr_console_get(sh);
	char *words[MAN_WORDS_MAX + 1];
	int count = 1;

	if (console == NULL) {
		shell_error(sh, "man: no console slot left for this shell");
		return -ENOMEM;
	}
	words[0] = argv[0];
	for (char *p = argc > 1u ? argv[1] : NULL; p != NULL && *p != '\0';) {
		while (*p == ' ' || *p == '\t') {
			*p++ = '\0';
		}
		if (*p == '\0') {
			break;
		}
		words[count++] = p;
		if (count == MAN_WORDS_MAX) {
			break; /* the rest stays one word: the core's bounds refuse it */
		}
		while (*p != '\0' && *p != ' ' && *p != '\t') {
			p++;
		}
	}
	words[count] = NULL;
	return agent_man_exec(console, count, words);
}

SHELL_CMD_ARG_REGISTER(man, NULL, "Reference pages: `man TOPIC`, `man -k WORD...`.", cmd_man, 1,
		       SHELL_OPT_ARG_RAW);
#endif
