/*
 * The agent's configuration: validation, defaults and persistence in the settings
 * subtree "agent/". The API key is write-only: it is stored in settings and read only
 * by the request path; nothing here returns it.
 */
#ifndef AGENT_CONFIG_H
#define AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum agent_protocol {
	AGENT_PROTOCOL_NONE = 0, /* no endpoint configured */
	AGENT_PROTOCOL_CHAT,     /* Chat Completions */
	AGENT_PROTOCOL_RESPONSES /* Responses API: endpoint path ends with /responses */
};

enum agent_reasoning {
	AGENT_REASONING_NONE = 0,
	AGENT_REASONING_MINIMAL,
	AGENT_REASONING_LOW,
	AGENT_REASONING_MEDIUM,
	AGENT_REASONING_HIGH,
	AGENT_REASONING_XHIGH,
	AGENT_REASONING_MAX,
	AGENT_REASONING_COUNT
};

/* Tool policy; see docs/configuration.md for what each allows. */
enum agent_tools_policy {
	AGENT_TOOLS_OFF = 0,   /* no tool is advertised or executed */
	AGENT_TOOLS_READ_ONLY, /* read tools run; sensitive reads ask; changes are denied */
	AGENT_TOOLS_CONFIRM,   /* read tools run; everything else asks first (default) */
	AGENT_TOOLS_POLICY_COUNT
};

struct agent_config {
	char endpoint[CONFIG_AGENT_ENDPOINT_MAX_LEN + 1];
	char model[CONFIG_AGENT_MODEL_MAX_LEN + 1];
	char user[CONFIG_AGENT_USER_MAX_LEN + 1];
	/* The embedding pass of the memory tools (docs/memory.md): an OpenAI-compatible
	 * /v1/embeddings URL and its model; empty: not configured. The key is the agent's. */
	char embeddings[CONFIG_AGENT_ENDPOINT_MAX_LEN + 1];
	char embeddings_model[CONFIG_AGENT_MODEL_MAX_LEN + 1];
	bool key_set;
	enum agent_reasoning reasoning;
	enum agent_tools_policy tools;
	uint8_t max_tools;
	/* Stored values that failed validation at load and were replaced by defaults. */
	uint8_t invalid_loaded;
};

/* The settings names; every one lives below AGENT_SETTINGS_SUBTREE. */
#define AGENT_SETTINGS_SUBTREE "agent"

/** Fill @p cfg with the defaults, then apply the stored values. */
int agent_config_load(struct agent_config *cfg);

/**
 * Validate and store one field by its command name ("endpoint", "model", "reasoning",
 * "tools", "max-tools", "user", "embeddings", "embeddings-model"). On success @p cfg is updated; on failure nothing is
 * stored, @p cfg is unchanged and @p why points to a reason.
 * Returns 0, -ENOENT for an unknown name, -EINVAL for a bad value, or the settings error.
 */
int agent_config_set(struct agent_config *cfg, const char *name, const char *value,
		     const char **why);

/** Validate and store the API key. */
int agent_config_key_set(struct agent_config *cfg, const char *key, const char **why);
int agent_config_key_clear(struct agent_config *cfg);

/**
 * Copy the stored key into @p buf for the request path. Returns its length, -ENOENT when
 * none is set. The caller wipes @p buf when done.
 */
int agent_config_key_get(char *buf, size_t len);

/** Erase every setting below "agent/" and reset @p cfg to the defaults. */
int agent_config_forget(struct agent_config *cfg);

/** Current value of a field as text, for display; NULL for unknown names and the key. */
const char *agent_config_show(const struct agent_config *cfg, const char *name, char *buf,
			      size_t len);

/** The field names accepted by agent_config_set, NULL-terminated. */
extern const char *const agent_config_names[];

enum agent_protocol agent_config_protocol(const char *endpoint);
const char *agent_protocol_name(enum agent_protocol protocol);
const char *agent_reasoning_name(enum agent_reasoning reasoning);
const char *agent_tools_policy_name(enum agent_tools_policy policy);

/* Validators, exposed for the management group and tests; @p why is set on failure. */
int agent_config_check_endpoint(const char *url, const char **why);
int agent_config_check_model(const char *model, const char **why);
int agent_config_check_key(const char *key, const char **why);
int agent_config_check_user(const char *user, const char **why);
/* The embeddings URL: an endpoint URL; reasons name "embeddings URL". */
int agent_config_check_embeddings(const char *url, const char **why);
int agent_config_parse_reasoning(const char *text, enum agent_reasoning *out, const char **why);
int agent_config_parse_tools(const char *text, enum agent_tools_policy *out, const char **why);
int agent_config_parse_max_tools(const char *text, uint8_t *out, const char **why);

#endif /* AGENT_CONFIG_H */
