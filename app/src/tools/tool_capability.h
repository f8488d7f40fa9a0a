/*
 * Capabilities a tool may need (enum tool_capability in tool.h), checked at run time against
 * what the device has now: mounted filesystems, the board's devices, a network interface, a
 * script runtime. docs/tools.md "Availability" lists them with their reasons.
 */
#ifndef AGENT_TOOL_CAPABILITY_H
#define AGENT_TOOL_CAPABILITY_H

#include "tool.h"

/* Script runtimes that can be registered (a Python and a Lua interpreter adapter). */
#define TOOL_SCRIPT_RUNTIMES_MAX 2

/** The name `agent tools` prints in its "needs" column: "filesystem", "gpio", ...; "-" for none. */
const char *tool_capability_name(enum tool_capability cap);

/** Why @p cap is missing now (one short line), or NULL when the device has it. */
const char *tool_capability_missing(enum tool_capability cap);

/** The capability @p def needs: its own, else its domain's default (storage: a filesystem). */
enum tool_capability tool_capability_of(const struct tool_def *def);

/**
 * A script runtime (an interpreter adapter) announces itself at start-up, before any request:
 * tools that need TOOL_CAP_SCRIPT_RUNTIME are available from then on. @p name ("python",
 * "lua") must outlive the registration. 0, -EEXIST for a name already registered, -ENOMEM
 * past TOOL_SCRIPT_RUNTIMES_MAX, -EINVAL for an empty name.
 */
int tool_script_runtime_register(const char *name);
/** Take a runtime back (its adapter failed or was unloaded); -ENOENT when it is not there. */
int tool_script_runtime_unregister(const char *name);
/** How many runtimes are registered. */
size_t tool_script_runtime_count(void);

#endif /* AGENT_TOOL_CAPABILITY_H */
