/*
 * Threads, mutexes, semaphores and cancellation flags of the POSIX port, over pthreads.
 * Every object comes from a fixed table, as on the firmware, so that the simulator runs
 * out of slots where the device would.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif

#include "agent_port.h"
#include "posix_port.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct agent_thread {
	bool used;
	bool done;
	bool joining;
	pthread_t tid;
	agent_thread_fn fn;
	void *user_data;
	size_t stack_bytes; /* the host stack it runs on (thread_stack_bytes()) */
	char name[16];	    /* the kernel keeps 15 characters of a thread name */
};

/* The stack of the calling thread when the port started it; 0 for the host's own threads. */
static _Thread_local size_t current_stack_bytes;

struct agent_mutex {
	bool used;
	pthread_mutex_t lock;
};

struct agent_sem {
	bool used;
	unsigned int count;
	unsigned int limit;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static struct agent_thread thread_table[POSIX_THREAD_SLOTS];
static struct agent_mutex mutex_table[POSIX_MUTEX_SLOTS];
static struct agent_sem sem_table[POSIX_SEM_SLOTS];

/* Guards the three tables and the done flags; thread_done is signalled as threads return. */
static pthread_mutex_t thread_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t thread_done;
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;

/* Timed waits use CLOCK_MONOTONIC so that a wall-clock step cannot stretch a timeout. */
static int thread_cond_init_monotonic(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int err;

	err = pthread_condattr_init(&attr);
	if (err != 0) {
		return -err;
	}
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (err == 0) {
		err = pthread_cond_init(cond, &attr);
	}
	pthread_condattr_destroy(&attr);
	return -err;
}

static void thread_init_once(void)
{
	int err = thread_cond_init_monotonic(&thread_done);

	/* Without a monotonic clock every timed wait below would be wrong; fail loudly. */
	assert(err == 0);
	(void)err;
}

static void thread_deadline(struct timespec *deadline, uint32_t timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, deadline);
	deadline->tv_sec += (time_t)(timeout_ms / 1000u);
	deadline->tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
	if (deadline->tv_nsec >= 1000000000L) {
		deadline->tv_sec++;
		deadline->tv_nsec -= 1000000000L;
	}
}

static size_t thread_stack_bytes(size_t requested)
{
	size_t bytes = requested;
	long page = sysconf(_SC_PAGESIZE);

#if defined(__SANITIZE_ADDRESS__)
	/*
	 * AddressSanitizer surrounds every local with redzones, roughly doubling or tripling
	 * frames; a stack sized for the device would overflow in the sanitised simulator.
	 */
	bytes *= 4u;
#endif
	if (bytes < (size_t)PTHREAD_STACK_MIN) {
		bytes = (size_t)PTHREAD_STACK_MIN;
	}
	/* Some C libraries refuse a stack size that is not a whole number of pages. */
	if (page > 0) {
		bytes = (bytes + (size_t)page - 1u) / (size_t)page * (size_t)page;
	}
	return bytes;
}

static void *thread_entry(void *arg)
{
	struct agent_thread *thread = arg;

	current_stack_bytes = thread->stack_bytes;
	thread->fn(thread->user_data);

	pthread_mutex_lock(&thread_lock);
	thread->done = true;
	pthread_cond_broadcast(&thread_done);
	pthread_mutex_unlock(&thread_lock);
	return NULL;
}

int agent_thread_start(struct agent_thread **out, const char *name, size_t stack_bytes,
		       agent_thread_fn fn, void *user_data)
{
	struct agent_thread *thread = NULL;
	pthread_attr_t attr;
	int err;

	if (out == NULL || fn == NULL || stack_bytes == 0u) {
		return -EINVAL;
	}
	if (stack_bytes > POSIX_THREAD_STACK_MAX_BYTES) {
		return -ENOMEM;
	}
	pthread_once(&thread_once, thread_init_once);

	pthread_mutex_lock(&thread_lock);
	for (size_t i = 0; i < POSIX_THREAD_SLOTS; i++) {
		if (!thread_table[i].used) {
			thread = &thread_table[i];
			break;
		}
	}
	if (thread == NULL) {
		pthread_mutex_unlock(&thread_lock);
		return -ENOMEM;
	}
	memset(thread, 0, sizeof(*thread));
	thread->used = true;
	thread->fn = fn;
	thread->user_data = user_data;
	if (name != NULL) {
		/* Cut to what the kernel keeps; the slot was zeroed, so it stays terminated. */
		memcpy(thread->name, name, strnlen(name, sizeof(thread->name) - 1u));
	}

	err = pthread_attr_init(&attr);
	if (err == 0) {
		thread->stack_bytes = thread_stack_bytes(stack_bytes);
		err = pthread_attr_setstacksize(&attr, thread->stack_bytes);
		if (err == 0) {
			/* Under thread_lock: the slot stays claimed until the thread exists. */
			err = pthread_create(&thread->tid, &attr, thread_entry, thread);
		}
		pthread_attr_destroy(&attr);
	}
	if (err != 0) {
		thread->used = false;
		pthread_mutex_unlock(&thread_lock);
		/* EAGAIN from pthread_create means the host ran out of threads: no slot for us. */
		return err == EAGAIN ? -ENOMEM : -err;
	}
	if (thread->name[0] != '\0') {
		/* Names show up in gdb and top; failing to set one changes nothing else. */
		(void)pthread_setname_np(thread->tid, thread->name);
	}
	pthread_mutex_unlock(&thread_lock);
	*out = thread;
	return 0;
}

static bool thread_is_valid(const struct agent_thread *thread)
{
	uintptr_t addr = (uintptr_t)thread;
	uintptr_t first = (uintptr_t)&thread_table[0];

	return thread != NULL && addr >= first &&
	       addr < (uintptr_t)&thread_table[POSIX_THREAD_SLOTS] &&
	       (addr - first) % sizeof(thread_table[0]) == 0u && thread->used;
}

int agent_thread_join(struct agent_thread *thread, uint32_t timeout_ms)
{
	struct timespec deadline;
	pthread_t tid;

	pthread_once(&thread_once, thread_init_once);
	thread_deadline(&deadline, timeout_ms);

	pthread_mutex_lock(&thread_lock);
	if (!thread_is_valid(thread) || thread->joining) {
		pthread_mutex_unlock(&thread_lock);
		return -EINVAL;
	}
	while (!thread->done) {
		int err = pthread_cond_timedwait(&thread_done, &thread_lock, &deadline);

		if (err == ETIMEDOUT && !thread->done) {
			pthread_mutex_unlock(&thread_lock);
			return -EAGAIN;
		}
	}
	/* Claimed so that a second joiner cannot pthread_join the same thread twice. */
	thread->joining = true;
	tid = thread->tid;
	pthread_mutex_unlock(&thread_lock);

	/* The thread has set done and returns at once; this only reaps it. */
	pthread_join(tid, NULL);

	pthread_mutex_lock(&thread_lock);
	thread->used = false;
	thread->joining = false;
	pthread_mutex_unlock(&thread_lock);
	return 0;
}

int agent_mutex_init(struct agent_mutex **out)
{
	pthread_mutexattr_t attr;
	int err;

	if (out == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&thread_lock);
	for (size_t i = 0; i < POSIX_MUTEX_SLOTS; i++) {
		struct agent_mutex *mutex = &mutex_table[i];

		if (mutex->used) {
			continue;
		}
		err = pthread_mutexattr_init(&attr);
		if (err == 0) {
			/* Zephyr's k_mutex lets its owner lock again; the simulator must too. */
			err = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
			if (err == 0) {
				err = pthread_mutex_init(&mutex->lock, &attr);
			}
			pthread_mutexattr_destroy(&attr);
		}
		if (err == 0) {
			mutex->used = true;
			*out = mutex;
		}
		pthread_mutex_unlock(&thread_lock);
		return -err;
	}
	pthread_mutex_unlock(&thread_lock);
	return -ENOMEM;
}

void agent_mutex_lock(struct agent_mutex *mutex)
{
	assert(mutex != NULL && mutex->used);
	pthread_mutex_lock(&mutex->lock);
}

void agent_mutex_unlock(struct agent_mutex *mutex)
{
	assert(mutex != NULL && mutex->used);
	pthread_mutex_unlock(&mutex->lock);
}

int agent_sem_init(struct agent_sem **out, unsigned int initial, unsigned int limit)
{
	int err;

	/* The same refusals as k_sem_init(). */
	if (out == NULL || limit == 0u || initial > limit) {
		return -EINVAL;
	}
	pthread_mutex_lock(&thread_lock);
	for (size_t i = 0; i < POSIX_SEM_SLOTS; i++) {
		struct agent_sem *sem = &sem_table[i];

		if (sem->used) {
			continue;
		}
		err = pthread_mutex_init(&sem->lock, NULL);
		if (err == 0) {
			err = -thread_cond_init_monotonic(&sem->cond);
			if (err != 0) {
				pthread_mutex_destroy(&sem->lock);
			}
		}
		if (err == 0) {
			sem->used = true;
			sem->count = initial;
			sem->limit = limit;
			*out = sem;
		}
		pthread_mutex_unlock(&thread_lock);
		return -err;
	}
	pthread_mutex_unlock(&thread_lock);
	return -ENOMEM;
}

int agent_sem_take(struct agent_sem *sem, uint32_t timeout_ms)
{
	struct timespec deadline;
	int ret = 0;

	assert(sem != NULL && sem->used);
	thread_deadline(&deadline, timeout_ms);

	pthread_mutex_lock(&sem->lock);
	while (sem->count == 0u) {
		if (timeout_ms == 0u ||
		    pthread_cond_timedwait(&sem->cond, &sem->lock, &deadline) == ETIMEDOUT) {
			if (sem->count == 0u) {
				ret = -EAGAIN;
			}
			break;
		}
	}
	if (ret == 0) {
		sem->count--;
	}
	pthread_mutex_unlock(&sem->lock);
	return ret;
}

void agent_sem_give(struct agent_sem *sem)
{
	assert(sem != NULL && sem->used);
	pthread_mutex_lock(&sem->lock);
	if (sem->count < sem->limit) {
		sem->count++;
	}
	pthread_cond_signal(&sem->cond);
	pthread_mutex_unlock(&sem->lock);
}

size_t agent_thread_overhead_bytes(void)
{
	return sizeof(struct agent_thread); /* the host's own thread record is not ours to count */
}

int agent_thread_stack_peak(size_t *used, size_t *size)
{
	(void)used;
	(void)size;
	return -ENOTSUP; /* host threads: the C library owns their stacks */
}

size_t agent_thread_stack_size(void)
{
	return current_stack_bytes;
}

void agent_thread_relax(void)
{
	/* Host threads are preempted by the host: nothing to give back. */
}
