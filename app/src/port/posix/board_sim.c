/*
 * Board inspection of the POSIX port (agent_port.h, "Board inspection"): every call answers
 * from the simulated board that board_file.c last loaded (docs/simulated-board.md), copied
 * out under the board lock so that a reader never sees half a load.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent_port.h"
#include "posix_board_internal.h"

pthread_mutex_t posix_board_lock = PTHREAD_MUTEX_INITIALIZER;
struct sim_board posix_board_current; /* what the inspection calls report */

/* ---- agent_port.h -------------------------------------------------------------------------- */

int agent_board_info_get(struct agent_board_info *info)
{
	if (info == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&posix_board_lock);
	*info = posix_board_current.info;
	pthread_mutex_unlock(&posix_board_lock);
	return 0;
}

/* One getter per list: lock, bounds check, copy. */
#define LIST_ACCESSORS(count_fn, get_fn, type, array, counter)                                     \
	int count_fn(void)                                                                         \
	{                                                                                          \
		int n;                                                                             \
                                                                                                   \
		pthread_mutex_lock(&posix_board_lock);                                             \
		n = (int)posix_board_current.counter;                                              \
		pthread_mutex_unlock(&posix_board_lock);                                           \
		return n;                                                                          \
	}                                                                                          \
                                                                                                   \
	int get_fn(size_t index, type *out)                                                        \
	{                                                                                          \
		int err = 0;                                                                       \
                                                                                                   \
		if (out == NULL) {                                                                 \
			return -EINVAL;                                                            \
		}                                                                                  \
		pthread_mutex_lock(&posix_board_lock);                                             \
		if (index < posix_board_current.counter) {                                         \
			*out = posix_board_current.array[index];                                   \
		} else {                                                                           \
			err = -ENOENT;                                                             \
		}                                                                                  \
		pthread_mutex_unlock(&posix_board_lock);                                           \
		return err;                                                                        \
	}

/* The simulated level is what the file says: reading it configures nothing, here as on
 * hardware, where only an already configured input is read. */
LIST_ACCESSORS(agent_gpio_count, agent_gpio_get, struct agent_gpio_slot, gpio, gpio_count)
LIST_ACCESSORS(agent_bus_count, agent_bus_get, struct agent_bus, bus, bus_count)
LIST_ACCESSORS(agent_display_count, agent_display_get, struct agent_display, display,
	       display_count)
LIST_ACCESSORS(agent_sensor_count, agent_sensor_read, struct agent_sensor_reading, sensor,
	       sensor_count)

int agent_network_get(struct agent_network_state *state)
{
	if (state == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&posix_board_lock);
	*state = posix_board_current.net;
	pthread_mutex_unlock(&posix_board_lock);
	return 0;
}

/* The simulated board's interfaces are its capabilities: Wi-Fi or Ethernet. */
bool agent_network_present(void)
{
	bool present;

	pthread_mutex_lock(&posix_board_lock);
	present = (posix_board_current.info.caps & (AGENT_BOARD_CAP_WIFI | AGENT_BOARD_CAP_ETHERNET)) !=
		  0u;
	pthread_mutex_unlock(&posix_board_lock);
	return present;
}

bool agent_sensor_family_present(enum agent_sensor_family family)
{
	bool present = false;

	pthread_mutex_lock(&posix_board_lock);
	if ((unsigned int)family < AGENT_SENSOR_FAMILY_COUNT) {
		present = posix_board_current.family_present[family];
	}
	pthread_mutex_unlock(&posix_board_lock);
	return present;
}
