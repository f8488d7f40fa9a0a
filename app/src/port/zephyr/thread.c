/*
 * Threads, mutexes, semaphores and cancellation flags of the Zephyr port. Every object comes
 * from a fixed table; thread stacks are CONFIG_AGENT_THREAD_SLOTS stacks of
 * CONFIG_AGENT_WORKER_STACK_SIZE bytes in internal RAM, defined at build time.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <zephyr/kernel.h>

#include "agent_port.h"
#include "zephyr_port.h"

/*
 * The agent's threads (the foreground worker that streams a request) run at the lowest
 * application priority, below the shell thread, so the shell reads typed input, Esc and SMP
 * frames while a request streams, and below the MCUmgr work queue. prj.conf raises the
 * shell above this (Zephyr's default puts the shell at this very priority).
 */
#define THREAD_PRIORITY K_LOWEST_APPLICATION_THREAD_PRIO

#if defined(CONFIG_SHELL_THREAD_PRIORITY_OVERRIDE)
BUILD_ASSERT(CONFIG_SHELL_THREAD_PRIORITY < THREAD_PRIORITY,
	     "the shell thread must run above the agent's worker (app/prj.conf)");
#else
#error "set CONFIG_SHELL_THREAD_PRIORITY_OVERRIDE: the shell must run above the agent's worker"
#endif
#define THREAD_NAME_MAX 16

struct agent_thread {
	bool used;
	struct k_thread thread;
	agent_thread_fn fn;
	void *user_data;
	char name[THREAD_NAME_MAX];
#if defined(CONFIG_ARCH_POSIX)
	size_t host_stack_used; /* measured on the host stack (host_stack_paint()) */
	uintptr_t host_top;	/* the entry's frame, from which the host stack is measured */
	uintptr_t host_low;	/* the deepest address seen before a zephyr_stack_mark() */
#endif
};

struct agent_mutex {
	bool used;
	struct k_mutex mutex;
};

struct agent_sem {
	bool used;
	struct k_sem sem;
};

K_THREAD_STACK_ARRAY_DEFINE(agent_port_stacks, CONFIG_AGENT_THREAD_SLOTS,
			    CONFIG_AGENT_WORKER_STACK_SIZE);

static struct agent_thread thread_table[CONFIG_AGENT_THREAD_SLOTS];
static struct agent_mutex mutex_table[ZEPHYR_PORT_MUTEX_SLOTS];
static struct agent_sem sem_table[ZEPHYR_PORT_SEM_SLOTS];

/* Guards the used flags of the three tables (non-static: the macro defines an iterable object). */
K_MUTEX_DEFINE(agent_port_table_lock);

static k_timeout_t timeout_from_ms(uint32_t timeout_ms)
{
	return timeout_ms == 0u ? K_NO_WAIT : K_MSEC(timeout_ms);
}

static bool thread_is_valid(const struct agent_thread *thread)
{
	uintptr_t addr = (uintptr_t)thread;
	uintptr_t first = (uintptr_t)&thread_table[0];

	if (thread == NULL || addr < first ||
	    addr >= (uintptr_t)&thread_table[CONFIG_AGENT_THREAD_SLOTS]) {
		return false;
	}
	return (addr - first) % sizeof(thread_table[0]) == 0u;
}

#if defined(CONFIG_ARCH_POSIX)
/*
 * native_sim runs the thread on a host stack, which the host keeps for a later thread: zero
 * as much of it as the thread's Zephyr stack holds, below the entry's frame, before the
 * thread ends. What the worker left there (a request's key in a callee's buffer) goes too.
 */
static __attribute__((noinline)) void scrub_host_stack(void)
{
	char area[CONFIG_AGENT_WORKER_STACK_SIZE];

	agent_wipe(area, sizeof(area));
	__asm__ volatile("" : : "r"(area) : "memory");
}
#endif

#if defined(CONFIG_ARCH_POSIX)
/*
 * The stack use of a thread on native_sim, where it runs on a host stack (x86-64 or i386
 * frames: the host ABI's figure, not a Cortex-M one). Before the thread's function runs, the
 * HOST_PAINT_BYTES below the entry's frame are painted with HOST_PAINT; after it returned, the
 * lowest byte that no longer holds the paint is the deepest the function and its callees
 * wrote (Zephyr's CONFIG_INIT_STACKS does the same on a Zephyr stack); zephyr_stack_mark()
 * does the same below a frame inside the thread, for one call. The window is larger
 * than CONFIG_AGENT_WORKER_STACK_SIZE so that a use above the configured size still shows.
 * GUARD_BYTES stay unpainted for the painter's and the scanner's own frames.
 */
#define HOST_PAINT_BYTES (4u * CONFIG_AGENT_WORKER_STACK_SIZE)
#define HOST_PAINT 0xaau
#define GUARD_BYTES 512u

static __attribute__((noinline)) void host_stack_paint(uintptr_t top)
{
	volatile unsigned char *low = (volatile unsigned char *)(top - GUARD_BYTES - HOST_PAINT_BYTES);

	for (size_t i = 0; i < HOST_PAINT_BYTES; i++) {
		low[i] = HOST_PAINT;
	}
}

/* The lowest address below @top written since host_stack_paint(@top). */
static __attribute__((noinline)) uintptr_t host_stack_deepest(uintptr_t top)
{
	const volatile unsigned char *low =
		(const volatile unsigned char *)(top - GUARD_BYTES - HOST_PAINT_BYTES);
	size_t i = 0;

	while (i < HOST_PAINT_BYTES && low[i] == HOST_PAINT) {
		i++;
	}
	return (uintptr_t)&low[i];
}

static struct agent_thread *current_agent_thread(void)
{
	k_tid_t self = k_current_get();

	for (size_t slot = 0; slot < CONFIG_AGENT_THREAD_SLOTS; slot++) {
		if (thread_table[slot].used && &thread_table[slot].thread == self) {
			return &thread_table[slot];
		}
	}
	return NULL;
}

__attribute__((noinline)) uintptr_t zephyr_stack_mark(void)
{
	uintptr_t mark = (uintptr_t)__builtin_frame_address(0);
	struct agent_thread *thread = current_agent_thread();

	/* The paint below goes over what the thread wrote so far: keep its deepest point. */
	if (thread != NULL) {
		uintptr_t deepest = host_stack_deepest(thread->host_top);

		thread->host_low = deepest < thread->host_low ? deepest : thread->host_low;
	}
	host_stack_paint(mark);
	return mark;
}

void zephyr_stack_depth(uintptr_t mark, size_t *below_entry, size_t *below_mark)
{
	struct agent_thread *thread = current_agent_thread();
	uintptr_t deepest = host_stack_deepest(mark);

	*below_mark = mark - deepest;
	*below_entry = thread != NULL && deepest < thread->host_top ? thread->host_top - deepest : 0;
}
#endif

static void thread_entry(void *p1, void *p2, void *p3)
{
	struct agent_thread *thread = p1;

	(void)p2;
	(void)p3;
#if defined(CONFIG_ARCH_POSIX)
	uintptr_t top = (uintptr_t)__builtin_frame_address(0);

	thread->host_top = top;
	thread->host_low = top;
	host_stack_paint(top);
#endif
	thread->fn(thread->user_data);
#if defined(CONFIG_ARCH_POSIX)
	uintptr_t deepest = host_stack_deepest(top);

	thread->host_stack_used = top - (deepest < thread->host_low ? deepest : thread->host_low);
	scrub_host_stack();
#endif
}

int agent_thread_start(struct agent_thread **out, const char *name, size_t stack_bytes,
		       agent_thread_fn fn, void *user_data)
{
	struct agent_thread *thread = NULL;
	size_t slot;

	if (out == NULL || fn == NULL) {
		return -EINVAL;
	}
	if (stack_bytes > CONFIG_AGENT_WORKER_STACK_SIZE) {
		return -ENOMEM;
	}

	(void)k_mutex_lock(&agent_port_table_lock, K_FOREVER);
	for (slot = 0; slot < CONFIG_AGENT_THREAD_SLOTS; slot++) {
		if (!thread_table[slot].used) {
			thread = &thread_table[slot];
			thread->used = true;
			break;
		}
	}
	(void)k_mutex_unlock(&agent_port_table_lock);
	if (thread == NULL) {
		return -ENOMEM;
	}

	thread->fn = fn;
	thread->user_data = user_data;
#if defined(CONFIG_ARCH_POSIX)
	thread->host_stack_used = 0;
#endif
	thread->name[0] = '\0';
	if (name != NULL) {
		strncpy(thread->name, name, sizeof(thread->name) - 1u);
		thread->name[sizeof(thread->name) - 1u] = '\0';
	}

	/* Created suspended (K_FOREVER) so that the name is set before the thread runs. */
	k_tid_t tid = k_thread_create(&thread->thread, agent_port_stacks[slot],
				      CONFIG_AGENT_WORKER_STACK_SIZE, thread_entry, thread, NULL,
				      NULL, THREAD_PRIORITY, 0, K_FOREVER);

	if (thread->name[0] != '\0') {
		/* -ENOSYS without CONFIG_THREAD_NAME: the thread simply stays unnamed. */
		(void)k_thread_name_set(tid, thread->name);
	}
	k_thread_start(tid);
	*out = thread;
	return 0;
}

#if (defined(CONFIG_INIT_STACKS) && defined(CONFIG_THREAD_STACK_INFO)) || \
	defined(CONFIG_ARCH_POSIX)
#define STACK_PEAK_MEASURED 1
/* The most stack a joined thread of the port has used, in bytes (see stack_peak_note()). */
static size_t stack_peak_bytes;
#else
#define STACK_PEAK_MEASURED 0
#endif

/*
 * How much of @thread's stack it has used so far. CONFIG_INIT_STACKS fills each stack with a
 * known byte when the thread is created; k_thread_stack_space_get() counts the bytes still
 * holding it, which stays valid after the thread returned, until its slot is reused.
 * native_sim runs every thread on a host stack and leaves the Zephyr one untouched: there the
 * figure is the host stack's, which thread_entry() paints and reads (host_stack_paint()).
 */
#if STACK_PEAK_MEASURED && defined(CONFIG_ARCH_POSIX)
static size_t stack_used(struct agent_thread *thread)
{
	/* Set when the thread's function returned; 0 while it runs. */
	return thread->host_stack_used;
}
#elif STACK_PEAK_MEASURED
static size_t stack_used(struct agent_thread *thread)
{
	size_t unused = 0;

	if (k_thread_stack_space_get(&thread->thread, &unused) != 0 ||
	    thread->thread.stack_info.size < unused) {
		return 0;
	}
	return thread->thread.stack_info.size - unused;
}
#endif

/* Keep the most a thread used before its slot is freed (caller holds the table lock). */
static void stack_peak_note(struct agent_thread *thread)
{
#if STACK_PEAK_MEASURED
	size_t used = stack_used(thread);

	if (used > stack_peak_bytes) {
		stack_peak_bytes = used;
	}
#else
	(void)thread;
#endif
}

size_t agent_thread_overhead_bytes(void)
{
	/* The slot's record, its struct k_thread included; the stack is counted apart. */
	return sizeof(struct agent_thread);
}

int agent_thread_stack_peak(size_t *used, size_t *size)
{
#if STACK_PEAK_MEASURED
	if (used == NULL || size == NULL) {
		return -EINVAL;
	}
	(void)k_mutex_lock(&agent_port_table_lock, K_FOREVER);
	/* Threads that still hold their slot (running, or returned and not yet joined) too. */
	for (size_t slot = 0; slot < CONFIG_AGENT_THREAD_SLOTS; slot++) {
		if (thread_table[slot].used) {
			stack_peak_note(&thread_table[slot]);
		}
	}
	*used = stack_peak_bytes;
	(void)k_mutex_unlock(&agent_port_table_lock);
	*size = CONFIG_AGENT_WORKER_STACK_SIZE;
	return 0;
#else
	(void)used;
	(void)size;
	return -ENOTSUP;
#endif
}

int agent_thread_join(struct agent_thread *thread, uint32_t timeout_ms)
{
	int err;

	if (!thread_is_valid(thread) || !thread->used) {
		return -EINVAL;
	}
	err = k_thread_join(&thread->thread, timeout_from_ms(timeout_ms));
	if (err == -EBUSY) {
		/* k_thread_join() says -EBUSY for K_NO_WAIT; the port contract says -EAGAIN. */
		return -EAGAIN;
	}
	if (err != 0) {
		return err;
	}
	(void)k_mutex_lock(&agent_port_table_lock, K_FOREVER);
	stack_peak_note(thread);
#if !defined(CONFIG_ARCH_POSIX)
	/* Nothing the thread left on its stack (a request's key in a callee's buffer) stays
	 * there for whoever reads RAM next; the next thread of the slot is painted anew. */
	agent_wipe(K_THREAD_STACK_BUFFER(agent_port_stacks[thread - thread_table]),
		   K_THREAD_STACK_SIZEOF(agent_port_stacks[thread - thread_table]));
#endif
	thread->used = false;
	(void)k_mutex_unlock(&agent_port_table_lock);
	return 0;
}

int agent_mutex_init(struct agent_mutex **out)
{
	int err = -ENOMEM;

	if (out == NULL) {
		return -EINVAL;
	}
	(void)k_mutex_lock(&agent_port_table_lock, K_FOREVER);
	for (size_t i = 0; i < ZEPHYR_PORT_MUTEX_SLOTS; i++) {
		struct agent_mutex *mutex = &mutex_table[i];

		if (mutex->used) {
			continue;
		}
		err = k_mutex_init(&mutex->mutex);
		if (err == 0) {
			mutex->used = true;
			*out = mutex;
		}
		break;
	}
	(void)k_mutex_unlock(&agent_port_table_lock);
	return err;
}

void agent_mutex_lock(struct agent_mutex *mutex)
{
	(void)k_mutex_lock(&mutex->mutex, K_FOREVER);
}

void agent_mutex_unlock(struct agent_mutex *mutex)
{
	(void)k_mutex_unlock(&mutex->mutex);
}

int agent_sem_init(struct agent_sem **out, unsigned int initial, unsigned int limit)
{
	int err = -ENOMEM;

	if (out == NULL) {
		return -EINVAL;
	}
	(void)k_mutex_lock(&agent_port_table_lock, K_FOREVER);
	for (size_t i = 0; i < ZEPHYR_PORT_SEM_SLOTS; i++) {
		struct agent_sem *sem = &sem_table[i];

		if (sem->used) {
			continue;
		}
		/* -EINVAL from the kernel for limit 0 or initial > limit. */
		err = k_sem_init(&sem->sem, initial, limit);
		if (err == 0) {
			sem->used = true;
			*out = sem;
		}
		break;
	}
	(void)k_mutex_unlock(&agent_port_table_lock);
	return err;
}

int agent_sem_take(struct agent_sem *sem, uint32_t timeout_ms)
{
	int err = k_sem_take(&sem->sem, timeout_from_ms(timeout_ms));

	/* k_sem_take() says -EBUSY for K_NO_WAIT; the port contract says -EAGAIN. */
	return err == -EBUSY ? -EAGAIN : err;
}

void agent_sem_give(struct agent_sem *sem)
{
	k_sem_give(&sem->sem);
}

size_t agent_thread_stack_size(void)
{
	return k_current_get()->stack_info.size;
}

void agent_thread_relax(void)
{
#ifdef CONFIG_ARCH_POSIX
	/* native_sim runs code in zero simulated time: a busy loop would stop the clock and
	 * every interrupt (the console's Esc included). Account 100 us of CPU time per pause
	 * (about what a pause's 1000 instructions cost a small MCU), which lets the simulated
	 * time, and with it the interrupts, advance at least as fast as the host's clock. */
	k_busy_wait(100);
#endif
	k_yield();
}
