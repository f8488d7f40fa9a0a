/* Console of the simulator: the same contract as the Zephyr shell's console. */
#define _GNU_SOURCE
#include "posix_console.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

struct agent_console {
	int in_fd;
	int out_fd;
	agent_console_bypass_fn bypass;
	void *bypass_user_data;
	bool wake_set;	    /* agent_console_wake_after() asked for a call without input */
	int64_t wake_at_ms; /* when, in uptime */
	pthread_mutex_t lock;
};

static struct agent_console the_console = {
	.in_fd = -1,
	.out_fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

struct agent_console *posix_console_init(int in_fd, int out_fd)
{
	the_console.in_fd = in_fd;
	the_console.out_fd = out_fd;
	the_console.bypass = NULL;
	return &the_console;
}

int posix_console_open_pty(char *name, size_t len)
{
	struct termios tio;
	int fd = posix_openpt(O_RDWR | O_NOCTTY);

	if (fd < 0) {
		return -errno;
	}
	if (grantpt(fd) != 0 || unlockpt(fd) != 0 || ptsname_r(fd, name, len) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	/* Raw bytes both ways, as on a UART: the shell does its own echo and line editing. */
	if (tcgetattr(fd, &tio) == 0) {
		cfmakeraw(&tio);
		tcsetattr(fd, TCSANOW, &tio);
	}
	/* Nobody may be attached yet: output is then dropped, as a UART would drop it. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* How long output waits for a slow reader before it is dropped, as by a UART. */
#define WRITE_STALL_MS 2000

/* Output found no reader for WRITE_STALL_MS: drop without waiting until one reads again. */
static bool write_dropping;

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			if (errno == EAGAIN) {
				/* A slow reader is waited for, within bounds; a gone one is not. */
				struct pollfd pfd = {.fd = fd, .events = POLLOUT};
				int wait_ms = write_dropping ? 0 : WRITE_STALL_MS;

				if (poll(&pfd, 1, wait_ms) > 0 && (pfd.revents & POLLOUT)) {
					continue;
				}
				write_dropping = true;
				return 0;
			}
			/* No client on the pseudo terminal: drop, like an unconnected UART. */
			return errno == EIO ? 0 : -errno;
		}
		write_dropping = false;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int agent_console_write(struct agent_console *console, const char *data, size_t len)
{
	int err = 0;
	size_t start = 0;

	pthread_mutex_lock(&console->lock);
	for (size_t i = 0; i < len && err == 0; i++) {
		if (data[i] == '\n') {
			err = write_all(console->out_fd, data + start, i - start);
			if (err == 0) {
				err = write_all(console->out_fd, "\r\n", 2);
			}
			start = i + 1;
		}
	}
	if (err == 0) {
		err = write_all(console->out_fd, data + start, len - start);
	}
	pthread_mutex_unlock(&console->lock);
	return err;
}

int posix_console_write_raw(struct agent_console *console, const void *data, size_t len)
{
	int err;

	pthread_mutex_lock(&console->lock);
	err = write_all(console->out_fd, data, len);
	pthread_mutex_unlock(&console->lock);
	return err;
}

void agent_console_set_bypass(struct agent_console *console, agent_console_bypass_fn fn,
			      void *user_data)
{
	pthread_mutex_lock(&console->lock);
	console->bypass = fn;
	console->bypass_user_data = user_data;
	console->wake_set = false;
	pthread_mutex_unlock(&console->lock);
}

void agent_console_wake_after(struct agent_console *console, uint32_t ms)
{
	pthread_mutex_lock(&console->lock);
	console->wake_set = console->bypass != NULL;
	console->wake_at_ms = agent_uptime_ms() + (int64_t)ms;
	pthread_mutex_unlock(&console->lock);
}

int posix_console_wake_in(struct agent_console *console)
{
	int64_t left;
	bool set;

	pthread_mutex_lock(&console->lock);
	set = console->wake_set;
	left = console->wake_at_ms - agent_uptime_ms();
	pthread_mutex_unlock(&console->lock);
	if (!set) {
		return -1;
	}
	return left <= 0 ? 0 : (left > INT32_MAX ? INT32_MAX : (int)left);
}

bool posix_console_bypassed(struct agent_console *console)
{
	bool bypassed;

	pthread_mutex_lock(&console->lock);
	bypassed = console->bypass != NULL;
	pthread_mutex_unlock(&console->lock);
	return bypassed;
}

size_t posix_console_deliver(struct agent_console *console, const uint8_t *data, size_t len)
{
	agent_console_bypass_fn fn;
	void *user_data;
	size_t taken;

	pthread_mutex_lock(&console->lock);
	fn = console->bypass;
	user_data = console->bypass_user_data;
	console->wake_set = false; /* input lapses a wake-up (the callback asks again) */
	pthread_mutex_unlock(&console->lock);
	if (fn == NULL) {
		return 0;
	}
	/* Called unlocked: the callback writes to the console and may clear the bypass. */
	taken = fn(console, data, len, user_data);
	if (taken > len) {
		taken = len;
	}
	/* A callback that took nothing would stall the reader: count one byte as taken, unless
	 * it ended the bypass before the first byte (an earlier Esc, found late). */
	return taken == 0 && len > 0 && posix_console_bypassed(console) ? 1 : taken;
}

void posix_console_wake(struct agent_console *console)
{
	bool due;

	pthread_mutex_lock(&console->lock);
	due = console->wake_set && console->bypass != NULL;
	pthread_mutex_unlock(&console->lock);
	if (due) {
		(void)posix_console_deliver(console, NULL, 0);
	}
}

int agent_console_size(struct agent_console *console, uint16_t *cols, uint16_t *rows)
{
	struct winsize ws;

	if (ioctl(console->out_fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0 || ws.ws_row == 0) {
		return -ENOTSUP;
	}
	*cols = ws.ws_col;
	*rows = ws.ws_row;
	return 0;
}
