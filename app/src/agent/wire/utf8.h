/* UTF-8 helpers shared by the JSON tokenizer and writer, the SMP answers and messages. */
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

/**
 * @p text (@p len bytes, a name from outside: a tool's, a JSON key) as a message shows it:
 * each C0 control, DEL and C1 control (U+0080..U+009F) as \u00XX, each maximal subpart of
 * an ill-formed sequence as U+FFFD, other characters as they are. At most @p max bytes of
 * @p text are shown and as much of it as fits @p out (@p cap bytes, NUL-terminated), cut
 * between characters in both cases. Returns the bytes of @p text shown (@p len when whole).
 */
size_t utf8_shown(char *out, size_t cap, const char *text, size_t len, size_t max);

#endif /* AGENT_UTF8_H */
