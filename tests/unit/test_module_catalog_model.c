/*
 * The module catalog (app/src/modules/module_catalog.c) against a reference model
 * (module_catalog_model.h): 200 fixed seeds of 2000 random operations each (begin, write,
 * commit, free, now and then a reset), the whole catalog checked against the model after
 * every operation. A failure names the seed and the operation, so it can be replayed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

static char failure[512];

#define MODEL_FAIL(...)                                                                          \
	do {                                                                                     \
		snprintf(failure, sizeof(failure), __VA_ARGS__);                                 \
		fail_msg("seed %u: %s", current_seed, failure);                                  \
	} while (0)

static unsigned int current_seed;

#include "module_catalog_model.h"

#define SEEDS 200u
#define OPS   2000u

/* xorshift64*: small, fixed, the same sequence on every host. */
static uint32_t prng_bits(void *ctx, uint32_t n)
{
	uint64_t *state = ctx;

	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return (uint32_t)((*state * 0x2545f4914f6cdd1dull) >> 32) % n;
}

static struct model model;

static void test_random_operations_against_the_model(void **state)
{
	uint64_t begun = 0, no_room = 0, no_entry = 0, commits = 0, writes = 0, gaps = 0;

	(void)state;
	for (current_seed = 1; current_seed <= SEEDS; current_seed++) {
		uint64_t prng = 0x9e3779b97f4a7c15ull * current_seed;
		struct model_source src = {prng_bits, &prng};

		memset(&model, 0, sizeof(model));
		model_reset(&model);
		/* Runs of large texts fill the arena; runs of small ones run out of entries. */
		model.crowd = current_seed % 4u == 0u;
		for (unsigned int op = 0; op < OPS; op++) {
			model_step(&model, &src);
		}
		begun += model.begun;
		no_room += model.no_room;
		no_entry += model.no_entry;
		commits += model.commits;
		writes += model.writes;
		gaps += model.gaps;
	}
	printf("catalog model: %u seeds x %u operations: %llu begun, %llu refused for room, "
	       "%llu for entries, %llu writes, %llu gaps refused, %llu commits\n",
	       SEEDS, OPS, (unsigned long long)begun, (unsigned long long)no_room,
	       (unsigned long long)no_entry, (unsigned long long)writes, (unsigned long long)gaps,
	       (unsigned long long)commits);
	/* The mix reaches every case, each many times over. */
	assert_true(begun > SEEDS * 50u);
	assert_true(no_room > SEEDS * 10u);
	assert_true(no_entry > SEEDS);
	assert_true(commits > SEEDS * 20u);
	assert_true(gaps > SEEDS * 10u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_operations_against_the_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
