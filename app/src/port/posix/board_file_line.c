/*
 * One line of a board file (posix_board_file.h): split into its keyword and key=value pairs,
 * the pairs handed out to the keyword's parser, and the line's first error recorded.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "posix_board_file.h"

/* ---- errors -------------------------------------------------------------------------------- */

bool posix_board_fail(struct posix_board_line *ctx, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ctx->failed) {
		return false;
	}
	ctx->failed = true;
	n = snprintf(ctx->why, ctx->why_len, "%s%s", ctx->keyword,
		     ctx->keyword[0] != '\0' ? ": " : "");
	if (n < 0 || (size_t)n >= ctx->why_len) {
		return false;
	}
	va_start(ap, fmt);
	vsnprintf(ctx->why + n, ctx->why_len - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

/* ---- tokens -------------------------------------------------------------------------------- */

/* Splits "keyword k=v k="v w" ..." in place. Returns false (with the error set) on bad syntax. */
bool posix_board_split_line(struct posix_board_line *ctx, char *p)
{
	while (*p == ' ' || *p == '\t') {
		p++;
	}
	ctx->keyword = p;
	while (*p != '\0' && *p != ' ' && *p != '\t') {
		p++;
	}
	if (*p != '\0') {
		*p++ = '\0';
	}
	for (;;) {
		char *key;
		char *value;

		while (*p == ' ' || *p == '\t') {
			p++;
		}
		if (*p == '\0') {
			return true;
		}
		key = p;
		while (*p == '_' || islower((unsigned char)*p)) {
			p++;
		}
		if (p == key || *p != '=') {
			return posix_board_fail(ctx, "expected key=value at '%.20s'", key);
		}
		*p++ = '\0';
		if (*p == '"') {
			char *out = ++p;

			value = out;
			while (*p != '"') {
				if (*p == '\0') {
					return posix_board_fail(
						ctx, "%s: unterminated quoted value", key);
				}
				if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) {
					p++;
				}
				*out++ = *p++;
			}
			p++;
			if (*p != '\0' && *p != ' ' && *p != '\t') {
				return posix_board_fail(ctx, "%s: text after the closing quote",
							key);
			}
			if (*p != '\0') {
				p++;
			}
			*out = '\0';
		} else {
			value = p;
			while (*p != '\0' && *p != ' ' && *p != '\t') {
				if (*p == '"') {
					return posix_board_fail(
						ctx, "%s: a quote inside an unquoted value", key);
				}
				p++;
			}
			if (*p != '\0') {
				*p++ = '\0';
			}
		}
		for (size_t i = 0; i < ctx->kv_count; i++) {
			if (strcmp(ctx->kv[i].key, key) == 0) {
				return posix_board_fail(ctx, "%s given twice", key);
			}
		}
		if (ctx->kv_count == POSIX_BOARD_KV_MAX) {
			return posix_board_fail(ctx, "more than %d keys", POSIX_BOARD_KV_MAX);
		}
		ctx->kv[ctx->kv_count++] = (struct posix_board_kv){.key = key, .value = value};
	}
}

const char *posix_board_take(struct posix_board_line *ctx, const char *key)
{
	for (size_t i = 0; i < ctx->kv_count; i++) {
		if (strcmp(ctx->kv[i].key, key) == 0) {
			ctx->kv[i].used = true;
			return ctx->kv[i].value;
		}
	}
	return NULL;
}

const char *posix_board_take_required(struct posix_board_line *ctx, const char *key)
{
	const char *value = posix_board_take(ctx, key);

	if (value == NULL) {
		posix_board_fail(ctx, "%s= is required", key);
	}
	return value;
}

bool posix_board_no_unknown_keys(struct posix_board_line *ctx)
{
	for (size_t i = 0; i < ctx->kv_count; i++) {
		if (!ctx->kv[i].used) {
			return posix_board_fail(ctx, "unknown key '%s'", ctx->kv[i].key);
		}
	}
	return true;
}
