/* The shared words of the module machinery (module.h). */
#include "module.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const kind_names[MODULE_KIND_COUNT] = {"role", "skill", "tool"};

const char *module_kind_name(enum module_kind kind)
{
	return (unsigned int)kind < MODULE_KIND_COUNT ? kind_names[kind] : NULL;
}

int module_kind_parse(const char *name, size_t len, enum module_kind *kind)
{
	for (unsigned int i = 0; i < MODULE_KIND_COUNT; i++) {
		if (strlen(kind_names[i]) == len && memcmp(kind_names[i], name, len) == 0) {
			*kind = (enum module_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *module_state_name(enum module_state state)
{
	switch (state) {
	case MODULE_INCOMPLETE:
		return "incomplete";
	case MODULE_INSTALLED:
		return "installed";
	default:
		return "free";
	}
}

bool module_name_valid(const char *name, size_t len)
{
	if (len == 0u || len > MODULE_NAME_MAX || name[0] < 'a' || name[0] > 'z') {
		return false;
	}
	for (size_t i = 1; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
			return false;
		}
	}
	return true;
}

int module_refuse(char *why, size_t why_len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && why_len > 0u) {
		va_start(ap, fmt);
		(void)vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}
