/*
 * Internal to the board-file reader of the POSIX port (docs/simulated-board.md); only its
 * files include this header:
 *   board_file.c           reads the file line by line, hands each line to its keyword's
 *                          parser and publishes the board (posix_board_load, posix_board_reset)
 *   board_file_line.c      one line: its keyword and key=value pairs, its first error
 *   board_file_value.c     one value: text, integers, yes/no, names, sets, decimals, addresses
 *   board_file_hardware.c  the board, gpio, bus and display lines
 *   board_file_network.c   the wifi, ap and nat lines
 *   board_file_sensor.c    the family and sensor lines
 *   board_file_check.c     the checks between lines, once the whole file is read
 *
 * Every function that checks something returns false with the line's error set (through
 * posix_board_fail) when the check fails; the first error of a line is the one reported.
 */
#ifndef POSIX_BOARD_FILE_H
#define POSIX_BOARD_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"
#include "posix_board_internal.h"

#define POSIX_BOARD_KV_MAX 16

#define POSIX_BOARD_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

struct posix_board_kv {
	const char *key;
	const char *value;
	bool used;
};

/* One line being parsed: its pairs and the place to put the first error. */
struct posix_board_line {
	const char *keyword;
	struct posix_board_kv kv[POSIX_BOARD_KV_MAX];
	size_t kv_count;
	char *why;
	size_t why_len;
	bool failed;
};

/* ---- one line (board_file_line.c) ---------------------------------------------------------- */

/* Records "keyword: message" as the line's error unless it has one already; returns false. */
__attribute__((format(printf, 2, 3))) bool posix_board_fail(struct posix_board_line *ctx,
							    const char *fmt, ...);
/* Splits "keyword k=v k="v w" ..." in place. Returns false (with the error set) on bad syntax. */
bool posix_board_split_line(struct posix_board_line *ctx, char *p);
/* The value of @p key and marks it used, or NULL when the line has no such key. */
const char *posix_board_take(struct posix_board_line *ctx, const char *key);
/* posix_board_take, failing the line when the key is missing. */
const char *posix_board_take_required(struct posix_board_line *ctx, const char *key);
/* Fails the line on the first key no parser took. */
bool posix_board_no_unknown_keys(struct posix_board_line *ctx);

/* ---- one value (board_file_value.c) -------------------------------------------------------- */

bool posix_board_copy_text(struct posix_board_line *ctx, const char *key, const char *value,
			   char *dst, size_t cap, bool allow_empty);
bool posix_board_parse_long(struct posix_board_line *ctx, const char *key, const char *value,
			    long min, long max, long *out);
bool posix_board_parse_u32(struct posix_board_line *ctx, const char *key, const char *value,
			   uint32_t max, uint32_t *out);
bool posix_board_parse_bool(struct posix_board_line *ctx, const char *key, const char *value,
			    bool *out);
bool posix_board_parse_enum(struct posix_board_line *ctx, const char *key, const char *value,
			    const char *const *names, size_t count, int *out);
/* "a,b,c" of names from @p names into a bit set; "" is the empty set. */
bool posix_board_parse_set(struct posix_board_line *ctx, const char *key, const char *value,
			   const char *const *names, size_t count, uint32_t *out);
/* A decimal such as "-12.5" or "3.912" (at most six decimals) times 1 000 000. */
bool posix_board_parse_micro(struct posix_board_line *ctx, const char *key, const char *value,
			     int64_t *out);
bool posix_board_copy_address(struct posix_board_line *ctx, const char *key, const char *value,
			      char *dst);

/* ---- the keywords' lines (board_file_hardware.c, _network.c, _sensor.c) -------------------- */

bool posix_board_line_board(struct posix_board_line *ctx, struct sim_board *b);
bool posix_board_line_gpio(struct posix_board_line *ctx, struct sim_board *b);
bool posix_board_line_bus(struct posix_board_line *ctx, struct sim_board *b);
bool posix_board_line_display(struct posix_board_line *ctx, struct sim_board *b);
bool posix_board_line_wifi(struct posix_board_line *ctx, struct sim_board *b);
bool posix_board_line_ap(struct posix_board_line *ctx, struct sim_board *b);
bool posix_board_line_nat(struct posix_board_line *ctx, struct sim_board *b);
bool posix_board_line_family(struct posix_board_line *ctx, struct sim_board *b);
bool posix_board_line_sensor(struct posix_board_line *ctx, struct sim_board *b);

/* ---- between lines (board_file_check.c) ---------------------------------------------------- */

/* Consistency between lines, checked once the whole file is read. */
bool posix_board_check(struct posix_board_line *ctx, struct sim_board *b);

#endif /* POSIX_BOARD_FILE_H */
