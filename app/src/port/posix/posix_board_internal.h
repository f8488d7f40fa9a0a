/*
 * Shared by the two halves of the POSIX port's simulated board: board_file.c and the files
 * beside it (posix_board_file.h) read a board file into a struct sim_board and publish it;
 * board_sim.c answers the inspection calls of agent_port.h from it. Only those files include
 * this header.
 */
#ifndef POSIX_BOARD_INTERNAL_H
#define POSIX_BOARD_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent_port.h"
#include "posix_board.h"

/* A whole board file: what it declares, and which once-only lines it has had. */
struct sim_board {
	bool have_board_line;
	bool have_wifi_line;
	bool have_ap_line;
	bool have_nat_line;
	bool have_family_line[AGENT_SENSOR_FAMILY_COUNT];
	struct agent_board_info info;
	struct agent_gpio_slot gpio[POSIX_BOARD_GPIO_MAX];
	size_t gpio_count;
	struct agent_bus bus[POSIX_BOARD_BUS_MAX];
	size_t bus_count;
	struct agent_display display[POSIX_BOARD_DISPLAY_MAX];
	size_t display_count;
	struct agent_network_state net;
	bool family_present[AGENT_SENSOR_FAMILY_COUNT];
	struct agent_sensor_reading sensor[POSIX_BOARD_SENSOR_MAX];
	size_t sensor_count;
};

/* Guards posix_board_current, and board_file.c's scratch copy while a file is read. */
extern pthread_mutex_t posix_board_lock;
/* The board the inspection calls report (board_sim.c); posix_board_load replaces it. */
extern struct sim_board posix_board_current;

#endif /* POSIX_BOARD_INTERNAL_H */
