/*
 * Settings store of the Zephyr port, over Zephyr's settings subsystem. prj.conf selects the
 * file backend at CONFIG_SETTINGS_FILE_PATH ("/lfs/.settings"), on the LittleFS volume the
 * fstab mounts before main(); the simulator keeps its own file at the same path (in its own
 * format, docs/sim-settings-file.md).
 *
 * Reads go through settings_load_subtree_direct(), which calls back for the stored keys
 * without involving any registered handler. agent_settings_foreach() collects the names
 * first and calls the visitor afterwards, outside the settings walk, so that a visitor never
 * runs inside the backend's load loop.
 *
 * Errors, as in the POSIX port: -EINVAL for a bad key (empty, longer than
 * AGENT_SETTINGS_KEY_MAX, or holding a byte outside printable ASCII, a space or '='), -E2BIG
 * for a value longer than AGENT_SETTINGS_VALUE_MAX, -ENODEV before zephyr_settings_init()
 * succeeded, -EBUSY for a change attempted from inside an agent_settings_foreach() visitor,
 * and Zephyr's own codes as they come. A zero-length value deletes the key: that is what
 * settings_delete() is in Zephyr (settings_save_one(name, NULL, 0)).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>

#include <zephyr/kernel.h>
#include <zephyr/settings/settings.h>

#include "agent_port.h"
#include "settings_names.h"
#include "zephyr_port.h"

_Static_assert(AGENT_SETTINGS_KEY_MAX < SETTINGS_MAX_NAME_LEN,
	       "agent keys must fit Zephyr's settings names");

struct get_ctx {
	void *buf;
	size_t len;
	int ret; /* value length, -ENOENT until found, or a read error */
};

struct collected {
	char key[AGENT_SETTINGS_KEY_MAX + 1];
	size_t value_len;
};

struct collect_ctx {
	const char *subtree; /* NULL: every key */
	size_t sub_len;
	size_t count;
	bool overflow;
};

/* Recursive for its owner, so a visitor may call agent_settings_get() on the same thread. */
K_MUTEX_DEFINE(agent_port_settings_lock);
static bool settings_ready;
static unsigned int visit_depth;
static struct collected collected[ZEPHYR_PORT_SETTINGS_FOREACH_MAX];

/* strnlen() is POSIX, not C11; this keeps the port to the C library the core may use. */
static size_t bounded_len(const char *s, size_t max)
{
	size_t len = 0;

	while (len < max && s[len] != '\0') {
		len++;
	}
	return len;
}

int zephyr_settings_init(void)
{
	int err = settings_subsys_init();

	(void)k_mutex_lock(&agent_port_settings_lock, K_FOREVER);
	settings_ready = err == 0;
	(void)k_mutex_unlock(&agent_port_settings_lock);
	return err;
}

/* Called for @p key and every key below it; only the exact match (name_key NULL) counts. */
static int get_cb(const char *name_key, size_t len, settings_read_cb read_cb, void *cb_arg,
		  void *param)
{
	struct get_ctx *ctx = param;

	if (name_key != NULL || len == 0u) {
		/* A deeper key, or a deletion record: not the value asked for. */
		return 0;
	}
	if (ctx->buf != NULL && ctx->len > 0u) {
		size_t want = len < ctx->len ? len : ctx->len;
		ssize_t got = read_cb(cb_arg, ctx->buf, want);

		if (got < 0) {
			ctx->ret = (int)got;
			return 1;
		}
		if ((size_t)got != want) {
			ctx->ret = -EIO;
			return 1;
		}
	}
	ctx->ret = (int)len;
	return 1;
}

int agent_settings_get(const char *key, void *buf, size_t len)
{
	struct get_ctx ctx = {.buf = buf, .len = len, .ret = -ENOENT};
	int err = agent_settings_key_len(key);

	if (err < 0) {
		return err;
	}
	if (buf == NULL && len > 0u) {
		return -EINVAL;
	}
	(void)k_mutex_lock(&agent_port_settings_lock, K_FOREVER);
	if (!settings_ready) {
		err = -ENODEV;
	} else {
		err = settings_load_subtree_direct(key, get_cb, &ctx);
	}
	(void)k_mutex_unlock(&agent_port_settings_lock);
	return err != 0 ? err : ctx.ret;
}

static int change(const char *key, const void *value, size_t len)
{
	int err = agent_settings_key_len(key);

	if (err < 0) {
		return err;
	}
	if (value == NULL && len > 0u) {
		return -EINVAL;
	}
	if (len > AGENT_SETTINGS_VALUE_MAX) {
		return -E2BIG;
	}
	(void)k_mutex_lock(&agent_port_settings_lock, K_FOREVER);
	if (!settings_ready) {
		err = -ENODEV;
	} else if (visit_depth > 0u) {
		err = -EBUSY;
	} else if (len == 0u) {
		err = settings_delete(key);
	} else {
		err = settings_save_one(key, value, len);
	}
	(void)k_mutex_unlock(&agent_port_settings_lock);
	return err;
}

int agent_settings_set(const char *key, const void *value, size_t len)
{
	return change(key, value, len);
}

int agent_settings_delete(const char *key)
{
	return change(key, NULL, 0);
}

/*
 * With a subtree, @p name_key is relative to it (NULL for the subtree key itself, which is
 * not "below" it and is skipped); without one it is the full name.
 */
static int collect_cb(const char *name_key, size_t len, settings_read_cb read_cb, void *cb_arg,
		      void *param)
{
	struct collect_ctx *ctx = param;
	struct collected *out;
	size_t rel_len;
	size_t full_len;

	(void)read_cb;
	(void)cb_arg;
	if (name_key == NULL || len == 0u) {
		return 0;
	}
	rel_len = bounded_len(name_key, AGENT_SETTINGS_KEY_MAX + 1u);
	full_len = ctx->subtree != NULL ? ctx->sub_len + 1u + rel_len : rel_len;
	if (rel_len == 0u || full_len > AGENT_SETTINGS_KEY_MAX) {
		/* Not a key this port could have written; other subsystems may have such names. */
		return 0;
	}
	if (ctx->count == ZEPHYR_PORT_SETTINGS_FOREACH_MAX) {
		ctx->overflow = true;
		return 0;
	}
	out = &collected[ctx->count++];
	if (ctx->subtree != NULL) {
		memcpy(out->key, ctx->subtree, ctx->sub_len);
		out->key[ctx->sub_len] = '/';
		memcpy(out->key + ctx->sub_len + 1u, name_key, rel_len);
	} else {
		memcpy(out->key, name_key, rel_len);
	}
	out->key[full_len] = '\0';
	out->value_len = len;
	return 0;
}

int agent_settings_foreach(const char *subtree, agent_settings_visit_fn fn, void *user_data)
{
	char sub[AGENT_SETTINGS_KEY_MAX + 1];
	struct collect_ctx ctx = {0};
	int err;

	if (fn == NULL) {
		return -EINVAL;
	}
	err = agent_settings_subtree_len(subtree);
	if (err < 0) {
		return err;
	}
	if (err > 0) {
		ctx.sub_len = (size_t)err;
		memcpy(sub, subtree, ctx.sub_len);
		sub[ctx.sub_len] = '\0';
		ctx.subtree = sub;
	}

	(void)k_mutex_lock(&agent_port_settings_lock, K_FOREVER);
	if (!settings_ready) {
		(void)k_mutex_unlock(&agent_port_settings_lock);
		return -ENODEV;
	}
	if (visit_depth > 0u) {
		/* The collected names live in one static table; a nested walk would overwrite it. */
		(void)k_mutex_unlock(&agent_port_settings_lock);
		return -EBUSY;
	}
	err = settings_load_subtree_direct(ctx.subtree, collect_cb, &ctx);
	if (err == 0) {
		visit_depth++;
		for (size_t i = 0; i < ctx.count; i++) {
			if (fn(collected[i].key, collected[i].value_len, user_data) != 0) {
				ctx.overflow = false; /* stopped by the visitor: nothing was missed */
				break;
			}
		}
		visit_depth--;
		if (ctx.overflow) {
			/* The first ZEPHYR_PORT_SETTINGS_FOREACH_MAX keys were visited, not all. */
			err = -ENOSPC;
		}
	}
	(void)k_mutex_unlock(&agent_port_settings_lock);
	return err;
}

bool agent_settings_is_store_path(const char *path)
{
#if defined(CONFIG_SETTINGS_FILE)
	/* The file backend's file and the names it writes beside it while compacting. */
	return agent_settings_path_in_store(path, CONFIG_SETTINGS_FILE_PATH);
#else
	(void)path;
	return false; /* NVS and ZMS keep no file */
#endif
}
