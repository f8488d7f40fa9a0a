/* Formatted output to the invoking console, in bounded pieces. */
#ifndef AGENT_PRINT_H
#define AGENT_PRINT_H

#include "agent_port.h"

#if defined(__GNUC__)
#define AGENT_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define AGENT_PRINTF_LIKE(f, a)
#endif

/** printf to the console; output longer than 319 bytes is cut and ends the line. */
void agent_printf(struct agent_console *console, const char *fmt, ...) AGENT_PRINTF_LIKE(2, 3);

/** Write a NUL-terminated string as is. */
void agent_puts(struct agent_console *console, const char *text);

/** One error line: "agent: <message>\n". */
void agent_error(struct agent_console *console, const char *fmt, ...) AGENT_PRINTF_LIKE(2, 3);

#endif /* AGENT_PRINT_H */
