/*
 * `man TOPIC` and `man -k WORD...`: the firmware's reference pages on the console. The
 * pages are const data in flash; a search keeps its hits in fixed stack storage of
 * CONFIG_AGENT_MAN_RESULTS_MAX entries. `man TOPIC` prints a verified override from the SD
 * card instead of the built-in page (reference_sd.h), held in a pool block while it prints;
 * an override that does not verify is refused with a notice, and the built-in page follows.
 */
#if defined(CONFIG_AGENT_TOOLS_REFERENCE)

#include "man_cmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent_print.h"
#include "reference.h"
#include "reference_sd.h"

#define USAGE "usage: man TOPIC | man -k WORD..."
/* man -k joins its words into one query of at most this many bytes. */
#define QUERY_MAX CONFIG_AGENT_TOOL_QUERY_MAX_LEN

static void man_error(struct agent_console *console, const char *fmt, ...)
	AGENT_PRINTF_LIKE(2, 3);

/* One error line: "man: <message>\n". */
static void man_error(struct agent_console *console, const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int n;

	memcpy(line, "man: ", 5);
	va_start(ap, fmt);
	n = vsnprintf(line + 5, sizeof(line) - 6, fmt, ap);
	va_end(ap);
	if (n < 0) {
		n = 0;
	}
	n = n + 5 < (int)sizeof(line) - 1 ? n + 5 : (int)sizeof(line) - 2;
	line[n++] = '\n';
	agent_console_write(console, line, (size_t)n);
}

static void print_usage(struct agent_console *console)
{
	agent_puts(console, USAGE "\n"
			    "  man TOPIC       print the reference page TOPIC\n"
			    "  man -k WORD...  list the pages about WORD... (topic - summary)\n"
			    "Start with: man agent\n");
}

/* One field of a page, decoded piece by piece (the built-in pages are packed). */
static void print_field(struct agent_console *console, const struct reference_page *page,
			enum reference_field field)
{
	struct reference_reader r;
	char piece[64];
	size_t n;

	reference_open(&r, page, field);
	while ((n = reference_read(&r, piece, sizeof(piece))) > 0) {
		agent_console_write(console, piece, n);
	}
}

static void print_page(struct agent_console *console, const struct reference_page *page)
{
	print_field(console, page, REFERENCE_BODY);
	agent_puts(console, "\n\n## Contract\n\n");
	print_field(console, page, REFERENCE_CONTRACT);
	agent_puts(console, "\n");
}

static int show_page(struct agent_console *console, const char *topic)
{
	const struct reference_page *page = reference_lookup(reference_builtin(), topic);
	struct reference_override ov;
	enum reference_override_status status;

	if (page == NULL) {
		man_error(console, "no page for '%.32s'; try man -k %.32s", topic, topic);
		return -ENOENT;
	}
	status = reference_override_load(page, &ov);
	if (status == REFERENCE_OVERRIDE_VERIFIED) {
		print_page(console, &ov.page);
		reference_override_release(&ov);
		return 0;
	}
	if (status != REFERENCE_OVERRIDE_NONE) {
		agent_printf(console, "man: %s/%s.md refused: %s; the built-in page follows\n",
			     REFERENCE_SD_DIR, page->topic, reference_override_why(status));
	}
	print_page(console, page);
	return 0;
}

static int search(struct agent_console *console, int argc, char **argv)
{
	struct reference_hit hits[CONFIG_AGENT_MAN_RESULTS_MAX];
	char query[QUERY_MAX + 1];
	size_t len = 0;
	size_t count;

	for (int i = 2; i < argc; i++) {
		size_t n = strlen(argv[i]);

		if (len + (i > 2) + n > QUERY_MAX) {
			man_error(console, "the words are too long (at most %d bytes)", QUERY_MAX);
			return -EINVAL;
		}
		if (i > 2) {
			query[len++] = ' ';
		}
		memcpy(query + len, argv[i], n);
		len += n;
	}
	query[len] = '\0';
	count = reference_search(reference_builtin(), query, len, hits, CONFIG_AGENT_MAN_RESULTS_MAX,
				 NULL);
	if (count == 0) {
		man_error(console, "nothing appropriate for '%.64s'", query);
		return -ENOENT;
	}
	for (size_t i = 0; i < count; i++) {
		agent_printf(console, "%s - %s\n", hits[i].page->topic, hits[i].page->summary);
	}
	return 0;
}

int agent_man_exec(struct agent_console *console, int argc, char **argv)
{
	if (argc < 2) {
		man_error(console, USAGE);
		return -EINVAL;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		print_usage(console);
		return 1;
	}
	if (strcmp(argv[1], "-k") == 0) {
		if (argc < 3) {
			man_error(console, "-k needs a word; " USAGE);
			return -EINVAL;
		}
		return search(console, argc, argv);
	}
	if (argv[1][0] == '-') {
		man_error(console, "unknown option '%.16s'; " USAGE, argv[1]);
		return -EINVAL;
	}
	if (argc > 2) {
		man_error(console, "one topic at a time; " USAGE);
		return -EINVAL;
	}
	return show_page(console, argv[1]);
}

#endif /* CONFIG_AGENT_TOOLS_REFERENCE */
