/* The tools of one request: policy, bootstrap set, selection and their schemas. */
#include <string.h>

#include "tool_registry.h"
#include "tool_session.h"

static const char *const bootstrap_names[] = {"system_status", "firmware_reference",
					      "tool_search"};

enum tool_disposition tool_policy_disposition(enum agent_tools_policy policy, enum tool_risk risk)
{
	switch (policy) {
	case AGENT_TOOLS_READ_ONLY:
		return risk == TOOL_RISK_READ	     ? TOOL_RUNS
		       : risk == TOOL_RISK_SENSITIVE ? TOOL_ASKS
						     : TOOL_DENIED;
	case AGENT_TOOLS_CONFIRM:
		return risk == TOOL_RISK_READ ? TOOL_RUNS : TOOL_ASKS;
	case AGENT_TOOLS_OFF:
	default:
		return TOOL_DENIED;
	}
}

const char *tool_disposition_name(enum tool_disposition disposition)
{
	switch (disposition) {
	case TOOL_RUNS:
		return "runs";
	case TOOL_ASKS:
		return "asks";
	default:
		return "denied";
	}
}

bool tool_is_bootstrap(const struct tool_def *def)
{
	for (size_t i = 0; i < sizeof(bootstrap_names) / sizeof(bootstrap_names[0]); i++) {
		if (strcmp(def->name, bootstrap_names[i]) == 0) {
			return true;
		}
	}
	return false;
}

bool tool_session_selected(const struct tool_session *s, const struct tool_def *def)
{
	return def->groups != 0u ? (def->groups & s->groups) != 0u : s->groups != 0u;
}

bool tool_session_offerable(const struct tool_session *s, const struct tool_def *def)
{
	return tool_session_selected(s, def) && tool_available(def) && tool_policy_disposition(s->policy, def->risk) != TOOL_DENIED &&
	       (s->granted == NULL || s->granted(s->role, def));
}

void tool_session_init(struct tool_session *s, enum agent_tools_policy policy, const char *prompt)
{
	memset(s, 0, sizeof(*s));
	s->policy = policy;
	s->prompt = prompt;
	s->groups = TOOL_GROUPS_ALL;
}

size_t tool_session_advertised(const struct tool_session *s, const struct tool_def **out,
			       size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < tool_registry_count() && n < max; i++) {
		const struct tool_def *def = tool_registry_get(i);

		if (tool_is_bootstrap(def) && tool_session_offerable(s, def)) {
			out[n++] = def;
		}
	}
	for (size_t i = 0; i < s->selected_count && n < max; i++) {
		if (tool_session_offerable(s, s->selected[i])) {
			out[n++] = s->selected[i];
		}
	}
	return n;
}

bool tool_session_is_advertised(const struct tool_session *s, const struct tool_def *def)
{
	const struct tool_def *list[TOOL_ADVERTISED_MAX];
	size_t n = tool_session_advertised(s, list, TOOL_ADVERTISED_MAX);

	for (size_t i = 0; i < n; i++) {
		if (list[i] == def) {
			return true;
		}
	}
	return false;
}

void tool_session_select(struct tool_session *s, const struct tool_def *const *defs, size_t count)
{
	s->selected_count = 0;
	for (size_t i = 0; i < count && s->selected_count < CONFIG_AGENT_TOOL_DISCOVERED_MAX; i++) {
		s->selected[s->selected_count++] = defs[i];
	}
}

void tool_session_activate(struct tool_session *s, const struct tool_def *def)
{
	for (size_t i = 0; i < s->selected_count; i++) {
		if (s->selected[i] == def) {
			return;
		}
	}
	if (s->selected_count == CONFIG_AGENT_TOOL_DISCOVERED_MAX) {
		s->selected_count--;
	}
	s->selected[s->selected_count++] = def;
}

static const char *json_type(enum tool_param_type type)
{
	switch (type) {
	case TOOL_PARAM_STRING:
		return "string";
	case TOOL_PARAM_INTEGER:
		return "integer";
	case TOOL_PARAM_BOOLEAN:
		return "boolean";
	default:
		return "array";
	}
}

static void write_param(const struct tool_param *p, struct json_writer *w);

static void write_object_schema(const struct tool_param *params, size_t count,
				struct json_writer *w)
{
	jw_object_begin(w);
	jw_key(w, "type");
	jw_string(w, "object");
	jw_key(w, "properties");
	jw_object_begin(w);
	for (size_t i = 0; i < count; i++) {
		jw_key(w, params[i].name);
		write_param(&params[i], w);
	}
	jw_object_end(w);
	jw_key(w, "required");
	jw_array_begin(w);
	for (size_t i = 0; i < count; i++) {
		if (params[i].required) {
			jw_string(w, params[i].name);
		}
	}
	jw_array_end(w);
	jw_key(w, "additionalProperties");
	jw_bool(w, false);
	jw_object_end(w);
}

static void write_item_bounds(const struct tool_param *p, struct json_writer *w)
{
	if (p->min > 0) {
		jw_key(w, "minItems");
		jw_int(w, p->min);
	}
	jw_key(w, "maxItems");
	jw_int(w, p->max);
}

static void write_param(const struct tool_param *p, struct json_writer *w)
{
	jw_object_begin(w);
	jw_key(w, "type");
	jw_string(w, json_type(p->type));
	if (p->description != NULL) {
		jw_key(w, "description");
		tool_write_text(w, p->description);
	}
	switch (p->type) {
	case TOOL_PARAM_STRING:
		if (p->min > 0) {
			jw_key(w, "minLength");
			jw_int(w, p->min);
		}
		jw_key(w, "maxLength");
		jw_int(w, p->max);
		break;
	case TOOL_PARAM_INTEGER:
		jw_key(w, "minimum");
		jw_int(w, p->min);
		jw_key(w, "maximum");
		jw_int(w, p->max);
		break;
	case TOOL_PARAM_STRINGS:
		jw_key(w, "items");
		jw_object_begin(w);
		jw_key(w, "type");
		jw_string(w, "string");
		jw_key(w, "maxLength");
		jw_int(w, p->item_max_len);
		jw_object_end(w);
		write_item_bounds(p, w);
		break;
	case TOOL_PARAM_OBJECTS:
		jw_key(w, "items");
		write_object_schema(p->fields, p->field_count, w);
		write_item_bounds(p, w);
		break;
	default:
		break;
	}
	jw_object_end(w);
}

void tool_write_parameters(const struct tool_def *def, struct json_writer *w)
{
	write_object_schema(def->params, def->param_count, w);
}

void tool_session_write_tools(const struct tool_session *s, enum agent_protocol protocol,
			      struct json_writer *w)
{
	const struct tool_def *list[TOOL_ADVERTISED_MAX];
	size_t n = tool_session_advertised(s, list, TOOL_ADVERTISED_MAX);

	jw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		jw_object_begin(w);
		jw_key(w, "type");
		jw_string(w, "function");
		if (protocol == AGENT_PROTOCOL_CHAT) {
			jw_key(w, "function");
			jw_object_begin(w);
		}
		jw_key(w, "name");
		jw_string(w, list[i]->name);
		jw_key(w, "description");
		tool_write_text(w, list[i]->description);
		jw_key(w, "parameters");
		tool_write_parameters(list[i], w);
		if (protocol == AGENT_PROTOCOL_CHAT) {
			jw_object_end(w);
		} else {
			/* Not strict: strict mode requires every property to be required. */
			jw_key(w, "strict");
			jw_bool(w, false);
		}
		jw_object_end(w);
	}
	jw_array_end(w);
}
