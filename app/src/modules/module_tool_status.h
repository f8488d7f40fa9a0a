/*
 * The tool status stream, tools.jsonl (docs/tools.md "The tool status stream"): per boot,
 * JSON lines of each agent's selection state as the device derives it (instance default,
 * the agent's override, the effective next-turn state and availability per group). It is
 * kept in RAM (CONFIG_AGENT_TOOL_STATUS_STREAM_BYTES), written only by the device from its
 * own state, read over SMP (command 12, docs/mgmt-group.md) by `west agent tools --agent
 * ID`. Console text and model output never reach it.
 */
#ifndef AGENT_MODULE_TOOL_STATUS_H
#define AGENT_MODULE_TOOL_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module_selection.h"

#define MODULE_TOOL_STATUS_ALL_AGENTS (-1)

/* One group of one agent, as the System tools table shows it. */
struct tool_group_status {
	bool default_on;	       /* the instance default (tools.mask bit) */
	enum selection_choice override; /* the agent's choice; inherit when its record is invalid */
	bool effective;		       /* on for the next turn */
	bool available;		       /* a granted, available tool of the group exists */
	const char *reason;	       /* why not available (static text), NULL when available */
};

/** The status of group @p bit for agent @p id whose settings are @p st. */
void module_tool_group_status(unsigned int id, unsigned int bit, const struct selection_state *st,
			      struct tool_group_status *out);

/** "on", "off" or "Unavailable": what the table's Effective column shows. */
const char *module_tool_status_word(const struct tool_group_status *gs);

/** Start the boot's stream: its header line and agent 0's record (module_boot()). */
void module_tool_status_init(void);

/**
 * Append the current state of agent @p id, or with MODULE_TOOL_STATUS_ALL_AGENTS of every
 * agent the stream has reported since boot (a default, a role or a catalog change).
 */
void module_tool_status_changed(int id);

/** Append agent @p id's current state (a refresh) and report it from now on. -ERANGE. */
int module_tool_status_refresh(unsigned int id);

/**
 * Copy up to @p len bytes of the stream from @p off into @p buf; returns the count.
 * *@p size gets the stream's length, *@p gen its generation (incremented when the stream
 * was compacted, so a reader at an old offset starts again from 0).
 */
size_t module_tool_status_read(size_t off, char *buf, size_t len, size_t *size, uint32_t *gen);

#endif /* AGENT_MODULE_TOOL_STATUS_H */
