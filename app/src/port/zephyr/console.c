/*
 * Console of the Zephyr port: a struct agent_console wraps the shell instance a command ran
 * on. Output goes through shell_fprintf(), which the shell allows from any thread and which
 * keeps it ordered with the shell's own output. Raw input is taken with shell_set_bypass().
 *
 * Zephyr 4.4 added a user-data pointer to shell_set_bypass() and to its callback
 * (doc/releases/migration-guide-4.4.rst, "Shell"); older trees have the two-argument form.
 * Both are handled: with user data the console is passed through it, without it the
 * trampoline finds the console from the shell pointer.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <zephyr/kernel.h>
#include <zephyr/shell/shell.h>
#include <zephyr/version.h>

/* The serial shell's receive ring buffer, wiped when a bypass ends (forget_taken_input()). */
#if defined(CONFIG_SHELL_BACKEND_SERIAL) &&                                                    \
	(defined(CONFIG_SHELL_BACKEND_SERIAL_API_POLLING) ||                                   \
	 defined(CONFIG_SHELL_BACKEND_SERIAL_API_INTERRUPT_DRIVEN))
#include <zephyr/shell/shell_uart.h>
#include <zephyr/sys/ring_buffer.h>
#define CONSOLE_WIPES_UART_RX 1
#else
#define CONSOLE_WIPES_UART_RX 0
#endif

#include "agent_port.h"
#include "zephyr_port.h"

#if ZEPHYR_VERSION_CODE >= ZEPHYR_VERSION(4, 4, 0)
#define SHELL_BYPASS_HAS_USER_DATA 1
#else
#define SHELL_BYPASS_HAS_USER_DATA 0
#endif

struct agent_console {
	const struct shell *sh;
	agent_console_bypass_fn bypass;
	void *bypass_user_data;
	bool draining;	  /* discarding typed-ahead input up to a line end (see deliver()) */
	bool in_callback; /* deliver() is inside the callback: it turns the shell's bypass off */
	struct k_work_delayable wake; /* agent_console_wake_after() */
};

static struct agent_console console_table[ZEPHYR_PORT_CONSOLE_SLOTS];
/* Guards console_table and the bypass fields; held only for a few loads and stores. */
static struct k_spinlock console_lock;
/* One callback call at a time: with input (the shell thread) or a wake-up (the system work
 * queue). Never held by a thread that holds the shell's mutex. */
static K_MUTEX_DEFINE(callback_lock);

static void wake_handler(struct k_work *work);

struct agent_console *zephyr_console_get(const struct shell *sh)
{
	struct agent_console *found = NULL;
	k_spinlock_key_t key;

	if (sh == NULL) {
		return NULL;
	}
	key = k_spin_lock(&console_lock);
	for (size_t i = 0; i < ZEPHYR_PORT_CONSOLE_SLOTS && found == NULL; i++) {
		if (console_table[i].sh == sh) {
			found = &console_table[i];
		}
	}
	for (size_t i = 0; i < ZEPHYR_PORT_CONSOLE_SLOTS && found == NULL; i++) {
		if (console_table[i].sh == NULL) {
			found = &console_table[i];
			found->sh = sh;
			k_work_init_delayable(&found->wake, wake_handler);
		}
	}
	k_spin_unlock(&console_lock, key);
	return found;
}

int agent_console_write(struct agent_console *console, const char *data, size_t len)
{
	if (console == NULL || (data == NULL && len > 0u)) {
		return -EINVAL;
	}
	/* "%.*s" takes an int; longer writes go out in pieces. A NUL byte ends a piece early. */
	while (len > 0u) {
		int piece = len > (size_t)INT_MAX ? INT_MAX : (int)len;

		shell_fprintf(console->sh, SHELL_NORMAL, "%.*s", piece, data);
		data += piece;
		len -= (size_t)piece;
	}
	return 0;
}

/* Where the line that @data starts with ends: the index after the first CR or LF, or 0. */
static size_t line_end(const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\r' || data[i] == '\n') {
			return i + 1u;
		}
	}
	return 0;
}

/* Whether input keeps coming to the port's trampoline (a callback or the drain is on). */
static bool bypass_wanted(struct agent_console *console);
static void shell_bypass_off(struct agent_console *console);

/*
 * Input typed ahead of the end of a bypass. Zephyr's shell hands bypass input over in chunks
 * (up to 16 bytes, subsys/shell/shell.c, state_collect()) and cannot take back what a
 * callback leaves of one: bytes typed right after the Enter of a hidden key entry, in the
 * same chunk, are gone, and the rest of their line would reach the shell without its start
 * (`agent config model m2` becoming `g model m2`). So the port discards that line to its end
 * instead, whatever chunks it spans, then tells the person once and hands the console back.
 * A line of which nothing was lost (the chunk ended with the bypass) is not touched. The
 * simulator's port gives such input back whole; docs/zephyr-port.md, "Console", says this.
 */
static void drain(struct agent_console *console, const uint8_t *data, size_t len)
{
	while (len > 0u) {
		size_t end = line_end(data, len);

		if (end == 0u) {
			return; /* the line goes on in a later chunk */
		}
		data += end;
		len -= end;
		if (len > 0u && (data[-1] == '\r' && data[0] == '\n')) {
			data++; /* CR LF ends one line */
			len--;
		}
		if (len == 0u) {
			console->draining = false;
			shell_fprintf(console->sh, SHELL_WARNING,
				      "agent: input typed right after the entry was lost; "
				      "type that line again\n");
			return;
		}
	}
}

static void deliver(struct agent_console *console, uint8_t *data, size_t len)
{
	agent_console_bypass_fn fn;
	void *user_data;
	size_t taken = 0; /* bytes of @data a callback took; the drain starts after them */
	k_spinlock_key_t key;

	/* Input lapses a wake-up (the callback asks again); one that already runs waits. */
	(void)k_work_cancel_delayable(&console->wake);
	k_mutex_lock(&callback_lock, K_FOREVER);
	key = k_spin_lock(&console_lock);

	fn = console->bypass;
	user_data = console->bypass_user_data;
	k_spin_unlock(&console_lock, key);
	/* Called unlocked: the callback writes to the console and may clear the bypass. */
	if (fn != NULL && !console->draining) {
		console->in_callback = true;
		taken = fn(console, data, len, user_data);
		console->in_callback = false;
		if (taken > len) {
			taken = len;
		}
		if (taken > 0u && taken < len && data[taken - 1u] == '\r' && data[taken] == '\n') {
			taken++; /* the LF of the CR LF that ended the entry */
		}
		key = k_spin_lock(&console_lock);
		if (console->bypass == NULL && taken < len) {
			console->draining = true;
		}
		k_spin_unlock(&console_lock, key);
	}
	if (console->draining) {
		drain(console, data + taken, len - taken);
	}
	if (!bypass_wanted(console)) {
		shell_bypass_off(console);
	}
	k_mutex_unlock(&callback_lock);
	/*
	 * The chunk is state_collect()'s buffer on the shell thread's stack, the shell's for this
	 * call only (it reads the next chunk into it, or returns): nothing reads it after this.
	 * It may hold the hidden key prompt's input, the API key, so it is wiped (see
	 * forget_taken_input() for the ring it came from).
	 */
	agent_wipe(data, len);
}

/*
 * The call without input that agent_console_wake_after() asked for, on the system work queue:
 * the shell calls a bypass callback only when input came (subsys/shell/shell.c,
 * state_collect()), so it cannot tell a frontend that an ESC stayed alone. As in deliver(),
 * a callback that ends the bypass leaves the shell's on until it has returned, so what it
 * prints last ("cancelled; key unchanged") comes before the prompt; the prompt is then
 * printed here, the shell thread not being the one that ends the bypass.
 */
static void wake_handler(struct k_work *work)
{
	struct k_work_delayable *dwork = k_work_delayable_from_work(work);
	struct agent_console *console = CONTAINER_OF(dwork, struct agent_console, wake);
	agent_console_bypass_fn fn;
	void *user_data;
	k_spinlock_key_t key;

	k_mutex_lock(&callback_lock, K_FOREVER);
	key = k_spin_lock(&console_lock);
	fn = console->draining ? NULL : console->bypass;
	user_data = console->bypass_user_data;
	k_spin_unlock(&console_lock, key);
	if (fn != NULL) {
		console->in_callback = true;
		(void)fn(console, NULL, 0, user_data);
		console->in_callback = false;
		if (!bypass_wanted(console)) {
			shell_bypass_off(console);
			/* The prompt, as agent_console_set_bypass() has it printed. */
			shell_fprintf(console->sh, SHELL_NORMAL, "%s", "");
		}
	}
	k_mutex_unlock(&callback_lock);
}

void agent_console_wake_after(struct agent_console *console, uint32_t ms)
{
	if (console != NULL && bypass_wanted(console)) {
		(void)k_work_reschedule(&console->wake, K_MSEC(ms));
	}
}

#if SHELL_BYPASS_HAS_USER_DATA
static void bypass_trampoline(const struct shell *sh, uint8_t *data, size_t len, void *user_data)
{
	(void)sh;
	deliver(user_data, data, len);
}
#else
static void bypass_trampoline(const struct shell *sh, uint8_t *data, size_t len)
{
	struct agent_console *console = zephyr_console_get(sh);

	if (console != NULL) {
		deliver(console, data, len);
	}
}
#endif

static bool bypass_wanted(struct agent_console *console)
{
	k_spinlock_key_t key = k_spin_lock(&console_lock);
	bool wanted = console->bypass != NULL || console->draining;

	k_spin_unlock(&console_lock, key);
	return wanted;
}

static void shell_bypass_on(struct agent_console *console)
{
#if SHELL_BYPASS_HAS_USER_DATA
	shell_set_bypass(console->sh, bypass_trampoline, console);
#else
	shell_set_bypass(console->sh, bypass_trampoline);
#endif
}

/*
 * What a bypass took stays in the serial shell's receive ring buffer until later input
 * overwrites it: the shell reads its input from there, and the hidden key prompt's input is
 * the API key. When a bypass ends, every byte of that buffer not waiting to be read is wiped
 * (docs/configuration.md, "What happens to the key in RAM"). The free space is claimed with
 * the ring buffer's own calls, wiped and given back unchanged, so input typed ahead is kept;
 * interrupts are locked meanwhile, as the UART's interrupt (or, polling, the timer that reads
 * the UART) adds to the buffer. Only these two serial backends are handled: the
 * asynchronous one (CONFIG_SHELL_BACKEND_SERIAL_API_ASYNC) keeps received bytes in the
 * uart_async_rx helper's buffers, where they stay until the UART fills that buffer again,
 * and other backends (RTT, telnet, ...) have buffers of their own; the port does not reach
 * those and does not wipe them (no image of this project uses them).
 */
static void forget_taken_input(const struct shell *sh)
{
#if CONSOLE_WIPES_UART_RX
	SHELL_UART_STRUCT *uart;
	unsigned int key;
	uint8_t *area;
	uint32_t len;

	if (sh != shell_backend_uart_get_ptr()) {
		return;
	}
	uart = (SHELL_UART_STRUCT *)sh->iface->ctx;
	key = irq_lock();
	/* Two claims at most: the free space may wrap around the end of the buffer. */
	while ((len = ring_buf_put_claim(&uart->rx_ringbuf, &area, UINT32_MAX)) > 0u) {
		agent_wipe(area, len);
	}
	(void)ring_buf_put_finish(&uart->rx_ringbuf, 0);
	irq_unlock(key);
#else
	(void)sh;
#endif
}

/* Off: the shell takes input again (and clears its command buffer). */
static void shell_bypass_off(struct agent_console *console)
{
#if SHELL_BYPASS_HAS_USER_DATA
	shell_set_bypass(console->sh, NULL, NULL);
#else
	shell_set_bypass(console->sh, NULL);
#endif
}

void agent_console_set_bypass(struct agent_console *console, agent_console_bypass_fn fn,
			      void *user_data)
{
	k_spinlock_key_t key;

	if (console == NULL) {
		return;
	}
	key = k_spin_lock(&console_lock);
	console->bypass = fn;
	console->bypass_user_data = user_data;
	if (fn != NULL) {
		console->draining = false;
	}
	k_spin_unlock(&console_lock, key);
	/* A wake-up asked by the frontend that ends, or by an earlier one, is dropped. Not
	 * waited for: this may run inside it. */
	(void)k_work_cancel_delayable(&console->wake);

	/*
	 * Ended from inside a callback, the trampoline stays until deliver() has seen what the
	 * callback left of its chunk (it may start draining a line); otherwise it goes now.
	 */
	if (fn == NULL) {
		forget_taken_input(console->sh);
	}
	if (fn != NULL) {
		shell_bypass_on(console);
	} else if (!console->in_callback) {
		shell_bypass_off(console);
		/*
		 * Ended by another thread (the worker, when a request finishes): the shell prints
		 * its prompt again only when a bypass callback ends the bypass (state_collect()
		 * sets the shell active) or when another thread prints while no command runs
		 * (shell_vfprintf() redraws the prompt after the text). So print nothing that
		 * way, and the prompt comes back at once, as on the simulator. Inside a command
		 * the shell prints it when the command returns, and this prints nothing.
		 */
		shell_fprintf(console->sh, SHELL_NORMAL, "%s", "");
	}
}

int agent_console_size(struct agent_console *console, uint16_t *cols, uint16_t *rows)
{
	if (console == NULL || cols == NULL || rows == NULL) {
		return -EINVAL;
	}
	/*
	 * The shell has no public call for the terminal size; it assumes these defaults until
	 * its `resize` command measures the terminal, and so does the port.
	 */
	*cols = CONFIG_SHELL_DEFAULT_TERMINAL_WIDTH;
	*rows = CONFIG_SHELL_DEFAULT_TERMINAL_HEIGHT;
	return 0;
}
