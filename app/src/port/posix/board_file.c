/*
 * Board files of the POSIX port (docs/simulated-board.md): the simulated board read from a
 * text file. One line per item: a keyword, then key=value pairs. Everything is checked while
 * reading; the first problem ends the load with the line number, so a typo in a board file
 * never turns into a silently different board.
 *
 * This file reads the file line by line, hands each line to its keyword's parser
 * (posix_board_file.h names the files holding them) and publishes the result. The board is
 * parsed into a scratch copy and published under a lock, so a failed load leaves the previous
 * board and readers never see half a file. board_sim.c answers the inspection calls of
 * agent_port.h from the published board.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent_port.h"
#include "posix_board.h"
#include "posix_board_file.h"
#include "posix_board_internal.h"

static struct sim_board scratch; /* the file being read; copied to the board on success */

static const struct {
	const char *keyword;
	bool (*parse)(struct posix_board_line *ctx, struct sim_board *b);
} keywords[] = {
	{"board", posix_board_line_board},
	{"gpio", posix_board_line_gpio},
	{"bus", posix_board_line_bus},
	{"display", posix_board_line_display},
	{"wifi", posix_board_line_wifi},
	{"ap", posix_board_line_ap},
	{"nat", posix_board_line_nat},
	{"family", posix_board_line_family},
	{"sensor", posix_board_line_sensor},
};

static bool parse_line(struct posix_board_line *ctx, char *line, struct sim_board *b)
{
	if (!posix_board_split_line(ctx, line)) {
		return false;
	}
	for (size_t i = 0; i < POSIX_BOARD_COUNT_OF(keywords); i++) {
		if (strcmp(ctx->keyword, keywords[i].keyword) == 0) {
			return keywords[i].parse(ctx, b);
		}
	}
	ctx->keyword = "";
	return posix_board_fail(ctx,
				"unknown keyword '%.32s' (board, gpio, bus, display, wifi, ap, "
				"nat, family, sensor)",
				line);
}

static void board_defaults(struct sim_board *b)
{
	memset(b, 0, sizeof(*b));
	b->net.sta_state = AGENT_WIFI_ABSENT;
	/* The file is the whole truth: no ap or nat line means none. */
	b->net.ap_known = true;
	b->net.nat_known = true;
}

int posix_board_load(const char *path, char *why, size_t why_len)
{
	char line[POSIX_BOARD_LINE_MAX + 2];
	unsigned int number = 0;
	struct posix_board_line ctx;
	FILE *f;
	int err = 0;

	if (path == NULL || why == NULL || why_len == 0) {
		return -EINVAL;
	}
	why[0] = '\0';
	f = fopen(path, "r");
	if (f == NULL) {
		err = -errno;
		snprintf(why, why_len, "cannot open it: %s", strerror(errno));
		return err;
	}
	pthread_mutex_lock(&posix_board_lock);
	board_defaults(&scratch);
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t len = strlen(line);
		char message[200];

		number++;
		if (len > 0 && line[len - 1] == '\n') {
			line[--len] = '\0';
		} else if (!feof(f)) {
			snprintf(why, why_len, "line %u: longer than %d characters", number,
				 POSIX_BOARD_LINE_MAX);
			err = -EINVAL;
			break;
		}
		if (len > 0 && line[len - 1] == '\r') {
			line[--len] = '\0';
		}
		if (line[strspn(line, " \t")] == '#' || line[strspn(line, " \t")] == '\0') {
			continue;
		}
		memset(&ctx, 0, sizeof(ctx));
		ctx.why = message;
		ctx.why_len = sizeof(message);
		ctx.keyword = "";
		if (!parse_line(&ctx, line, &scratch)) {
			snprintf(why, why_len, "line %u: %s", number, message);
			err = -EINVAL;
			break;
		}
	}
	if (err == 0 && ferror(f)) {
		err = -EIO;
		snprintf(why, why_len, "cannot read it");
	}
	if (err == 0) {
		char message[200];

		memset(&ctx, 0, sizeof(ctx));
		ctx.why = message;
		ctx.why_len = sizeof(message);
		if (!posix_board_check(&ctx, &scratch)) {
			snprintf(why, why_len, "%s", message);
			err = -EINVAL;
		}
	}
	if (err == 0) {
		posix_board_current = scratch;
	}
	pthread_mutex_unlock(&posix_board_lock);
	fclose(f);
	return err;
}

void posix_board_reset(void)
{
	pthread_mutex_lock(&posix_board_lock);
	board_defaults(&posix_board_current);
	pthread_mutex_unlock(&posix_board_lock);
}
