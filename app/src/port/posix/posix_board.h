/*
 * The simulated board of the POSIX port: the board inspection calls of agent_port.h answer
 * from a board file read at start (the simulator's --board FILE). The format is
 * docs/simulated-board.md. The portable core never includes this header.
 */
#ifndef POSIX_BOARD_H
#define POSIX_BOARD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most entries of each kind one board file may declare; one more is an error. */
#define POSIX_BOARD_GPIO_MAX	64
#define POSIX_BOARD_BUS_MAX	16
#define POSIX_BOARD_DISPLAY_MAX 4
#define POSIX_BOARD_SENSOR_MAX	16
/* Longest line of a board file (without the newline). */
#define POSIX_BOARD_LINE_MAX 255

/**
 * Read the board file @p path and make it the board the inspection calls report.
 *
 * @return 0; -EINVAL when the file is malformed, with "line N: what is wrong" in @p why;
 *         the negative errno of opening or reading it otherwise (@p why says which). On
 *         failure the board loaded before stays.
 */
int posix_board_load(const char *path, char *why, size_t why_len);

/** Forget the loaded board: every list empty, no capability, Wi-Fi absent (for tests). */
void posix_board_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* POSIX_BOARD_H */
