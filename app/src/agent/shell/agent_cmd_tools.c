/*
 * `agent tools`: the registry as the model may see it: every tool compiled in, with its
 * domain, risk class, availability now, what the current policy does with it, and the
 * capability it needs. Bootstrap tools are marked; the others are offered through tool_search.
 * An unavailable tool's row is followed by a line with the reason.
 */
#include <errno.h>

#include "agent_cmd_internal.h"
#include "agent_print.h"
#include "tool_capability.h"
#include "module_import.h"
#include "tool_registry.h"
#include "tool_session.h"

int agent_cmd_tools_exec(struct agent_console *console, int argc, char **argv)
{
	const struct agent_config *cfg = agent_session_config();

	(void)argv;
	if (argc != 2) {
		agent_error(console, "tools takes no arguments");
		return -EINVAL;
	}
	agent_printf(console, "policy: %s\n", agent_tools_policy_name(cfg->tools));
	agent_printf(console, "%-20s %-10s %-10s %-11s %-7s %s\n", "tool", "domain", "risk",
		     "available", "policy", "needs");
	/* Imports and removals change the registry under the module lock (SMP's thread). */
	module_lock();
	for (size_t i = 0; i < tool_registry_count(); i++) {
		const struct tool_def *def = tool_registry_get(i);
		const char *unavailable = tool_unavailable_reason(def);

		agent_printf(console, "%-20s %-10s %-10s %-11s %-7s %s\n", def->name,
			     tool_domain_name(def->domain), tool_risk_name(def->risk),
			     unavailable == NULL ? (tool_is_bootstrap(def) ? "bootstrap" : "yes")
						 : "no",
			     tool_disposition_name(tool_policy_disposition(cfg->tools, def->risk)),
			     tool_capability_name(tool_capability_of(def)));
		if (unavailable != NULL) {
			agent_printf(console, "  unavailable: %s\n", unavailable);
		}
	}
	agent_printf(console, "%u tools; at most %d offered per provider turn\n",
		     (unsigned int)tool_registry_count(), TOOL_ADVERTISED_MAX);
	module_unlock();
	return 0;
}
