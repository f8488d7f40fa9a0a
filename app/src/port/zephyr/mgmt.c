/*
 * The agent's SMP management group on Zephyr: registers the portable handlers
 * (app/src/agent/mgmt/mgmt_group.c and the mgmt_*.c it dispatches to) with MCUmgr as group 64.
 * MCUmgr opens the response map and closes it; a handler's MCUmgr error code becomes
 * MCUmgr's {"rc": N}; group errors go through smp_add_cmd_err(), so SMP version 1 clients
 * get them translated. The transport is the shell's (CONFIG_MCUMGR_TRANSPORT_SHELL): frames
 * on the console UART between shell output. Every API and symbol here is listed in
 * docs/zephyr-port.md with where it was checked.
 */
#if defined(CONFIG_MCUMGR)

#include <zephyr/kernel.h>
#include <zephyr/mgmt/mcumgr/mgmt/handlers.h>
#include <zephyr/mgmt/mcumgr/mgmt/mgmt.h>
#include <zephyr/mgmt/mcumgr/smp/smp.h>

#include <zcbor_common.h>

#include "mgmt_group.h"

#define AGENT_HANDLER(name, cmd, write)                                                        \
	static int name(struct smp_streamer *ctxt)                                            \
	{                                                                                      \
		return agent_mgmt_run(cmd, write, ctxt->reader->zs, ctxt->writer->zs);         \
	}

AGENT_HANDLER(config_read, AGENT_MGMT_CMD_CONFIG, false)
AGENT_HANDLER(config_write, AGENT_MGMT_CMD_CONFIG, true)
AGENT_HANDLER(status_read, AGENT_MGMT_CMD_STATUS, false)
AGENT_HANDLER(forget_write, AGENT_MGMT_CMD_FORGET, true)
AGENT_HANDLER(conversations_read, AGENT_MGMT_CMD_CONVERSATIONS, false)
AGENT_HANDLER(export_read, AGENT_MGMT_CMD_EXPORT, false)
AGENT_HANDLER(delete_write, AGENT_MGMT_CMD_DELETE, true)
AGENT_HANDLER(tools_read, AGENT_MGMT_CMD_TOOLS, false)
AGENT_HANDLER(man_write, AGENT_MGMT_CMD_MAN, true)
AGENT_HANDLER(import_write, AGENT_MGMT_CMD_IMPORT, true)
AGENT_HANDLER(part_write, AGENT_MGMT_CMD_PART, true)
AGENT_HANDLER(modules_read, AGENT_MGMT_CMD_MODULES, false)
AGENT_HANDLER(remove_write, AGENT_MGMT_CMD_REMOVE, true)
AGENT_HANDLER(feed_read, AGENT_MGMT_CMD_FEED, false)
AGENT_HANDLER(result_write, AGENT_MGMT_CMD_RESULT, true)
AGENT_HANDLER(tool_status_read, AGENT_MGMT_CMD_TOOL_STATUS, false)
AGENT_HANDLER(tool_select_write, AGENT_MGMT_CMD_TOOL_STATUS, true)

static const struct mgmt_handler agent_handlers[AGENT_MGMT_CMD_COUNT] = {
	[AGENT_MGMT_CMD_CONFIG] = {.mh_read = config_read, .mh_write = config_write},
	[AGENT_MGMT_CMD_STATUS] = {.mh_read = status_read},
	[AGENT_MGMT_CMD_FORGET] = {.mh_write = forget_write},
	[AGENT_MGMT_CMD_CONVERSATIONS] = {.mh_read = conversations_read},
	[AGENT_MGMT_CMD_EXPORT] = {.mh_read = export_read},
	[AGENT_MGMT_CMD_DELETE] = {.mh_write = delete_write},
	[AGENT_MGMT_CMD_TOOLS] = {.mh_read = tools_read},
	[AGENT_MGMT_CMD_MAN] = {.mh_write = man_write},
	[AGENT_MGMT_CMD_IMPORT] = {.mh_write = import_write},
	[AGENT_MGMT_CMD_PART] = {.mh_write = part_write},
	[AGENT_MGMT_CMD_MODULES] = {.mh_read = modules_read},
	[AGENT_MGMT_CMD_REMOVE] = {.mh_write = remove_write},
	[AGENT_MGMT_CMD_FEED] = {.mh_read = feed_read},
	[AGENT_MGMT_CMD_RESULT] = {.mh_write = result_write},
	[AGENT_MGMT_CMD_TOOL_STATUS] = {.mh_read = tool_status_read, .mh_write = tool_select_write},
};

#if defined(CONFIG_MCUMGR_SMP_SUPPORT_ORIGINAL_PROTOCOL)
static int translate_error(uint16_t err)
{
	return agent_mgmt_translate_rc(err);
}
#endif

static struct mgmt_group agent_group = {
	.mg_handlers = agent_handlers,
	.mg_handlers_count = AGENT_MGMT_CMD_COUNT,
	.mg_group_id = AGENT_MGMT_GROUP_ID,
#if defined(CONFIG_MCUMGR_SMP_SUPPORT_ORIGINAL_PROTOCOL)
	.mg_translate_error = translate_error,
#endif
};

static bool add_err(zcbor_state_t *zse, uint16_t group, uint16_t rc)
{
	return smp_add_cmd_err(zse, group, rc);
}

static void agent_mgmt_register(void)
{
	agent_mgmt_set_err_writer(add_err);
	mgmt_register_group(&agent_group);
}

MCUMGR_HANDLER_DEFINE(agent_mgmt, agent_mgmt_register);

#endif /* CONFIG_MCUMGR */
