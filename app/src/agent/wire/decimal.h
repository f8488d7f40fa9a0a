/*
 * Decimal digits of 64-bit integers without a 64-bit division. On a 32-bit core (the
 * Cortex-M33, the ESP32-S3's Xtensa) `v / 10` on a uint64_t is a call into the compiler's
 * runtime library (__aeabi_uldivmod on ARM, about 800 B of flash); decimal_div10()
 * multiplies by the reciprocal instead, with 32 x 32 -> 64-bit products the core has
 * (docs/footprint.md, "What was trimmed").
 */
#ifndef AGENT_DECIMAL_H
#define AGENT_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

#define DECIMAL_U64_MAX 20 /* digits of UINT64_MAX */

/** floor(@p n / 10) for every 64-bit @p n: the high half of n * ceil(2^67 / 10), >> 3. */
uint64_t decimal_div10(uint64_t n);

/**
 * The decimal digits of @p v into @p out (at least DECIMAL_U64_MAX bytes, no NUL, no sign,
 * no leading zero but for 0 itself); returns how many (1 to 20).
 */
size_t decimal_u64(char *out, uint64_t v);

#endif /* AGENT_DECIMAL_H */
