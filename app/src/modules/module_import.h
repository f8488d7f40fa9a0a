/*
 * The one import operation (docs/modules.md "The import"), reached by every route: the
 * console's `agent import PATH` (module_import_dir()), the management group's IMPORT head
 * and parts (the host's `agent-host import` / `west agent import`), the simulator's
 * --modules directory and the firmware's packaged roles (module_import_text()).
 *
 * An arrival is announced by a head (name, kind, sizes, SHA-256), filled by parts at
 * offsets and, when its last byte arrives, validated (module_validate()), journaled and
 * installed, replacing an installed module of that name at that moment. An arrival that
 * stops midway stays incomplete: it is listed, never used, and a new head of that name
 * clears it (or resumes it when the head is the same). Nothing here executes a path.
 *
 * Every function takes the catalog's lock: routes on different threads (the shell, the
 * management work queue) are serialised.
 */
#ifndef AGENT_MODULE_IMPORT_H
#define AGENT_MODULE_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"

struct module_import_head {
	const char *name;
	enum module_kind kind;
	uint32_t manifest_len; /* 0: the body is a SKILL.md carrying its own header */
	uint32_t body_len;
	uint8_t digest[MODULE_DIGEST_LEN]; /* SHA-256 of the manifest then the body */
};

enum module_import_outcome {
	MODULE_IMPORT_MORE,	 /* the arrival waits for more bytes */
	MODULE_IMPORT_INSTALLED, /* a new module */
	MODULE_IMPORT_REPLACED,	 /* replaced the installed module of that name */
	MODULE_IMPORT_UNCHANGED, /* the same text was installed already: nothing written */
};

struct module_import_result {
	enum module_import_outcome outcome;
	enum module_kind kind;
	char name[MODULE_NAME_MAX + 1];
	uint32_t next;	/* the offset the next part starts at */
	bool persisted; /* recorded in the journal (false without /lfs) */
};

/**
 * Make the lock, restore the catalog from the journal and register skill_use
 * (agent_init()). @p request_active tells whether a request is running (an imported tool
 * it offers is then active and cannot be removed). 0 or an errno.
 */
int module_boot(bool (*request_active)(void));

/**
 * Announce an arrival. 0 with res->next = 0 for a fresh arrival, or = the bytes already
 * received when an incomplete arrival with the same head exists (a resend continues
 * there); a different head of that name clears the old arrival first. Refusals (-EINVAL
 * bad name or kind or sizes, -E2BIG a size over its bound, -ENOMEM no contiguous room: the
 * reason gives the bytes it needs, -ENOSPC no free entry) put one line in @p why.
 */
int module_import_begin(const struct module_import_head *head, struct module_import_result *res,
			char *why, size_t why_len);

/**
 * Bytes @p data at offset @p off of the arrival @p name's text. With the last byte the
 * arrival is validated and installed (res->outcome INSTALLED, REPLACED or UNCHANGED) or
 * refused and dropped (a negative errno, with the reason). -ENOENT when no arrival of that
 * name waits; -EINVAL for a part past its size or after a gap.
 */
int module_import_part(const char *name, uint32_t off, const void *data, size_t len,
		       struct module_import_result *res, char *why, size_t why_len);

/**
 * The whole operation from bytes in memory: head (digest computed here), one part. For
 * the packaged roles and the simulator's --modules.
 */
int module_import_text(const char *manifest, size_t manifest_len, const char *body,
		       size_t body_len, struct module_import_result *res, char *why,
		       size_t why_len);

/**
 * Import the module directory @p path on the device's filesystem: its module.manifest and
 * the body file it names, or its SKILL.md alone. The files are read twice (digest, then
 * the parts); a file changed in between is refused by the digest check.
 */
int module_import_dir(const char *path, struct module_import_result *res, char *why,
		      size_t why_len);

/**
 * Remove the installed module @p name: refused for an unknown name, an incomplete arrival,
 * a role in use, an active tool and a built-in tool (each with its reason); an accepted
 * removal is journaled (REMOVE) before the entry is freed.
 */
int module_remove(const char *name, char *why, size_t why_len);

/** What module_boot() found in the journal, for `agent modules` and the boot lines. */
struct module_boot_report {
	int error;		/* replay's errno, 0 */
	uint32_t restored;	/* modules installed after replay */
	uint32_t records;	/* journal records replayed */
	bool incomplete;	/* an incomplete record was cleared */
	char incomplete_name[MODULE_NAME_MAX + 1];
	uint32_t dropped;	/* complete records that did not fit or validate */
	char dropped_note[MODULE_NAME_MAX + MODULE_REASON_MAX + 3]; /* the last one: NAME: reason */
	uint32_t tools_refused; /* restored tool modules refused (data-only) or not registered */
	char tools_note[MODULE_REASON_MAX + 1]; /* the last one's reason */
};
const struct module_boot_report *module_boot_report(void);

void module_lock(void);
void module_unlock(void);

#endif /* AGENT_MODULE_IMPORT_H */
