#include "agent_print.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Long enough for one status line with a maximal endpoint URL. */
#define AGENT_PRINT_LINE_BYTES 320

static void vprint(struct agent_console *console, const char *prefix, bool end_line,
		   const char *fmt, va_list ap)
{
	char line[AGENT_PRINT_LINE_BYTES];
	size_t used = 0;
	int n;

	if (prefix != NULL) {
		used = strlen(prefix);
		memcpy(line, prefix, used);
	}
	n = vsnprintf(line + used, sizeof(line) - used, fmt, ap);
	if (n < 0) {
		return;
	}
	used += (size_t)n;
	if (used >= sizeof(line)) {
		/* Cut, but still end the line so the next output starts cleanly. */
		used = sizeof(line) - 1;
		end_line = true;
	}
	if (end_line) {
		if (used > 0 && line[used - 1] == '\n') {
			used--;
		}
		line[used++] = '\n';
	}
	agent_console_write(console, line, used);
}

void agent_printf(struct agent_console *console, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(console, NULL, false, fmt, ap);
	va_end(ap);
}

void agent_error(struct agent_console *console, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(console, "agent: ", true, fmt, ap);
	va_end(ap);
}

void agent_puts(struct agent_console *console, const char *text)
{
	agent_console_write(console, text, strlen(text));
}
