/* Tool selection: the instance defaults and the agents' choices (module_selection.h). */
#include "module_selection.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_agents.h"
#include "module_internal.h"
#include "module_tool_status.h"
#include "tool.h"

#define MASK_KEY "agent/tools.mask"

static void agent_key(unsigned int id, char *key, size_t len)
{
	(void)snprintf(key, len, "agent/tools.agent.%u", id);
}

/*
 * A stored number: 0 and its value, -ENOENT absent (also without a settings store at all:
 * nothing can have been stored), -EINVAL invalid, -EIO unreadable.
 */
static int read_number(const char *key, bool mask, uint32_t *out)
{
	char text[16];
	int n = agent_settings_get(key, text, sizeof(text));

	if (n < 0) {
		return n == -ENOENT || n == -ENODEV ? -ENOENT : -EIO;
	}
	if ((size_t)n >= sizeof(text)) {
		return -EINVAL;
	}
	return module_selection_parse(text, (size_t)n, mask, out);
}

static uint16_t effective_of(uint16_t defaults, uint32_t record)
{
	uint16_t mask = 0;

	for (unsigned int bit = 0; bit < TOOL_GROUP_COUNT; bit++) {
		enum selection_choice c = module_selection_choice(record, bit);
		bool on = c == SELECTION_ENABLE ||
			  (c == SELECTION_INHERIT && (defaults & (1u << bit)) != 0u);

		mask |= on ? (uint16_t)(1u << bit) : 0u;
	}
	return mask;
}

int module_selection_read(unsigned int id, struct selection_state *out)
{
	char key[32];
	uint32_t v;
	int err;

	memset(out, 0, sizeof(*out));
	if (id >= MODULE_AGENT_IDS) {
		return -ERANGE;
	}
	err = read_number(MASK_KEY, true, &v);
	out->defaults = err == 0 ? (uint16_t)v : (uint16_t)TOOL_GROUPS_ALL;
	out->defaults_invalid = err == -EINVAL;
	agent_key(id, key, sizeof(key));
	if (err != -EIO) {
		err = read_number(key, false, &v);
	}
	out->record = err == 0 ? v : 0u;
	out->record_invalid = err == -EINVAL;
	out->effective = effective_of(out->defaults, out->record);
	if (err == -EIO) {
		/* Unreadable settings: every group off until they can be read (fail closed). */
		out->effective = 0;
		return -EIO;
	}
	return 0;
}

uint16_t module_selection_effective(unsigned int id)
{
	struct selection_state st;

	if (module_selection_read(id, &st) == -ERANGE) {
		(void)module_selection_read(0, &st);
	}
	return st.effective; /* 0 when the settings cannot be read */
}

static int store_number(const char *key, uint32_t v, bool remove, char *why, size_t why_len)
{
	char text[16];
	int n = snprintf(text, sizeof(text), "%u", (unsigned int)v);
	int err = remove ? agent_settings_delete(key) : agent_settings_set(key, text, (size_t)n);

	if (err != 0 && !(remove && err == -ENOENT)) {
		return module_refuse(why, why_len, -EIO, "settings: cannot write %s (error %d)",
				     key, err);
	}
	return 0;
}

int module_selection_set_default(int group, bool on, char *why, size_t why_len)
{
	struct selection_state st;
	uint32_t bits = group == SELECTION_ALL_GROUPS ? TOOL_GROUPS_ALL : (1u << (unsigned)group);
	int err;

	if (group != SELECTION_ALL_GROUPS && (group < 0 || (unsigned int)group >= TOOL_GROUP_COUNT)) {
		return module_refuse(why, why_len, -EINVAL, "no tool group %d", group);
	}
	module_lock();
	if (module_selection_read(0, &st) != 0) {
		module_unlock();
		return module_refuse(why, why_len, -EIO, "settings: cannot read %s; nothing "
				     "changed", MASK_KEY);
	}
	st.defaults = on ? (uint16_t)(st.defaults | bits) : (uint16_t)(st.defaults & ~bits);
	err = store_number(MASK_KEY, st.defaults, false, why, why_len);
	module_unlock();
	if (err == 0) {
		module_tool_status_changed(MODULE_TOOL_STATUS_ALL_AGENTS);
	}
	return err;
}

int module_selection_set_agent(unsigned int id, int group, enum selection_choice choice,
			       char *why, size_t why_len)
{
	struct selection_state st;
	char key[32];
	int err;

	if (id >= MODULE_AGENT_IDS) {
		return module_refuse(why, why_len, -ERANGE, "agent ids are 0..%d",
				     MODULE_AGENT_IDS - 1);
	}
	if (choice == SELECTION_INVALID ||
	    (group != SELECTION_ALL_GROUPS && (group < 0 || (unsigned int)group >= TOOL_GROUP_COUNT))) {
		return module_refuse(why, why_len, -EINVAL, "invalid tool selection");
	}
	module_lock();
	if (module_selection_read(id, &st) != 0) {
		module_unlock();
		return module_refuse(why, why_len, -EIO, "settings: cannot read the tool "
				     "selection of agent %u; nothing changed", id);
	}
	for (unsigned int bit = 0; bit < TOOL_GROUP_COUNT; bit++) {
		if (group == SELECTION_ALL_GROUPS || (unsigned int)group == bit) {
			st.record &= ~(3u << (2u * bit));
			st.record |= (uint32_t)choice << (2u * bit);
		}
	}
	agent_key(id, key, sizeof(key));
	err = store_number(key, st.record, st.record == 0u, why, why_len);
	module_unlock();
	if (err == 0) {
		module_tool_status_changed(id);
	}
	return err;
}

void module_selection_forget(unsigned int id)
{
	char key[32];

	if (id < MODULE_AGENT_IDS) {
		agent_key(id, key, sizeof(key));
		(void)agent_settings_delete(key);
	}
}
