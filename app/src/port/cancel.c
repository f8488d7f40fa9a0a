/*
 * Cancellation flags for both ports: GCC/Clang atomic builtins on a plain int, so the core
 * needs no <stdatomic.h> and the flag stays a simple struct member.
 */
#include "agent_port.h"

void agent_cancel_raise(struct agent_cancel *cancel)
{
	__atomic_store_n(&cancel->raised, 1, __ATOMIC_SEQ_CST);
}

void agent_cancel_reset(struct agent_cancel *cancel)
{
	__atomic_store_n(&cancel->raised, 0, __ATOMIC_SEQ_CST);
}

bool agent_cancel_is_raised(const struct agent_cancel *cancel)
{
	return __atomic_load_n(&cancel->raised, __ATOMIC_SEQ_CST) != 0;
}
