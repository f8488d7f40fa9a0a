/*
 * The agent's SMP management group (group 64, docs/mgmt-group.md): config, status, forget,
 * conversations, export, delete, tools and man, over zcbor. The same handlers serve Zephyr's
 * MCUmgr (app/src/port/zephyr/mgmt.c registers them) and the simulator (mgmt_smp.c).
 *
 * Requests are validated by the shell's own functions (agent_config_set() and friends) and
 * refused with the shell's messages. The API key is write-only: no response carries it.
 * Nothing here allocates; the export staging block is the only buffer of its own.
 */
#ifndef AGENT_MGMT_GROUP_H
#define AGENT_MGMT_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <zcbor_common.h>

/* MGMT_GROUP_ID_PERUSER, the first user group of MCUmgr. */
#define AGENT_MGMT_GROUP_ID 64u

enum agent_mgmt_cmd {
	AGENT_MGMT_CMD_CONFIG = 0,
	AGENT_MGMT_CMD_STATUS = 1,
	AGENT_MGMT_CMD_FORGET = 2,
	AGENT_MGMT_CMD_CONVERSATIONS = 3,
	AGENT_MGMT_CMD_EXPORT = 4,
	AGENT_MGMT_CMD_DELETE = 5,
	AGENT_MGMT_CMD_TOOLS = 6,
	AGENT_MGMT_CMD_MAN = 7,
	AGENT_MGMT_CMD_IMPORT = 8,  /* a module's head */
	AGENT_MGMT_CMD_PART = 9,    /* bytes of its text at an offset */
	AGENT_MGMT_CMD_MODULES = 10, /* the catalog */
	AGENT_MGMT_CMD_REMOVE = 11,
	AGENT_MGMT_CMD_TOOL_STATUS = 12, /* the tool status stream, tools.jsonl */
	AGENT_MGMT_CMD_FEED = 13,   /* the host feeder's long-poll for a host tool call */
	AGENT_MGMT_CMD_RESULT = 14, /* the host tool program's exit status and output */
	AGENT_MGMT_CMD_COUNT
};

/* The group's own result codes, sent as {"err": {"group": 64, "rc": N}, "reason": "..."}. */
enum agent_mgmt_rc {
	AGENT_MGMT_RC_OK = 0,
	AGENT_MGMT_RC_EUNKNOWN = 1,   /* unknown config name or request field */
	AGENT_MGMT_RC_EINVAL = 2,     /* a value the shell refuses, a missing or mistyped field */
	AGENT_MGMT_RC_EWRITEONLY = 3, /* reserved: no request can read the key */
	AGENT_MGMT_RC_ENOENT = 4,     /* an empty conversation slot */
	AGENT_MGMT_RC_ERANGE = 5,     /* a slot outside 1..slots, an offset past the end */
	AGENT_MGMT_RC_EBUSY = 6,      /* open in the chat, a request is running */
	AGENT_MGMT_RC_EIO = 7,	      /* settings or file system failed */
	AGENT_MGMT_RC_ENODEV = 8,     /* conversations are not available */
	AGENT_MGMT_RC_ENOSPC = 9,     /* the catalog or the journal has no room */
	AGENT_MGMT_RC_EPERM = 10,     /* a built-in tool cannot be removed */
};

/* MCUmgr's own result codes (zephyr/mgmt/mcumgr/mgmt/mgmt_defines.h), for failures below the
 * group: the handler returns them and MCUmgr answers {"rc": N}. */
#define AGENT_MGMT_ERR_EOK	0
#define AGENT_MGMT_ERR_EUNKNOWN 1
#define AGENT_MGMT_ERR_ENOMEM	2
#define AGENT_MGMT_ERR_EINVAL	3
#define AGENT_MGMT_ERR_EMSGSIZE 7
#define AGENT_MGMT_ERR_ENOTSUP	8
#define AGENT_MGMT_ERR_ECORRUPT 9

/* Bytes of conversation file one export response carries at most. */
#define AGENT_MGMT_EXPORT_CHUNK 1024u

/* The longest reason text, NUL included. */
#define AGENT_MGMT_REASON_MAX 128u

/**
 * Writes the "err" member of a response (group, rc). The simulator's dispatcher uses the
 * built-in writer; the Zephyr port sets smp_add_cmd_err() so that MCUmgr also knows the
 * error for SMP version 1 clients.
 */
typedef bool (*agent_mgmt_err_fn)(zcbor_state_t *zse, uint16_t group, uint16_t rc);
void agent_mgmt_set_err_writer(agent_mgmt_err_fn fn);

/** Whether command @p cmd has a handler for reads (@p write false) or writes. */
bool agent_mgmt_has_handler(uint16_t cmd, bool write);

/**
 * Run one command: decode the request map from @p zsd and write the response members into
 * @p zse, whose map the caller has already opened (as MCUmgr does) and closes afterwards.
 * A refusal is written as a group error and still returns AGENT_MGMT_ERR_EOK. Returns an
 * AGENT_MGMT_ERR_* code for a request that is not a CBOR map (EINVAL), a response that
 * does not fit (EMSGSIZE) or a command without a handler (ENOTSUP); the caller then sends
 * MCUmgr's {"rc": N} instead of the partial response.
 */
int agent_mgmt_run(uint16_t cmd, bool write, zcbor_state_t *zsd, zcbor_state_t *zse);

/** Translate a group rc into MCUmgr's codes, for SMP version 1 clients. */
int agent_mgmt_translate_rc(uint16_t rc);

#endif /* AGENT_MGMT_GROUP_H */
