/*
 * The text of a tool confirmation (docs/tools.md, "Policy and confirmation"): the tool's name
 * and every argument in a canonical form laid out for the screen it is shown on, so that what
 * the model sends can neither push the name, a path or the question off the screen nor
 * disguise them:
 *
 *   [confirm] storage_write
 *     path: "/lfs/notes.txt"
 *     content: "\u001b[2Jhello\nworld xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx … (+2950 bytes)
 *
 * One line per top-level member of the arguments object, `  KEY: VALUE`, the value
 * re-serialised as compact JSON (nested objects and arrays on the same line); a value longer
 * than its line goes on in continuation lines indented by four spaces. Escaped everywhere:
 * `"` and `\`, every control character (C0, DEL, C1: \n, \t, \u001b, \u009b, ...) and every
 * invisible or direction-changing character (bidi controls U+202A..U+202E, U+2066..U+2069,
 * U+200E, U+200F, U+061C; zero-width and other default-ignorable code points such as U+200B,
 * U+2060, U+FEFF, the tags U+E0000..U+E0FFF; U+2028, U+2029), as \uXXXX (a surrogate pair
 * above U+FFFF). Every non-ASCII character is counted as two columns, so no line is wider
 * than the screen on any terminal.
 *
 * Height: at most @p lines lines. The lines for the arguments are shared out so that short
 * values are shown whole and long ones get the rest; a value that does not fit its lines is
 * cut at a character and ends with ` … (+N bytes)`, N the bytes of its canonical text not
 * shown (` … (+N B)` where the line is too narrow for that after its indent: at 20 and 21
 * columns with a 4-digit N on a continuation line). When there are more members than lines, the last line says how many are not shown
 * (`  … (+K more arguments)`). Arguments that are not a JSON object (a caller's mistake: the
 * request validates them first) are shown as one escaped text line `  not JSON: ...`.
 */
#ifndef AGENT_CONFIRM_TEXT_H
#define AGENT_CONFIRM_TEXT_H

#include <stddef.h>

#define AGENT_CONFIRM_TEXT_COLS_MIN  20
#define AGENT_CONFIRM_TEXT_COLS_MAX  255
#define AGENT_CONFIRM_TEXT_LINES_MIN 2	/* the name and one line of arguments */
#define AGENT_CONFIRM_TEXT_LINES_MAX 48 /* however tall the screen */

/** Receives one line, ended by '\n'. */
typedef void (*agent_confirm_text_put_fn)(void *user, const char *line, size_t len);

/**
 * Lay out the confirmation of tool @p name with the arguments @p args (@p len bytes, a JSON
 * object) for a screen @p cols columns wide, in at most @p lines lines (both clamped to the
 * bounds above); every line is at most @p cols - 1 columns. Returns the number of lines
 * passed to @p put. Not reentrant: one confirmation at a time (its state is static).
 */
unsigned int agent_confirm_text(const char *name, const char *args, size_t len,
				unsigned int cols, unsigned int lines, agent_confirm_text_put_fn put,
				void *user);

#endif /* AGENT_CONFIRM_TEXT_H */
