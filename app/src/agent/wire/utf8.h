/* UTF-8 helpers shared by the JSON tokenizer and writer. */
#ifndef AGENT_UTF8_H
#define AGENT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/**
 * Well-formed UTF-8 (Unicode Table 3-7): how many continuation bytes follow @p lead and the
 * range allowed for the first of them (the later ones are always 80..BF). 0 for a byte that
 * cannot start a sequence.
 */
uint8_t utf8_lead(uint8_t lead, uint8_t *lo, uint8_t *hi);

/** Encode code point @p cp (at most U+10FFFF) into @p out (4 bytes); returns the length. */
size_t utf8_encode(uint32_t cp, uint8_t *out);

/**
 * The longest prefix of @p text (@p len bytes) of at most @p max bytes that does not cut a
 * character: @p len when it fits.
 */
size_t utf8_prefix(const char *text, size_t len, size_t max);

#endif /* AGENT_UTF8_H */
