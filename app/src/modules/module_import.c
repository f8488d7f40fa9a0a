/*
 * The one import operation and removal (module_import.h, docs/modules.md "The import",
 * "Removal"): head, parts, validation, journal, catalog. Boot restores the catalog from the
 * journal (module_restore.c).
 */
#include "module_import.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_agents.h"
#include "module_catalog.h"
#include "module_internal.h"
#include "module_journal.h"
#include "module_tool_status.h"
#include "module_manifest.h"
#include "module_tool.h"
#include "sha256.h"
#include "tool_registry.h"

static struct agent_mutex *lock;

void module_lock(void)
{
	if (lock != NULL) {
		agent_mutex_lock(lock);
	}
}

void module_unlock(void)
{
	if (lock != NULL) {
		agent_mutex_unlock(lock);
	}
}

int module_lock_init(void)
{
	return lock != NULL ? 0 : agent_mutex_init(&lock);
}

/* The installed entries for compaction, in the order they were installed, so that the
 * compacted journal replays into the same order. */
static bool live_entry(void *user, size_t i, struct module_journal_record *rec,
		       const void **manifest, const void **body)
{
	const struct module_entry *e = NULL;
	int k = -ENOENT;
	uint32_t seq = 0;

	(void)user;
	for (size_t n = 0; n <= i; n++) {
		k = module_catalog_next_installed(seq);
		if (k < 0) {
			return false;
		}
		e = module_catalog_entry(k);
		seq = e->seq;
	}
	memset(rec, 0, sizeof(*rec));
	rec->type = MODULE_JOURNAL_IMPORT;
	rec->kind = e->kind;
	memcpy(rec->name, e->name, sizeof(rec->name));
	memcpy(rec->digest, e->digest, sizeof(rec->digest));
	rec->manifest_len = e->manifest_len;
	rec->body_len = e->body_len;
	*manifest = module_catalog_text(k);
	*body = module_catalog_text(k) + e->manifest_len;
	return true;
}

/* Record an accepted import; a full journal is compacted once. 0, -ENODEV (no /lfs: the
 * module is installed but not persisted), or the journal's error. */
static int journal_import(int index)
{
	const struct module_entry *e = module_catalog_entry(index);
	const char *text = module_catalog_text(index);
	struct module_journal_record rec = {
		.type = MODULE_JOURNAL_IMPORT,
		.kind = e->kind,
		.manifest_len = e->manifest_len,
		.body_len = e->body_len,
	};
	int err;

	memcpy(rec.name, e->name, sizeof(rec.name));
	memcpy(rec.digest, e->digest, sizeof(rec.digest));
	err = module_journal_append_import(&rec, text, text + e->manifest_len);
	if (err == -ENOSPC) {
		/* The live entries without the arrival, then the arrival. */
		err = module_journal_compact(live_entry, NULL);
		if (err == 0) {
			err = module_journal_append_import(&rec, text, text + e->manifest_len);
		}
	}
	return err;
}

static void result_name(struct module_import_result *res, const char *name, enum module_kind kind)
{
	(void)snprintf(res->name, sizeof(res->name), "%s", name);
	res->kind = kind;
}

/* The arrival @p index has every byte: validate, journal, install. */
static int finish(int index, struct module_import_result *res, char *why, size_t why_len)
{
	const struct module_entry *e = module_catalog_entry(index);
	const char *text = module_catalog_text(index);
	struct module_manifest m;
	uint8_t digest[MODULE_DIGEST_LEN];
	int installed;
	int err;

	sha256_digest(text, (size_t)e->manifest_len + e->body_len, digest);
	if (memcmp(digest, e->digest, sizeof(digest)) != 0) {
		module_catalog_free(index);
		return module_refuse(why, why_len, -EINVAL,
				     "sha256: the content does not match the import's digest");
	}
	err = module_validate(text, e->manifest_len, text + e->manifest_len, e->body_len,
			      e->name, e->kind, &m, why, why_len);
	if (err != 0) {
		module_catalog_free(index);
		return err;
	}
	installed = module_catalog_find(e->name, MODULE_INSTALLED);
	if (installed >= 0 &&
	    memcmp(module_catalog_entry(installed)->digest, e->digest, MODULE_DIGEST_LEN) == 0) {
		module_catalog_free(index);
		res->outcome = MODULE_IMPORT_UNCHANGED;
		res->persisted = true;
		return 0;
	}
	err = module_tool_admit(index, installed, why, why_len);
	if (err != 0) {
		module_catalog_free(index);
		return err;
	}
	err = journal_import(index);
	if (err != 0 && err != -ENODEV) {
		module_catalog_free(index);
		return module_refuse(why, why_len, err == -ENOSPC ? -ENOSPC : -EIO,
				     "journal: %s (error %d); nothing installed",
				     err == -ENOSPC ? "full even after compaction"
						    : "cannot record the import",
				     err);
	}
	res->persisted = err == 0;
	(void)module_catalog_commit(index);
	res->outcome = installed >= 0 ? MODULE_IMPORT_REPLACED : MODULE_IMPORT_INSTALLED;
	/* The tool of that name now runs the new text (or goes, when the kind changed); the
	 * admission made room, so this fails only for a manifest that no longer parses. */
	(void)module_tool_sync(res->name, NULL, 0);
	module_tool_status_changed(MODULE_TOOL_STATUS_ALL_AGENTS);
	return 0;
}

static bool same_head(const struct module_entry *e, const struct module_import_head *head)
{
	return e->kind == head->kind && e->manifest_len == head->manifest_len &&
	       e->body_len == head->body_len &&
	       memcmp(e->digest, head->digest, MODULE_DIGEST_LEN) == 0;
}

static int begin_locked(const struct module_import_head *head, struct module_import_result *res,
			char *why, size_t why_len)
{
	size_t name_len = head->name != NULL ? strlen(head->name) : 0u;
	uint32_t need = 0;
	uint32_t largest = 0;
	int index;

	memset(res, 0, sizeof(*res));
	if (!module_name_valid(head->name != NULL ? head->name : "", name_len)) {
		return module_refuse(why, why_len, -EINVAL, "name: \"%.40s\" is not a module name",
				     head->name != NULL ? head->name : "");
	}
	result_name(res, head->name, head->kind);
	index = module_catalog_find(head->name, MODULE_INCOMPLETE);
	if (index >= 0 && !same_head(module_catalog_entry(index), head)) {
		/* A new import of that name clears the incomplete arrival, even when this head
		 * is refused: a part sent before the answer never lands in the old one. */
		module_catalog_free(index);
	}
	if (module_kind_name(head->kind) == NULL) {
		return module_refuse(why, why_len, -EINVAL, "kind: not role, skill or tool");
	}
	if (head->kind == MODULE_KIND_TOOL && module_tool_data_only()) {
		/* Refused at the head, before any byte is sent (finish() checks it again). */
		return module_refuse(why, why_len, -EPERM,
				     "tool modules are refused by this build (data-only modules)");
	}
	if (head->manifest_len > CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN) {
		return module_refuse(why, why_len, -E2BIG, "manifest: %u bytes, at most %u",
				     (unsigned int)head->manifest_len,
				     (unsigned int)CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN);
	}
	if (head->manifest_len == 0u && head->kind != MODULE_KIND_SKILL) {
		return module_refuse(why, why_len, -EINVAL,
				     "manifest: missing (only a skill may come as SKILL.md alone)");
	}
	if (head->body_len == 0u) {
		return module_refuse(why, why_len, -EINVAL, "body: empty");
	}
	if ((uint64_t)head->manifest_len + head->body_len > CONFIG_AGENT_CATALOG_BYTES) {
		return module_refuse(why, why_len, -E2BIG, "size: %lu bytes, the catalog holds %u",
				     (unsigned long)head->manifest_len + head->body_len,
				     (unsigned int)CONFIG_AGENT_CATALOG_BYTES);
	}
	index = module_catalog_find(head->name, MODULE_INCOMPLETE);
	if (index >= 0) {
		res->next = module_catalog_entry(index)->received; /* the same arrival: continue */
		return 0;
	}
	index = module_catalog_begin(head->name, head->kind, head->manifest_len, head->body_len,
				     head->digest, &need, &largest);
	if (index == -ENOMEM) {
		return module_refuse(why, why_len, -ENOMEM,
				     "catalog: needs %u contiguous bytes, the largest free run is %u",
				     (unsigned int)need, (unsigned int)largest);
	}
	if (index == -ENOSPC) {
		return module_refuse(why, why_len, -ENOSPC,
				     "catalog: all %d entries are taken (CONFIG_AGENT_MODULE_SLOTS)",
				     CONFIG_AGENT_MODULE_SLOTS);
	}
	if (index < 0) {
		return module_refuse(why, why_len, index, "catalog: cannot take the arrival (error %d)",
				     index);
	}
	res->outcome = MODULE_IMPORT_MORE;
	return 0;
}

int module_import_begin(const struct module_import_head *head, struct module_import_result *res,
			char *why, size_t why_len)
{
	int err;

	module_lock();
	err = begin_locked(head, res, why, why_len);
	module_unlock();
	return err;
}

static int part_locked(const char *name, uint32_t off, const void *data, size_t len,
		       struct module_import_result *res, char *why, size_t why_len)
{
	int index = module_catalog_find(name, MODULE_INCOMPLETE);
	const struct module_entry *e;
	int err;

	memset(res, 0, sizeof(*res));
	if (index < 0) {
		return module_refuse(why, why_len, -ENOENT, "no import of \"%.40s\" is under way",
				     name);
	}
	e = module_catalog_entry(index);
	result_name(res, e->name, e->kind);
	err = module_catalog_write(index, off, data, len);
	if (err != 0) {
		return module_refuse(why, why_len, -EINVAL,
				     "part: %u bytes at offset %u; the arrival has %u of %u bytes",
				     (unsigned int)len, (unsigned int)off,
				     (unsigned int)e->received,
				     (unsigned int)(e->manifest_len + e->body_len));
	}
	res->next = e->received;
	if (e->received < e->manifest_len + e->body_len) {
		res->outcome = MODULE_IMPORT_MORE;
		return 0;
	}
	return finish(index, res, why, why_len);
}

int module_import_part(const char *name, uint32_t off, const void *data, size_t len,
		       struct module_import_result *res, char *why, size_t why_len)
{
	int err;

	module_lock();
	err = part_locked(name, off, data, len, res, why, why_len);
	module_unlock();
	return err;
}

/* The head of a module whose manifest (or, without one, SKILL.md) starts with @p text. */
int module_head_from(const char *manifest, size_t manifest_len, const char *body, size_t body_len,
		     struct module_import_head *head, char *name, char *why, size_t why_len)
{
	struct module_manifest m;
	size_t body_off;
	int err;

	if (manifest_len > 0u) {
		err = module_manifest_parse(manifest, manifest_len, &m, why, why_len);
	} else {
		err = module_skill_md_parse(body, body_len, &m, &body_off, why, why_len);
	}
	if (err != 0) {
		return err;
	}
	memcpy(name, m.name.ptr, m.name.len);
	name[m.name.len] = '\0';
	head->name = name;
	head->kind = m.kind;
	head->manifest_len = (uint32_t)manifest_len;
	head->body_len = (uint32_t)body_len;
	return 0;
}

int module_import_text(const char *manifest, size_t manifest_len, const char *body,
		       size_t body_len, struct module_import_result *res, char *why,
		       size_t why_len)
{
	struct module_import_head head;
	char name[MODULE_NAME_MAX + 1];
	struct sha256 sha;
	int err;

	memset(res, 0, sizeof(*res));
	if (manifest_len > CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN) {
		return module_refuse(why, why_len, -E2BIG, "manifest: %lu bytes, at most %u",
				     (unsigned long)manifest_len,
				     (unsigned int)CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN);
	}
	err = module_head_from(manifest, manifest_len, body, body_len, &head, name, why,
			       why_len);
	if (err != 0) {
		return err;
	}
	sha256_init(&sha);
	sha256_update(&sha, manifest, manifest_len);
	sha256_update(&sha, body, body_len);
	sha256_final(&sha, head.digest);
	module_lock();
	err = begin_locked(&head, res, why, why_len);
	if (err == 0 && manifest_len > 0u) {
		err = part_locked(name, 0, manifest, manifest_len, res, why, why_len);
	}
	if (err == 0) {
		err = part_locked(name, (uint32_t)manifest_len, body, body_len, res, why, why_len);
	}
	if (err != 0) {
		module_import_abort(name); /* nothing of a failed local import stays */
	}
	module_unlock();
	return err;
}

void module_import_abort(const char *name)
{
	int left;

	module_lock();
	left = module_catalog_find(name, MODULE_INCOMPLETE);
	if (left >= 0) {
		module_catalog_free(left);
	}
	module_unlock();
}

/* ---- Removal ------------------------------------------------------------------------------ */

static int remove_locked(const char *name, char *why, size_t why_len)
{
	size_t len = strlen(name);
	int index;
	int err;

	if (!module_name_valid(name, len)) {
		if (tool_registry_find(name) != NULL) {
			return module_refuse(why, why_len, -EPERM,
					     "%.40s is a built-in tool; built-in tools cannot be "
					     "removed",
					     name);
		}
		return module_refuse(why, why_len, -ENOENT, "no module named \"%.40s\"", name);
	}
	index = module_catalog_find(name, MODULE_INSTALLED);
	if (index < 0) {
		const struct tool_def *def = tool_registry_find(name);

		if (module_catalog_find(name, MODULE_INCOMPLETE) >= 0) {
			return module_refuse(why, why_len, -EBUSY,
					     "%s is an incomplete arrival; import it again to "
					     "replace or clear it",
					     name);
		}
		if (def != NULL) {
			return module_refuse(why, why_len, -EPERM,
					     "%s is a built-in tool; built-in tools cannot be "
					     "removed",
					     name);
		}
		return module_refuse(why, why_len, -ENOENT, "no module named \"%s\"", name);
	}
	err = module_in_use(index, why, why_len);
	if (err != 0) {
		return err;
	}
	err = module_journal_append_remove(name);
	if (err == -ENOSPC) {
		/* Compacting without the entry is itself its removal. */
		module_catalog_free(index);
		(void)module_tool_sync(name, NULL, 0);
		module_tool_status_changed(MODULE_TOOL_STATUS_ALL_AGENTS);
		err = module_journal_compact(live_entry, NULL);
		if (err != 0) {
			/* The old journal stands: it still holds the module; so does the catalog
			 * after a reboot. Say so. */
			return module_refuse(why, why_len, -EIO,
					     "journal: cannot record the removal (error %d); "
					     "%s is back after a restart",
					     err, name);
		}
		return 0;
	}
	if (err != 0 && err != -ENODEV) {
		return module_refuse(why, why_len, -EIO,
				     "journal: cannot record the removal (error %d); nothing "
				     "removed",
				     err);
	}
	module_catalog_free(index);
	(void)module_tool_sync(name, NULL, 0); /* an imported tool goes with its module */
	module_tool_status_changed(MODULE_TOOL_STATUS_ALL_AGENTS);
	return 0;
}

int module_remove(const char *name, char *why, size_t why_len)
{
	int err;

	module_lock();
	err = remove_locked(name, why, why_len);
	module_unlock();
	return err;
}
