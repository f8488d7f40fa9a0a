/*
 * Test-only: a xorshift32 sequence, seeded from the cycle counter, for the images of
 * twister_tests/agent that have no random source (stream_server.c's sys_rand_get() for TCP,
 * test_entropy.c's entropy driver for Mbed TLS). NOT random: nothing it makes is secret.
 */
#ifndef AGENT_TEST_XORSHIFT_H
#define AGENT_TEST_XORSHIFT_H

#include <stddef.h>
#include <stdint.h>

#include <zephyr/kernel.h>

/* Fill @p out with @p len bytes of the sequence whose state is @p state (0: not seeded yet). */
static inline void test_xorshift_fill(uint32_t *state, uint8_t *out, size_t len)
{
	uint32_t s = *state != 0 ? *state : (k_cycle_get_32() | 1U);

	for (size_t i = 0; i < len; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		out[i] = (uint8_t)(s >> 24);
	}
	*state = s;
}

#endif /* AGENT_TEST_XORSHIFT_H */
