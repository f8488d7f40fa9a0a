/*
 * The unit tests' own pseudo-random numbers (xorshift64), seeded by each test: a failure
 * repeats, run after run and on every host.
 */
#ifndef TEST_XORSHIFT64_H
#define TEST_XORSHIFT64_H

#include <stdint.h>

/** The next number of the sequence @p state (never 0) holds. */
static inline uint64_t xorshift64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

#endif /* TEST_XORSHIFT64_H */
