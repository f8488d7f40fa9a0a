/*
 * Decimal digits without a 64-bit division (app/src/agent/wire/decimal.h): decimal_div10()
 * against the compiler's division on the values next to every power of ten and of two, and
 * on a million more; decimal_u64() against snprintf("%llu").
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "decimal.h"
#include "xorshift64.h"

static uint64_t rng_state = 0x853C49E6748FEA9Bu;

static uint64_t rng(void)
{
	return xorshift64(&rng_state);
}

static void check(uint64_t v)
{
	char want[32];
	char got[DECIMAL_U64_MAX + 1];
	size_t n;

	if (decimal_div10(v) != v / 10) {
		fail_msg("%" PRIu64 " / 10: got %" PRIu64, v, decimal_div10(v));
	}
	snprintf(want, sizeof(want), "%" PRIu64, v);
	n = decimal_u64(got, v);
	got[n] = '\0';
	assert_string_equal(got, want);
}

static void edges(void **state)
{
	uint64_t p = 1;

	(void)state;
	for (int i = 0; i < 20; i++, p *= 10) {
		check(p - 1);
		check(p);
		check(p + 1);
	}
	for (int i = 0; i < 64; i++) {
		p = (uint64_t)1 << i;
		check(p - 1);
		check(p);
		check(p + 1);
		check(UINT64_MAX - p);
	}
	check(0);
	check(UINT64_MAX);
	check(UINT64_MAX - 1);
}

static void random_values(void **state)
{
	(void)state;
	for (int i = 0; i < 1000000; i++) {
		uint64_t v = rng();

		check(v >> (v & 63)); /* every magnitude */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(edges),
		cmocka_unit_test(random_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
