/*
 * Reading the management group's SMP response (docs/mgmt-group.md) in the unit tests that
 * drive agent_mgmt_handle(): the top-level members of the response's CBOR map. The including
 * file defines rsp_buf (the response, header first) and rsp_len (its bytes) before it, and
 * includes cmocka. Static state: include it in one test file each.
 */
#ifndef MGMT_RSP_H
#define MGMT_RSP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <zcbor_decode.h>

#include "mgmt_smp.h"

/* In the map @p zs opens, a decoder positioned at the value of @p key; false when absent. */
static bool rsp_find_in(zcbor_state_t *zs, const char *key)
{
	if (!zcbor_map_start_decode(zs)) {
		return false;
	}
	while (!zcbor_array_at_end(zs)) {
		struct zcbor_string k;

		assert_true(zcbor_tstr_decode(zs, &k));
		if (k.len == strlen(key) && memcmp(k.value, key, k.len) == 0) {
			return true;
		}
		assert_true(zcbor_any_skip(zs, NULL));
	}
	return false;
}

static zcbor_state_t dec[6];

/* A decoder at the value of the response's top-level @p key, or NULL. */
static zcbor_state_t *rsp_at(const char *key)
{
	zcbor_new_decode_state(dec, ZCBOR_ARRAY_SIZE(dec), rsp_buf + AGENT_SMP_HDR_SIZE,
			       rsp_len - AGENT_SMP_HDR_SIZE, 1, NULL, 0);
	return rsp_find_in(dec, key) ? dec : NULL;
}

static uint32_t rsp_uint(const char *key)
{
	uint32_t v = 0;
	zcbor_state_t *zs = rsp_at(key);

	assert_non_null(zs);
	assert_true(zcbor_uint32_decode(zs, &v));
	return v;
}

/* The text member @p key, as a C string (valid until the next call). */
static const char *rsp_str(const char *key)
{
	static char out[AGENT_MGMT_BUF_SIZE];
	struct zcbor_string s;
	zcbor_state_t *zs = rsp_at(key);

	assert_non_null(zs);
	assert_true(zcbor_tstr_decode(zs, &s));
	memcpy(out, s.value, s.len);
	out[s.len] = '\0';
	return out;
}

#endif /* MGMT_RSP_H */
