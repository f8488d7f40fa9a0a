/* Decimal digits of 64-bit integers (decimal.h). */
#include "decimal.h"

uint64_t decimal_div10(uint64_t n)
{
	const uint32_t c_hi = 0xCCCCCCCCu;
	const uint32_t c_lo = 0xCCCCCCCDu;
	uint32_t n_hi = (uint32_t)(n >> 32);
	uint32_t n_lo = (uint32_t)n;
	uint64_t lo_lo = (uint64_t)n_lo * c_lo;
	uint64_t hi_lo = (uint64_t)n_hi * c_lo;
	uint64_t lo_hi = (uint64_t)n_lo * c_hi;
	uint64_t mid = (lo_lo >> 32) + (uint32_t)hi_lo + (uint32_t)lo_hi;
	uint64_t high = (uint64_t)n_hi * c_hi + (hi_lo >> 32) + (lo_hi >> 32) + (mid >> 32);

	return high >> 3;
}

size_t decimal_u64(char *out, uint64_t v)
{
	char digits[DECIMAL_U64_MAX];
	size_t n = 0;

	do {
		uint64_t q = decimal_div10(v);

		digits[sizeof(digits) - 1 - n++] = (char)('0' + (unsigned int)(v - q * 10u));
		v = q;
	} while (v != 0);
	for (size_t i = 0; i < n; i++) {
		out[i] = digits[sizeof(digits) - n + i];
	}
	return n;
}
