/*
 * memory_write and memory_recall (docs/memory.md): a note is embedded through the endpoint
 * of `agent config embeddings` and kept with its quantised vector in the memory store; a
 * recall embeds the query and returns the nearest notes by cosine similarity. Without a
 * configured embedding pass both are unavailable; a pass that fails (unreachable, an HTTP
 * error, a wrong answer) fails the call with its reason and stores nothing.
 */
#if defined(CONFIG_AGENT_TOOLS_MEMORY)

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_session.h"
#include "memory_embed.h"
#include "memory_store.h"
#include "tools_listing.h"
#include "tools_memory.h"

/* Kept off the worker stack (the tools run one at a time), in PSRAM where there is some. */
static float embedding[MEMORY_DIM] AGENT_PSRAM_ATTR;
static struct memory_vec vec AGENT_PSRAM_ATTR;
static struct memory_hit hits[CONFIG_AGENT_MEMORY_RECALL_MAX] AGENT_PSRAM_ATTR;
static char item_buf[MEMORY_NOTE_MAX * 6 + 64] AGENT_PSRAM_ATTR;

static const char *memory_unavailable(void)
{
	return memory_embed_unavailable(agent_session_config());
}

/* Embed @p text and quantise it into `vec`. */
static int embed_text(struct tool_ctx *ctx, const char *text, size_t len)
{
	int err = memory_embed(ctx, text, len, embedding);

	if (err != 0) {
		return err;
	}
	if (memory_quantise(embedding, MEMORY_DIM, &vec) != 0) {
		return tool_fail(ctx, -EPROTO, "the embedding is all zeros");
	}
	return 0;
}

static int store_fail(struct tool_ctx *ctx, int err)
{
	/* -EIO: the loop reads -ENOSPC and -EBADMSG as verdicts on the result (tool_exec.c). */
	return tool_fail(ctx, -EIO, "the memory store %s could not be read or written (error %d)",
			 MEMORY_STORE_PATH, err);
}

static int write_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	const struct tool_value *text = &args->v[0];
	struct memory_add_result added;
	int err = embed_text(ctx, text->str, text->len);

	if (err != 0) {
		return err;
	}
	err = memory_store_add(&vec, text->str, text->len, &added);
	if (err != 0) {
		return store_fail(ctx, err);
	}
	jw_object_begin(out);
	jw_key(out, "id");
	jw_int(out, added.id);
	jw_key(out, "notes");
	jw_int(out, added.notes);
	jw_key(out, "evicted");
	if (added.evicted != 0) {
		jw_int(out, added.evicted);
	} else {
		jw_null(out);
	}
	jw_object_end(out);
	return 0;
}

/* A score as a JSON number with four decimals ("0.8123", "-0.0500", "1.0000"). */
static void write_score(struct json_writer *w, int32_t score_e4)
{
	char text[16];
	uint32_t mag = (uint32_t)(score_e4 < 0 ? -score_e4 : score_e4);
	int n = snprintf(text, sizeof(text), "%s%u.%04u", score_e4 < 0 ? "-" : "",
			 (unsigned int)(mag / 10000u), (unsigned int)(mag % 10000u));

	jw_raw(w, text, (size_t)n);
}

static int recall_exec(struct tool_ctx *ctx, const struct tool_args *args,
		       struct json_writer *out)
{
	const struct tool_value *query = &args->v[0];
	const struct tool_value *count = &args->v[1];
	size_t want = count->present ? (size_t)count->integer
				     : (3 < CONFIG_AGENT_MEMORY_RECALL_MAX ? 3
									 : CONFIG_AGENT_MEMORY_RECALL_MAX);
	size_t found;
	uint16_t notes;
	bool truncated = false;
	int err = embed_text(ctx, query->str, query->len);

	if (err != 0) {
		return err;
	}
	err = memory_store_nearest(&vec, hits, want, &found, &notes);
	if (err != 0) {
		return store_fail(ctx, err);
	}
	jw_object_begin(out);
	jw_key(out, "notes");
	jw_array_begin(out);
	for (size_t i = 0; i < found && !truncated; i++) {
		struct json_writer item;

		jw_init(&item, item_buf, sizeof(item_buf));
		jw_object_begin(&item);
		jw_key(&item, "id");
		jw_int(&item, hits[i].id);
		jw_key(&item, "score");
		write_score(&item, hits[i].score_e4);
		jw_key(&item, "text");
		jw_string_n(&item, hits[i].text, hits[i].len);
		jw_object_end(&item);
		/* Room kept for "stored" and "truncated" after the list. */
		truncated = !tools_item_append(out, &item, 48);
	}
	return tools_list_end(out, "stored", notes, truncated);
}

static const struct tool_param write_params[] = {
	{
		.name = "text",
		.type = TOOL_PARAM_STRING,
		.required = true,
		.description = TOOL_TEXT(memory_tools_description_1,
			"The note to remember, in words a later query will resemble."),
		.min = 1,
		.max = MEMORY_NOTE_MAX,
	},
};

static const struct tool_param recall_params[] = {
	{
		.name = "query",
		.type = TOOL_PARAM_STRING,
		.required = true,
		.description = TOOL_TEXT(memory_tools_description_2, "What to look for, in words."),
		.min = 1,
		.max = MEMORY_NOTE_MAX,
	},
	{
		.name = "count",
		.type = TOOL_PARAM_INTEGER,
		.required = false,
		.description = TOOL_TEXT(memory_tools_description_3,
			"How many notes at most (default 3)."),
		.min = 1,
		.max = CONFIG_AGENT_MEMORY_RECALL_MAX,
	},
};

const struct tool_def tool_memory_write = {
	.name = "memory_write",
	.description = TOOL_TEXT(memory_tools_description_4,
		"Remember a note across conversations: the note is embedded by the configured "
		"embeddings endpoint and kept on the device's flash with its vector. The store "
		"keeps the newest notes; a write into a full store drops the oldest note."),
	.domain = TOOL_DOMAIN_STORAGE,
	.risk = TOOL_RISK_MUTATING,
	.params = write_params,
	.param_count = 1,
	.output = TOOL_TEXT(memory_tools_output_1, "{id, notes, evicted: id or null}"),
	.capability = TOOL_CAP_LFS,
	.unavailable = memory_unavailable,
	.exec = write_exec,
	.groups = TOOL_GROUP_MEMORY_WRITE,
	.keywords = TOOL_TEXT(memory_tools_keywords_1, "memory remember note save store embedding"),
};

const struct tool_def tool_memory_recall = {
	.name = "memory_recall",
	.description = TOOL_TEXT(memory_tools_description_5,
		"Recall the remembered notes nearest a query by meaning (cosine similarity of "
		"embeddings), best first, with their scores from -1 to 1."),
	.domain = TOOL_DOMAIN_STORAGE,
	.risk = TOOL_RISK_READ,
	.params = recall_params,
	.param_count = 2,
	.output = TOOL_TEXT(memory_tools_output_2,
		"{notes: [{id, score, text}], stored, truncated}"),
	.capability = TOOL_CAP_LFS,
	.unavailable = memory_unavailable,
	.exec = recall_exec,
	.groups = TOOL_GROUP_MEMORY_RECALL,
	.keywords = TOOL_TEXT(memory_tools_keywords_2,
		"memory recall remember notes search embedding similar"),
};

#endif /* CONFIG_AGENT_TOOLS_MEMORY */
