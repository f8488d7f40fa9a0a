/*
 * The chat frontend's screen (agent_screen.h). The transcript lives in one bounded buffer
 * (oldest lines dropped first) holding sanitized text and two style markers; the terminal
 * shows either its end, written live as text arrives, or a page of it redrawn from the
 * buffer. The cursor position at the end of the transcript is tracked here, with the same
 * wrapping rule for live writing and for redrawing, so the two always agree.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_screen.h"
#include "agent_text.h"

#define SB_SIZE	    CONFIG_AGENT_CHAT_SCROLLBACK_SIZE
#define MARK_BOLD   '\x01'
#define MARK_PLAIN  '\x02'
#define OUT_BUF	    512
#define INPUT_SHOWN (CONFIG_AGENT_PROMPT_MAX_LEN + 1)

static char sb[SB_SIZE] AGENT_PSRAM_ATTR;

static struct {
	struct agent_console *console;
	struct agent_mutex *lock;
	bool open;
	uint16_t cols;
	uint16_t rows;
	uint16_t height;  /* transcript rows */
	uint16_t cur_row; /* end of the transcript on screen: row 1..height */
	uint16_t cur_col; /* columns used on that row, 0..cols */
	bool bold;	  /* style at the end of the transcript */
	struct agent_text_filter filter; /* keeps a 0xc2 that may start a C1 control */
	size_t len;	  /* bytes in sb */
	int offset;	  /* visual lines paged back; 0 = at the end */
	uint32_t usage[3];
	char state[24];
	char label[CONFIG_AGENT_USER_MAX_LEN + 1];
	char input[INPUT_SHOWN];
	size_t input_len;
	char out[OUT_BUF];
	size_t out_len;
} scr AGENT_PSRAM_ATTR;

/* ---- Output ----------------------------------------------------------------------------- */

static void flush(void)
{
	if (scr.out_len > 0) {
		agent_console_write(scr.console, scr.out, scr.out_len);
		scr.out_len = 0;
	}
}

static void emit(const char *s, size_t n)
{
	while (n > 0) {
		size_t room = sizeof(scr.out) - scr.out_len;
		size_t k = n < room ? n : room;

		memcpy(scr.out + scr.out_len, s, k);
		scr.out_len += k;
		s += k;
		n -= k;
		if (scr.out_len == sizeof(scr.out)) {
			flush();
		}
	}
}

static void emits(const char *s)
{
	emit(s, strlen(s));
}

static void move_to(unsigned int row, unsigned int col)
{
	char seq[24];

	snprintf(seq, sizeof(seq), "\x1b[%u;%uH", row, col);
	emits(seq);
}

static void style(bool bold)
{
	emits(bold ? "\x1b[1m" : "\x1b[0m");
}

/* ---- Layout pieces ------------------------------------------------------------------------ */

static bool lead_byte(char c)
{
	return ((unsigned char)c & 0xc0) != 0x80;
}

static void draw_status(void)
{
	char left[64];
	char line[SCREEN_COLS_MAX + 1];
	const char *right = scr.offset > 0 ? "paged back: PgDn" : scr.state;
	size_t width = scr.cols - 1u; /* the last column stays empty: no pending wrap */
	size_t n;

	if (scr.cols < SCREEN_NARROW_COLS) {
		snprintf(left, sizeof(left), " I %u O %u T %u", (unsigned int)scr.usage[0],
			 (unsigned int)scr.usage[1], (unsigned int)scr.usage[2]);
	} else {
		snprintf(left, sizeof(left), " input %u  output %u  total %u",
			 (unsigned int)scr.usage[0], (unsigned int)scr.usage[1],
			 (unsigned int)scr.usage[2]);
	}
	memset(line, ' ', width);
	n = strlen(left) < width ? strlen(left) : width;
	memcpy(line, left, n);
	if (right[0] != '\0' && n + strlen(right) + 2 <= width) {
		memcpy(line + width - strlen(right) - 1, right, strlen(right));
	}
	move_to(scr.rows, 1);
	emits("\x1b[7m");
	emit(line, width);
	emits("\x1b[0m");
}

/* The input line, and the cursor left at its end. */
static void draw_input(void)
{
	size_t label_len = strlen(scr.label);
	size_t avail = scr.cols - 1u > label_len + 2u ? scr.cols - 1u - label_len - 2u : 0;
	size_t cols = 0;
	size_t start = scr.input_len;

	/* Show the tail of what is typed that fits. */
	while (start > 0) {
		size_t prev = start - 1;

		while (prev > 0 && !lead_byte(scr.input[prev])) {
			prev--;
		}
		if (cols + 1 > avail) {
			break;
		}
		cols++;
		start = prev;
	}
	move_to(scr.rows - 1u, 1);
	emits("\x1b[2K");
	emit(scr.label, label_len);
	emits("> ");
	emit(scr.input + start, scr.input_len - start);
}

/* Walk the transcript as visual lines: @fn gets each line's bytes and its starting style. */
typedef void (*line_fn)(const char *text, size_t len, bool bold, void *user);

static size_t walk_lines(line_fn fn, void *user)
{
	size_t lines = 0;
	size_t start = 0;
	size_t col = 0;
	bool bold = false;
	bool start_bold = false;

	for (size_t i = 0; i < scr.len; i++) {
		char c = sb[i];

		if (c == MARK_BOLD || c == MARK_PLAIN) {
			bold = c == MARK_BOLD;
			continue;
		}
		if (c == '\n') {
			if (fn != NULL) {
				fn(sb + start, i - start, start_bold, user);
			}
			lines++;
			start = i + 1;
			start_bold = bold;
			col = 0;
			continue;
		}
		if (lead_byte(c)) {
			if (col == scr.cols) {
				if (fn != NULL) {
					fn(sb + start, i - start, start_bold, user);
				}
				lines++;
				start = i;
				start_bold = bold;
				col = 0;
			}
			col++;
		}
	}
	if (fn != NULL) {
		fn(sb + start, scr.len - start, start_bold, user);
	}
	return lines + 1; /* the last line, where the transcript goes on */
}

struct page {
	size_t first; /* index of the first visual line shown */
	size_t count; /* lines shown */
	size_t index; /* line being walked */
	size_t last_cols;
};

static void draw_line(const char *text, size_t len, bool bold, void *user)
{
	struct page *pg = user;
	size_t row = pg->index - pg->first + 1;
	size_t cols = 0;

	if (pg->index >= pg->first && pg->index < pg->first + pg->count) {
		move_to((unsigned int)row, 1);
		emits("\x1b[2K");
		style(bold);
		for (size_t i = 0; i < len; i++) {
			if (text[i] == MARK_BOLD || text[i] == MARK_PLAIN) {
				style(text[i] == MARK_BOLD);
				continue;
			}
			cols += lead_byte(text[i]);
			emit(text + i, 1);
		}
		style(false);
		pg->last_cols = cols;
	}
	pg->index++;
}

/* Redraw the transcript region for the current offset. */
static void draw_transcript(void)
{
	size_t total = walk_lines(NULL, NULL);
	size_t max_offset = total > scr.height ? total - scr.height : 0;
	struct page pg = {0};

	if ((size_t)scr.offset > max_offset) {
		scr.offset = (int)max_offset;
	}
	pg.count = total < scr.height ? total : scr.height;
	pg.first = total - pg.count - (size_t)scr.offset;
	for (unsigned int r = (unsigned int)pg.count + 1; r <= scr.height; r++) {
		move_to(r, 1);
		emits("\x1b[2K");
	}
	walk_lines(draw_line, &pg);
	if (scr.offset == 0) {
		scr.cur_row = (uint16_t)pg.count;
		scr.cur_col = (uint16_t)pg.last_cols;
	}
}

/* ---- The scrollback ----------------------------------------------------------------------- */

/*
 * The bytes of the buffer's first row as walk_lines() cuts it: up to the character it puts on
 * the next row. The buffer always starts at a row's start (a line's, or such a cut), so the
 * rows of the rest stay where live output put them, and no character is split.
 */
static size_t sb_first_row(void)
{
	size_t col = 0;

	for (size_t i = 0; i < scr.len; i++) {
		char c = sb[i];

		if (c == MARK_BOLD || c == MARK_PLAIN || !lead_byte(c)) {
			continue;
		}
		if (col == scr.cols) {
			return i;
		}
		col++;
	}
	return scr.len;
}

/* Make room for @p need bytes by dropping the oldest lines (or the first rows of one too
 * long). */
static void sb_make_room(size_t need)
{
	while (scr.len + need > SB_SIZE) {
		const char *nl = memchr(sb, '\n', scr.len);
		size_t drop = nl != NULL ? (size_t)(nl - sb) + 1 : sb_first_row();

		if (drop > scr.len) {
			drop = scr.len;
		}
		memmove(sb, sb + drop, scr.len - drop);
		scr.len -= drop;
	}
}

static void sb_put(char c)
{
	sb_make_room(1);
	sb[scr.len++] = c;
}

/* ---- Live writing at the end of the transcript ------------------------------------------------- */

static void live_newline(void)
{
	emits("\r\n");
	if (scr.cur_row < scr.height) {
		scr.cur_row++;
	}
	scr.cur_col = 0;
}

static void live_char(char c)
{
	if (c == '\n') {
		live_newline();
		return;
	}
	if (lead_byte(c)) {
		if (scr.cur_col == scr.cols) {
			live_newline();
		}
		scr.cur_col++;
	}
	emit(&c, 1);
}

/* A shown byte: kept in the scrollback, and written when the view is at the end. */
static void put_live(void *user, char c)
{
	(void)user;
	sb_put(c);
	live_char(c);
}

static void put_kept(void *user, char c)
{
	(void)user;
	sb_put(c);
}

static void lock(void)
{
	if (scr.lock != NULL) {
		agent_mutex_lock(scr.lock);
	}
}

static void unlock(void)
{
	if (scr.lock != NULL) {
		agent_mutex_unlock(scr.lock);
	}
}

static void append_locked(const char *text, size_t len, enum screen_style st)
{
	bool bold = st == SCREEN_BOLD;
	bool live = scr.offset == 0;

	if (live) {
		move_to(scr.cur_row, scr.cur_col < scr.cols ? scr.cur_col + 1u : scr.cols);
		style(bold);
	}
	if (bold != scr.bold) {
		sb_put(bold ? MARK_BOLD : MARK_PLAIN);
		scr.bold = bold;
	}
	/* No control characters: nothing the model writes may steer the terminal. */
	agent_text_filter(&scr.filter, text, len, live ? put_live : put_kept, NULL);
	if (bold) {
		sb_put(MARK_PLAIN);
		scr.bold = false;
	}
	if (live) {
		style(false);
		draw_input();
	} else {
		draw_status();
		draw_input();
	}
	flush();
}

/* ---- API ---------------------------------------------------------------------------------- */

int screen_open(struct agent_console *console, uint16_t cols, uint16_t rows)
{
	if (scr.open) {
		return -EBUSY;
	}
	if (scr.lock == NULL) {
		(void)agent_mutex_init(&scr.lock); /* without it, single-threaded use still works */
	}
	lock();
	scr.console = console;
	scr.cols = cols < SCREEN_COLS_MIN ? SCREEN_COLS_MIN
		   : cols > SCREEN_COLS_MAX ? SCREEN_COLS_MAX
					    : cols;
	scr.rows = rows < SCREEN_ROWS_MIN ? SCREEN_ROWS_MIN
		   : rows > SCREEN_ROWS_MAX ? SCREEN_ROWS_MAX
					    : rows;
	scr.height = (uint16_t)(scr.rows - 2u);
	scr.cur_row = 1;
	scr.cur_col = 0;
	scr.bold = false;
	agent_text_filter_reset(&scr.filter);
	scr.len = 0;
	scr.offset = 0;
	memset(scr.usage, 0, sizeof(scr.usage));
	scr.state[0] = '\0';
	scr.input_len = 0;
	scr.open = true;
	char seq[24];

	emits("\x1b[0m\x1b[2J");
	snprintf(seq, sizeof(seq), "\x1b[1;%ur", (unsigned int)scr.height);
	emits(seq);
	draw_status();
	draw_input();
	flush();
	unlock();
	return 0;
}

void screen_close(void)
{
	lock();
	if (scr.open) {
		emits("\x1b[0m\x1b[r\x1b[2J\x1b[H");
		flush();
		scr.open = false;
	}
	unlock();
}

void screen_append(const char *text, size_t len, enum screen_style st)
{
	lock();
	if (scr.open && len > 0) {
		append_locked(text, len, st);
	}
	unlock();
}

void screen_end_line(void)
{
	lock();
	if (scr.open) {
		size_t i = scr.len;

		while (i > 0 && (sb[i - 1] == MARK_BOLD || sb[i - 1] == MARK_PLAIN)) {
			i--;
		}
		if (i > 0 && sb[i - 1] != '\n') {
			append_locked("\n", 1, SCREEN_PLAIN);
		}
	}
	unlock();
}

void screen_set_usage(uint32_t input, uint32_t output, uint32_t total)
{
	lock();
	scr.usage[0] = input;
	scr.usage[1] = output;
	scr.usage[2] = total;
	if (scr.open) {
		draw_status();
		draw_input();
		flush();
	}
	unlock();
}

void screen_set_state(const char *state)
{
	lock();
	snprintf(scr.state, sizeof(scr.state), "%s", state != NULL ? state : "");
	if (scr.open) {
		draw_status();
		draw_input();
		flush();
	}
	unlock();
}

void screen_set_input(const char *label, const char *text, size_t len)
{
	lock();
	snprintf(scr.label, sizeof(scr.label), "%s", label);
	scr.input_len = len < sizeof(scr.input) ? len : sizeof(scr.input) - 1;
	memcpy(scr.input, text, scr.input_len);
	if (scr.open) {
		draw_input();
		flush();
	}
	unlock();
}

void screen_page(int pages)
{
	lock();
	if (scr.open) {
		int step = scr.height > 1 ? scr.height - 1 : 1;
		int offset = scr.offset + pages * step;

		scr.offset = offset < 0 ? 0 : offset;
		draw_transcript(); /* clamps the offset */
		draw_status();
		draw_input();
		flush();
	}
	unlock();
}

void screen_transcript_size(uint16_t *cols, uint16_t *rows)
{
	lock();
	*cols = scr.cols > 0 ? scr.cols : SCREEN_COLS_MIN;
	*rows = scr.height > 0 ? scr.height : SCREEN_ROWS_MIN - 2u;
	unlock();
}
