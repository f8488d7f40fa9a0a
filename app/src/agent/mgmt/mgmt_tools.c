/*
 * The tools command (6) of the SMP management group (docs/mgmt-group.md): the registered
 * tools a page at a time, each with its domain, risk, availability (and why not), what the
 * configured policy does with it and the capability it needs, as `agent tools` shows them;
 * and the tool status command (12): the tool status stream, tools.jsonl.
 */
#include <errno.h>
#include <string.h>

#include <zcbor_encode.h>

#include "agent_config.h"
#include "agent_session.h"
#include "conv_store.h"
#include "mgmt_internal.h"
#include "module_agents.h"
#include "module_import.h"
#include "module_selection.h"
#include "module_tool_status.h"
#include "tool_capability.h"
#include "tool_registry.h"
#include "tool_session.h"

/* ---- tools (6) ---------------------------------------------------------------------------- */

static bool put_tool(zcbor_state_t *zse, const struct tool_def *def,
		     enum agent_tools_policy policy)
{
	const char *unavailable = tool_unavailable_reason(def);
	enum tool_capability cap = tool_capability_of(def);

	return zcbor_map_start_encode(zse, 7) && agent_mgmt_put_str(zse, "name", def->name) &&
	       agent_mgmt_put_str(zse, "domain", tool_domain_name(def->domain)) &&
	       agent_mgmt_put_str(zse, "risk", tool_risk_name(def->risk)) &&
	       agent_mgmt_put_str(zse, "available",
				  unavailable == NULL ? (tool_is_bootstrap(def) ? "bootstrap" : "yes")
						      : "no") &&
	       agent_mgmt_put_str(
		       zse, "policy",
		       tool_disposition_name(tool_policy_disposition(policy, def->risk))) &&
	       agent_mgmt_put_str(zse, "needs",
				  cap == TOOL_CAP_NONE ? "" : tool_capability_name(cap)) &&
	       agent_mgmt_put_str(zse, "reason", unavailable != NULL ? unavailable : "") &&
	       zcbor_map_end_encode(zse, 7);
}

int agent_mgmt_tools_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	const struct agent_config *cfg = agent_session_config();
	const uint8_t *end = zse->payload_end;
	size_t total = tool_registry_count();
	uint32_t off;
	bool ok;
	int err = agent_mgmt_page_request(zsd, r, &off);

	if (err == 0) {
		err = agent_mgmt_page_check(r, off, (uint32_t)total, "tools");
	}
	if (err != 0) {
		return err;
	}
	ok = agent_mgmt_put_str(zse, "policy", agent_tools_policy_name(cfg->tools)) &&
	     agent_mgmt_put_uint(zse, "total", (uint32_t)total) &&
	     agent_mgmt_put_uint(zse, "off", off) && zcbor_tstr_put_lit(zse, "tools") &&
	     zcbor_list_start_encode(zse, total);
	if (!ok || end - zse->payload_mut < PAGE_RESERVE) {
		return -ENOMEM;
	}
	zse->payload_end = end - PAGE_RESERVE;
	/* Imports and removals change the registry under the module lock. */
	module_lock();
	for (size_t i = off; i < total; i++) {
		const struct tool_def *def = tool_registry_get(i);
		struct mark m;

		if (def == NULL) {
			break; /* removed while we were listing */
		}
		agent_mgmt_mark_take(zse, &m);
		if (!put_tool(zse, def, cfg->tools)) {
			agent_mgmt_mark_restore(zse, &m);
			if (i == off) {
				module_unlock();
				zse->payload_end = end;
				return -ENOMEM;
			}
			break;
		}
	}
	module_unlock();
	zse->payload_end = end;
	return zcbor_list_end_encode(zse, total) ? 0 : -ENOMEM;
}

/* ---- tool status (12) --------------------------------------------------------------------- */

#define STATUS_OVERHEAD 48 /* the response's other members and the data header */
#define STATUS_CHUNK	512

static char status_chunk[STATUS_CHUNK] AGENT_PSRAM_ATTR;

int agent_mgmt_tool_status_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {
		{.name = "off", .type = FIELD_UINT},
		{.name = "agent", .type = FIELD_UINT},
		{.name = "refresh", .type = FIELD_BOOL},
	};
	size_t room = (size_t)(zse->payload_end - zse->payload_mut);
	size_t want;
	size_t size;
	size_t n;
	uint32_t gen;
	uint32_t off;
	int err = agent_mgmt_decode_request(zsd, fields, 3, r);

	if (err != 0) {
		return err;
	}
	if (fields[2].present && fields[2].flag && !fields[1].present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "refresh needs an agent");
	}
	if (fields[1].present && fields[1].number >= MODULE_AGENT_IDS) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ERANGE, "agent ids are 0..%d",
					 MODULE_AGENT_IDS - 1);
	}
	if (fields[2].present && fields[2].flag) {
		(void)module_tool_status_refresh(fields[1].number);
	}
	if (room <= STATUS_OVERHEAD) {
		return -ENOMEM;
	}
	want = room - STATUS_OVERHEAD < sizeof(status_chunk) ? room - STATUS_OVERHEAD
							     : sizeof(status_chunk);
	off = fields[0].present ? fields[0].number : 0u;
	n = module_tool_status_read(off, status_chunk, want, &size, &gen);
	if (off > size) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ERANGE, "offset %u is past the end (%u "
					 "bytes)", (unsigned int)off, (unsigned int)size);
	}
	return agent_mgmt_put_uint(zse, "gen", gen) &&
			       agent_mgmt_put_uint(zse, "size", (uint32_t)size) &&
			       agent_mgmt_put_uint(zse, "off", off) &&
			       zcbor_tstr_put_lit(zse, "data") &&
			       zcbor_bstr_encode_ptr(zse, status_chunk, n)
		       ? 0
		       : -ENOMEM;
}

/*
 * tool status W {group, value, agent?}: the console's `tool GROUP on|off` (no agent) or
 * `agent ID tools GROUP on|off|inherit`; group "all" for every group. Answered with the
 * stored values: {mask, agent?, record?}.
 */
int agent_mgmt_tool_select_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	static const char *const values[] = {"inherit", "off", "on"};
	struct field fields[] = {
		{.name = "group", .type = FIELD_TSTR},
		{.name = "value", .type = FIELD_TSTR},
		{.name = "agent", .type = FIELD_UINT},
	};
	char why[MODULE_REASON_MAX + 1];
	char quoted[40];
	struct selection_state st;
	int value = -1;
	int group;
	int err = agent_mgmt_decode_request(zsd, fields, 3, r);

	if (err != 0) {
		return err;
	}
	if (!fields[0].present || !fields[1].present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "group and value are needed");
	}
	group = fields[0].text.len == 3u && memcmp(fields[0].text.value, "all", 3) == 0
			? SELECTION_ALL_GROUPS
			: tool_group_parse((const char *)fields[0].text.value, fields[0].text.len);
	if (group == -ENOENT) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "no tool group \"%s\"",
					 agent_mgmt_quoted(&fields[0].text, quoted, sizeof(quoted)));
	}
	for (int i = fields[2].present ? 0 : 1; i < 3; i++) {
		if (fields[1].text.len == strlen(values[i]) &&
		    memcmp(fields[1].text.value, values[i], fields[1].text.len) == 0) {
			value = i;
		}
	}
	if (value < 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "value must be on or off%s",
					 fields[2].present ? " or inherit" : "");
	}
	if (fields[2].present && fields[2].number >= MODULE_AGENT_IDS) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ERANGE, "agent ids are 0..%d",
					 MODULE_AGENT_IDS - 1);
	}
	if (fields[2].present && fields[2].number > 0u) {
		struct conv_summary s;

		if (conv_store_summary((uint8_t)fields[2].number, &s) != 0) {
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_ENOENT,
						 "agent %u: slot %u holds no conversation",
						 (unsigned int)fields[2].number,
						 (unsigned int)fields[2].number);
		}
	}
	err = fields[2].present
		      ? module_selection_set_agent(fields[2].number, group,
						   (enum selection_choice)value, why, sizeof(why))
		      : module_selection_set_default(group, value == SELECTION_ENABLE, why,
						     sizeof(why));
	if (err != 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EIO, "%s", why);
	}
	(void)module_selection_read(fields[2].present ? fields[2].number : 0u, &st);
	return agent_mgmt_put_uint(zse, "mask", st.defaults) &&
			       (!fields[2].present ||
				(agent_mgmt_put_uint(zse, "agent", fields[2].number) &&
				 agent_mgmt_put_uint(zse, "record", st.record)))
		       ? 0
		       : -ENOMEM;
}
