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

/**
 * @p text (@p len bytes) as well-formed UTF-8: each maximal subpart of an ill-formed
 * sequence (Unicode 16.0 section 3.9.6: a byte that cannot start a character, or a start
 * with the continuation bytes that fit it, cut short) becomes U+FFFD (EF BF BD); the rest is
 * copied. Written to @p out unless it is NULL (the length alone); @p out never overlaps
 * @p text. The result is at most 3 * @p len bytes. Returns its length; *@p replaced (when
 * not NULL) is the number of U+FFFD put in, 0 when @p text was well-formed.
 */
size_t utf8_repair(const char *text, size_t len, uint8_t *out, size_t *replaced);

#endif /* AGENT_UTF8_H */
