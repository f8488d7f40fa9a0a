/*
 * The memory tools' embedding pass (docs/memory.md): one POST to the OpenAI-compatible
 * /v1/embeddings URL of `agent config embeddings`, with the agent's key, and its answer read
 * by the streaming JSON tokenizer into a float vector: no body buffer, no allocation.
 */
#ifndef AGENT_MEMORY_EMBED_H
#define AGENT_MEMORY_EMBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_stream.h"
#include "tool.h"

#define MEMORY_EMBED_WHY_MAX	 95
#define MEMORY_EMBED_MESSAGE_MAX 95

/* The parser of one answer (an embeddings list, or an error object). */
struct memory_embed_parse {
	struct json_stream js;
	float *out;	/* dim_max floats */
	size_t dim_max; /* the dimension required */
	size_t dim;	/* numbers in the first embedding */
	int data_count; /* elements of "data" */
	bool data_seen;
	bool embedding_seen;
	bool not_number;  /* something other than a number in the embedding */
	bool out_of_range; /* a number beyond float's range */
	bool not_object;   /* the document or an element of data is not an object */
	char message[MEMORY_EMBED_MESSAGE_MAX + 1]; /* error.message, cut */
	size_t message_len;
	char why[MEMORY_EMBED_WHY_MAX + 1];
};

void memory_embed_parse_init(struct memory_embed_parse *p, float *out, size_t dim_max);

/** Feed body bytes; 0, or non-zero once the document is malformed (finish says why). */
int memory_embed_parse_feed(struct memory_embed_parse *p, const char *data, size_t len);

/**
 * End of the body: 0 when it was exactly one embedding of dim_max finite numbers (in
 * out[]), else -EBADMSG with a one-line reason in p->why.
 */
int memory_embed_parse_finish(struct memory_embed_parse *p);

/**
 * Parse a JSON number's text (the tokenizer checked its grammar) into @p out. False when
 * it is beyond float's range.
 */
bool memory_parse_float(const char *text, float *out);

/** Whether the embedding pass is configured; NULL, or why not (a static string). */
const char *memory_embed_unavailable(const struct agent_config *cfg);

/**
 * Embed @p text with the request's configuration and key (ctx->config, ctx->key) into
 * @p out (MEMORY_DIM floats). 0, or a negative errno after tool_fail() put the reason in
 * ctx->error.
 */
int memory_embed(struct tool_ctx *ctx, const char *text, size_t len, float *out);

#endif /* AGENT_MEMORY_EMBED_H */
