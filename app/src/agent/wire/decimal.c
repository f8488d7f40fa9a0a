/* Decimal digits of 64-bit integers (decimal.h). */
#include "decimal.h"

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
