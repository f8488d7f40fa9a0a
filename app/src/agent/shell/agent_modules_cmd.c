/*
 * The module commands of the console (docs/modules.md): `agent import PATH`, `agent remove
 * NAME`, `agent modules`, `agent skills` and `agent ID role [NAME|inherit]`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_cmd.h"
#include "agent_cmd_internal.h"
#include "agent_print.h"
#include "agent_request.h"
#include "conv_store.h"
#include "module_agents.h"
#include "module_catalog.h"
#include "module_import.h"
#include "module_journal.h"
#include "module_manifest.h"
#include "sha256.h"
#include "storage_path.h"

static const char *outcome_name(enum module_import_outcome outcome)
{
	switch (outcome) {
	case MODULE_IMPORT_INSTALLED:
		return "installed";
	case MODULE_IMPORT_REPLACED:
		return "replaced the installed one";
	case MODULE_IMPORT_UNCHANGED:
		return "unchanged: the same text was installed";
	default:
		return "incomplete";
	}
}

static void print_import(struct agent_console *console, int err,
			const struct module_import_result *res, const char *why)
{
	if (err != 0) {
		agent_printf(console, "import: %s%srefused: %s\n", res->name,
			     res->name[0] != '\0' ? " " : "", why);
		return;
	}
	agent_printf(console, "import: %s %s accepted (%s)%s\n", module_kind_name(res->kind),
		     res->name, outcome_name(res->outcome),
		     res->persisted ? "" : "; not journaled: no /lfs, lost at restart");
}

int agent_cmd_import_exec(struct agent_console *console, int argc, char **argv)
{
	struct tool_ctx ctx = {.cwd = STORAGE_DEFAULT_CWD};
	struct module_import_result res = {0};
	char path[STORAGE_PATH_MAX + 1];
	char why[MODULE_REASON_MAX + 1] = "";
	int err;

	if (argc != 3) {
		agent_error(console, "usage: agent import PATH");
		return -EINVAL;
	}
	if (storage_path_resolve(&ctx, argv[2], strlen(argv[2]), path) != 0) {
		agent_printf(console, "import: refused: %s\n", ctx.error);
		return -EINVAL;
	}
	err = module_import_dir(path, &res, why, sizeof(why));
	print_import(console, err, &res, why);
	return err;
}

int agent_cmd_remove_exec(struct agent_console *console, int argc, char **argv)
{
	char why[MODULE_REASON_MAX + 1] = "";
	int err;

	if (argc != 3) {
		agent_error(console, "usage: agent remove NAME");
		return -EINVAL;
	}
	err = module_remove(argv[2], why, sizeof(why));
	if (err != 0) {
		agent_printf(console, "remove: %.40s refused: %s\n", argv[2], why);
		return err;
	}
	agent_printf(console, "remove: %s removed\n", argv[2]);
	return 0;
}

static void print_boot(struct agent_console *console)
{
	const struct module_boot_report *boot = module_boot_report();

	if (boot->error != 0) {
		agent_printf(console, "journal: could not be replayed at boot (error %d)\n",
			     boot->error);
	}
	agent_printf(console, "journal: %ld bytes; at boot %u records restored %u modules\n",
		     (long)(module_journal_size() > 0 ? module_journal_size() : 0),
		     (unsigned int)boot->records, (unsigned int)boot->restored);
	if (boot->incomplete) {
		agent_printf(console, "journal: an incomplete import%s%s was cleared at boot\n",
			     boot->incomplete_name[0] != '\0' ? " of " : "",
			     boot->incomplete_name);
	}
	if (boot->dropped > 0u) {
		agent_printf(console, "journal: %u recorded modules did not fit or validate%s%s\n",
			     (unsigned int)boot->dropped, boot->dropped_note[0] != '\0' ? "; " : "",
			     boot->dropped_note);
	}
	if (boot->tools_refused > 0u) {
		agent_printf(console, "journal: %u tool modules not restored as tools; %s\n",
			     (unsigned int)boot->tools_refused, boot->tools_note);
	}
}

int agent_cmd_modules_exec(struct agent_console *console, int argc, char **argv)
{
	struct module_catalog_stats st;

	(void)argv;
	if (argc != 2) {
		agent_error(console, "modules takes no arguments");
		return -EINVAL;
	}
	agent_printf(console, "%-20s %-5s %-6s %-16s %s\n", "name", "kind", "bytes", "sha256",
		     "state");
	module_lock();
	for (int i = 0; i < CONFIG_AGENT_MODULE_SLOTS; i++) {
		const struct module_entry *e = module_catalog_entry(i);
		char hex[SHA256_HEX_LEN + 1];

		if (e->state == MODULE_FREE) {
			continue;
		}
		sha256_hex(e->digest, hex);
		hex[16] = '\0';
		if (e->state == MODULE_INCOMPLETE) {
			agent_printf(console, "%-20s %-5s %-6u %-16s incomplete (%u of %u bytes)\n",
				     e->name, module_kind_name(e->kind),
				     (unsigned int)(e->manifest_len + e->body_len), hex,
				     (unsigned int)e->received,
				     (unsigned int)(e->manifest_len + e->body_len));
		} else {
			agent_printf(console, "%-20s %-5s %-6u %-16s installed\n", e->name,
				     module_kind_name(e->kind),
				     (unsigned int)(e->manifest_len + e->body_len), hex);
		}
	}
	module_catalog_stats(&st);
	module_unlock();
	agent_printf(console, "catalog: %u of %d entries, %u of %d bytes used, largest free run %u\n",
		     (unsigned int)st.entries, CONFIG_AGENT_MODULE_SLOTS,
		     (unsigned int)st.used_bytes, CONFIG_AGENT_CATALOG_BYTES,
		     (unsigned int)st.largest_free);
	print_boot(console);
	return 0;
}

int agent_cmd_skills_exec(struct agent_console *console, int argc, char **argv)
{
	unsigned int count = 0;

	(void)argv;
	if (argc != 2) {
		agent_error(console, "skills takes no arguments");
		return -EINVAL;
	}
	module_lock();
	for (int i = 0; i < CONFIG_AGENT_MODULE_SLOTS; i++) {
		const struct module_entry *e = module_catalog_entry(i);
		const char *text = module_catalog_text(i);
		struct module_manifest m;
		size_t body_len = 0;

		if (e->state != MODULE_INSTALLED || e->kind != MODULE_KIND_SKILL ||
		    module_validate(text, e->manifest_len, text + e->manifest_len, e->body_len, NULL,
				    MODULE_KIND_COUNT, &m, NULL, 0) != 0) {
			continue;
		}
		if (count++ == 0u) {
			agent_printf(console, "%-20s %-6s %s\n", "name", "bytes", "description");
		}
		(void)module_skill_body(e->name, &body_len);
		agent_printf(console, "%-20s %-6u %.*s\n", e->name, (unsigned int)body_len,
			     (int)m.description.len, m.description.ptr);
	}
	module_unlock();
	if (count == 0u) {
		agent_puts(console, "no skills installed; agent import DIR installs one\n");
	}
	return 0;
}

int agent_cmd_agent_exists(struct agent_console *console, unsigned int id)
{
	struct conv_summary s;

	if (id > 0u && id < MODULE_AGENT_IDS && conv_store_summary((uint8_t)id, &s) != 0) {
		agent_error(console, "agent %u: slot %u holds no conversation", id, id);
		return -ENOENT;
	}
	return 0;
}

/* `agent ID role [NAME|inherit]`. */
static int role_cmd(struct agent_console *console, unsigned int id, int argc, char **argv)
{
	char why[MODULE_REASON_MAX + 1] = "";
	bool assigned = false;
	int role;
	int err;

	if (argc == 3) {
		role = module_agent_role(id, &assigned);
		if (role < 0) {
			agent_printf(console, "agent %u: no role (the conductor is not installed)\n",
				     id);
			return 0;
		}
		agent_printf(console, "agent %u: role %s (%s)\n", id,
			     module_catalog_entry(role)->name,
			     id == 0u ? "the console agent" : assigned ? "set" : "inherited from agent 0");
		return 0;
	}
	if (argc != 4) {
		agent_error(console, "usage: agent ID role [NAME|inherit]");
		return -EINVAL;
	}
	if (agent_cmd_agent_exists(console, id) != 0) {
		return -ENOENT;
	}
	if (agent_request_active()) {
		agent_error(console, "a request is running; try again when it ends");
		return -EBUSY;
	}
	err = module_agent_set_role(id, argv[3], why, sizeof(why));
	if (err != 0) {
		agent_error(console, "%s", why);
		return err;
	}
	return role_cmd(console, id, 3, argv);
}

int agent_cmd_id_exec(struct agent_console *console, int argc, char **argv)
{
	char *end = NULL;
	unsigned long id = strtoul(argv[1], &end, 10);

	if (end == argv[1] || *end != '\0' || argv[1][0] == '-' || argv[1][0] == '+' ||
	    id >= MODULE_AGENT_IDS) {
		agent_error(console, "agent ids are 0..%d", MODULE_AGENT_IDS - 1);
		return -ERANGE;
	}
	if (argc >= 3 && strcmp(argv[2], "role") == 0) {
		return role_cmd(console, (unsigned int)id, argc, argv);
	}
	if (argc >= 3 && strcmp(argv[2], "tools") == 0) {
		return agent_cmd_tools_select(console, (unsigned int)id, argc, argv);
	}
	agent_error(console, "usage: agent ID role [NAME|inherit] | agent ID tools [NAME|all "
			     "on|off|inherit]");
	return -EINVAL;
}

void agent_cmd_modules_status(struct agent_console *console)
{
	struct module_instructions_report last;
	struct module_catalog_stats st;
	int role;

	module_lock();
	role = module_agent_role(0, NULL);
	module_catalog_stats(&st);
	module_unlock();
	if (role >= 0) {
		agent_printf(console, "agent 0:   the console agent, role %s\n",
			     module_catalog_entry(role)->name);
	} else {
		agent_puts(console, "agent 0:   no console agent (the conductor role is not installed)\n");
	}
	agent_printf(console, "modules:   %u catalog entries, %u of %d bytes\n",
		     (unsigned int)st.entries, (unsigned int)st.used_bytes,
		     CONFIG_AGENT_CATALOG_BYTES);
	module_instructions_last(&last);
	if (last.role >= 0) {
		agent_printf(console,
			     "instructions: last request had role %s, %u skills (%u not installed, "
			     "%u left out for room)%s\n",
			     last.role_name,
			     (unsigned int)last.skills, (unsigned int)last.skills_missing,
			     (unsigned int)last.skills_omitted,
			     last.overlay_cut ? "; the overlay was cut" : "");
	}
}

size_t agent_modules_boot_line(char *buf, size_t len)
{
	const struct module_boot_report *boot = module_boot_report();
	int n;

	if (boot->error != 0) {
		n = snprintf(buf, len, "modules: the journal could not be replayed (error %d)",
			     boot->error);
	} else {
		n = snprintf(buf, len, "modules: journal replayed, %u modules from %u records%s%s%s",
			     (unsigned int)boot->restored, (unsigned int)boot->records,
			     boot->incomplete ? "; an incomplete import" : "",
			     boot->incomplete && boot->incomplete_name[0] != '\0' ? " of " : "",
			     boot->incomplete ? boot->incomplete_name : "");
		if (n > 0 && boot->incomplete && (size_t)n < len) {
			n += snprintf(buf + n, len - (size_t)n, " was cleared");
		}
		if (n > 0 && boot->tools_refused > 0u && (size_t)n < len) {
			n += snprintf(buf + n, len - (size_t)n, "; %s", boot->tools_note);
		}
	}
	return n < 0 ? 0u : (size_t)n < len ? (size_t)n : len - 1u;
}
