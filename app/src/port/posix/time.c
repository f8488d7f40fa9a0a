/*
 * Time of the POSIX port. Uptime counts from process start, as Zephyr's counts from boot,
 * so that timestamps the simulator logs are small and comparable between runs.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "agent_port.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

static struct timespec time_boot;
static pthread_once_t time_boot_once = PTHREAD_ONCE_INIT;

static void time_boot_capture(void)
{
	clock_gettime(CLOCK_MONOTONIC, &time_boot);
}

/* Taken before main() so that uptime does not start at the first caller's leisure. */
__attribute__((constructor)) static void time_boot_init(void)
{
	pthread_once(&time_boot_once, time_boot_capture);
}

int64_t agent_uptime_ms(void)
{
	struct timespec now;

	pthread_once(&time_boot_once, time_boot_capture);
	clock_gettime(CLOCK_MONOTONIC, &now);
	return ((int64_t)(now.tv_sec - time_boot.tv_sec) * 1000000000 +
		(now.tv_nsec - time_boot.tv_nsec)) /
	       1000000;
}

void agent_sleep_ms(uint32_t ms)
{
	struct timespec left = {
		.tv_sec = (time_t)(ms / 1000u),
		.tv_nsec = (long)(ms % 1000u) * 1000000L,
	};

	/* A signal (the shell's SIGWINCH, a debugger) must not cut the sleep short. */
	while (nanosleep(&left, &left) != 0 && errno == EINTR) {
	}
}

/* The host's clock is set, so the simulator always knows the time. */
int agent_wall_time_s(int64_t *out)
{
	struct timespec now;

	if (out == NULL) {
		return -EINVAL;
	}
	if (clock_gettime(CLOCK_REALTIME, &now) != 0) {
		return -errno;
	}
	*out = (int64_t)now.tv_sec;
	return 0;
}
