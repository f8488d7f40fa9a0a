/*
 * Agents and their roles (docs/modules.md "Roles and agents"). Agent 0 is the console
 * agent: `agent ask` and a new chat before its first turn is stored; it exists while the
 * conductor role is installed, and its role is the conductor. Agent N (1 ..
 * MODULE_AGENT_IDS - 1) is the conversation stored in slot N; it has the role set with
 * `agent N role NAME` (the settings record agent/role.N), else agent 0's. A role's overlay
 * and its skills' bodies go into the request's instructions; its `tools` key bounds what
 * the agent is offered.
 */
#ifndef AGENT_MODULE_AGENTS_H
#define AGENT_MODULE_AGENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"
#include "module.h"
#include "tool.h"

#define MODULE_CONDUCTOR "conductor"
#define MODULE_AGENT_IDS                                                                       \
	(1 + (CONFIG_AGENT_CONV_FLASH_SLOTS > CONFIG_AGENT_CONV_SD_SLOTS                       \
		      ? CONFIG_AGENT_CONV_FLASH_SLOTS                                          \
		      : CONFIG_AGENT_CONV_SD_SLOTS))

/** Whether the console agent exists (the conductor role is installed). */
bool module_console_agent(void);

/**
 * The role of agent @p id, as a catalog index; -ENOENT when the agent has none (no
 * conductor installed and none set), -ERANGE for an id out of range. @p assigned (may be
 * NULL) tells whether the role was set for this agent rather than inherited.
 */
int module_agent_role(unsigned int id, bool *assigned);

/**
 * Give agent @p id (1 .. MODULE_AGENT_IDS - 1) the installed role @p role, or with
 * @p role "inherit" go back to agent 0's. A settings record, restored at boot. Refusals:
 * -ERANGE id, -ENOENT no such installed role, -EINVAL not a role, -EIO the settings.
 */
int module_agent_set_role(unsigned int id, const char *role, char *why, size_t why_len);

/** Forget what was set for agent @p id (its slot holds a new conversation or none). */
void module_agent_forget(unsigned int id);

/** The role name set for agent @p id in the settings ("" when none) into @p buf. */
void module_agent_role_setting(unsigned int id, char *buf, size_t len);

/** What module_instructions() left out. */
struct module_instructions_report {
	int role;		  /* the catalog index of the role, -1 without */
	char role_name[MODULE_NAME_MAX + 1]; /* its name, "" without */
	uint16_t skills;	  /* skills whose text went in */
	uint16_t skills_missing;  /* named by the role but not installed */
	uint16_t skills_omitted;  /* installed but past the bound */
	bool overlay_cut;	  /* the overlay did not fit whole */
};

/**
 * The instructions of a request of agent @p id into @p buf (@p len bytes, NUL-terminated):
 * @p base (the board line), then @p tools_note (the tool-use instructions, NULL when the
 * request offers no tools), then the role's overlay, then each of the role's installed
 * skills as a "Skill NAME" section, whole or not at all, up to @p len. Returns the length.
 */
size_t module_instructions(unsigned int id, const char *base, const char *tools_note,
			   char *buf, size_t len, struct module_instructions_report *report);

/** The last module_instructions() report (agent status). */
void module_instructions_last(struct module_instructions_report *out);

/**
 * Whether the role at catalog index @p role grants @p def: its `tools` key names the tool,
 * its group (tool.h TOOL_GROUP_*) or `*`; a role without the key grants every tool; tools
 * of no group (status, reference, search, inspection) are granted to every role. @p role
 * -1 (no role) grants everything.
 */
bool module_role_grants(int role, const struct tool_def *def);

/** The installed body of skill @p name (after any front matter), or NULL (absent). */
const char *module_skill_body(const char *name, size_t *len);

#endif /* AGENT_MODULE_AGENTS_H */
