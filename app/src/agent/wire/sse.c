/*
 * Incremental Server-Sent Events decoder: the "event stream interpretation" of the HTML
 * standard, byte by byte, with data handed on as it arrives. The only memory is struct
 * sse_decoder; docs/sse.md lists what is accepted.
 */
#include "sse.h"

#include <string.h>

enum sse_state {
	SSE_BOM0,        /* start of the stream: an EF BB BF here is skipped */
	SSE_BOM1,        /* EF seen */
	SSE_BOM2,        /* EF BB seen */
	SSE_LINE_START,  /* nothing of the current line seen yet */
	SSE_NAME,        /* in a field name */
	SSE_DATA_SPACE,  /* just after "data:" */
	SSE_DATA,        /* in a data value */
	SSE_EVENT_SPACE, /* just after "event:" */
	SSE_EVENT,       /* in an event value */
	SSE_SKIP,        /* comment, unknown field or over-long name: up to the line end */
};

static const char bom[] = "\xEF\xBB\xBF";

static bool is_line_end(char c)
{
	return c == '\n' || c == '\r';
}

/* Bytes before the next CR or LF in [p, end): memchr goes a word (or more) at a time. */
static size_t run_length(const char *p, const char *end)
{
	size_t n = (size_t)(end - p);
	const char *lf = memchr(p, '\n', n);
	const char *cr;

	if (lf != NULL) {
		n = (size_t)(lf - p);
	}
	cr = memchr(p, '\r', n);
	return cr != NULL ? (size_t)(cr - p) : n;
}

static bool name_is(const struct sse_decoder *dec, const char *field)
{
	size_t len = strlen(field);

	return dec->name_len == len && memcmp(dec->name, field, len) == 0;
}

static int emit_data(struct sse_decoder *dec, const char *data, size_t len)
{
	bool first = !dec->data_sent;

	dec->data_sent = true;
	if (dec->cb->on_data == NULL) {
		return 0;
	}
	return dec->cb->on_data(dec->user_data, data, len, first);
}

/* A data line of the pending event starts: the "\n" that joins it to the one before. */
static int begin_data_line(struct sse_decoder *dec)
{
	if (!dec->has_data) {
		dec->has_data = true;
		return 0;
	}
	return emit_data(dec, "\n", 1);
}

/* A data line ended: if it was the event's first and was empty, say so with len 0. */
static int end_data_line(struct sse_decoder *dec)
{
	if (dec->data_sent) {
		return 0;
	}
	return emit_data(dec, "", 0);
}

static void reset_event(struct sse_decoder *dec)
{
	dec->has_data = false;
	dec->data_sent = false;
	dec->type_len = 0;
	dec->type_truncated = false;
}

/* A blank line: dispatch the pending event if it has data, else only forget its type. */
static int dispatch(struct sse_decoder *dec)
{
	int rc = 0;

	if (dec->has_data && dec->cb->on_event != NULL) {
		dec->type[dec->type_len] = '\0';
		rc = dec->cb->on_event(dec->user_data, dec->type);
	}
	reset_event(dec);
	return rc;
}

/* The field name ended with a colon: choose how the value is read. */
static int field_with_value(struct sse_decoder *dec)
{
	if (name_is(dec, "data")) {
		dec->state = SSE_DATA_SPACE;
		return begin_data_line(dec);
	}
	if (name_is(dec, "event")) {
		dec->type_len = 0;
		dec->type_truncated = false;
		dec->state = SSE_EVENT_SPACE;
		return 0;
	}
	/* id, retry and unknown fields are ignored. */
	dec->state = SSE_SKIP;
	return 0;
}

/* The current line ended (its CR or LF has been consumed). */
static int line_end(struct sse_decoder *dec)
{
	enum sse_state state = (enum sse_state)dec->state;
	int rc = 0;

	dec->state = SSE_LINE_START;
	switch (state) {
	case SSE_LINE_START:
		return dispatch(dec);
	case SSE_NAME:
		/* A line without a colon is a field name with an empty value. */
		if (name_is(dec, "data")) {
			rc = begin_data_line(dec);
			return rc != 0 ? rc : end_data_line(dec);
		}
		if (name_is(dec, "event")) {
			dec->type_len = 0;
			dec->type_truncated = false;
		}
		return 0;
	case SSE_DATA_SPACE:
	case SSE_DATA:
		return end_data_line(dec);
	default:
		return 0;
	}
}

/* A partial BOM turned out to be the start of a field name. */
static void bom_mismatch(struct sse_decoder *dec, uint8_t seen)
{
	memcpy(dec->name, bom, seen);
	dec->name_len = seen;
	dec->state = seen > 0 ? SSE_NAME : SSE_LINE_START;
}

void sse_init(struct sse_decoder *dec, const struct sse_callbacks *cb, void *user_data)
{
	memset(dec, 0, sizeof(*dec));
	dec->cb = cb;
	dec->user_data = user_data;
	dec->state = SSE_BOM0;
}

bool sse_event_type_truncated(const struct sse_decoder *dec)
{
	return dec->type_truncated;
}

int sse_feed(struct sse_decoder *dec, const char *data, size_t len)
{
	const char *p;
	const char *end;
	size_t run;
	int rc;

	if (dec->stopped != 0) {
		return dec->stopped;
	}
	if (len == 0) {
		return 0; /* data may be NULL */
	}
	p = data;
	end = data + len;
	while (p < end) {
		char c = *p;

		if (dec->after_cr) {
			dec->after_cr = false;
			if (c == '\n') {
				p++;
				continue;
			}
		}
		rc = 0;
		switch ((enum sse_state)dec->state) {
		case SSE_BOM0:
		case SSE_BOM1:
		case SSE_BOM2:
			if (c == bom[dec->state - SSE_BOM0]) {
				p++;
				dec->state = (uint8_t)(dec->state == SSE_BOM2 ? SSE_LINE_START
									     : dec->state + 1);
			} else {
				bom_mismatch(dec, (uint8_t)(dec->state - SSE_BOM0));
			}
			continue;
		case SSE_LINE_START:
			if (is_line_end(c)) {
				break;
			}
			p++;
			if (c == ':') {
				dec->state = SSE_SKIP;
			} else {
				dec->name[0] = c;
				dec->name_len = 1;
				dec->state = SSE_NAME;
			}
			continue;
		case SSE_NAME:
			if (is_line_end(c)) {
				break;
			}
			p++;
			if (c == ':') {
				rc = field_with_value(dec);
			} else if (dec->name_len < SSE_FIELD_NAME_MAX) {
				dec->name[dec->name_len++] = c;
			} else {
				dec->state = SSE_SKIP;
			}
			if (rc != 0) {
				dec->stopped = rc;
				return rc;
			}
			continue;
		case SSE_DATA_SPACE:
		case SSE_EVENT_SPACE:
			/* Exactly one leading space is not part of the value. */
			if (c == ' ') {
				p++;
			}
			dec->state = dec->state == SSE_DATA_SPACE ? SSE_DATA : SSE_EVENT;
			continue;
		case SSE_DATA:
			run = run_length(p, end);
			if (run == 0) {
				break;
			}
			rc = emit_data(dec, p, run);
			p += run;
			if (rc != 0) {
				dec->stopped = rc;
				return rc;
			}
			continue;
		case SSE_EVENT: {
			/* The value up to the line end at once; what exceeds the bound is cut. */
			size_t room = SSE_EVENT_TYPE_MAX - dec->type_len;
			size_t keep;

			run = run_length(p, end);
			if (run == 0) {
				break;
			}
			keep = run < room ? run : room;
			memcpy(dec->type + dec->type_len, p, keep);
			dec->type_len = (uint8_t)(dec->type_len + keep);
			if (keep < run) {
				dec->type_truncated = true;
			}
			p += run;
			continue;
		}
		case SSE_SKIP:
		default:
			p += run_length(p, end);
			if (p == end) {
				continue;
			}
			break;
		}
		/* *p is the CR or LF that ends the current line. */
		dec->after_cr = *p == '\r';
		p++;
		rc = line_end(dec);
		if (rc != 0) {
			dec->stopped = rc;
			return rc;
		}
	}
	return 0;
}

int sse_finish(struct sse_decoder *dec)
{
	const struct sse_callbacks *cb = dec->cb;
	void *user_data = dec->user_data;

	if (dec->data_sent && cb->on_discard != NULL) {
		cb->on_discard(user_data);
	}
	sse_init(dec, cb, user_data);
	return 0;
}
