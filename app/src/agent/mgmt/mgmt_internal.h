/*
 * Shared by the files of the SMP management group (docs/mgmt-group.md): the field table a
 * handler decodes its request into, the refusal it fills, the CBOR helpers of mgmt_cbor.c,
 * and the handlers that the dispatch table of mgmt_group.c names: config, status and forget
 * (mgmt_config.c), conversations, export and delete (mgmt_conv.c), tools (mgmt_tools.c), man
 * (mgmt_man.c).
 * Only mgmt_*.c include this header; mgmt_group.h is the group's API.
 */
#ifndef AGENT_MGMT_INTERNAL_H
#define AGENT_MGMT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <zcbor_common.h>

#include "mgmt_group.h"

#define NAME_SHOWN 32 /* bytes of an unknown name quoted in a reason */

/* Bytes kept free while a page of list entries is written: the list's end, the members
 * written after it and the end of the response map. */
#define PAGE_RESERVE 24

enum field_type {
	FIELD_TSTR,
	FIELD_UINT,
	FIELD_BOOL,
	FIELD_BSTR, /* in text, like a text string */
	FIELD_INT,  /* a signed integer, in integer (clamped to int32_t) */
	FIELD_DATA, /* a byte string or a text string, in text */
};

struct field {
	const char *name;
	enum field_type type;
	bool present;
	struct zcbor_string text;
	uint32_t number; /* values above UINT32_MAX read as UINT32_MAX */
	int32_t integer; /* FIELD_INT */
	bool flag;
};

/* What a handler found wrong with a request it understood. */
struct refusal {
	uint16_t rc;
	char reason[AGENT_MGMT_REASON_MAX];
};

/* Where the response stood after the map was opened, to roll a refusal back to. */
struct mark {
	uint8_t *payload;
	size_t elem_count;
	size_t backup;
};

/* ---- mgmt_cbor.c -------------------------------------------------------------------------- */

/* Fill @p r with @p rc and the formatted reason (cut between characters); returns -EINVAL. */
int agent_mgmt_refuse(struct refusal *r, uint16_t rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A name from the request, safe to quote: cut, and anything but printable ASCII as '?'. */
const char *agent_mgmt_quoted(const struct zcbor_string *s, char *out, size_t len);

/*
 * A text string of @p len bytes, as well-formed UTF-8: ill-formed sequences become U+FFFD
 * (utf8_repair()). False, with nothing written, when the repaired text and its header do not
 * fit before zse->payload_end.
 */
bool agent_mgmt_put_text(zcbor_state_t *zse, const char *text, size_t len);
/* One "key": value member of the response map (the value through agent_mgmt_put_text()). */
bool agent_mgmt_put_str(zcbor_state_t *zse, const char *key, const char *value);
bool agent_mgmt_put_uint(zcbor_state_t *zse, const char *key, uint32_t value);

/* Where the response stands, and back to it: everything written since is forgotten. */
void agent_mgmt_mark_take(const zcbor_state_t *zse, struct mark *m);
void agent_mgmt_mark_restore(zcbor_state_t *zse, const struct mark *m);

/*
 * Decode the request map into @p fields. Returns 0, -EINVAL with @p r set for a request the
 * group refuses (unknown or repeated field, wrong type), or -EBADMSG for one that is not a
 * CBOR map at all (MCUmgr's EINVAL).
 */
int agent_mgmt_decode_request(zcbor_state_t *zsd, struct field *fields, size_t count,
			      struct refusal *r);

/*
 * A paged read's request, `{off?: uint}`: *@p off is its offset (0 when absent). Returns
 * agent_mgmt_decode_request()'s result.
 */
int agent_mgmt_page_request(zcbor_state_t *zsd, struct refusal *r, uint32_t *off);
/* ERANGE "offset N is past the end (TOTAL UNIT)" when @p off > @p total, else 0. */
int agent_mgmt_page_check(struct refusal *r, uint32_t off, uint32_t total, const char *unit);

/* ---- the handlers: 0, -EINVAL with @p r filled, -EBADMSG, or -ENOMEM (does not fit) --------- */

int agent_mgmt_config_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_config_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_status_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_forget_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_conversations_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_export_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_delete_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_tools_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_tool_status_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_tool_select_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_man_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_import_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_part_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_modules_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_remove_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_feed_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);
int agent_mgmt_result_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);

#endif /* AGENT_MGMT_INTERNAL_H */
