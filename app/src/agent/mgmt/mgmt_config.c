/*
 * The configuration commands of the SMP management group (docs/mgmt-group.md): config (0)
 * reads a setting or all of them and writes one through the shell's validators, status (1)
 * adds the tool-call counters and the memory pools to the settings, forget (2) erases them.
 * The key is shown only as "set" or "not set"; a value written passes through one buffer,
 * wiped after use.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <zcbor_encode.h>

#include "agent_config.h"
#include "agent_port.h"
#include "agent_request.h"
#include "agent_session.h"
#include "agent_version.h"
#include "mgmt_internal.h"

/* The longest text value a request may carry into a validator: one byte past the longest
 * value the shell accepts, so that the validator itself refuses it as too long. */
#define MAX2(a, b)  ((a) > (b) ? (a) : (b))
#define VALUE_BYTES (MAX2(MAX2(CONFIG_AGENT_ENDPOINT_MAX_LEN, CONFIG_AGENT_KEY_MAX_LEN),        \
			  MAX2(CONFIG_AGENT_MODEL_MAX_LEN, CONFIG_AGENT_USER_MAX_LEN)) + 2)

static char value_buf[VALUE_BYTES];

/* A text field as a C string for the validators (value_buf); NULs are refused. */
static int field_cstr(const struct field *f, struct refusal *r, const char **out)
{
	size_t n = f->text.len < sizeof(value_buf) - 1 ? f->text.len : sizeof(value_buf) - 1;

	if (memchr(f->text.value, '\0', f->text.len) != NULL) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "%s contains a NUL byte",
					 f->name);
	}
	memcpy(value_buf, f->text.value, n);
	value_buf[n] = '\0';
	*out = value_buf;
	return 0;
}

/* ---- config (0) --------------------------------------------------------------------------- */

static const char *key_state(const struct agent_config *cfg)
{
	return cfg->key_set ? "set" : "not set";
}

static bool put_config_members(zcbor_state_t *zse, const struct agent_config *cfg)
{
	return agent_mgmt_put_str(zse, "endpoint", cfg->endpoint) &&
	       agent_mgmt_put_str(zse, "model", cfg->model) &&
	       agent_mgmt_put_str(zse, "key", key_state(cfg)) &&
	       agent_mgmt_put_str(zse, "reasoning", agent_reasoning_name(cfg->reasoning)) &&
	       agent_mgmt_put_str(zse, "tools", agent_tools_policy_name(cfg->tools)) &&
	       agent_mgmt_put_uint(zse, "max-tools", cfg->max_tools) &&
	       agent_mgmt_put_str(zse, "user", cfg->user) &&
	       agent_mgmt_put_str(zse, "embeddings", cfg->embeddings) &&
	       agent_mgmt_put_str(zse, "embeddings-model", cfg->embeddings_model) &&
	       agent_mgmt_put_str(zse, "protocol",
				  agent_protocol_name(agent_config_protocol(cfg->endpoint)));
}

/* The value shown for @p name, "set"/"not set" for the key; NULL for an unknown name. */
static const char *shown_value(const struct agent_config *cfg, const char *name, char *buf,
			       size_t len)
{
	if (strcmp(name, "key") == 0) {
		return key_state(cfg);
	}
	return agent_config_show(cfg, name, buf, len);
}

int agent_mgmt_config_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "name", .type = FIELD_TSTR}};
	const struct agent_config *cfg = agent_session_config();
	char name[NAME_SHOWN + 1];
	char number[4];
	const char *value;
	int err = agent_mgmt_decode_request(zsd, fields, 1, r);

	if (err != 0) {
		return err;
	}
	if (!fields[0].present) {
		return put_config_members(zse, cfg) ? 0 : -ENOMEM;
	}
	agent_mgmt_quoted(&fields[0].text, name, sizeof(name));
	value = fields[0].text.len <= NAME_SHOWN ? shown_value(cfg, name, number, sizeof(number))
						  : NULL;
	if (value == NULL || memchr(fields[0].text.value, '\0', fields[0].text.len) != NULL) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EUNKNOWN, "unknown setting '%s'", name);
	}
	return agent_mgmt_put_str(zse, "name", name) && agent_mgmt_put_str(zse, "value", value)
		       ? 0
		       : -ENOMEM;
}

int agent_mgmt_config_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {
		{.name = "name", .type = FIELD_TSTR},
		{.name = "value", .type = FIELD_TSTR},
		{.name = "clear", .type = FIELD_BOOL},
	};
	struct agent_config *cfg = agent_session_config();
	char name[NAME_SHOWN + 1];
	char number[4];
	const char *value;
	const char *why = "";
	bool is_key;
	int err = agent_mgmt_decode_request(zsd, fields, 3, r);

	if (err != 0) {
		return err;
	}
	if (!fields[0].present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "name is missing");
	}
	agent_mgmt_quoted(&fields[0].text, name, sizeof(name));
	if (fields[0].text.len > NAME_SHOWN ||
	    memchr(fields[0].text.value, '\0', fields[0].text.len) != NULL ||
	    shown_value(cfg, name, number, sizeof(number)) == NULL) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EUNKNOWN, "unknown setting '%s'", name);
	}
	is_key = strcmp(name, "key") == 0;
	if (fields[1].present && fields[2].present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "give value or clear, not both");
	}
	if (fields[2].present && (!is_key || !fields[2].flag)) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL,
					 is_key ? "clear must be true"
						: "clear is accepted only for key");
	}
	if (!fields[1].present && !fields[2].present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "value is missing");
	}
	if (agent_request_active()) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EBUSY,
					 "a request is running; nothing changed");
	}
	if (fields[2].present) {
		err = agent_config_key_clear(cfg);
		if (err != 0) {
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_EIO,
						 "could not clear the key (error %d)", err);
		}
	} else {
		err = field_cstr(&fields[1], r, &value);
		if (err != 0) {
			return err;
		}
		err = is_key ? agent_config_key_set(cfg, value, &why)
			     : agent_config_set(cfg, name, value, &why);
		agent_wipe(value_buf, sizeof(value_buf));
		if (err == -ENOENT) {
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_EUNKNOWN, "unknown setting '%s'",
						 name);
		}
		if (err == -EINVAL) {
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "%s; %s", why,
						 is_key ? "key unchanged" : "nothing changed");
		}
		if (err != 0) {
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_EIO, "%s (error %d); %s", why,
						 err, is_key ? "key unchanged" : "nothing changed");
		}
	}
	value = shown_value(cfg, name, number, sizeof(number));
	return agent_mgmt_put_str(zse, "name", name) && agent_mgmt_put_str(zse, "value", value)
		       ? 0
		       : -ENOMEM;
}

/* ---- status (1) --------------------------------------------------------------------------- */

static int put_pool(const struct agent_pool_stats *s, void *user_data)
{
	static const char *const class_names[AGENT_MEM_CLASS_COUNT] = {"internal", "psram"};
	zcbor_state_t *zse = user_data;
	bool ok = zcbor_map_start_encode(zse, 9) && agent_mgmt_put_str(zse, "name", s->name) &&
		  agent_mgmt_put_str(zse, "class", class_names[s->mem_class]) &&
		  agent_mgmt_put_uint(zse, "block", (uint32_t)s->block_bytes) &&
		  agent_mgmt_put_uint(zse, "total", s->blocks_total) &&
		  agent_mgmt_put_uint(zse, "free", s->blocks_free) &&
		  agent_mgmt_put_uint(zse, "lowest", s->blocks_free_min) &&
		  agent_mgmt_put_uint(zse, "held_peak", (uint32_t)s->held_peak_bytes) &&
		  agent_mgmt_put_uint(zse, "written_peak", (uint32_t)s->written_peak_bytes) &&
		  agent_mgmt_put_uint(zse, "written_block", (uint32_t)s->written_block_max_bytes) &&
		  zcbor_map_end_encode(zse, 9);

	return ok ? 0 : -ENOMEM;
}

struct pool_walk {
	zcbor_state_t *zse;
	bool failed;
};

static int pool_visit(const struct agent_pool_stats *s, void *user_data)
{
	struct pool_walk *w = user_data;

	if (put_pool(s, w->zse) != 0) {
		w->failed = true;
		return 1;
	}
	return 0;
}

int agent_mgmt_status_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	const struct agent_config *cfg = agent_session_config();
	struct agent_tool_stats ts;
	struct pool_walk walk = {.zse = zse};
	int err = agent_mgmt_decode_request(zsd, NULL, 0, r);
	bool ok;

	if (err != 0) {
		return err;
	}
	agent_tool_stats_get(&ts);
	ok = agent_mgmt_put_str(zse, "version", AGENT_VERSION_STRING) &&
	     agent_mgmt_put_str(zse, "board", agent_board_name()) && put_config_members(zse, cfg) &&
	     zcbor_tstr_put_lit(zse, "tool_calls") && zcbor_map_start_encode(zse, 5) &&
	     agent_mgmt_put_uint(zse, "executed", ts.executed) &&
	     agent_mgmt_put_uint(zse, "denied", ts.denied) &&
	     agent_mgmt_put_uint(zse, "failed", ts.failed) &&
	     agent_mgmt_put_uint(zse, "last_used", ts.last_used) &&
	     agent_mgmt_put_uint(zse, "last_budget", ts.last_budget) &&
	     zcbor_map_end_encode(zse, 5) && zcbor_tstr_put_lit(zse, "pools") &&
	     zcbor_list_start_encode(zse, 16);
	if (ok) {
		agent_pool_foreach(pool_visit, &walk);
		ok = !walk.failed && zcbor_list_end_encode(zse, 16);
	}
	return ok ? 0 : -ENOMEM;
}

/* ---- forget (2) --------------------------------------------------------------------------- */

int agent_mgmt_forget_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	int err = agent_mgmt_decode_request(zsd, NULL, 0, r);

	(void)zse;
	if (err != 0) {
		return err;
	}
	if (agent_request_active()) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EBUSY,
					 "a request is running; nothing changed");
	}
	err = agent_config_forget(agent_session_config());
	if (err != 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EIO,
					 "could not erase the configuration (error %d)", err);
	}
	return 0;
}
