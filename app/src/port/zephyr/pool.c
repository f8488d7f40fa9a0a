/*
 * The Zephyr port's part of the memory pools: the lock around the shared pool table
 * (app/src/port/pool_table.c), so that the simulator and the firmware give out the same
 * blocks, report the same statistics and catch the same double frees and foreign pointers.
 *
 * A k_mem_slab is deliberately not layered underneath: it would choose blocks of its own,
 * and the books have no way to record a block chosen elsewhere (see docs/zephyr-port.md).
 * Pools are used from threads only, so a k_mutex is enough.
 */
#include <zephyr/kernel.h>

#include "pool_book.h"

K_MUTEX_DEFINE(agent_port_pool_mutex);

void agent_port_pool_lock(void)
{
	(void)k_mutex_lock(&agent_port_pool_mutex, K_FOREVER);
}

void agent_port_pool_unlock(void)
{
	(void)k_mutex_unlock(&agent_port_pool_mutex);
}
