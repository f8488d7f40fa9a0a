/*
 * The `agent` command tree: dispatch, `agent status`, `agent forget` and help. The
 * `agent config` family lives in agent_cmd_config.c.
 */
#include "agent_cmd.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent_chat.h"
#include "agent_cmd_internal.h"
#include "conv_store.h"
#include "agent_jobs.h"
#include "agent_mem.h"
#include "agent_print.h"
#include "agent_request.h"
#include "agent_version.h"
#include "provider.h"
#include "reference_sd.h"
#include "module_import.h"
#include "script_runner.h"

/* Why the stored configuration could not be loaded at boot, or 0. */
static int load_error;

int agent_init(void)
{
	int conv_err;

	/* On failure the defaults stay in place and the commands still run: `forget` or a
	 * fresh `config` may be what repairs the store.
	 */
	load_error = agent_config_load(agent_session_config());
	(void)agent_jobs_init(); /* without its lock the registry still works */
	/* Conversations: pick the filesystem and recover interrupted saves (a failure leaves
	 * the chat without storage; agent list says so, and the chat shows each unsaved turn). */
	conv_err = conv_store_init();
	/* The stream path's pools exist from boot, so status shows them before any request. */
	int err = provider_init();

#if defined(CONFIG_AGENT_TOOLS_REFERENCE)
	/* So does the reference pages' block, shared by man (the shell) and firmware_reference
	 * (the worker): made here, before either runs. */
	int ref_err = reference_sd_init();

	if (err == 0) {
		err = ref_err;
	}
#endif
	{
		/* The script runtimes built in: their heaps, guards and tools. */
		int script_err = script_runner_init();

		if (err == 0) {
			err = script_err;
		}
	}
	{
		/* Modules: the catalog restored from the journal, skill_use registered. */
		int module_err = module_boot(agent_request_active);

		if (err == 0) {
			err = module_err;
		}
	}
	(void)conv_err;
	return load_error != 0 ? load_error : err;
}

static int print_pool(const struct agent_pool_stats *s, void *user_data)
{
	static const char *const class_names[AGENT_MEM_CLASS_COUNT] = {"internal", "psram"};

	agent_printf(user_data,
		     "pool:      %-8s %u/%u free (lowest %u), %u B blocks, %s; peak %lu B held, "
		     "%lu B written\n",
		     s->name, (unsigned int)s->blocks_free, (unsigned int)s->blocks_total,
		     (unsigned int)s->blocks_free_min, (unsigned int)s->block_bytes,
		     class_names[s->mem_class], (unsigned long)s->held_peak_bytes,
		     (unsigned long)s->written_peak_bytes);
	return 0;
}

/*
 * The memory lines of `agent status` (agent_mem.h, docs/jobs.md "Memory figures"): requests
 * to the provider, internal RAM now and the lowest seen while a response streamed in, PSRAM
 * now and before and at the completion of the last request, and each class's run-time heap.
 */
static void print_memory(struct agent_console *console)
{
	struct agent_mem_figures mem[AGENT_MEM_CLASS_COUNT];
	struct agent_mem_requests req;
	char lowest[48] = "none yet";
	char last[64] = "none yet";

	agent_mem_read(mem);
	agent_mem_requests_get(&req);
	if (req.streamed) {
		(void)snprintf(lowest, sizeof(lowest), "%lu B",
			       (unsigned long)req.internal_lowest_streaming);
	}
	if (req.last_completed) {
		(void)snprintf(last, sizeof(last), "%lu B before, %lu B at completion",
			       (unsigned long)req.psram_before,
			       (unsigned long)req.psram_at_completion);
	} else if (req.last_known) {
		(void)snprintf(last, sizeof(last), "%lu B before, running",
			       (unsigned long)req.psram_before);
	}
	agent_printf(console, "requests:  %u to the provider\n", (unsigned int)req.requests);
	agent_printf(console,
		     "internal:  %lu B free, largest block %lu B; lowest while streaming: %s\n",
		     (unsigned long)mem[AGENT_MEM_INTERNAL].free_bytes,
		     (unsigned long)mem[AGENT_MEM_INTERNAL].largest_free_bytes, lowest);
	agent_printf(console, "psram:     %lu B free, largest block %lu B; last request: %s\n",
		     (unsigned long)mem[AGENT_MEM_PSRAM].free_bytes,
		     (unsigned long)mem[AGENT_MEM_PSRAM].largest_free_bytes, last);
	for (size_t c = 0; c < AGENT_MEM_CLASS_COUNT; c++) {
		const struct agent_mem_figures *m = &mem[c];
		const char *name = agent_jobs_mem_class_name((enum agent_mem_class)c);

		if (!m->heap_present) {
			agent_printf(console, "heap:      %s none\n", name);
			continue;
		}
		agent_printf(console,
			     "heap:      %s %lu of %lu B free, largest block %lu B, %lu B allocated "
			     "(peak %lu B)\n",
			     name, (unsigned long)m->heap.free_bytes,
			     (unsigned long)m->heap.total_bytes,
			     (unsigned long)m->heap.largest_free_bytes,
			     (unsigned long)m->heap.allocated_bytes,
			     (unsigned long)m->heap.max_allocated_bytes);
	}
}

/*
 * The network line of `agent status`, only on a board with Wi-Fi (the port reports it absent
 * otherwise, as on native_sim, whose sockets are the host's): the station's state, the
 * network and signal when connected, and the address or "no address". An SSID is arbitrary
 * bytes; non-printable ones are shown as '?'.
 */
static void print_network(struct agent_console *console)
{
	static const char *const states[] = {"absent",	   "off",	"disconnected", "scanning",
					     "connecting", "connected", "unknown"};
	struct agent_network_state net;
	char ssid[sizeof(net.sta_ssid)];
	char rssi[24] = "";
	bool named;
	size_t i;
	int err;

	memset(&net, 0, sizeof(net));
	err = agent_network_get(&net);
	if (err != 0) {
		agent_printf(console, "network:   could not be read (error %d)\n", err);
		return;
	}
	if (net.sta_state == AGENT_WIFI_ABSENT) {
		return;
	}
	named = net.sta_state == AGENT_WIFI_CONNECTED && net.sta_ssid[0] != '\0';
	for (i = 0; named && i + 1u < sizeof(ssid) && net.sta_ssid[i] != '\0'; i++) {
		unsigned char c = (unsigned char)net.sta_ssid[i];

		ssid[i] = c >= 0x20u && c < 0x7fu ? (char)c : '?';
	}
	ssid[i] = '\0';
	if (named && net.rssi_known) {
		(void)snprintf(rssi, sizeof(rssi), " (%d dBm)", (int)net.rssi_dbm);
	}
	/* One call, so that the line is not split by output of another thread. */
	agent_printf(console, "network:   wifi %s%s%s%s%s, %s\n",
		     (unsigned int)net.sta_state < sizeof(states) / sizeof(states[0])
			     ? states[net.sta_state]
			     : "unknown",
		     named ? " to \"" : "", ssid, named ? "\"" : "", rssi,
		     net.ip[0] != '\0' ? net.ip : "no address");
}

static int cmd_status(struct agent_console *console, int argc, char **argv)
{
	const struct agent_config *cfg = agent_session_config();
	enum agent_protocol protocol = agent_config_protocol(cfg->endpoint);
	char number[4];

	(void)argv;
	if (argc != 2) {
		agent_error(console, "status takes no arguments");
		return -EINVAL;
	}
	agent_printf(console, "version:   %s on %s\n", AGENT_VERSION_STRING, agent_board_name());
	agent_printf(console, "endpoint:  %s\n",
		     cfg->endpoint[0] != '\0' ? cfg->endpoint : "(not set)");
	agent_printf(console, "protocol:  %s\n", agent_protocol_name(protocol));
	agent_printf(console, "model:     %s\n",
		     cfg->model[0] != '\0' ? cfg->model : "(not set)");
	agent_printf(console, "key:       %s\n", cfg->key_set ? "set" : "not set");
	agent_printf(console, "reasoning: %s\n", agent_reasoning_name(cfg->reasoning));
	agent_printf(console, "tools:     %s\n", agent_tools_policy_name(cfg->tools));
	agent_printf(console, "max-tools: %s\n",
		     agent_config_show(cfg, "max-tools", number, sizeof(number)));
	agent_printf(console, "user:      %s\n", cfg->user);
	print_network(console);
	if (load_error != 0) {
		agent_printf(console, "settings:  could not be loaded at boot (error %d)\n",
			     load_error);
	}
	if (cfg->invalid_loaded != 0) {
		agent_printf(console, "settings:  %u stored value(s) were invalid; defaults used\n",
			     (unsigned int)cfg->invalid_loaded);
	}
	struct agent_tool_stats ts;

	agent_tool_stats_get(&ts);
	agent_printf(console, "tool calls: %u executed, %u denied, %u failed\n",
		     (unsigned int)ts.executed, (unsigned int)ts.denied, (unsigned int)ts.failed);
	if (ts.last_budget > 0) {
		agent_printf(console, "last request: %u of %u tool calls used\n",
			     (unsigned int)ts.last_used, (unsigned int)ts.last_budget);
	} else {
		agent_puts(console, "last request: none yet\n");
	}
	agent_cmd_modules_status(console);
	print_memory(console);
	agent_pool_foreach(print_pool, console);
	size_t stack_used;
	size_t stack_size;

	/* Only where the port measures it (the firmware on a real or emulated MCU). */
	if (agent_thread_stack_peak(&stack_used, &stack_size) == 0) {
		agent_printf(console, "stack:     worker peak %u of %u B\n", (unsigned int)stack_used,
			     (unsigned int)stack_size);
	}
	return 0;
}

static int cmd_forget(struct agent_console *console, int argc, char **argv)
{
	(void)argv;
	if (argc != 2) {
		agent_error(console, "forget takes no arguments");
		return -EINVAL;
	}
	int err = agent_config_forget(agent_session_config());

	if (err != 0) {
		agent_error(console, "could not erase the configuration (error %d)", err);
		return err;
	}
	agent_puts(console, "agent configuration erased\n");
	return 0;
}

static int cmd_new(struct agent_console *console, int argc, char **argv)
{
	(void)argv;
	if (argc != 2) {
		agent_error(console, "new takes no arguments");
		return -EINVAL;
	}
	return agent_chat_new(console);
}

static int cmd_list(struct agent_console *console, int argc, char **argv)
{
	(void)argv;
	if (argc != 2) {
		agent_error(console, "list takes no arguments");
		return -EINVAL;
	}
	return agent_chat_list(console);
}

static int cmd_resume(struct agent_console *console, int argc, char **argv)
{
	if (argc != 3) {
		agent_error(console, "usage: agent resume SLOT");
		return -EINVAL;
	}
	return agent_chat_resume(console, argv[2]);
}

static int cmd_delete(struct agent_console *console, int argc, char **argv)
{
	if (argc != 3) {
		agent_error(console, "usage: agent delete SLOT");
		return -EINVAL;
	}
	return agent_chat_delete(console, argv[2]);
}

static const struct agent_subcmd subcmds[] = {
	{"new", "new", "start a new conversation in the full-screen chat (as bare agent)",
	 cmd_new},
	{"list", "list", "list the stored conversations", cmd_list},
	{"resume", "resume SLOT", "continue a stored conversation", cmd_resume},
	{"delete", "delete SLOT", "delete a stored conversation", cmd_delete},
	{"ask", "ask PROMPT", "one request to the provider, answer streamed, nothing stored",
	 agent_cmd_ask_exec},
	{"script", "script LANG -c SRC|PATH",
	 "run a python or lua source string or file (output, then status)",
	 agent_cmd_script_exec},
	{"config", "config NAME [VALUE]", "show or change a setting", agent_cmd_config_exec},
	{"status", "status", "show the configuration, tool activity and memory", cmd_status},
	{"tools", "tools", "list the tools: domain, risk, availability, policy", agent_cmd_tools_exec},
	{"forget", "forget", "erase every agent setting, the key included", cmd_forget},
	{"import", "import PATH", "import a role, skill or tool module directory", agent_cmd_import_exec},
	{"remove", "remove NAME", "remove an installed module", agent_cmd_remove_exec},
	{"modules", "modules", "list the catalog: kind, size, digest, state", agent_cmd_modules_exec},
	{"skills", "skills", "list the installed skills", agent_cmd_skills_exec},
	{"ID", "ID role [NAME|inherit]", "show or set the role of agent ID (0: console agent)",
	 agent_cmd_id_exec},
	{"ID", "ID tools [NAME on|off|inherit]", "show or set agent ID's tool selection",
	 agent_cmd_id_exec},
};

#define SUBCMD_COUNT (sizeof(subcmds) / sizeof(subcmds[0]))

static void print_help(struct agent_console *console)
{
	agent_puts(console, "agent - LLM agent; bare `agent` opens a new chat\nSubcommands:\n");
	for (size_t i = 0; i < SUBCMD_COUNT; i++) {
		agent_printf(console, "  %-22s %s\n", subcmds[i].usage, subcmds[i].help);
	}
}

int agent_cmd_exec(struct agent_console *console, int argc, char **argv)
{
	if (argc < 2) {
		return agent_chat_new(console); /* bare `agent`: always a new conversation */
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0) {
		print_help(console);
		return 1;
	}
	if (argv[1][0] >= '0' && argv[1][0] <= '9') {
		return agent_cmd_id_exec(console, argc, argv);
	}
	for (size_t i = 0; i < SUBCMD_COUNT; i++) {
		if (strcmp(argv[1], subcmds[i].name) == 0) {
			return subcmds[i].run(console, argc, argv);
		}
	}
	agent_error(console, "unknown subcommand '%.32s'; try 'agent help'", argv[1]);
	return -EINVAL;
}
