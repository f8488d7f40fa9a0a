/*
 * Agents, roles and skills as a request sees them (module_agents.h, docs/modules.md
 * "Roles and agents", "Skills").
 */
#include "module_agents.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_catalog.h"
#include "module_import.h"
#include "module_internal.h"
#include "module_manifest.h"
#include "module_selection.h"
#include "module_tool_status.h"

static struct module_instructions_report last_report = {.role = -1};

/* The manifest of installed entry @p index (its text is in the arena, parsed again). */
static int manifest_of(int index, struct module_manifest *m)
{
	const struct module_entry *e = module_catalog_entry(index);
	const char *text = module_catalog_text(index);

	if (e == NULL || e->state != MODULE_INSTALLED) {
		return -ENOENT;
	}
	return module_validate(text, e->manifest_len, text + e->manifest_len, e->body_len, NULL,
			       MODULE_KIND_COUNT, m, NULL, 0);
}

static void role_key(unsigned int id, char *key, size_t len)
{
	(void)snprintf(key, len, "agent/role.%u", id);
}

void module_agent_role_setting(unsigned int id, char *buf, size_t len)
{
	char key[32];
	int n;

	role_key(id, key, sizeof(key));
	n = agent_settings_get(key, buf, len - 1u);
	buf[n > 0 ? (size_t)n : 0u] = '\0';
}

bool module_console_agent(void)
{
	int index = module_catalog_find(MODULE_CONDUCTOR, MODULE_INSTALLED);

	return index >= 0 && module_catalog_entry(index)->kind == MODULE_KIND_ROLE;
}

static int role_locked(unsigned int id, bool *assigned)
{
	char name[MODULE_NAME_MAX + 2];
	int index;

	if (id > 0u) {
		module_agent_role_setting(id, name, sizeof(name));
		index = name[0] != '\0' ? module_catalog_find(name, MODULE_INSTALLED) : -ENOENT;
		if (index >= 0 && module_catalog_entry(index)->kind == MODULE_KIND_ROLE) {
			if (assigned != NULL) {
				*assigned = true;
			}
			return index;
		}
	}
	return module_console_agent() ? module_catalog_find(MODULE_CONDUCTOR, MODULE_INSTALLED)
				      : -ENOENT;
}

int module_agent_role(unsigned int id, bool *assigned)
{
	int index;

	if (assigned != NULL) {
		*assigned = false;
	}
	if (id >= MODULE_AGENT_IDS) {
		return -ERANGE;
	}
	module_lock();
	index = role_locked(id, assigned);
	module_unlock();
	return index;
}

int module_agent_set_role(unsigned int id, const char *role, char *why, size_t why_len)
{
	char key[32];
	int index;
	int err;

	if (id == 0u || id >= MODULE_AGENT_IDS) {
		return module_refuse(why, why_len, -ERANGE,
				     "agent %u: ids 1..%d take a role (agent 0 is the conductor)",
				     id, MODULE_AGENT_IDS - 1);
	}
	role_key(id, key, sizeof(key));
	if (strcmp(role, "inherit") == 0) {
		err = agent_settings_delete(key);
		if (err != 0 && err != -ENOENT) {
			return module_refuse(why, why_len, -EIO,
					     "settings: cannot clear %s (error %d)", key, err);
		}
		module_tool_status_changed((int)id);
		return 0;
	}
	module_lock();
	index = module_catalog_find(role, MODULE_INSTALLED);
	if (index >= 0 && module_catalog_entry(index)->kind != MODULE_KIND_ROLE) {
		module_unlock();
		return module_refuse(why, why_len, -EINVAL, "%.40s is a %s, not a role", role,
				     module_kind_name(module_catalog_entry(index)->kind));
	}
	if (index < 0) {
		module_unlock();
		return module_refuse(why, why_len, -ENOENT, "no role named \"%.40s\" is installed",
				     role);
	}
	err = agent_settings_set(key, role, strlen(role));
	module_unlock();
	if (err != 0) {
		return module_refuse(why, why_len, -EIO, "settings: cannot write %s (error %d)",
				     key, err);
	}
	module_tool_status_changed((int)id);
	return 0;
}

void module_agent_forget(unsigned int id)
{
	char key[32];

	if (id > 0u && id < MODULE_AGENT_IDS) {
		role_key(id, key, sizeof(key));
		(void)agent_settings_delete(key);
		module_selection_forget(id);
		module_tool_status_changed((int)id);
	}
}

int module_in_use(int index, char *why, size_t why_len)
{
	const struct module_entry *e = module_catalog_entry(index);
	char name[MODULE_NAME_MAX + 2];

	if (e->kind == MODULE_KIND_ROLE) {
		if (strcmp(e->name, MODULE_CONDUCTOR) == 0) {
			return module_refuse(why, why_len, -EBUSY,
					     "role conductor is in use by the console agent (agent 0)");
		}
		for (unsigned int id = 1; id < MODULE_AGENT_IDS; id++) {
			module_agent_role_setting(id, name, sizeof(name));
			if (strcmp(name, e->name) == 0) {
				return module_refuse(why, why_len, -EBUSY,
						     "role %s is in use by agent %u", e->name, id);
			}
		}
	}
	if (e->kind == MODULE_KIND_TOOL && module_tool_active(e->name)) {
		return module_refuse(why, why_len, -EBUSY,
				     "tool %s is active: a request that offers it is running",
				     e->name);
	}
	return 0;
}

/* ---- Instructions ------------------------------------------------------------------------ */

static bool append(char *buf, size_t len, size_t *at, const char *text, size_t n)
{
	if (*at + n + 1u > len) {
		return false;
	}
	memcpy(buf + *at, text, n);
	*at += n;
	buf[*at] = '\0';
	return true;
}

const char *module_skill_body(const char *name, size_t *len)
{
	int index = module_catalog_find(name, MODULE_INSTALLED);
	const struct module_entry *e;
	const char *body;
	size_t skip;

	if (index < 0 || module_catalog_entry(index)->kind != MODULE_KIND_SKILL) {
		return NULL;
	}
	e = module_catalog_entry(index);
	body = module_catalog_text(index) + e->manifest_len;
	skip = module_front_matter_end(body, e->body_len);
	*len = e->body_len - skip;
	return body + skip;
}

static void add_skills(const struct module_manifest *role, char *buf, size_t len, size_t *at,
		       struct module_instructions_report *rep)
{
	struct module_text item;
	size_t pos = 0;

	while (module_list_next(role->skills, &pos, &item)) {
		char name[MODULE_NAME_MAX + 1];
		char head[MODULE_NAME_MAX + 16];
		const char *body;
		size_t body_len = 0;
		size_t mark = *at;
		int n;

		if (item.len > MODULE_NAME_MAX) {
			rep->skills_missing++;
			continue;
		}
		memcpy(name, item.ptr, item.len);
		name[item.len] = '\0';
		body = module_skill_body(name, &body_len);
		if (body == NULL) {
			rep->skills_missing++;
			continue;
		}
		n = snprintf(head, sizeof(head), "\n\n## Skill %s\n\n", name);
		if (!append(buf, len, at, head, (size_t)n) ||
		    !append(buf, len, at, body, body_len)) {
			*at = mark; /* whole or not at all */
			buf[mark] = '\0';
			rep->skills_omitted++;
			continue;
		}
		rep->skills++;
	}
}

size_t module_instructions(unsigned int id, const char *base, const char *tools_note,
			   char *buf, size_t len, struct module_instructions_report *report)
{
	struct module_instructions_report rep = {.role = -1};
	struct module_manifest m;
	size_t at = 0;
	int role;

	buf[0] = '\0';
	(void)append(buf, len, &at, base, strlen(base));
	if (tools_note != NULL) {
		(void)append(buf, len, &at, " ", 1u);
		(void)append(buf, len, &at, tools_note, strlen(tools_note));
	}
	module_lock();
	role = module_agent_role(id, NULL);
	if (role >= 0 && manifest_of(role, &m) == 0) {
		const struct module_entry *e = module_catalog_entry(role);
		const char *overlay = module_catalog_text(role) + e->manifest_len;
		size_t room;

		rep.role = role;
		memcpy(rep.role_name, e->name, sizeof(rep.role_name));
		(void)append(buf, len, &at, "\n\n", 2u);
		room = len - at - 1u;
		if (e->body_len > room) {
			rep.overlay_cut = true;
		}
		(void)append(buf, len, &at, overlay, e->body_len < room ? e->body_len : room);
		add_skills(&m, buf, len, &at, &rep);
	}
	module_unlock();
	last_report = rep;
	if (report != NULL) {
		*report = rep;
	}
	return at;
}

void module_instructions_last(struct module_instructions_report *out)
{
	*out = last_report;
}

bool module_role_grants(int role, const struct tool_def *def)
{
	struct module_manifest m;
	struct module_text item;
	size_t pos = 0;
	const char *group = tool_group_of(def);
	bool granted = false;

	if (role < 0 || def->groups == 0u) {
		return true;
	}
	module_lock();
	if (manifest_of(role, &m) != 0 || m.kind != MODULE_KIND_ROLE) {
		/* The role was removed or replaced during the request: only the tools every
		 * role has, until the next request reads the new one. */
		module_unlock();
		return false;
	}
	if (m.tools.ptr == NULL) {
		module_unlock();
		return true; /* without a tools key, everything */
	}
	while (!granted && module_list_next(m.tools, &pos, &item)) {
		granted = (item.len == 1u && item.ptr[0] == '*') ||
			  (item.len == strlen(def->name) &&
			   memcmp(item.ptr, def->name, item.len) == 0) ||
			  (group != NULL && item.len == strlen(group) &&
			   memcmp(item.ptr, group, item.len) == 0);
	}
	module_unlock();
	return granted;
}
