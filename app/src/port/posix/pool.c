/*
 * The POSIX port's part of the memory pools: the lock around the shared pool table
 * (app/src/port/pool_table.c).
 */
#include <pthread.h>

#include "pool_book.h"
#include "posix_port.h"

_Static_assert(POSIX_POOL_MAX_BLOCKS == AGENT_POOL_BOOK_MAX_BLOCKS,
	       "posix_port.h and pool_book.h disagree on the pool size bound");
_Static_assert(POSIX_POOL_SLOTS == AGENT_POOL_SLOTS,
	       "posix_port.h and pool_book.h disagree on the number of pools");

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

void agent_port_pool_lock(void)
{
	pthread_mutex_lock(&pool_lock);
}

void agent_port_pool_unlock(void)
{
	pthread_mutex_unlock(&pool_lock);
}

void posix_pool_reset_all(void)
{
	agent_pool_table_reset();
}
