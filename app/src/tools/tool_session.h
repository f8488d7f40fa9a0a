/*
 * The tools of one request: the policy that decides what may run, the bootstrap tools every
 * turn offers, the selection tool_search made (a later search replaces it) and a workflow
 * dependency activated on demand. At most CONFIG_AGENT_TOOL_BOOTSTRAP_COUNT +
 * CONFIG_AGENT_TOOL_DISCOVERED_MAX schemas are offered in one provider turn.
 */
#ifndef AGENT_TOOL_SESSION_H
#define AGENT_TOOL_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "agent_config.h"
#include "tool.h"

#define TOOL_ADVERTISED_MAX (CONFIG_AGENT_TOOL_BOOTSTRAP_COUNT + CONFIG_AGENT_TOOL_DISCOVERED_MAX)

enum tool_disposition {
	TOOL_RUNS,   /* runs without asking */
	TOOL_ASKS,   /* runs only when the person allows it at the console */
	TOOL_DENIED, /* never runs and is never offered */
};

struct tool_session {
	enum agent_tools_policy policy;
	const char *prompt; /* the request's prompt: a path-like token favours storage_stat */
	const struct tool_def *selected[CONFIG_AGENT_TOOL_DISCOVERED_MAX];
	size_t selected_count;
	/* The agent's role bounds what it is offered (docs/modules.md "Roles and agents"):
	 * NULL grants everything, else called with @p role for each tool. */
	bool (*granted)(int role, const struct tool_def *def);
	int role;
	/* The selection groups (TOOL_GROUP_*) enabled for this request, read once when it
	 * starts (docs/tools.md "Tool selection"): a tool of a disabled group is not offered
	 * and a call to it is refused; with no group enabled no tool at all is offered.
	 * tool_session_init() enables every group. */
	uint16_t groups;
};

/** What @p policy does with a tool of @p risk (docs/configuration.md "Tool policy"). */
enum tool_disposition tool_policy_disposition(enum agent_tools_policy policy, enum tool_risk risk);
const char *tool_disposition_name(enum tool_disposition disposition);

/** Whether @p def is one of the bootstrap tools every request starts with. */
bool tool_is_bootstrap(const struct tool_def *def);

/** Whether the request's selection enables @p def: its group is enabled, or it has no group
 *  and at least one group is enabled. */
bool tool_session_selected(const struct tool_session *s, const struct tool_def *def);

/** Whether discovery may offer @p def now: enabled by the selection, available, granted by
 *  the agent's role and not denied by the policy. */
bool tool_session_offerable(const struct tool_session *s, const struct tool_def *def);

void tool_session_init(struct tool_session *s, enum agent_tools_policy policy, const char *prompt);

/** The tools offered in the next turn, bootstrap first; returns how many (<= max). */
size_t tool_session_advertised(const struct tool_session *s, const struct tool_def **out,
			       size_t max);
bool tool_session_is_advertised(const struct tool_session *s, const struct tool_def *def);

/** Replace the discovered selection (tool_search) with @p count tools. */
void tool_session_select(struct tool_session *s, const struct tool_def *const *defs, size_t count);

/**
 * Activate @p def on demand (a workflow dependency called while inactive): it joins the
 * selection, replacing the last selected tool when the selection is full.
 */
void tool_session_activate(struct tool_session *s, const struct tool_def *def);

/**
 * Write the advertised tools as the value of a request's "tools" member: a JSON array in the
 * Responses form ({"type":"function","name",...}) or the Chat Completions form
 * ({"type":"function","function":{...}}).
 */
void tool_session_write_tools(const struct tool_session *s, enum agent_protocol protocol,
			      struct json_writer *w);

/** One tool's "parameters" JSON schema (also for `agent tools` and docs). */
void tool_write_parameters(const struct tool_def *def, struct json_writer *w);

#endif /* AGENT_TOOL_SESSION_H */
