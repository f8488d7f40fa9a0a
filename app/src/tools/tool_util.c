/* Small helpers shared by the tool executors (tool.h). */
#include <stdarg.h>
#include <stdio.h>

#include "tool.h"
#include "tools_listing.h"

/* Room for the closing brackets and a "truncated" member an executor may still add. */
#define RESULT_TAIL_RESERVE 32

size_t tool_result_room(const struct json_writer *out)
{
	size_t cap = out->cap < CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1 ? out->cap
								     : CONFIG_AGENT_TOOL_RESULT_MAX_LEN + 1;
	size_t used = out->len + RESULT_TAIL_RESERVE + 1;

	return out->overflow || used >= cap ? 0 : cap - used;
}

void tool_write_text(struct json_writer *w, const struct packed_text *text)
{
	struct reference_reader r;
	char piece[64];
	size_t n;

	if (text == NULL) {
		jw_string(w, NULL); /* as for a NULL string: the writer fails */
		return;
	}
	packed_text_open(&r, text);
	jw_string_begin(w);
	while ((n = reference_read(&r, piece, sizeof(piece))) > 0) {
		jw_string_part(w, piece, n);
	}
	jw_string_end(w);
}

int tool_fail(struct tool_ctx *ctx, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->error, sizeof(ctx->error), fmt, ap);
	va_end(ap);
	return err;
}

const char *tool_risk_name(enum tool_risk risk)
{
	static const char *const names[] = {"read", "sensitive", "mutating", "disruptive"};

	return (unsigned int)risk < sizeof(names) / sizeof(names[0]) ? names[risk] : "?";
}

const char *tool_domain_name(enum tool_domain domain)
{
	static const char *const names[] = {"system",	"reference", "discovery",
					    "storage",	"jobs",	     "hardware",
					    "network",	"sensors",   "script"};

	return (unsigned int)domain < sizeof(names) / sizeof(names[0]) ? names[domain] : "?";
}

bool tools_item_append(struct json_writer *out, struct json_writer *item, size_t keep_back)
{
	int len = jw_finish(item);

	if (len <= 0 || (size_t)len + 1u + keep_back > tool_result_room(out)) {
		return false;
	}
	jw_raw(out, item->buf, (size_t)len);
	return true;
}

int tools_list_end(struct json_writer *out, const char *count_key, int64_t count,
		   bool truncated)
{
	jw_array_end(out);
	if (count_key != NULL) {
		jw_key(out, count_key);
		jw_int(out, count);
	}
	jw_key(out, "truncated");
	jw_bool(out, truncated);
	jw_object_end(out);
	return 0;
}
