/* The tool status stream (module_tool_status.h, docs/tools.md "The tool status stream"). */
#include "module_tool_status.h"

#include <errno.h>
#include <string.h>

#include "json_writer.h"
#include "module_agents.h"
#include "module_catalog.h"
#include "module_internal.h"
#include "tool_registry.h"

#define STREAM_BYTES CONFIG_AGENT_TOOL_STATUS_STREAM_BYTES

static char stream[STREAM_BYTES] AGENT_PSRAM_ATTR;
static size_t used;
static uint32_t gen;
static uint32_t seq;
static bool watched[MODULE_AGENT_IDS];

void module_tool_group_status(unsigned int id, unsigned int bit, const struct selection_state *st,
			      struct tool_group_status *out)
{
	int role = module_agent_role(id, NULL);
	bool any = false;

	memset(out, 0, sizeof(*out));
	out->default_on = (st->defaults & (1u << bit)) != 0u;
	out->override = module_selection_choice(st->record, bit);
	out->effective = (st->effective & (1u << bit)) != 0u;
	out->reason = "no tool of this group is in this firmware";
	/* The registry changes only under the module lock (imports, removals). */
	module_lock();
	for (size_t i = 0; i < tool_registry_count() && !out->available; i++) {
		const struct tool_def *def = tool_registry_get(i);
		const char *why;

		if ((def->groups & (1u << bit)) == 0u) {
			continue;
		}
		if (!module_role_grants(role < 0 ? -1 : role, def)) {
			if (!any) {
				out->reason = "the agent's role grants no tool of this group";
			}
			continue;
		}
		why = tool_unavailable_reason(def);
		out->available = why == NULL;
		if (!any || why == NULL) {
			out->reason = why;
		}
		any = true;
	}
	module_unlock();
}

const char *module_tool_status_word(const struct tool_group_status *gs)
{
	return !gs->effective ? "off" : gs->available ? "on" : "Unavailable";
}

static bool write_header(struct json_writer *w)
{
	jw_object_begin(w);
	jw_key(w, "stream");
	jw_string(w, "tools.jsonl");
	jw_key(w, "version");
	jw_int(w, 1);
	jw_key(w, "gen");
	jw_int(w, gen);
	jw_key(w, "groups");
	jw_array_begin(w);
	for (unsigned int bit = 0; bit < TOOL_GROUP_COUNT; bit++) {
		jw_string(w, tool_group_name(bit));
	}
	jw_array_end(w);
	jw_object_end(w);
	return true;
}

static void write_agent(struct json_writer *w, unsigned int id)
{
	struct selection_state st;
	int role = module_agent_role(id, NULL);

	(void)module_selection_read(id, &st);
	jw_object_begin(w);
	jw_key(w, "seq");
	jw_int(w, seq);
	jw_key(w, "agent");
	jw_int(w, id);
	jw_key(w, "role");
	jw_string(w, role >= 0 ? module_catalog_entry(role)->name : "");
	jw_key(w, "mask");
	jw_int(w, st.defaults);
	jw_key(w, "record");
	jw_int(w, st.record);
	jw_key(w, "record_invalid");
	jw_bool(w, st.record_invalid);
	jw_key(w, "effective");
	jw_int(w, st.effective);
	jw_key(w, "groups");
	jw_array_begin(w);
	for (unsigned int bit = 0; bit < TOOL_GROUP_COUNT; bit++) {
		struct tool_group_status gs;

		module_tool_group_status(id, bit, &st, &gs);
		jw_object_begin(w);
		jw_key(w, "group");
		jw_string(w, tool_group_name(bit));
		jw_key(w, "default");
		jw_string(w, gs.default_on ? "on" : "off");
		jw_key(w, "override");
		jw_string(w, module_selection_choice_name(gs.override));
		jw_key(w, "effective");
		jw_string(w, gs.effective ? "on" : "off");
		jw_key(w, "available");
		jw_bool(w, gs.available);
		jw_key(w, "state");
		jw_string(w, module_tool_status_word(&gs));
		jw_key(w, "reason");
		jw_string(w, gs.reason != NULL ? gs.reason : "");
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_object_end(w);
}

/* Append one line at the end; false when it does not fit (nothing is appended). */
static bool append(int id)
{
	struct json_writer w;
	int n;

	if (used + 2u > sizeof(stream)) {
		return false;
	}
	jw_init(&w, stream + used, sizeof(stream) - used - 1u);
	if (id < 0) {
		(void)write_header(&w);
	} else {
		write_agent(&w, (unsigned int)id);
	}
	n = jw_finish(&w);
	if (n < 0) {
		return false;
	}
	used += (size_t)n;
	stream[used++] = '\n';
	if (id >= 0) {
		seq++;
	}
	return true;
}

/* Start again with the header and the current state of the watched agents, @p first
 * first; agents that no longer fit are no longer reported. */
static void compact(unsigned int first)
{
	used = 0;
	gen++;
	(void)append(-1);
	if (!append((int)first)) {
		watched[first] = false;
	}
	for (unsigned int id = 0; id < MODULE_AGENT_IDS; id++) {
		if (id != first && watched[id] && !append((int)id)) {
			watched[id] = false;
		}
	}
}

static void append_agent(unsigned int id)
{
	watched[id] = true;
	if (!append((int)id)) {
		compact(id);
	}
}

void module_tool_status_init(void)
{
	module_lock();
	used = 0;
	gen = 0;
	seq = 0;
	memset(watched, 0, sizeof(watched));
	(void)append(-1);
	append_agent(0);
	module_unlock();
}

void module_tool_status_changed(int id)
{
	module_lock();
	if (id >= 0) {
		if ((unsigned int)id < MODULE_AGENT_IDS) {
			append_agent((unsigned int)id);
		}
	} else {
		for (unsigned int a = 0; a < MODULE_AGENT_IDS; a++) {
			if (watched[a]) {
				append_agent(a);
			}
		}
	}
	module_unlock();
}

int module_tool_status_refresh(unsigned int id)
{
	if (id >= MODULE_AGENT_IDS) {
		return -ERANGE;
	}
	module_tool_status_changed((int)id);
	return 0;
}

size_t module_tool_status_read(size_t off, char *buf, size_t len, size_t *size, uint32_t *g)
{
	size_t n = 0;

	module_lock();
	if (off < used) {
		n = used - off < len ? used - off : len;
		memcpy(buf, stream + off, n);
	}
	*size = used;
	*g = gen;
	module_unlock();
	return n;
}
