/*
 * Boot: the catalog restored from the journal (docs/modules.md "The journal", "What a
 * restore does"). Each IMPORT record's text goes straight into a catalog arrival and is
 * validated again before it is installed; a REMOVE frees the entry; an incomplete record
 * is cleared by the journal and reported here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_catalog.h"
#include "module_host.h"
#include "module_import.h"
#include "module_internal.h"
#include "module_journal.h"
#include "module_manifest.h"
#include "module_tool.h"
#include "module_tool_status.h"
#include "module_tools.h"

static struct module_boot_report report AGENT_PSRAM_ATTR;
static bool (*request_active_fn)(void);
static int replay_index = -1;

static void *import_begin(void *user, const struct module_journal_record *rec)
{
	uint32_t need;
	uint32_t largest;

	(void)user;
	replay_index = module_catalog_begin(rec->name, rec->kind, rec->manifest_len,
					    rec->body_len, rec->digest, &need, &largest);
	if (replay_index < 0) {
		report.dropped++;
		return NULL;
	}
	return module_catalog_arrival_buffer(replay_index);
}

static void import_end(void *user, const struct module_journal_record *rec, bool ok)
{
	const struct module_entry *e;
	const char *text;
	struct module_manifest m;
	char why[MODULE_REASON_MAX + 1];

	(void)user;
	(void)rec;
	if (replay_index < 0) {
		return;
	}
	e = module_catalog_entry(replay_index);
	text = module_catalog_text(replay_index);
	if (!ok || module_validate(text, e->manifest_len, text + e->manifest_len, e->body_len,
				   e->name, e->kind, &m, why, sizeof(why)) != 0) {
		if (ok) {
			report.dropped++; /* complete, but not valid in this build */
			(void)snprintf(report.dropped_note, sizeof(report.dropped_note), "%s: %s",
				       e->name, why);
		}
		module_catalog_free(replay_index);
	} else if (e->kind == MODULE_KIND_TOOL && module_tool_data_only()) {
		/* A journal written by a build that accepts tool modules. */
		report.tools_refused++;
		(void)snprintf(report.tools_note, sizeof(report.tools_note),
			       "tool %s was refused at boot: tool modules are refused by this "
			       "build (data-only modules)",
			       e->name);
		module_catalog_free(replay_index);
	} else {
		(void)module_catalog_commit(replay_index);
	}
	replay_index = -1;
}

static void remove_record(void *user, const struct module_journal_record *rec)
{
	int index = module_catalog_find(rec->name, MODULE_INSTALLED);

	(void)user;
	if (index >= 0) {
		module_catalog_free(index);
	}
}

static const struct module_journal_replay_ops replay_ops = {
	.import_begin = import_begin,
	.import_end = import_end,
	.remove = remove_record,
};

int module_boot(bool (*request_active)(void))
{
	struct module_journal_report jr;
	/* skill_use first: a restored tool module cannot take a built-in tool's name. */
	int tool_err = module_tools_register();
	int err;

	request_active_fn = request_active;
	(void)module_lock_init();
	(void)module_host_init();
	module_lock();
	module_tool_reset();
	module_catalog_reset();
	memset(&report, 0, sizeof(report));
	memset(&jr, 0, sizeof(jr));
	err = module_journal_replay(&replay_ops, NULL, &jr);
	report.error = err == -ENODEV ? 0 : err;
	report.records = jr.records;
	report.incomplete = jr.incomplete;
	memcpy(report.incomplete_name, jr.incomplete_name, sizeof(report.incomplete_name));
	for (int i = 0; i < CONFIG_AGENT_MODULE_SLOTS; i++) {
		const struct module_entry *e = module_catalog_entry(i);
		char why[MODULE_REASON_MAX + 1];

		if (e->state != MODULE_INSTALLED) {
			continue;
		}
		report.restored++;
		/* Each restored tool module becomes a tool again (no request runs yet). */
		if (e->kind == MODULE_KIND_TOOL && module_tool_sync(e->name, why, sizeof(why)) != 0) {
			report.tools_refused++;
			(void)snprintf(report.tools_note, sizeof(report.tools_note), "%s", why);
		}
	}
	module_unlock();
	if (err == 0 || err == -ENODEV) {
		err = tool_err;
	}
	/* The boot's tool status stream starts with the restored catalog's tools. */
	module_tool_status_init();
	return err;
}

const struct module_boot_report *module_boot_report(void)
{
	return &report;
}

bool module_tool_active(const char *name)
{
	/* A running request's tool session holds pointers to the imported tools' definitions
	 * and may call any of them: while any request runs, each tool module counts as active
	 * (module_tool_admit() refuses its replacement, module_in_use() its removal). */
	(void)name;
	return request_active_fn != NULL && request_active_fn();
}
