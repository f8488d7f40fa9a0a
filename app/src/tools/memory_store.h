/*
 * The memory tools' store (docs/memory.md): notes with their embeddings, quantised to one
 * signed byte per dimension with a scale, in one file on the LittleFS volume. Every write
 * makes a new file beside it and renames it over the old one, so a power cut leaves the old
 * store or the new one. At most CONFIG_AGENT_MEMORY_NOTES notes: a write into a full store
 * drops the oldest. Not thread safe: the tools run one at a time.
 */
#ifndef AGENT_MEMORY_STORE_H
#define AGENT_MEMORY_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEMORY_STORE_DIR  "/lfs/.agent"
#define MEMORY_STORE_PATH MEMORY_STORE_DIR "/memory.bin"
#define MEMORY_STORE_TEMP MEMORY_STORE_DIR "/memory.tmp"

#define MEMORY_DIM	   CONFIG_AGENT_MEMORY_DIMENSIONS
#define MEMORY_NOTE_MAX	   CONFIG_AGENT_MEMORY_NOTE_MAX_LEN
#define MEMORY_HEADER_BYTES 16u
/* A record: id, text length, reserved, scale, the vector, the text, its CRC-32. */
#define MEMORY_RECORD_FIXED 16u
#define MEMORY_RECORD_BYTES(text_len) (MEMORY_RECORD_FIXED + MEMORY_DIM + (text_len))
#define MEMORY_VERSION	    1u

/* A quantised vector: v[i] is about q[i] * scale. */
struct memory_vec {
	float scale;
	int8_t q[MEMORY_DIM];
};

struct memory_hit {
	uint32_t id;
	int32_t score_e4; /* cosine similarity times 10000 */
	uint16_t len;
	char text[MEMORY_NOTE_MAX + 1];
};

struct memory_add_result {
	uint32_t id;
	uint32_t evicted; /* the oldest note's id when it was dropped, else 0 */
	uint16_t notes;	  /* notes after the write */
};

/**
 * Quantise @p dim floats (dim == MEMORY_DIM) into @p out. -EINVAL when every value is 0 or
 * one is not finite (no direction to compare).
 */
int memory_quantise(const float *v, size_t dim, struct memory_vec *out);

/** Cosine similarity of two quantised vectors times 10000, rounded; 0 if one is zero. */
int32_t memory_cosine_e4(const int8_t *a, const int8_t *b, size_t dim);

/**
 * Append a note (1..MEMORY_NOTE_MAX bytes), dropping the oldest when the store is full.
 * 0, -EINVAL (length), or the file system's error (the store is then unchanged).
 */
int memory_store_add(const struct memory_vec *vec, const char *text, size_t len,
		     struct memory_add_result *result);

/**
 * The @p max notes nearest @p query, best first (equal scores: the newer first), into
 * @p hits; @p found set to how many, @p notes to how many the store holds. 0 or the file
 * system's error; no store yet is an empty one.
 */
int memory_store_nearest(const struct memory_vec *query, struct memory_hit *hits, size_t max,
			 size_t *found, uint16_t *notes);

/** The notes the store holds (0 without a store). 0 or the file system's error. */
int memory_store_count(uint16_t *notes);

/** CRC-32/ISO-HDLC (zlib's crc32) of the store's records: 0 to start. */
uint32_t memory_crc32(uint32_t crc, const void *data, size_t len);

#endif /* AGENT_MEMORY_STORE_H */
