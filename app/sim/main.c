/*
 * The host simulator: the firmware's portable core built for Linux over the POSIX port.
 * Its command line follows native_sim where that makes sense; see docs/simulator.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "agent_cmd.h"
#include "agent_print.h"
#include "agent_version.h"
#include "module_host.h"
#include "posix_board.h"
#include "posix_console.h"
#include "posix_port.h"
#include "provider.h"
#include "script_runner.h"
#include "sim_modules.h"
#include "sim_shell.h"

#define FLASH_DEFAULT_PATH "flash.bin"
#define FLASH_MAX_BYTES    (256ul * 1024 * 1024)

#define CA_FILES_MAX 4

/* The simulated board file (docs/simulated-board.md); app/sim/CMakeLists.txt sets the path. */
#ifndef AGENT_SIM_BOARD_DEFAULT
#define AGENT_SIM_BOARD_DEFAULT "host_sim.board"
#endif

struct options {
	const char *flash;
	const char *sd;
	const char *board;
	const char *modules; /* NULL: none (--modules=) */
	bool modules_given;
	const char *ca_files[CA_FILES_MAX];
	int ca_count;
	unsigned long flash_bytes;
	bool flash_erase;
	bool pty;
};

static volatile sig_atomic_t stop_requested;
static struct termios saved_tio;
static bool tio_saved;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *out, const char *prog)
{
	fprintf(out,
		"Usage: %s [options]\n"
		"  --flash=FILE        LittleFS image mounted at /lfs (default %s);\n"
		"                      created and formatted when absent\n"
		"  --flash_size=BYTES  size of a new image, a multiple of %u (default %u)\n"
		"  --flash_erase       erase the image before mounting\n"
		"  --sd=DIR            a host folder as the SD card at /SD: (FAT-like:\n"
		"                      no rename over a file); created when absent\n"
		"  --pty               put the console on a new pseudo terminal instead of\n"
		"                      stdin/stdout and print its path\n"
		"  --ca=FILE           also trust the CA certificates of this PEM file for\n"
		"                      TLS (up to %d times)\n"
		"  --board=FILE        the simulated board the hardware tools see\n"
		"                      (default %s)\n"
		"  --modules=DIR       import each child directory of DIR as a module at\n"
		"                      start-up, in name order (default %s);\n"
		"                      --modules= imports none\n"
		"  --confirm-timeout-ms=MS  tests: the tool confirmation deadline (default\n"
		"                      the spec's 30 s)\n"
		"  --host-tool-timeout-ms=MS  tests: the host tool call deadline (default\n"
		"                      CONFIG_AGENT_HOST_TOOL_TIMEOUT_S)\n"
		"  --request-deadline-ms=MS  tests: the provider request deadline (default\n"
		"                      the spec's 90 s)\n"
		"  --script-deadline-ms=MS  tests: the script deadline (default the\n"
		"                      spec's 30 s)\n"
		"  --version           print the version and exit\n"
		"  --help              this text\n",
		prog, FLASH_DEFAULT_PATH, POSIX_FLASH_BLOCK_BYTES, POSIX_FLASH_DEFAULT_BYTES,
		CA_FILES_MAX, AGENT_SIM_BOARD_DEFAULT, AGENT_SIM_MODULES_DEFAULT);
}

/* A test option's milliseconds, 1 to 600000; an error names @p option. */
static int parse_ms(const char *value, const char *option, uint32_t *ms)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno != 0 || *end != '\0' || value[0] == '\0' || value[0] == '-' || v < 1 ||
	    v > 600000ul) {
		fprintf(stderr, "error: %s must be 1 to 600000\n", option);
		return -EINVAL;
	}
	*ms = (uint32_t)v;
	return 0;
}

/* Accepts "--name=value" and "--name value". Returns the value or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);

	if (strncmp(argv[*i], name, len) != 0) {
		return NULL;
	}
	if (argv[*i][len] == '=') {
		return argv[*i] + len + 1;
	}
	if (argv[*i][len] == '\0' && *i + 1 < argc) {
		return argv[++*i];
	}
	return NULL;
}

static int parse_options(int argc, char **argv, struct options *opt)
{
	opt->flash = FLASH_DEFAULT_PATH;
	opt->board = AGENT_SIM_BOARD_DEFAULT;
	opt->modules = AGENT_SIM_MODULES_DEFAULT;
	opt->flash_bytes = POSIX_FLASH_DEFAULT_BYTES;
	for (int i = 1; i < argc; i++) {
		const char *value;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout, argv[0]);
			exit(0);
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("agent simulator %s\n", AGENT_VERSION_STRING);
			exit(0);
		} else if (strcmp(argv[i], "--flash_erase") == 0) {
			opt->flash_erase = true;
		} else if (strcmp(argv[i], "--pty") == 0) {
			opt->pty = true;
		} else if ((value = option_value(argc, argv, &i, "--flash_size")) != NULL) {
			char *end;

			errno = 0;
			opt->flash_bytes = strtoul(value, &end, 0);
			if (errno != 0 || *end != '\0' || opt->flash_bytes < POSIX_FLASH_MIN_BYTES ||
			    opt->flash_bytes % POSIX_FLASH_BLOCK_BYTES != 0 ||
			    opt->flash_bytes > FLASH_MAX_BYTES) {
				fprintf(stderr,
					"error: --flash_size must be a multiple of %u from %u to "
					"256 MiB\n",
					POSIX_FLASH_BLOCK_BYTES, POSIX_FLASH_MIN_BYTES);
				return -EINVAL;
			}
		} else if ((value = option_value(argc, argv, &i, "--ca")) != NULL) {
			if (value[0] == '\0' || opt->ca_count == CA_FILES_MAX) {
				fprintf(stderr, "error: --ca needs a file name, at most %d times\n",
					CA_FILES_MAX);
				return -EINVAL;
			}
			opt->ca_files[opt->ca_count++] = value;
		} else if ((value = option_value(argc, argv, &i, "--confirm-timeout-ms")) != NULL) {
			uint32_t ms;

			if (parse_ms(value, "--confirm-timeout-ms", &ms) != 0) {
				return -EINVAL;
			}
			agent_ask_set_confirm_timeout_ms(ms);
		} else if ((value = option_value(argc, argv, &i, "--host-tool-timeout-ms")) != NULL) {
			uint32_t ms;

			if (parse_ms(value, "--host-tool-timeout-ms", &ms) != 0) {
				return -EINVAL;
			}
			module_host_set_timeout_ms(ms);
		} else if ((value = option_value(argc, argv, &i, "--request-deadline-ms")) != NULL) {
			uint32_t ms;

			if (parse_ms(value, "--request-deadline-ms", &ms) != 0) {
				return -EINVAL;
			}
			provider_set_request_deadline_ms(ms);
#ifdef CONFIG_AGENT_SCRIPT_TEST_HOOKS
		} else if ((value = option_value(argc, argv, &i, "--script-deadline-ms")) != NULL) {
			uint32_t ms;

			if (parse_ms(value, "--script-deadline-ms", &ms) != 0) {
				return -EINVAL;
			}
			script_set_deadline_ms(ms);
#endif
		} else if ((value = option_value(argc, argv, &i, "--sd")) != NULL) {
			if (value[0] == '\0') {
				fprintf(stderr, "error: --sd needs a folder name\n");
				return -EINVAL;
			}
			opt->sd = value;
		} else if ((value = option_value(argc, argv, &i, "--flash")) != NULL) {
			if (value[0] == '\0') {
				fprintf(stderr, "error: --flash needs a file name\n");
				return -EINVAL;
			}
			opt->flash = value;
		} else if ((value = option_value(argc, argv, &i, "--modules")) != NULL) {
			opt->modules = value[0] != '\0' ? value : NULL;
			opt->modules_given = true;
		} else if ((value = option_value(argc, argv, &i, "--board")) != NULL) {
			if (value[0] == '\0') {
				fprintf(stderr, "error: --board needs a file name\n");
				return -EINVAL;
			}
			opt->board = value;
		} else {
			fprintf(stderr, "error: unknown option '%s'; see --help\n", argv[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static void restore_terminal(void)
{
	if (tio_saved) {
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	}
}

/* On a terminal the shell does its own echo and editing; Ctrl-C still stops the process. */
static void stdin_raw(void)
{
	struct termios tio;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tio) != 0) {
		return;
	}
	tio_saved = true;
	atexit(restore_terminal);
	tio = saved_tio;
	tio.c_lflag &= ~(tcflag_t)(ICANON | ECHO | IEXTEN);
	tio.c_iflag &= ~(tcflag_t)(ICRNL | IXON);
	tio.c_oflag &= ~(tcflag_t)OPOST;
	tio.c_cc[VMIN] = 1;
	tio.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &tio);
}

int main(int argc, char **argv)
{
	struct options opt = {0};
	struct sigaction sa = {0};
	struct agent_console *console;
	char pty_name[64];
	char board_why[256];
	int in_fd = STDIN_FILENO;
	int out_fd = STDOUT_FILENO;
	int err;

	if (parse_options(argc, argv, &opt) != 0) {
		return 2;
	}
	/* A board file with a mistake stops the start: the tools would describe another board. */
	err = posix_board_load(opt.board, board_why, sizeof(board_why));
	if (err != 0) {
		fprintf(stderr, "error: board file %s, %s\n", opt.board, board_why);
		return 2;
	}
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	for (int i = 0; i < opt.ca_count; i++) {
		err = posix_net_add_ca_file(opt.ca_files[i]);
		if (err < 0) {
			fprintf(stderr, "error: cannot use %s as CA certificates: %s\n",
				opt.ca_files[i], strerror(-err));
			return 2;
		}
	}
	err = posix_flash_mount(opt.flash, (uint32_t)opt.flash_bytes, opt.flash_erase);
	if (err != 0) {
		fprintf(stderr, "error: cannot mount %s at /lfs: %s\n", opt.flash, strerror(-err));
		return 1;
	}
	if (opt.sd != NULL) {
		err = posix_sd_mount(opt.sd);
		if (err != 0) {
			fprintf(stderr, "error: cannot mount %s at %s: %s\n", opt.sd,
				POSIX_SD_MOUNT_POINT, strerror(-err));
			return 1;
		}
	}
	if (opt.pty) {
		in_fd = posix_console_open_pty(pty_name, sizeof(pty_name));
		if (in_fd < 0) {
			fprintf(stderr, "error: cannot open a pseudo terminal: %s\n",
				strerror(-in_fd));
			return 1;
		}
		out_fd = in_fd;
		printf("UART connected to pseudotty: %s\n", pty_name);
		fflush(stdout);
	} else {
		stdin_raw();
	}
	console = posix_console_init(in_fd, out_fd);
	agent_printf(console, "*** Booting agent simulator %s on %s ***\n", AGENT_VERSION_STRING,
		     agent_board_name());
	agent_printf(console, "lfs: %s mounted at /lfs\n", opt.flash);
	if (opt.sd != NULL) {
		agent_printf(console, "sd: %s mounted at %s\n", opt.sd, POSIX_SD_MOUNT_POINT);
	}
	err = agent_init();
	if (err != 0) {
		agent_printf(console, "agent: cannot load the configuration (error %d)\n", err);
	}
	{
		char line[160];

		(void)agent_modules_boot_line(line, sizeof(line));
		agent_printf(console, "%s\n", line);
	}
	if (opt.modules != NULL) {
		/* A folder named on the command line must be there; the default may be missing
		 * in a moved installation, which then starts without roles. */
		err = sim_modules_import(console, opt.modules);
		if (err != 0 && opt.modules_given) {
			fprintf(stderr, "error: --modules %s: %s\n", opt.modules, strerror(-err));
			posix_flash_unmount();
			return 1;
		}
	}
	err = sim_shell_run(console, in_fd, opt.pty, &stop_requested);
	posix_flash_unmount();
	if (opt.sd != NULL) {
		posix_sd_unmount();
	}
	if (err != 0) {
		fprintf(stderr, "error: console: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
