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
	 * "\n" between two data lines arrives as data too. Return non-zero to stop decoding
	 * (sse_feed then returns that value).
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
	uint32_t events; /* events dispatched so far */
	uint8_t state;
	bool after_cr;
	bool has_data;
	uint8_t name_len;
	uint8_t type_len;
	char name[SSE_FIELD_NAME_MAX + 1];
	char type[SSE_EVENT_TYPE_MAX + 1];
};

void sse_init(struct sse_decoder *dec, const struct sse_callbacks *cb, void *user_data);

/** Decode @p len bytes. 0, or the non-zero value a callback returned. */
int sse_feed(struct sse_decoder *dec, const char *data, size_t len);

/**
 * The stream ended. An event without its terminating blank line is dropped (on_discard
 * when data of it was handed on). Returns 0.
 */
int sse_finish(struct sse_decoder *dec);

#endif /* AGENT_SSE_H */
