/*
 * Boot: the catalog restored from the journal (docs/modules.md "The journal", "What a
 * restore does"). Each IMPORT record's text goes straight into a catalog arrival and is
 * validated again before it is installed; a REMOVE frees the entry; an incomplete record
 * is cleared by the journal and reported here.
 */
#include <errno.h>
#include <string.h>

#include "module_catalog.h"
#include "module_host.h"
#include "module_import.h"
#include "module_internal.h"
#include "module_journal.h"
#include "module_manifest.h"
#include "module_tool_status.h"
#include "module_tools.h"

static struct module_boot_report report;
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

	(void)user;
	(void)rec;
	if (replay_index < 0) {
		return;
	}
	e = module_catalog_entry(replay_index);
	text = module_catalog_text(replay_index);
	if (!ok || module_validate(text, e->manifest_len, text + e->manifest_len, e->body_len,
				   e->name, e->kind, &m, NULL, 0) != 0) {
		if (ok) {
			report.dropped++; /* complete, but not valid in this build */
		}
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
	int err;

	request_active_fn = request_active;
	(void)module_lock_init();
	(void)module_host_init();
	module_lock();
	module_catalog_reset();
	memset(&report, 0, sizeof(report));
	memset(&jr, 0, sizeof(jr));
	err = module_journal_replay(&replay_ops, NULL, &jr);
	report.error = err == -ENODEV ? 0 : err;
	report.records = jr.records;
	report.incomplete = jr.incomplete;
	memcpy(report.incomplete_name, jr.incomplete_name, sizeof(report.incomplete_name));
	for (int i = 0; i < CONFIG_AGENT_MODULE_SLOTS; i++) {
		if (module_catalog_entry(i)->state == MODULE_INSTALLED) {
			report.restored++;
		}
	}
	module_unlock();
	{
		int tool_err = module_tools_register();

		if (err == 0 || err == -ENODEV) {
			err = tool_err;
		}
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
	/* Imported tools are offered by every request whose role grants them (issue 15 adds
	 * their execution); while any request runs, each tool module counts as active. */
	(void)name;
	return request_active_fn != NULL && request_active_fn();
}
