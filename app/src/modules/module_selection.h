/*
 * Tool selection (modules spec "Tool selection", docs/tools.md "Tool selection"): which of
 * the ten selection groups (tool.h TOOL_GROUP_*) an agent's next turn is offered.
 *
 * - The instance defaults are the settings record agent/tools.mask: bits 0-9 in the spec's
 *   name order, decimal text, default 1023 (every group on), 0 every group off.
 * - Agent N's choices are the record agent/tools.agent.N: two bits per group (group i in
 *   bits 2i and 2i+1): 0 inherit, 1 disable, 2 enable; 3 is invalid and makes the whole
 *   record invalid (it is then ignored, and shown as such).
 * - Effective: an agent's choice for a group when it has one, else the default.
 *
 * A request reads the effective mask once, when it starts (agent_request.c), so a change
 * applies when the next turn starts and an active turn keeps its selection. The selection
 * never grants what the role excludes (module_role_grants()) and never removes
 * confirmation (the policy applies after it).
 */
#ifndef AGENT_MODULE_SELECTION_H
#define AGENT_MODULE_SELECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"

enum selection_choice {
	SELECTION_INHERIT = 0,
	SELECTION_DISABLE = 1,
	SELECTION_ENABLE = 2,
	SELECTION_INVALID = 3, /* never stored by the device; refused in a record */
};

#define SELECTION_ALL_GROUPS (-1) /* the group argument "all" */
#define SELECTION_RECORD_MAX 0xFFFFFu /* 2 bits x 10 groups */

/* What the settings hold, as read now. */
struct selection_state {
	uint16_t defaults;	  /* tools.mask (1023 when absent or invalid) */
	bool defaults_invalid;	  /* the stored tools.mask was not a number 0..1023 */
	uint32_t record;	  /* tools.agent.N, 0 when absent or invalid */
	bool record_invalid;	  /* the stored record had a 3 or was not a number */
	uint16_t effective;	  /* the groups the agent's next turn may be offered */
};

/**
 * Read the defaults and agent @p id's record (0 .. MODULE_AGENT_IDS - 1). -ERANGE id; -EIO
 * when the settings cannot be read: then @p out's effective mask is 0 (fail closed: a
 * selection that cannot be read enables nothing) and the set functions change nothing.
 */
int module_selection_read(unsigned int id, struct selection_state *out);

/** The effective group mask of agent @p id's next turn (agent 0's for a bad id; 0 when the
 *  settings cannot be read). */
uint16_t module_selection_effective(unsigned int id);

/** The 2-bit choice of group @p bit in @p record. */
enum selection_choice module_selection_choice(uint32_t record, unsigned int bit);

/**
 * Parse a stored record's text (decimal): 0 and the record, or -EINVAL (not a number, more
 * than 20 bits, or a group set to 3). Also for the stored tools.mask with @p mask true
 * (0 .. 1023).
 */
int module_selection_parse(const char *text, size_t len, bool mask, uint32_t *out);

/**
 * `tool NAME on|off`, `tool all off|on`: change the instance defaults (@p group a bit, or
 * SELECTION_ALL_GROUPS). 0 or -EIO with @p why.
 */
int module_selection_set_default(int group, bool on, char *why, size_t why_len);

/**
 * `agent ID tools NAME on|off|inherit`, `agent ID tools all inherit|off`: change agent
 * @p id's record (removed when every group inherits). 0, -ERANGE id, -EIO with @p why.
 */
int module_selection_set_agent(unsigned int id, int group, enum selection_choice choice,
				char *why, size_t why_len);

/** Forget agent @p id's choices (its slot holds a new conversation or none). */
void module_selection_forget(unsigned int id);

/** "inherit", "off", "on", "invalid". */
const char *module_selection_choice_name(enum selection_choice choice);

#endif /* AGENT_MODULE_SELECTION_H */
