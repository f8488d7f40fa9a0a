/*
 * Incremental Server-Sent Events decoder (the event-stream format of the HTML standard, as
 * OpenAI-compatible servers send it). It never holds an event: `data` bytes are handed on as
 * they arrive, so an event of any size needs no event-sized buffer. Memory is this struct.
 *
 * Input may be split at any byte. Lines end in LF, CR or CR LF (a CR at the end of one chunk
 * and an LF at the start of the next are one line end). U+2028 and other Unicode separators
 * are not line ends. A leading UTF-8 BOM is skipped. Comment lines (":...") are skipped in
 * constant memory. "data:" with or without one space; several data lines of one event are
 * joined with "\n"; an "event:" line may come before or after the data lines.
 */
#ifndef AGENT_SSE_H
#define AGENT_SSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest `event:` value kept; a longer one is cut to this and marked truncated. */
#define SSE_EVENT_TYPE_MAX 63
/* Field names longer than this are not a field we know and are ignored with their line. */
#define SSE_FIELD_NAME_MAX 15

struct sse_callbacks {
	/**
	 * Bytes of the current event's data. The first call of an event has first == true; the
	 * "\n" between two data lines arrives as data too. When the first data line is empty,
	 * that first call has len 0 (so the consumer still learns that the event has data); no
	 * other call has len 0. @p data points into the bytes given to sse_feed, or for the
	 * "\n" to a constant. Return non-zero to stop decoding (sse_feed then returns that value).
	 */
	int (*on_data)(void *user_data, const char *data, size_t len, bool first);
	/**
	 * A blank line ended an event that had at least one data line. @p event_type is the
	 * last `event:` value of the event, "" when it had none. Return non-zero to stop.
	 */
	int (*on_event)(void *user_data, const char *event_type);
	/**
	 * Data was handed on for an event that will never be dispatched (the stream ended
	 * before its blank line). The consumer drops what it built from it.
	 */
	void (*on_discard)(void *user_data);
};

struct sse_decoder {
	const struct sse_callbacks *cb;
	void *user_data;
	/* Private state below: sse.c owns its layout; fixed size, no pointers into input. */
	int stopped;         /* the non-zero value a callback returned, 0 while decoding */
	uint8_t state;       /* where in a line the decoder is (enum in sse.c) */
	bool after_cr;       /* the last line ended in CR: an LF next is part of that line end */
	bool has_data;       /* the pending event has a data line */
	bool data_sent;      /* on_data was called for the pending event */
	bool type_truncated; /* the pending event's type was cut to SSE_EVENT_TYPE_MAX */
	uint8_t name_len;
	uint8_t type_len;
	char name[SSE_FIELD_NAME_MAX];
	char type[SSE_EVENT_TYPE_MAX + 1];
};

void sse_init(struct sse_decoder *dec, const struct sse_callbacks *cb, void *user_data);

/**
 * Decode @p len bytes. 0, or the non-zero value a callback returned. After a callback has
 * stopped decoding, the decoder stays stopped: later calls return the same value and decode
 * nothing, until sse_finish. Callbacks may be NULL; they must not call sse_feed or
 * sse_finish on the same decoder.
 */
int sse_feed(struct sse_decoder *dec, const char *data, size_t len);

/**
 * Only inside on_event: true when the event's `event:` value was longer than
 * SSE_EVENT_TYPE_MAX bytes and the reported type is its first SSE_EVENT_TYPE_MAX bytes.
 */
bool sse_event_type_truncated(const struct sse_decoder *dec);

/**
 * The stream ended. An event without its terminating blank line is dropped (on_discard
 * when data of it was handed on). Returns 0. The decoder is then as after sse_init, ready
 * for a new stream (a leading BOM is skipped again).
 */
int sse_finish(struct sse_decoder *dec);

#endif /* AGENT_SSE_H */
