/*
 * The pure parts of an imported device tool (module_tool.h): the manifest's `args` as the
 * tool's parameters, a call's values as argv, the entry's digest check.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_tool.h"
#include "sha256.h"

bool module_tool_data_only(void)
{
#if defined(CONFIG_AGENT_MODULES_DATA_ONLY)
	return true;
#else
	return false;
#endif
}

uint8_t module_tool_params(const struct module_manifest *m,
			   struct tool_param params[MODULE_TOOL_ARGS_MAX],
			   char names[MODULE_TOOL_ARGS_MAX][MODULE_ARG_NAME_MAX + 1])
{
	uint8_t n = m->arg_count <= MODULE_TOOL_ARGS_MAX ? m->arg_count : MODULE_TOOL_ARGS_MAX;

	for (uint8_t i = 0; i < n; i++) {
		const struct module_arg *a = &m->args[i];
		size_t len = a->name.len <= MODULE_ARG_NAME_MAX ? a->name.len : MODULE_ARG_NAME_MAX;
		struct tool_param *p = &params[i];

		memcpy(names[i], a->name.ptr, len);
		names[i][len] = '\0';
		memset(p, 0, sizeof(*p));
		p->name = names[i];
		p->required = true;
		switch (a->type) {
		case MODULE_ARG_INTEGER:
			p->type = TOOL_PARAM_INTEGER;
			p->min = MODULE_TOOL_INTEGER_MIN;
			p->max = MODULE_TOOL_INTEGER_MAX;
			break;
		case MODULE_ARG_BOOLEAN:
			p->type = TOOL_PARAM_BOOLEAN;
			break;
		default:
			p->type = TOOL_PARAM_STRING;
			p->min = 0;
			p->max = MODULE_TOOL_STRING_MAX;
			break;
		}
	}
	return n;
}

int module_tool_argv(const struct tool_param *params, uint8_t count, const struct tool_args *args,
		     char text[MODULE_TOOL_ARGS_MAX][MODULE_TOOL_ARG_TEXT],
		     const char *argv[MODULE_TOOL_ARGS_MAX], char *why, size_t why_len)
{
	for (uint8_t i = 0; i < count && i < MODULE_TOOL_ARGS_MAX; i++) {
		const struct tool_value *v = &args->v[i];

		switch (params[i].type) {
		case TOOL_PARAM_INTEGER:
			(void)snprintf(text[i], MODULE_TOOL_ARG_TEXT, "%lld", (long long)v->integer);
			argv[i] = text[i];
			break;
		case TOOL_PARAM_BOOLEAN:
			argv[i] = v->boolean ? "true" : "false";
			break;
		default:
			if (v->str == NULL || memchr(v->str, '\0', v->len) != NULL) {
				return module_refuse(why, why_len, -EINVAL,
						     "argument %s contains a NUL byte",
						     params[i].name);
			}
			argv[i] = v->str;
			break;
		}
	}
	return 0;
}

static void hex16(const uint8_t *digest, char out[17])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 8; i++) {
		out[2 * i] = digits[digest[i] >> 4];
		out[2 * i + 1] = digits[digest[i] & 0xf];
	}
	out[16] = '\0';
}

int module_tool_digest_check(const char *name, const void *entry, size_t len,
			     const uint8_t recorded[MODULE_DIGEST_LEN], char *why, size_t why_len)
{
	uint8_t now[MODULE_DIGEST_LEN];
	char now_hex[17];
	char recorded_hex[17];

	sha256_digest(entry, len, now);
	if (memcmp(now, recorded, sizeof(now)) == 0) {
		return 0;
	}
	hex16(now, now_hex);
	hex16(recorded, recorded_hex);
	return module_refuse(why, why_len, -EACCES,
			     "tool %s: the entry's SHA-256 %s... is not the %s... recorded at "
			     "import; refused, nothing ran",
			     name, now_hex, recorded_hex);
}
