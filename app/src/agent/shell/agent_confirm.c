/* The tool confirmation (agent_confirm.h). */
#include <errno.h>

#include "agent_cmd.h"
#include "agent_confirm.h"
#include "agent_port.h"

static uint32_t timeout_ms = CONFIG_AGENT_CONFIRM_TIMEOUT_S * 1000u;
static struct agent_sem *answered;
static volatile bool waiting;
static volatile int answer;

static void deliver(int value)
{
	if (!waiting) {
		return;
	}
	answer = value;
	waiting = false;
	agent_sem_give(answered);
}

void agent_confirm_arm(void)
{
	if (answered == NULL && agent_sem_init(&answered, 0, 1) != 0) {
		return; /* agent_confirm_wait() then denies */
	}
	while (agent_sem_take(answered, 0) == 0) {
		/* an answer that came after an earlier deadline */
	}
	answer = 0;
	waiting = true;
}

int agent_confirm_wait(bool *timed_out)
{
	*timed_out = false;
	if (answered == NULL) {
		return 0;
	}
	if (agent_sem_take(answered, timeout_ms) != 0) {
		waiting = false;
		/* The key may have come between the deadline and this line. */
		if (agent_sem_take(answered, 0) != 0) {
			*timed_out = true;
			return 0;
		}
	}
	return answer;
}

bool agent_confirm_key(uint8_t key)
{
	if (!waiting) {
		return false;
	}
	switch (key) {
	case 'y':
	case 'Y':
		deliver(1);
		return true;
	case 'n':
	case 'N':
	case '\r':
	case '\n':
		deliver(0);
		return true;
	default:
		return false;
	}
}

void agent_confirm_cancel(void)
{
	deliver(-ECANCELED);
}

#if defined(CONFIG_AGENT_TOOL_TEST_HOOKS)
void agent_ask_set_confirm_timeout_ms(uint32_t ms)
{
	timeout_ms = ms;
}
#endif
