/*
 * The host feeder's commands of the SMP management group (docs/mgmt-group.md, docs/modules.md
 * "Host tools"): feed (13) is the feeder's long-poll for the next host tool call, result (14)
 * carries the program's exit status and output back. The queue is module_host.c's.
 */
#include <errno.h>
#include <string.h>

#include <zcbor_encode.h>

#include "mgmt_internal.h"
#include "module_host.h"
#include "sha256.h"

static bool put_call(zcbor_state_t *zse, uint32_t id, const struct module_host_call *call,
		     uint32_t left_ms)
{
	char hex[SHA256_HEX_LEN + 1];
	bool ok;

	sha256_hex(call->digest, hex);
	ok = agent_mgmt_put_uint(zse, "id", id) && agent_mgmt_put_str(zse, "tool", call->tool) &&
	     agent_mgmt_put_str(zse, "entry", call->entry) &&
	     agent_mgmt_put_str(zse, "sha256", hex) && zcbor_tstr_put_lit(zse, "args") &&
	     zcbor_list_start_encode(zse, call->argc);
	for (uint8_t i = 0; ok && i < call->argc; i++) {
		ok = agent_mgmt_put_text(zse, call->argv[i], strlen(call->argv[i]));
	}
	return ok && zcbor_list_end_encode(zse, call->argc) &&
	       agent_mgmt_put_uint(zse, "output_max", call->output_max) &&
	       agent_mgmt_put_uint(zse, "timeout_ms", left_ms);
}

int agent_mgmt_feed_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	const struct module_host_call *call;
	struct mark m;
	uint32_t id;
	uint32_t left_ms;
	bool sent;
	int err = agent_mgmt_decode_request(zsd, NULL, 0, r);

	if (err != 0) {
		return err;
	}
	if (module_host_feed(CONFIG_AGENT_HOST_FEED_WAIT_MS, &id, &call, &left_ms) != 0) {
		return 0; /* {}: no call; the feeder asks again */
	}
	agent_mgmt_mark_take(zse, &m);
	sent = put_call(zse, id, call, left_ms);
	if (!sent) {
		agent_mgmt_mark_restore(zse, &m); /* {}; the call fails for the model */
	}
	module_host_feed_done(sent);
	return 0;
}

int agent_mgmt_result_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "id", .type = FIELD_UINT},
				 {.name = "exit", .type = FIELD_INT},
				 {.name = "output", .type = FIELD_DATA},
				 {.name = "truncated", .type = FIELD_BOOL}};
	char why[AGENT_MGMT_REASON_MAX];
	int err = agent_mgmt_decode_request(zsd, fields, 4, r);

	if (err != 0) {
		return err;
	}
	if (!fields[0].present || !fields[1].present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "id and exit are required");
	}
	err = module_host_answer(fields[0].number, fields[1].integer,
				 fields[2].present ? fields[2].text.value : NULL,
				 fields[2].present ? fields[2].text.len : 0u,
				 fields[3].present && fields[3].flag, why, sizeof(why));
	if (err != 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ENOENT, "%s", why);
	}
	return agent_mgmt_put_uint(zse, "id", fields[0].number) ? 0 : -ENOMEM;
}
