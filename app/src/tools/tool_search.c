/*
 * tool_search: activates up to CONFIG_AGENT_TOOL_DISCOVERED_MAX installed tools that match a
 * task, replacing the previous selection. Matching is by words: a query word that names a
 * part of the tool's name weighs most, then its keywords, then its description. A path-like
 * token in the query or the request's prompt ("mandel.py", "/config.lua") selects
 * storage_stat first (spec). Tools the policy denies or that are unavailable are never
 * selected; the bootstrap tools are always offered and never take a place.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "tool_registry.h"
#include "tool_session.h"
#include "tools_bootstrap.h"

#define WORD_MAX 24

static bool word_char(char c)
{
	return isalnum((unsigned char)c) != 0;
}

/* Compare a query word with a text word, ignoring case and a plural 's'. */
static bool same_word(const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen > 3 && (a[alen - 1] == 's' || a[alen - 1] == 'S')) {
		alen--;
	}
	if (blen > 3 && (b[blen - 1] == 's' || b[blen - 1] == 'S')) {
		blen--;
	}
	if (alen != blen) {
		return false;
	}
	for (size_t i = 0; i < alen; i++) {
		if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) {
			return false;
		}
	}
	return true;
}

/* How many words of @text (split at every non-alphanumeric byte) equal @word. */
static int count_in(const char *text, const char *word, size_t wlen)
{
	int n = 0;

	while (text != NULL && *text != '\0') {
		while (*text != '\0' && !word_char(*text)) {
			text++;
		}
		const char *start = text;

		while (word_char(*text)) {
			text++;
		}
		if (text > start && same_word(word, wlen, start, (size_t)(text - start))) {
			n++;
		}
	}
	return n;
}

/*
 * The points of @p text for the words of @p query: @p weight for each of its words equal to
 * a query word, or @p weight once per query word found in it when @p once.
 */
static int score_text(const char *text, const char *query, int weight, bool once)
{
	int total = 0;
	const char *q = query;

	while (*q != '\0') {
		while (*q != '\0' && !word_char(*q)) {
			q++;
		}
		const char *start = q;

		while (word_char(*q)) {
			q++;
		}
		size_t len = (size_t)(q - start);

		if (len < 2 || len > WORD_MAX) {
			continue;
		}
		int n = count_in(text, start, len);

		total += weight * (once && n > 0 ? 1 : n);
	}
	return total;
}

static int score(const struct tool_def *def, const char *query)
{
	/* One packed text at a time on the stack (the keywords, then the description). */
	char text[PACKED_TEXT_LEN_MAX + 1];
	int total = score_text(def->name, query, 4, false);

	if (def->keywords != NULL) {
		total += score_text(packed_text_str(def->keywords, text, sizeof(text)), query, 3,
				    false);
	}
	if (def->description != NULL) {
		total += score_text(packed_text_str(def->description, text, sizeof(text)), query, 1,
				    true);
	}
	return total;
}

static bool path_token(const char *start, size_t len)
{
	bool slash = false;
	bool alnum = false;
	size_t dot = 0;

	while (len > 0 && strchr(".,;:!?)]}'\"`", start[len - 1]) != NULL) {
		len--; /* sentence punctuation after the token */
	}
	for (size_t i = 0; i < len; i++) {
		char c = start[i];

		if (c == '/') {
			slash = true;
		} else if (c == '.') {
			dot = i + 1;
		} else if (isalnum((unsigned char)c)) {
			alnum = true;
		}
	}
	if (!alnum) {
		return false;
	}
	if (slash) {
		return true;
	}
	/*
	 * name.ext: a name of two or more characters (so "e.g." is not one), then an extension
	 * of 1 to 5 characters with a letter in it.
	 */
	if (dot < 3 || len - dot < 1 || len - dot > 5) {
		return false;
	}
	for (size_t i = dot; i < len; i++) {
		if (isalpha((unsigned char)start[i])) {
			return true;
		}
	}
	return false;
}

bool tool_text_has_path(const char *text)
{
	const char *p = text;

	while (p != NULL && *p != '\0') {
		while (*p != '\0' && (isspace((unsigned char)*p) || strchr("(['\"`", *p) != NULL)) {
			p++;
		}
		const char *start = p;

		while (*p != '\0' && !isspace((unsigned char)*p)) {
			p++;
		}
		if (p > start && path_token(start, (size_t)(p - start))) {
			return true;
		}
	}
	return false;
}

static int search_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	const char *query = args->v[0].str;
	const struct tool_def *picked[CONFIG_AGENT_TOOL_DISCOVERED_MAX];
	int scores[CONFIG_AGENT_TOOL_DISCOVERED_MAX];
	size_t n = 0;
	const struct tool_def *stat = tool_registry_find("storage_stat");

	if (ctx->session == NULL) {
		return tool_fail(ctx, -EINVAL, "tool_search needs a request");
	}
	if (stat != NULL && tool_session_offerable(ctx->session, stat) &&
	    (tool_text_has_path(query) || tool_text_has_path(ctx->session->prompt))) {
		picked[n] = stat;
		scores[n++] = 1000; /* before any fuzzy match */
	}
	for (size_t i = 0; i < tool_registry_count(); i++) {
		const struct tool_def *def = tool_registry_get(i);
		int sc;
		size_t at;

		if (tool_is_bootstrap(def) || (def == stat && n > 0 && picked[0] == stat) ||
		    !tool_session_offerable(ctx->session, def)) {
			continue;
		}
		sc = score(def, query);
		if (sc <= 0) {
			continue;
		}
		/* Insert by score; equal scores keep the registry's order. */
		at = n;
		while (at > 0 && scores[at - 1] < sc) {
			at--;
		}
		if (at >= CONFIG_AGENT_TOOL_DISCOVERED_MAX) {
			continue;
		}
		size_t last = n < CONFIG_AGENT_TOOL_DISCOVERED_MAX ? n : n - 1;

		for (size_t k = last; k > at; k--) {
			picked[k] = picked[k - 1];
			scores[k] = scores[k - 1];
		}
		picked[at] = def;
		scores[at] = sc;
		if (n < CONFIG_AGENT_TOOL_DISCOVERED_MAX) {
			n++;
		}
	}
	tool_session_select(ctx->session, picked, n);
	jw_object_begin(out);
	jw_key(out, "activated");
	jw_array_begin(out);
	for (size_t i = 0; i < n; i++) {
		jw_object_begin(out);
		jw_key(out, "name");
		jw_string(out, picked[i]->name);
		jw_key(out, "risk");
		jw_string(out, tool_risk_name(picked[i]->risk));
		jw_object_end(out);
	}
	jw_array_end(out);
	jw_key(out, "note");
	jw_string(out, n > 0 ? "These tools are offered from the next turn on; a later tool_search "
			       "replaces them."
			     : "No installed tool matches; try other words for the task.");
	jw_object_end(out);
	return 0;
}

static const struct tool_param search_params[] = {
	{
		.name = "query",
		.type = TOOL_PARAM_STRING,
		.required = true,
		.description = TOOL_TEXT(tool_search_description_1,
			"Words describing the exact task, e.g. \"read a file\" or \"list gpio "
			"pins\"."),
		.min = 1,
		.max = CONFIG_AGENT_TOOL_QUERY_MAX_LEN,
	},
};

const struct tool_def tool_tool_search = {
	.name = "tool_search",
	.description = TOOL_TEXT(tool_search_description_2,
		"Find and activate up to five installed device tools for a task (files, GPIO, "
		"buses, displays, network, sensors, jobs). A later search replaces the previous "
		"selection."),
	.domain = TOOL_DOMAIN_DISCOVERY,
	.risk = TOOL_RISK_READ,
	.params = search_params,
	.param_count = 1,
	.output = TOOL_TEXT(tool_search_output_1, "{activated: [{name, risk}], note}"),
	.exec = search_exec,
	.keywords = TOOL_TEXT(tool_search_keywords_1, "search find discover activate tools"),
};
