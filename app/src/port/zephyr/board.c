/* Board description of the Zephyr port. */
#include "agent_port.h"

const char *agent_board_name(void)
{
	/* The full board target the image was built for, e.g. "esp32s3_devkitc/esp32s3/procpu". */
	return CONFIG_BOARD_TARGET;
}
