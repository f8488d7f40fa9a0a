#include "settings_names.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "agent_port.h"

static bool name_char_ok(char c)
{
	return c > ' ' && c <= '~' && c != '=';
}

/* Length of @p name up to @p max + 1, without reading past the terminator. */
static size_t bounded_len(const char *name, size_t max)
{
	size_t len = 0;

	while (len <= max && name[len] != '\0') {
		len++;
	}
	return len;
}

static int checked_len(const char *name, size_t len)
{
	if (len > AGENT_SETTINGS_KEY_MAX) {
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		if (!name_char_ok(name[i])) {
			return -EINVAL;
		}
	}
	return (int)len;
}

int agent_settings_key_len(const char *key)
{
	if (key == NULL || key[0] == '\0') {
		return -EINVAL;
	}
	return checked_len(key, bounded_len(key, AGENT_SETTINGS_KEY_MAX));
}

int agent_settings_subtree_len(const char *subtree)
{
	size_t len;

	if (subtree == NULL) {
		return 0;
	}
	len = bounded_len(subtree, AGENT_SETTINGS_KEY_MAX + 1u);
	while (len > 0u && subtree[len - 1u] == '/') {
		len--;
	}
	return checked_len(subtree, len);
}

bool agent_settings_path_in_store(const char *path, const char *store_path)
{
	if (path == NULL || store_path == NULL || store_path[0] == '\0') {
		return false;
	}
	return strncmp(path, store_path, strlen(store_path)) == 0;
}
