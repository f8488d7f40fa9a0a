/*
 * The agent's SMP management group (docs/mgmt-group.md). Each handler decodes its request
 * map into a small field table, checks it with the shell's own functions and writes its
 * answer; a refusal rolls the response back to the opened map and writes the group error
 * with the shell's message as the reason.
 *
 * This file is the dispatch: the command table, the roll-back and the error member.
 * mgmt_cbor.c holds the CBOR helpers; the handlers are in mgmt_config.c, mgmt_conv.c and
 * mgmt_tools.c and mgmt_man.c (mgmt_internal.h).
 */
#include "mgmt_group.h"

#include <errno.h>
#include <stddef.h>

#include <zcbor_encode.h>

#include "mgmt_internal.h"

static agent_mgmt_err_fn err_writer;

void agent_mgmt_set_err_writer(agent_mgmt_err_fn fn)
{
	err_writer = fn;
}

/* ---- dispatch ----------------------------------------------------------------------------- */

typedef int (*handler_fn)(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);

static const struct {
	handler_fn read;
	handler_fn write;
} handlers[AGENT_MGMT_CMD_COUNT] = {
	[AGENT_MGMT_CMD_CONFIG] = {agent_mgmt_config_read, agent_mgmt_config_write},
	[AGENT_MGMT_CMD_STATUS] = {agent_mgmt_status_read, NULL},
	[AGENT_MGMT_CMD_FORGET] = {NULL, agent_mgmt_forget_write},
	[AGENT_MGMT_CMD_CONVERSATIONS] = {agent_mgmt_conversations_read, NULL},
	[AGENT_MGMT_CMD_EXPORT] = {agent_mgmt_export_read, NULL},
	[AGENT_MGMT_CMD_DELETE] = {NULL, agent_mgmt_delete_write},
	[AGENT_MGMT_CMD_TOOLS] = {agent_mgmt_tools_read, NULL},
	[AGENT_MGMT_CMD_MAN] = {NULL, agent_mgmt_man_write},
	[AGENT_MGMT_CMD_IMPORT] = {NULL, agent_mgmt_import_write},
	[AGENT_MGMT_CMD_PART] = {NULL, agent_mgmt_part_write},
	[AGENT_MGMT_CMD_MODULES] = {agent_mgmt_modules_read, NULL},
	[AGENT_MGMT_CMD_REMOVE] = {NULL, agent_mgmt_remove_write},
	[AGENT_MGMT_CMD_FEED] = {agent_mgmt_feed_read, NULL},
	[AGENT_MGMT_CMD_RESULT] = {NULL, agent_mgmt_result_write},
	[AGENT_MGMT_CMD_TOOL_STATUS] = {agent_mgmt_tool_status_read,
					agent_mgmt_tool_select_write},
};

bool agent_mgmt_has_handler(uint16_t cmd, bool write)
{
	if (cmd >= AGENT_MGMT_CMD_COUNT) {
		return false;
	}
	return (write ? handlers[cmd].write : handlers[cmd].read) != NULL;
}

static bool put_err(zcbor_state_t *zse, uint16_t group, uint16_t rc)
{
	return zcbor_tstr_put_lit(zse, "err") && zcbor_map_start_encode(zse, 2) &&
	       agent_mgmt_put_uint(zse, "group", group) && agent_mgmt_put_uint(zse, "rc", rc) &&
	       zcbor_map_end_encode(zse, 2);
}

int agent_mgmt_run(uint16_t cmd, bool write, zcbor_state_t *zsd, zcbor_state_t *zse)
{
	static struct refusal refusal;
	handler_fn fn;
	struct mark m;
	int err;

	if (!agent_mgmt_has_handler(cmd, write)) {
		return AGENT_MGMT_ERR_ENOTSUP;
	}
	fn = write ? handlers[cmd].write : handlers[cmd].read;
	refusal.rc = AGENT_MGMT_RC_OK;
	refusal.reason[0] = '\0';
	agent_mgmt_mark_take(zse, &m);
	err = fn(zsd, zse, &refusal);
	if (err == 0) {
		return AGENT_MGMT_ERR_EOK;
	}
	if (err == -EBADMSG) {
		return AGENT_MGMT_ERR_EINVAL;
	}
	if (refusal.rc == AGENT_MGMT_RC_OK) {
		return AGENT_MGMT_ERR_EMSGSIZE; /* the answer does not fit the buffer */
	}
	agent_mgmt_mark_restore(zse, &m);
	if (!(err_writer != NULL ? err_writer : put_err)(zse, AGENT_MGMT_GROUP_ID, refusal.rc) ||
	    !agent_mgmt_put_str(zse, "reason", refusal.reason)) {
		return AGENT_MGMT_ERR_EMSGSIZE;
	}
	return AGENT_MGMT_ERR_EOK;
}

int agent_mgmt_translate_rc(uint16_t rc)
{
	switch (rc) {
	case AGENT_MGMT_RC_OK:
		return AGENT_MGMT_ERR_EOK;
	case AGENT_MGMT_RC_EINVAL:
	case AGENT_MGMT_RC_ERANGE:
		return AGENT_MGMT_ERR_EINVAL;
	case AGENT_MGMT_RC_ENOENT:
		return 5; /* MGMT_ERR_ENOENT */
	case AGENT_MGMT_RC_EBUSY:
		return 10; /* MGMT_ERR_EBUSY */
	case AGENT_MGMT_RC_EWRITEONLY:
		return 11; /* MGMT_ERR_EACCESSDENIED */
	case AGENT_MGMT_RC_ENODEV:
		return AGENT_MGMT_ERR_ENOTSUP;
	default:
		return AGENT_MGMT_ERR_EUNKNOWN;
	}
}
