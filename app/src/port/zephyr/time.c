/* Time and sleep of the Zephyr port. */
#include <errno.h>
#include <stdint.h>

#include <zephyr/kernel.h>

#include "agent_port.h"

int64_t agent_uptime_ms(void)
{
	return k_uptime_get();
}

void agent_sleep_ms(uint32_t ms)
{
	/* k_msleep() takes an int32_t: sleep in steps so that large values do not wrap. */
	while (ms > (uint32_t)INT32_MAX) {
		(void)k_msleep(INT32_MAX);
		ms -= (uint32_t)INT32_MAX;
	}
	(void)k_msleep((int32_t)ms);
}

/*
 * No wall clock yet: nothing in this firmware sets one (no RTC driver, no SNTP), and Zephyr's
 * SYS_CLOCK_REALTIME (include/zephyr/sys/clock.h) counts from boot until sys_clock_settime()
 * is called, which would store uptimes as dates. See docs/zephyr-port.md.
 */
int agent_wall_time_s(int64_t *out)
{
	(void)out;
	return -ENOTSUP;
}
