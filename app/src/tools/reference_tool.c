/*
 * firmware_reference: the reference registry (reference.h) for the model. One query, at most
 * CONFIG_AGENT_REFERENCE_MATCHES_MAX compact contracts, and the coding guidance in every
 * result. The result always fits the tool result bound: a contract that does not fit is cut
 * (at a line end where it can be) and the result says "truncated": true. A page with a
 * verified override on the SD card (reference_sd.h) gives the override's contract, held in
 * a pool block only while its entry is written; one that does not verify gives the built-in.
 */
#if defined(CONFIG_AGENT_TOOLS_REFERENCE)

#include "tools_reference.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "reference_sd.h"
#include "utf8.h"

/* A cut contract keeps at least this much, or is left out. */
#define CONTRACT_PART_MIN 64

/* Packed like the tools' texts; the one of this build's hardware tools is linked. */
#if defined(CONFIG_AGENT_TOOLS_HARDWARE)
const struct packed_text *const reference_guidance = TOOL_TEXT(reference_guidance_hardware,
	"Use the commands, names, constants and limits documented in these contracts, never "
	"guessed strings or numbers; discover hardware names first (hardware_describe, then "
	"gpio_list or buses_list) and use only names they return; respect the Kconfig gates: a "
	"tool, command or page missing from this build is not available, so do not emulate it; "
	"preserve cleanup patterns: close what you open, release what you claim and restore "
	"state on every error path.");
#else
const struct packed_text *const reference_guidance = TOOL_TEXT(reference_guidance_no_hardware,
	"Use the commands, names, constants and limits documented in these contracts, never "
	"guessed strings or numbers; this build has no hardware inspection tools, so assume no "
	"pin, bus or device exists; respect the Kconfig gates: a tool, command or page missing "
	"from this build is not available, so do not emulate it; preserve cleanup patterns: "
	"close what you open, release what you claim and restore state on every error path.");
#endif

/*
 * The character at @p text (at most @p len bytes): returns its length in bytes and puts in
 * @p cost what the JSON writer (json_writer.c) makes of it: 1 for plain ASCII, 2 for a
 * short escape, 6 for \u00XX, 6 for U+2028 and U+2029, the same bytes for other valid
 * UTF-8, and 3 (one U+FFFD, an upper bound) for each byte of an invalid sequence.
 */
static size_t char_at(const char *text, size_t len, size_t *cost)
{
	const uint8_t *s = (const uint8_t *)text;
	uint8_t lo;
	uint8_t hi;
	uint8_t need;
	size_t k;

	if (s[0] < 0x80) {
		if (s[0] == '"' || s[0] == '\\' || s[0] == '\b' || s[0] == '\f' || s[0] == '\n' ||
		    s[0] == '\r' || s[0] == '\t') {
			*cost = 2;
		} else {
			*cost = s[0] < 0x20 ? 6 : 1;
		}
		return 1;
	}
	need = utf8_lead(s[0], &lo, &hi);
	for (k = 1; k <= need && k < len; k++) {
		if (s[k] < lo || s[k] > hi) {
			break;
		}
		lo = 0x80;
		hi = 0xBF;
	}
	if (need == 0 || k <= need) {
		*cost = 3;
		return 1;
	}
	*cost = k == 3 && s[0] == 0xE2 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9) ? 6 : k;
	return k;
}

/* Bytes @p len bytes of @p text take once escaped by the JSON writer (at most). */
static size_t escaped_len(const char *text, size_t len)
{
	size_t n = 0;
	size_t i = 0;

	while (i < len) {
		size_t cost;

		i += char_at(&text[i], len - i, &cost);
		n += cost;
	}
	return n;
}

/* The characters of a page's contract, decoded a piece at a time (reference_reader). */
struct contract_chars {
	struct reference_reader r;
	size_t len; /* bytes in buf */
	size_t pos; /* the next character's first byte */
	char buf[64];
};

static void chars_open(struct contract_chars *cc, const struct reference_page *page)
{
	reference_open(&cc->r, page, REFERENCE_CONTRACT);
	cc->len = 0;
	cc->pos = 0;
}

/*
 * The next character: its first byte at *@p at, its length returned (0 at the end) and its
 * cost as char_at() gives it. The buffer holds four bytes ahead whenever the text has them,
 * so char_at() sees what it would see in the whole text.
 */
static size_t chars_next(struct contract_chars *cc, const char **at, size_t *cost)
{
	size_t step;

	if (cc->len - cc->pos < 4) {
		memmove(cc->buf, &cc->buf[cc->pos], cc->len - cc->pos);
		cc->len -= cc->pos;
		cc->pos = 0;
		cc->len += reference_read(&cc->r, &cc->buf[cc->len], sizeof(cc->buf) - cc->len);
	}
	if (cc->pos == cc->len) {
		return 0;
	}
	step = char_at(&cc->buf[cc->pos], cc->len - cc->pos, cost);
	*at = &cc->buf[cc->pos];
	cc->pos += step;
	return step;
}

/* Bytes the contract of @p page takes once escaped by the JSON writer (at most). */
static size_t contract_escaped_len(const struct reference_page *page)
{
	struct contract_chars cc;
	const char *at;
	size_t cost;
	size_t n = 0;

	chars_open(&cc, page);
	while (chars_next(&cc, &at, &cost) > 0) {
		n += cost;
	}
	return n;
}

/*
 * How many bytes of the contract of @p page fit in @p room once escaped, never splitting a
 * character: the end of the last whole line that fits when that keeps at least half.
 */
static size_t fitting_prefix(const struct reference_page *page, size_t room)
{
	struct contract_chars cc;
	const char *at;
	size_t cost;
	size_t step;
	size_t used = 0;
	size_t end = 0;
	size_t line_end = 0;
	bool cut = false;

	chars_open(&cc, page);
	while ((step = chars_next(&cc, &at, &cost)) > 0) {
		if (used + cost > room) {
			cut = true;
			break;
		}
		used += cost;
		end += step;
		if (at[step - 1] == '\n') {
			line_end = end;
		}
	}
	if (cut && line_end > 0 && line_end >= end / 2) {
		return line_end;
	}
	return end;
}

/* The member text an entry writes besides its contract, escaped. */
static size_t entry_overhead(const struct reference_page *page, bool first)
{
	return (first ? 0 : 1) + strlen("{\"topic\":\"\",\"summary\":\"\",\"contract\":\"\"}") +
	       escaped_len(page->topic, strlen(page->topic)) +
	       escaped_len(page->summary, strlen(page->summary));
}

static void write_entry(struct json_writer *out, const struct reference_page *page,
			size_t contract_len)
{
	struct reference_reader r;
	char piece[64];
	size_t n;

	jw_object_begin(out);
	jw_key(out, "topic");
	jw_string(out, page->topic);
	jw_key(out, "summary");
	jw_string(out, page->summary);
	jw_key(out, "contract");
	jw_string_begin(out);
	reference_open(&r, page, REFERENCE_CONTRACT);
	while (contract_len > 0 &&
	       (n = reference_read(&r, piece, contract_len < sizeof(piece) ? contract_len
									 : sizeof(piece))) > 0) {
		jw_string_part(out, piece, n);
		contract_len -= n;
	}
	jw_string_end(out);
	jw_object_end(out);
}

/* "hint": the topics of this build, as many as fit in @p room bytes. */
static void write_hint(struct json_writer *out, const struct reference_index *index,
		       size_t room)
{
	static const char intro[] = "No reference page matches. Try other words, or one of "
				    "these topics:";
	size_t used = strlen(",\"hint\":\"\"") + strlen(intro);

	if (used > room) {
		return;
	}
	jw_key(out, "hint");
	jw_string_begin(out);
	jw_string_part(out, intro, strlen(intro));
	for (size_t i = 0; i < index->count; i++) {
		const char *topic = index->pages[i].topic;
		size_t n = strlen(topic);

		if (used + 1 + escaped_len(topic, n) > room) {
			break;
		}
		used += 1 + escaped_len(topic, n);
		jw_string_part(out, " ", 1);
		jw_string_part(out, topic, n);
	}
	jw_string_end(out);
}

int reference_tool_answer(const struct reference_index *index, const char *query, size_t len,
			  struct json_writer *out)
{
	struct reference_hit hits[CONFIG_AGENT_REFERENCE_MATCHES_MAX];
	size_t count = reference_search(index, query, len, hits, CONFIG_AGENT_REFERENCE_MATCHES_MAX,
					NULL);
	char guidance_text[PACKED_TEXT_LEN_MAX + 1];
	const char *guidance =
		packed_text_str(reference_guidance, guidance_text, sizeof(guidance_text));
	/* What follows the list: `],"guidance":"..."` (the closing brace and a "truncated"
	 * member are in the room tool_result_room() keeps back).
	 */
	size_t tail = strlen("],\"guidance\":\"\"") +
		      escaped_len(guidance, strlen(guidance));
	bool truncated = false;

	jw_object_begin(out);
	jw_key(out, "results");
	jw_array_begin(out);
	for (size_t i = 0; i < count && !truncated; i++) {
		struct reference_override ov;
		const struct reference_page *page =
			reference_override_load(hits[i].page, &ov) == REFERENCE_OVERRIDE_VERIFIED
				? &ov.page
				: hits[i].page;
		size_t room = tool_result_room(out);
		size_t overhead = entry_overhead(page, i == 0);
		size_t whole = contract_escaped_len(page);
		size_t fit = 0;

		if (room >= tail + overhead + whole) {
			fit = page->contract_len;
		} else if (room >= tail + overhead + CONTRACT_PART_MIN) {
			fit = fitting_prefix(page, room - tail - overhead);
		} else {
			truncated = true;
		}
		if (!truncated) {
			write_entry(out, page, fit);
			truncated = fit < page->contract_len;
		}
		reference_override_release(&ov);
	}
	jw_array_end(out);
	if (count == 0) {
		size_t room = tool_result_room(out);

		write_hint(out, index, room > tail ? room - tail : 0);
	}
	jw_key(out, "guidance");
	jw_string(out, guidance);
	if (truncated) {
		jw_key(out, "truncated");
		jw_bool(out, true);
	}
	jw_object_end(out);
	return 0;
}

static int reference_exec(struct tool_ctx *ctx, const struct tool_args *args,
			  struct json_writer *out)
{
	(void)ctx;
	return reference_tool_answer(reference_builtin(), args->v[0].str, args->v[0].len, out);
}

static const struct tool_param reference_params[] = {
	{
		.name = "query",
		.type = TOOL_PARAM_STRING,
		.required = true,
		.description = TOOL_TEXT(reference_tool_description_1,
			"One query naming the subject and the task, e.g. \"storage write "
			"limits\" or \"gpio read level\"."),
		.min = 1,
		.max = CONFIG_AGENT_TOOL_QUERY_MAX_LEN,
	},
};

const struct tool_def tool_firmware_reference = {
	.name = "firmware_reference",
	.description = TOOL_TEXT(reference_tool_description_2,
		"Search this firmware's reference pages (the ones `man` shows) for compact, "
		"authoritative contracts: shell commands, tools, paths, limits and errors of "
		"this build. Returns the best few matches with coding guidance. Consult it "
		"before writing commands or code for the device."),
	.domain = TOOL_DOMAIN_REFERENCE,
	.risk = TOOL_RISK_READ,
	.params = reference_params,
	.param_count = 1,
	.output = TOOL_TEXT(reference_tool_output_1,
		"{results: [{topic, summary, contract}], guidance, truncated?, hint?}"),
	.exec = reference_exec,
	.keywords = TOOL_TEXT(reference_tool_keywords_1,
		"reference manual man documentation contract api limits help"),
};

#endif /* CONFIG_AGENT_TOOLS_REFERENCE */
