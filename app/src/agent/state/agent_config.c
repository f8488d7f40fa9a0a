#include "agent_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_port.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

#define KEY_SETTING "agent/key"

/* Every value must fit one settings record. */
_Static_assert(CONFIG_AGENT_ENDPOINT_MAX_LEN <= AGENT_SETTINGS_VALUE_MAX, "endpoint too long");
_Static_assert(CONFIG_AGENT_MODEL_MAX_LEN <= AGENT_SETTINGS_VALUE_MAX, "model too long");
_Static_assert(CONFIG_AGENT_KEY_MAX_LEN <= AGENT_SETTINGS_VALUE_MAX, "key too long");
_Static_assert(CONFIG_AGENT_USER_MAX_LEN <= AGENT_SETTINGS_VALUE_MAX, "user too long");

static const char *const reasoning_names[AGENT_REASONING_COUNT] = {
	"none", "minimal", "low", "medium", "high", "xhigh", "max",
};

static const char *const tools_names[AGENT_TOOLS_POLICY_COUNT] = {
	"off",
	"read-only",
	"confirm",
};

typedef int (*field_parse_fn)(struct agent_config *cfg, const char *value, const char **why);

struct field {
	const char *name;    /* as typed after `agent config` */
	const char *setting; /* settings key */
	field_parse_fn parse;
};

static bool is_lower_alpha_eq(const char *text, const char *lower, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		if (c != lower[i]) {
			return false;
		}
	}
	return true;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Visible ASCII without the space. */
static bool is_token_char(char c)
{
	return c > 0x20 && c < 0x7f;
}

static int check_host(const char *host, size_t len, const char **why)
{
	size_t i = 0;

	if (host[0] == '[') {
		for (i = 1; i < len && host[i] != ']'; i++) {
			if (!is_hex(host[i]) && host[i] != ':' && host[i] != '.') {
				*why = "endpoint has a malformed IPv6 address";
				return -EINVAL;
			}
		}
		if (i >= len || i == 1) {
			*why = "endpoint has a malformed IPv6 address";
			return -EINVAL;
		}
		i++;
	} else {
		bool named = false;

		while (i < len && host[i] != ':') {
			named = named || is_alnum(host[i]);
			if (!is_alnum(host[i]) && host[i] != '-' && host[i] != '.' &&
			    host[i] != '_') {
				*why = "endpoint host may only contain letters, digits, '-', '.' and "
				       "'_'";
				return -EINVAL;
			}
			i++;
		}
		if (i == 0) {
			*why = "endpoint has no host";
			return -EINVAL;
		}
		if (!named) {
			*why = "endpoint host needs a letter or a digit";
			return -EINVAL;
		}
	}
	if (i == len) {
		return 0;
	}
	if (host[i] != ':') {
		*why = "endpoint has a malformed IPv6 address";
		return -EINVAL;
	}
	i++;
	if (i == len || len - i > 5) {
		*why = "endpoint port must be a number from 1 to 65535";
		return -EINVAL;
	}
	unsigned long port = 0;

	for (; i < len; i++) {
		if (!is_digit(host[i])) {
			*why = "endpoint port must be a number from 1 to 65535";
			return -EINVAL;
		}
		port = port * 10 + (unsigned long)(host[i] - '0');
	}
	if (port == 0 || port > 65535) {
		*why = "endpoint port must be a number from 1 to 65535";
		return -EINVAL;
	}
	return 0;
}

int agent_config_check_endpoint(const char *url, const char **why)
{
	size_t len = strlen(url);
	size_t scheme_len;

	if (len == 0) {
		*why = "endpoint is empty";
		return -EINVAL;
	}
	if (len > CONFIG_AGENT_ENDPOINT_MAX_LEN) {
		*why = "endpoint is too long (at most " STR(CONFIG_AGENT_ENDPOINT_MAX_LEN) " bytes)";
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		if (!is_token_char(url[i])) {
			*why = "endpoint contains a space or a control character";
			return -EINVAL;
		}
		if (strchr("\"<>\\^`{|}", url[i]) != NULL) {
			*why = "endpoint contains a character that is not allowed in a URL";
			return -EINVAL;
		}
	}
	if (len >= 8 && is_lower_alpha_eq(url, "https://", 8)) {
		scheme_len = 8;
	} else if (len >= 7 && is_lower_alpha_eq(url, "http://", 7)) {
		scheme_len = 7;
	} else {
		*why = "endpoint must be a complete http:// or https:// URL";
		return -EINVAL;
	}

	const char *authority = url + scheme_len;
	size_t authority_len = strcspn(authority, "/?#");

	if (authority_len == 0) {
		*why = "endpoint has no host";
		return -EINVAL;
	}
	if (memchr(authority, '@', authority_len) != NULL) {
		*why = "endpoint must not contain credentials; use agent config key";
		return -EINVAL;
	}
	int err = check_host(authority, authority_len, why);

	if (err != 0) {
		return err;
	}

	const char *path = authority + authority_len;

	if (path[0] != '/' || path[1] == '\0' || path[1] == '?') {
		*why = "endpoint needs the complete path, such as /v1/chat/completions or "
		       "/v1/responses";
		return -EINVAL;
	}
	if (strchr(path, '#') != NULL) {
		*why = "endpoint must not contain a fragment (#)";
		return -EINVAL;
	}
	return 0;
}

enum agent_protocol agent_config_protocol(const char *endpoint)
{
	static const char suffix[] = "/responses";
	size_t path_len;

	if (endpoint == NULL || endpoint[0] == '\0') {
		return AGENT_PROTOCOL_NONE;
	}
	path_len = strcspn(endpoint, "?#");
	if (path_len >= sizeof(suffix) - 1 &&
	    memcmp(endpoint + path_len - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1) == 0) {
		return AGENT_PROTOCOL_RESPONSES;
	}
	return AGENT_PROTOCOL_CHAT;
}

const char *agent_protocol_name(enum agent_protocol protocol)
{
	switch (protocol) {
	case AGENT_PROTOCOL_CHAT:
		return "chat-completions";
	case AGENT_PROTOCOL_RESPONSES:
		return "responses";
	default:
		return "none";
	}
}

static int check_token(const char *value, size_t max_len, const char *empty_why,
		       const char *long_why, const char *char_why, const char **why)
{
	size_t len = strlen(value);

	if (len == 0) {
		*why = empty_why;
		return -EINVAL;
	}
	if (len > max_len) {
		*why = long_why;
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		if (!is_token_char(value[i])) {
			*why = char_why;
			return -EINVAL;
		}
	}
	return 0;
}

int agent_config_check_model(const char *model, const char **why)
{
	return check_token(model, CONFIG_AGENT_MODEL_MAX_LEN, "model is empty",
			   "model is too long (at most " STR(CONFIG_AGENT_MODEL_MAX_LEN) " bytes)",
			   "model contains a space or a control character", why);
}

int agent_config_check_key(const char *key, const char **why)
{
	return check_token(key, CONFIG_AGENT_KEY_MAX_LEN, "key is empty",
			   "key is too long (at most " STR(CONFIG_AGENT_KEY_MAX_LEN) " bytes)",
			   "key contains a space or a control character", why);
}

int agent_config_check_user(const char *user, const char **why)
{
	static const char char_why[] = "user may only contain letters, digits, '-', '.' and '_'";
	int err = check_token(user, CONFIG_AGENT_USER_MAX_LEN, "user is empty",
			      "user is too long (at most " STR(CONFIG_AGENT_USER_MAX_LEN) " bytes)",
			      char_why, why);

	if (err != 0) {
		return err;
	}
	for (const char *c = user; *c != '\0'; c++) {
		if (!is_alnum(*c) && *c != '-' && *c != '.' && *c != '_') {
			*why = char_why;
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_name(const char *text, const char *const *names, int count, int *out)
{
	for (int i = 0; i < count; i++) {
		if (strcmp(text, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

int agent_config_parse_reasoning(const char *text, enum agent_reasoning *out, const char **why)
{
	int index;

	if (parse_name(text, reasoning_names, AGENT_REASONING_COUNT, &index) != 0) {
		*why = "reasoning must be one of: none minimal low medium high xhigh max";
		return -EINVAL;
	}
	*out = (enum agent_reasoning)index;
	return 0;
}

int agent_config_parse_tools(const char *text, enum agent_tools_policy *out, const char **why)
{
	int index;

	if (parse_name(text, tools_names, AGENT_TOOLS_POLICY_COUNT, &index) != 0) {
		*why = "tools must be one of: off read-only confirm";
		return -EINVAL;
	}
	*out = (enum agent_tools_policy)index;
	return 0;
}

int agent_config_parse_max_tools(const char *text, uint8_t *out, const char **why)
{
	unsigned int value = 0;
	size_t len = strlen(text);

	/* Three digits at most: enough for "032" and no room for overflow. */
	if (len == 0 || len > 3) {
		goto bad;
	}
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(text[i])) {
			goto bad;
		}
		value = value * 10 + (unsigned int)(text[i] - '0');
	}
	if (value < 1 || value > CONFIG_AGENT_MAX_TOOLS_LIMIT) {
		goto bad;
	}
	*out = (uint8_t)value;
	return 0;
bad:
	*why = "max-tools must be a whole number from 1 to " STR(CONFIG_AGENT_MAX_TOOLS_LIMIT);
	return -EINVAL;
}

const char *agent_reasoning_name(enum agent_reasoning reasoning)
{
	return reasoning < AGENT_REASONING_COUNT ? reasoning_names[reasoning] : "?";
}

const char *agent_tools_policy_name(enum agent_tools_policy policy)
{
	return policy < AGENT_TOOLS_POLICY_COUNT ? tools_names[policy] : "?";
}

static int parse_endpoint(struct agent_config *cfg, const char *value, const char **why)
{
	int err = agent_config_check_endpoint(value, why);

	if (err == 0) {
		strcpy(cfg->endpoint, value);
	}
	return err;
}

static int parse_model(struct agent_config *cfg, const char *value, const char **why)
{
	int err = agent_config_check_model(value, why);

	if (err == 0) {
		strcpy(cfg->model, value);
	}
	return err;
}

static int parse_user(struct agent_config *cfg, const char *value, const char **why)
{
	int err = agent_config_check_user(value, why);

	if (err == 0) {
		strcpy(cfg->user, value);
	}
	return err;
}

/* The endpoint's reasons, reworded for the embeddings URL (every one starts "endpoint"). */
int agent_config_check_embeddings(const char *url, const char **why)
{
	static const char prefix[] = "endpoint";
	static char reworded[128];
	int err = agent_config_check_endpoint(url, why);

	if (err == 0) {
		return 0;
	}
	if (strncmp(*why, "endpoint needs the complete path", 32) == 0) {
		*why = "embeddings URL needs the complete path, such as /v1/embeddings";
	} else if (strncmp(*why, prefix, sizeof(prefix) - 1) == 0) {
		snprintf(reworded, sizeof(reworded), "embeddings URL%s",
			 *why + sizeof(prefix) - 1);
		*why = reworded;
	}
	return err;
}

static int parse_embeddings(struct agent_config *cfg, const char *value, const char **why)
{
	int err = agent_config_check_embeddings(value, why);

	if (err == 0) {
		strcpy(cfg->embeddings, value);
	}
	return err;
}

static int parse_embeddings_model(struct agent_config *cfg, const char *value,
				  const char **why)
{
	int err = check_token(value, CONFIG_AGENT_MODEL_MAX_LEN, "embeddings-model is empty",
			      "embeddings-model is too long (at most " STR(
				      CONFIG_AGENT_MODEL_MAX_LEN) " bytes)",
			      "embeddings-model contains a space or a control character", why);

	if (err == 0) {
		strcpy(cfg->embeddings_model, value);
	}
	return err;
}

static int parse_reasoning(struct agent_config *cfg, const char *value, const char **why)
{
	return agent_config_parse_reasoning(value, &cfg->reasoning, why);
}

static int parse_tools(struct agent_config *cfg, const char *value, const char **why)
{
	return agent_config_parse_tools(value, &cfg->tools, why);
}

static int parse_max_tools(struct agent_config *cfg, const char *value, const char **why)
{
	return agent_config_parse_max_tools(value, &cfg->max_tools, why);
}

static const struct field fields[] = {
	{"endpoint", "agent/endpoint", parse_endpoint},
	{"model", "agent/model", parse_model},
	{"reasoning", "agent/reasoning", parse_reasoning},
	{"tools", "agent/tools", parse_tools},
	{"max-tools", "agent/max_tools", parse_max_tools},
	{"user", "agent/user", parse_user},
	{"embeddings", "agent/embeddings", parse_embeddings},
	{"embeddings-model", "agent/embeddings_model", parse_embeddings_model},
};

#define FIELD_COUNT (sizeof(fields) / sizeof(fields[0]))

const char *const agent_config_names[] = {
	"endpoint", "model", "reasoning", "tools", "max-tools", "user", "embeddings",
	"embeddings-model", NULL,
};

static const struct field *field_find(const char *name)
{
	for (size_t i = 0; i < FIELD_COUNT; i++) {
		if (strcmp(fields[i].name, name) == 0) {
			return &fields[i];
		}
	}
	return NULL;
}

static void config_defaults(struct agent_config *cfg)
{
	const char *why;

	memset(cfg, 0, sizeof(*cfg));
	cfg->max_tools = CONFIG_AGENT_MAX_TOOLS_DEFAULT;
	if (agent_config_parse_reasoning(CONFIG_AGENT_REASONING_DEFAULT, &cfg->reasoning, &why) !=
	    0) {
		cfg->reasoning = AGENT_REASONING_MEDIUM;
	}
	if (agent_config_parse_tools(CONFIG_AGENT_TOOLS_POLICY_DEFAULT, &cfg->tools, &why) != 0) {
		cfg->tools = AGENT_TOOLS_CONFIRM;
	}
	if (agent_config_check_user(CONFIG_AGENT_USER_DEFAULT, &why) == 0) {
		strcpy(cfg->user, CONFIG_AGENT_USER_DEFAULT);
	} else {
		strcpy(cfg->user, "user");
	}
}

int agent_config_load(struct agent_config *cfg)
{
	char value[AGENT_SETTINGS_VALUE_MAX + 1];
	const char *why;
	int len;

	config_defaults(cfg);
	for (size_t i = 0; i < FIELD_COUNT; i++) {
		len = agent_settings_get(fields[i].setting, value, sizeof(value) - 1);
		if (len == -ENOENT) {
			continue;
		}
		if (len < 0) {
			return len;
		}
		if ((size_t)len >= sizeof(value) || memchr(value, '\0', (size_t)len) != NULL) {
			cfg->invalid_loaded++;
			continue;
		}
		value[len] = '\0';
		if (fields[i].parse(cfg, value, &why) != 0) {
			cfg->invalid_loaded++;
		}
	}
	len = agent_settings_get(KEY_SETTING, value, 0);
	cfg->key_set = len > 0;
	return len == -ENOENT || len >= 0 ? 0 : len;
}

const char *agent_config_show(const struct agent_config *cfg, const char *name, char *buf,
			      size_t len)
{
	if (strcmp(name, "endpoint") == 0) {
		return cfg->endpoint;
	}
	if (strcmp(name, "model") == 0) {
		return cfg->model;
	}
	if (strcmp(name, "user") == 0) {
		return cfg->user;
	}
	if (strcmp(name, "embeddings") == 0) {
		return cfg->embeddings;
	}
	if (strcmp(name, "embeddings-model") == 0) {
		return cfg->embeddings_model;
	}
	if (strcmp(name, "reasoning") == 0) {
		return agent_reasoning_name(cfg->reasoning);
	}
	if (strcmp(name, "tools") == 0) {
		return agent_tools_policy_name(cfg->tools);
	}
	if (strcmp(name, "max-tools") == 0) {
		snprintf(buf, len, "%u", (unsigned int)cfg->max_tools);
		return buf;
	}
	return NULL;
}

int agent_config_set(struct agent_config *cfg, const char *name, const char *value,
		     const char **why)
{
	const struct field *field = field_find(name);
	struct agent_config next;
	char number[4];
	const char *canonical;
	int err;

	if (field == NULL) {
		*why = "unknown setting";
		return -ENOENT;
	}
	next = *cfg;
	err = field->parse(&next, value, why);
	if (err != 0) {
		return err;
	}
	/* Store the canonical form ("016" is stored as "16"). */
	canonical = agent_config_show(&next, name, number, sizeof(number));
	err = agent_settings_set(field->setting, canonical, strlen(canonical));
	if (err != 0) {
		*why = "could not save the setting";
		return err;
	}
	*cfg = next;
	return 0;
}

int agent_config_key_set(struct agent_config *cfg, const char *key, const char **why)
{
	int err = agent_config_check_key(key, why);

	if (err != 0) {
		return err;
	}
	err = agent_settings_set(KEY_SETTING, key, strlen(key));
	if (err != 0) {
		*why = "could not save the key";
		return err;
	}
	cfg->key_set = true;
	return 0;
}

int agent_config_key_clear(struct agent_config *cfg)
{
	int err = agent_settings_delete(KEY_SETTING);

	if (err == 0) {
		cfg->key_set = false;
	}
	return err;
}

int agent_config_key_get(char *buf, size_t len)
{
	int n = agent_settings_get(KEY_SETTING, buf, len);

	if (n >= 0 && (size_t)n >= len) {
		return -E2BIG;
	}
	if (n >= 0) {
		buf[n] = '\0';
	}
	return n;
}

struct first_key {
	char name[AGENT_SETTINGS_KEY_MAX + 1];
	bool found;
};

static int remember_first(const char *key, size_t value_len, void *user_data)
{
	struct first_key *first = user_data;

	(void)value_len;
	if (strlen(key) >= sizeof(first->name)) {
		return 0;
	}
	strcpy(first->name, key);
	first->found = true;
	return 1;
}

/* Upper bound on keys erased by one forget, so a failing backend cannot loop forever. */
#define FORGET_MAX_KEYS 256

int agent_config_forget(struct agent_config *cfg)
{
	struct first_key first;
	int err;

	/* Collect one name, then delete it outside the walk: deleting inside is not safe. */
	for (int i = 0; i < FORGET_MAX_KEYS; i++) {
		first.found = false;
		err = agent_settings_foreach(AGENT_SETTINGS_SUBTREE, remember_first, &first);
		if (err < 0) {
			return err;
		}
		if (!first.found) {
			config_defaults(cfg);
			return 0;
		}
		err = agent_settings_delete(first.name);
		if (err != 0) {
			return err;
		}
	}
	return -EIO;
}
