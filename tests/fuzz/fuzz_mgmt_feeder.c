/*
 * libFuzzer target for the host feeder's SMP commands (app/src/agent/mgmt/mgmt_feeder.c over
 * the group's request decoder, mgmt_cbor.c; docs/mgmt-group.md commands 13 feed and 14
 * result). The input is a request body: it goes to the result handler and to the feed
 * handler, with the queue (module_host.h) replaced by checks of what reaches it.
 *
 * For any input: a handler returns 0, -EINVAL with a group rc and a reason (a NUL-terminated
 * line shorter than AGENT_MGMT_REASON_MAX), -EBADMSG or -ENOMEM; the result handler hands the
 * queue an output that lies inside the input, and only for a request with id and exit; the
 * feed handler asks the queue only for a request that decodes as an empty map; the response
 * stays inside its buffer; the same input gives the same answer twice.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zcbor_decode.h>
#include <zcbor_encode.h>

#include "mgmt_internal.h"
#include "module_host.h"

static const uint8_t *input;
static size_t input_len;
static int answers;
static int feeds;

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_mgmt_feeder: %s\n", what);
		abort();
	}
}

/* ---- the queue, replaced --------------------------------------------------------------------- */

int module_host_answer(uint32_t id, int32_t exit_status, const uint8_t *output, size_t len,
		       bool truncated, char *why, size_t why_len)
{
	(void)exit_status;
	(void)truncated;
	answers++;
	check(output == NULL ? len == 0
			     : output >= input && len <= input_len &&
				       (size_t)(output - input) <= input_len - len,
	      "the output is not inside the request");
	if (id & 1u) {
		(void)snprintf(why, why_len, "no host tool call %lu waits", (unsigned long)id);
		return -ENOENT;
	}
	return 0;
}

int module_host_feed(uint32_t wait_ms, uint32_t *id, const struct module_host_call **call,
		     uint32_t *timeout_ms)
{
	(void)wait_ms;
	(void)id;
	(void)call;
	(void)timeout_ms;
	feeds++;
	return -EAGAIN;
}

void module_host_feed_done(bool sent)
{
	(void)sent;
	check(false, "feed_done without a call");
}

/* sha256_hex() for put_call(), which the replaced queue never reaches. */
void sha256_hex(const uint8_t digest[32], char hex[65])
{
	(void)digest;
	hex[0] = '\0';
	check(false, "a call was encoded");
}

/* ---- one run ----------------------------------------------------------------------------------- */

struct outcome {
	int err;
	uint16_t rc;
	char reason[AGENT_MGMT_REASON_MAX];
	size_t written;
	int answers;
	int feeds;
};

static struct outcome run(bool result)
{
	static uint8_t rsp[512];
	struct refusal r;
	struct outcome o;
	zcbor_state_t zsd[8];
	zcbor_state_t zse[4];

	memset(&r, 0, sizeof(r));
	memset(&o, 0, sizeof(o));
	answers = 0;
	feeds = 0;
	zcbor_new_decode_state(zsd, 8, input, input_len, 1, NULL, 0);
	zcbor_new_encode_state(zse, 4, rsp, sizeof(rsp), 0);
	check(zcbor_map_start_encode(zse, 8), "the response map");
	o.err = result ? agent_mgmt_result_write(zsd, zse, &r) : agent_mgmt_feed_read(zsd, zse, &r);
	check(o.err == 0 || o.err == -EINVAL || o.err == -EBADMSG || o.err == -ENOMEM,
	      "an answer outside the contract");
	check(zse->payload_mut >= rsp && zse->payload_mut <= rsp + sizeof(rsp),
	      "the response left its buffer");
	o.written = (size_t)(zse->payload_mut - rsp);
	if (o.err == -EINVAL) {
		check(r.rc != AGENT_MGMT_RC_OK, "a refusal without an rc");
		check(memchr(r.reason, '\0', sizeof(r.reason)) != NULL, "a reason without its end");
		check(strchr(r.reason, '\n') == NULL, "a reason of two lines");
	}
	o.rc = r.rc;
	memcpy(o.reason, r.reason, sizeof(o.reason));
	o.answers = answers;
	o.feeds = feeds;
	check(answers <= 1 && feeds <= 1, "the queue was asked twice");
	if (!result) {
		check(feeds == (o.err == 0), "feed asked the queue for a refused request");
	}
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of its own size: a read past the request is caught. */
	uint8_t *copy = malloc(size ? size : 1);

	check(copy != NULL, "no memory");
	memcpy(copy, data, size);
	input = copy;
	input_len = size;
	for (int which = 0; which <= 1; which++) {
		struct outcome a = run(which == 1);
		struct outcome b = run(which == 1);

		check(a.err == b.err && a.rc == b.rc && strcmp(a.reason, b.reason) == 0 &&
			      a.written == b.written && a.answers == b.answers && a.feeds == b.feeds,
		      "two answers to one request");
		if (which == 1 && a.answers == 1) {
			check(size > 0, "an answer from an empty request");
		}
	}
	free(copy);
	return 0;
}
