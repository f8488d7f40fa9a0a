/*
 * The tool selection commands of the console (docs/tools.md "Tool selection"): `tool`,
 * `tool all on|off`, `tool NAME on|off` (the instance defaults, tools.mask) and
 * `agent ID tools [NAME|all on|off|inherit]` (agent ID's choices, tools.agent.ID).
 */
#include <errno.h>
#include <string.h>

#include "agent_cmd.h"
#include "agent_cmd_internal.h"
#include "agent_print.h"
#include "module_agents.h"
#include "module_catalog.h"
#include "module_selection.h"
#include "module_tool_status.h"
#include "tool.h"

/* The group named @p word, SELECTION_ALL_GROUPS for "all", or -ENOENT (reported). */
static int group_word(struct agent_console *console, const char *word)
{
	int bit;

	if (strcmp(word, "all") == 0) {
		return SELECTION_ALL_GROUPS;
	}
	bit = tool_group_parse(word, strlen(word));
	if (bit < 0) {
		agent_error(console,
			    "no tool group \"%.32s\"; the groups are memory_recall, memory_write, "
			    "fs_read, fs_list, fs_write, fs_update, run, skill_use, fs_stat, imported "
			    "and all",
			    word);
	}
	return bit;
}

static void print_defaults(struct agent_console *console)
{
	struct selection_state st;

	if (module_selection_read(0, &st) == -EIO) {
		agent_puts(console, "the settings cannot be read: every group is off\n");
	}
	agent_printf(console, "tools.mask %u%s (instance defaults; changes apply from the next "
			      "turn)\n",
		     (unsigned int)st.defaults,
		     st.defaults_invalid ? " (the stored value is invalid: default used)" : "");
	for (unsigned int bit = 0; bit < TOOL_GROUP_COUNT; bit++) {
		agent_printf(console, "  %-14s %s\n", tool_group_name(bit),
			     (st.defaults & (1u << bit)) != 0u ? "on" : "off");
	}
}

int agent_tool_exec(struct agent_console *console, int argc, char **argv)
{
	char why[MODULE_REASON_MAX + 1];
	int group;
	bool on;

	if (argc == 1) {
		print_defaults(console);
		return 0;
	}
	if (argc != 3 || (strcmp(argv[2], "on") != 0 && strcmp(argv[2], "off") != 0)) {
		agent_error(console, "usage: tool [all|NAME on|off]");
		return -EINVAL;
	}
	group = group_word(console, argv[1]);
	if (group == -ENOENT) {
		return -EINVAL;
	}
	on = strcmp(argv[2], "on") == 0;
	if (module_selection_set_default(group, on, why, sizeof(why)) != 0) {
		agent_error(console, "%s", why);
		return -EIO;
	}
	print_defaults(console);
	return 0;
}

static void print_agent(struct agent_console *console, unsigned int id)
{
	struct selection_state st;
	int role = module_agent_role(id, NULL);

	if (module_selection_read(id, &st) == -EIO) {
		agent_puts(console, "the settings cannot be read: every group is off\n");
	}
	agent_printf(console, "agent %u tools (role %s; the next turn):\n", id,
		     role >= 0 ? module_catalog_entry(role)->name : "none");
	if (st.record_invalid) {
		agent_puts(console, "  the stored choices (tools.agent record) are invalid and "
				    "ignored: a group set to 3, or not a number\n");
	}
	agent_printf(console, "  %-14s %-7s %-8s %s\n", "group", "default", "override",
		     "effective");
	for (unsigned int bit = 0; bit < TOOL_GROUP_COUNT; bit++) {
		struct tool_group_status gs;

		module_tool_group_status(id, bit, &st, &gs);
		agent_printf(console, "  %-14s %-7s %-8s %s%s%s\n", tool_group_name(bit),
			     gs.default_on ? "on" : "off",
			     module_selection_choice_name(gs.override),
			     module_tool_status_word(&gs),
			     gs.effective && !gs.available ? ": " : "",
			     gs.effective && !gs.available && gs.reason != NULL ? gs.reason : "");
	}
}

int agent_cmd_tools_select(struct agent_console *console, unsigned int id, int argc, char **argv)
{
	static const char *const choices[] = {"inherit", "off", "on"};
	char why[MODULE_REASON_MAX + 1];
	int choice = -1;
	int group;

	if (argc == 3) {
		print_agent(console, id);
		return 0;
	}
	for (int i = 0; argc == 5 && i < 3; i++) {
		if (strcmp(argv[4], choices[i]) == 0) {
			choice = i;
		}
	}
	if (choice < 0) {
		agent_error(console, "usage: agent ID tools [NAME|all on|off|inherit]");
		return -EINVAL;
	}
	if (agent_cmd_agent_exists(console, id) != 0) {
		return -ENOENT;
	}
	group = group_word(console, argv[3]);
	if (group == -ENOENT) {
		return -EINVAL;
	}
	if (module_selection_set_agent(id, group, (enum selection_choice)choice, why,
				       sizeof(why)) != 0) {
		agent_error(console, "%s", why);
		return -EIO;
	}
	print_agent(console, id);
	return 0;
}
