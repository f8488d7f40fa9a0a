/*
 * The simulator's console: a UART stand-in over a pair of file descriptors (stdin and
 * stdout, or the master side of a pseudo terminal). Only the simulator uses this header.
 */
#ifndef POSIX_CONSOLE_H
#define POSIX_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"

/** Bind the console to @p in_fd / @p out_fd. Output "\n" is sent as "\r\n", as a UART shell does. */
struct agent_console *posix_console_init(int in_fd, int out_fd);

/**
 * Open a new pseudo terminal in raw mode. Returns the master descriptor and writes the
 * slave's path to @p name, or returns a negative errno.
 */
int posix_console_open_pty(char *name, size_t len);

/**
 * Hand @p data to the bypass callback when one is set. Returns the number of bytes it
 * took (at least 1, unless @p len is 0 or the callback ended the bypass before taking any),
 * or 0 when no bypass is set.
 */
size_t posix_console_deliver(struct agent_console *console, const uint8_t *data, size_t len);

bool posix_console_bypassed(struct agent_console *console);

/**
 * Milliseconds until the bypass asked to be called without input (agent_console_wake_after()),
 * 0 when that is due, -1 when it did not ask. posix_console_wake() makes that call.
 */
int posix_console_wake_in(struct agent_console *console);
void posix_console_wake(struct agent_console *console);

/**
 * Write @p data as it is (no "\n" to "\r\n"), in one piece between the writes of
 * agent_console_write(): the simulator's SMP responses, which must not be split by shell
 * output from another thread.
 */
int posix_console_write_raw(struct agent_console *console, const void *data, size_t len);

#endif /* POSIX_CONSOLE_H */
