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
};

static struct agent_console console_table[ZEPHYR_PORT_CONSOLE_SLOTS];
/* Guards console_table and the bypass fields; held only for a few loads and stores. */
static struct k_spinlock console_lock;

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

static void deliver(struct agent_console *console, uint8_t *data, size_t len)
{
	agent_console_bypass_fn fn;
	void *user_data;
	k_spinlock_key_t key = k_spin_lock(&console_lock);

	fn = console->bypass;
	user_data = console->bypass_user_data;
	k_spin_unlock(&console_lock, key);
	/*
	 * Called unlocked: the callback writes to the console and may clear the bypass. What
	 * it leaves of the chunk cannot be handed back to the shell, so it is dropped.
	 */
	if (fn != NULL) {
		(void)fn(console, data, len, user_data);
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
	k_spin_unlock(&console_lock, key);

	/* NULL turns bypass off; the shell then also clears its command buffer. */
#if SHELL_BYPASS_HAS_USER_DATA
	shell_set_bypass(console->sh, fn != NULL ? bypass_trampoline : NULL,
			 fn != NULL ? console : NULL);
#else
	shell_set_bypass(console->sh, fn != NULL ? bypass_trampoline : NULL);
#endif
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
