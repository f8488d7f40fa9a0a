/*
 * Time, threads, mutexes, semaphores and cancellation of the POSIX port. The port's tables
 * have no way to give back a mutex or a semaphore, so the tests count what they take and the
 * table-full cases check the exact remainder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>

#include "agent_port.h"
#include "posix/posix_port.h"

static unsigned int sems_taken;
static unsigned int mutexes_taken;

static struct agent_sem *new_sem(unsigned int initial, unsigned int limit)
{
	struct agent_sem *sem = NULL;

	assert_int_equal(agent_sem_init(&sem, initial, limit), 0);
	assert_non_null(sem);
	sems_taken++;
	return sem;
}

static void test_uptime_and_sleep(void **state)
{
	int64_t t0;
	int64_t t1;

	(void)state;
	t0 = agent_uptime_ms();
	assert_true(t0 >= 0);
	agent_sleep_ms(50);
	t1 = agent_uptime_ms();
	assert_true(t1 - t0 >= 50);
	/* Generous upper bound: a loaded CI host, but not a wrong unit (seconds, microseconds). */
	assert_true(t1 - t0 < 5000);
	agent_sleep_ms(0);
	assert_true(agent_uptime_ms() >= t1);
}

/* Workers run on other threads, where cmocka cannot fail a test; they count instead. */
struct worker {
	struct agent_sem *go;
	int runs;
	int take_failures;
};

static void worker_fn(void *user_data)
{
	struct worker *w = user_data;

	if (w->go != NULL && agent_sem_take(w->go, 10000) != 0) {
		__atomic_fetch_add(&w->take_failures, 1, __ATOMIC_SEQ_CST);
	}
	__atomic_fetch_add(&w->runs, 1, __ATOMIC_SEQ_CST);
}

static void test_start_join(void **state)
{
	struct agent_thread *thread = NULL;
	struct worker w = {0};

	(void)state;
	assert_int_equal(agent_thread_start(&thread, "worker", 4096, worker_fn, &w), 0);
	assert_int_equal(agent_thread_join(thread, 5000), 0);
	assert_int_equal(w.runs, 1);
	/* The slot is free again: joining the old handle is refused. */
	assert_int_equal(agent_thread_join(thread, 0), -EINVAL);
}

static void test_join_timeout(void **state)
{
	struct agent_thread *thread = NULL;
	struct worker w = {.go = new_sem(0, 1)};
	int64_t t0;

	(void)state;
	assert_int_equal(agent_thread_start(&thread, "blocked", 4096, worker_fn, &w), 0);
	t0 = agent_uptime_ms();
	assert_int_equal(agent_thread_join(thread, 50), -EAGAIN);
	assert_true(agent_uptime_ms() - t0 >= 50);
	assert_int_equal(agent_thread_join(thread, 0), -EAGAIN);
	assert_int_equal(w.runs, 0);

	agent_sem_give(w.go);
	assert_int_equal(agent_thread_join(thread, 5000), 0);
	assert_int_equal(w.runs, 1);
	assert_int_equal(w.take_failures, 0);
}

static void test_thread_table_and_stacks(void **state)
{
	struct agent_thread *threads[POSIX_THREAD_SLOTS];
	struct agent_thread *extra = NULL;
	struct worker gated = {.go = new_sem(0, POSIX_THREAD_SLOTS)};
	struct worker free_running = {0};

	(void)state;
	assert_int_equal(agent_thread_start(&extra, "t", 0, worker_fn, &gated), -EINVAL);
	assert_int_equal(agent_thread_start(&extra, "t", 4096, NULL, &gated), -EINVAL);
	assert_int_equal(agent_thread_start(&extra, "t", POSIX_THREAD_STACK_MAX_BYTES + 1u,
					    worker_fn, &gated),
			 -ENOMEM);

	/*
	 * The largest stack and a tiny one (raised to the host minimum), then fill the table.
	 * Slot 0 returns at once but holds its slot until joined.
	 */
	assert_int_equal(agent_thread_start(&threads[0], "big", POSIX_THREAD_STACK_MAX_BYTES,
					    worker_fn, &free_running),
			 0);
	assert_int_equal(agent_thread_start(&threads[1], "tiny", 1, worker_fn, &gated), 0);
	for (size_t i = 2; i < POSIX_THREAD_SLOTS; i++) {
		assert_int_equal(agent_thread_start(&threads[i], "fill", 4096, worker_fn, &gated),
				 0);
	}
	assert_int_equal(agent_thread_start(&extra, "extra", 4096, worker_fn, &gated), -ENOMEM);

	/* One joined (N-1 slots taken) makes room for exactly one more. */
	assert_int_equal(agent_thread_join(threads[0], 5000), 0);
	assert_int_equal(free_running.runs, 1);
	assert_int_equal(agent_thread_start(&threads[0], "again", 4096, worker_fn, &gated), 0);
	assert_int_equal(agent_thread_start(&extra, "extra", 4096, worker_fn, &gated), -ENOMEM);

	for (size_t i = 0; i < POSIX_THREAD_SLOTS; i++) {
		agent_sem_give(gated.go);
	}
	for (size_t i = 0; i < POSIX_THREAD_SLOTS; i++) {
		assert_int_equal(agent_thread_join(threads[i], 5000), 0);
	}
	assert_int_equal(gated.runs, POSIX_THREAD_SLOTS);
	assert_int_equal(gated.take_failures, 0);
}

static void test_sem_bounds(void **state)
{
	struct agent_sem *sem = NULL;
	int64_t t0;

	(void)state;
	assert_int_equal(agent_sem_init(&sem, 0, 0), -EINVAL);
	assert_int_equal(agent_sem_init(&sem, 3, 2), -EINVAL);
	sem = new_sem(2, 2);

	assert_int_equal(agent_sem_take(sem, 0), 0);
	assert_int_equal(agent_sem_take(sem, 0), 0);
	assert_int_equal(agent_sem_take(sem, 0), -EAGAIN);

	/* Gives beyond the limit are lost, as with k_sem_give(). */
	for (int i = 0; i < 3; i++) {
		agent_sem_give(sem);
	}
	assert_int_equal(agent_sem_take(sem, 0), 0);
	assert_int_equal(agent_sem_take(sem, 0), 0);
	assert_int_equal(agent_sem_take(sem, 0), -EAGAIN);

	t0 = agent_uptime_ms();
	assert_int_equal(agent_sem_take(sem, 30), -EAGAIN);
	assert_true(agent_uptime_ms() - t0 >= 30);
}

struct giver {
	struct agent_sem *sem;
};

static void giver_fn(void *user_data)
{
	struct giver *g = user_data;

	agent_sleep_ms(20);
	agent_sem_give(g->sem);
}

static void test_sem_wakes_waiter(void **state)
{
	struct giver g = {.sem = new_sem(0, 1)};
	struct agent_thread *thread = NULL;

	(void)state;
	assert_int_equal(agent_thread_start(&thread, "giver", 4096, giver_fn, &g), 0);
	assert_int_equal(agent_sem_take(g.sem, 5000), 0);
	assert_int_equal(agent_thread_join(thread, 5000), 0);
}

struct counter {
	struct agent_mutex *mutex;
	long value;
};

static void counter_fn(void *user_data)
{
	struct counter *c = user_data;

	for (int i = 0; i < 20000; i++) {
		agent_mutex_lock(c->mutex);
		/* Recursive, as Zephyr's k_mutex. */
		agent_mutex_lock(c->mutex);
		c->value++;
		agent_mutex_unlock(c->mutex);
		agent_mutex_unlock(c->mutex);
	}
}

static void test_mutex(void **state)
{
	struct counter c = {0};
	struct agent_thread *threads[4];

	(void)state;
	assert_int_equal(agent_mutex_init(&c.mutex), 0);
	mutexes_taken++;
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(agent_thread_start(&threads[i], "count", 4096, counter_fn, &c), 0);
	}
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(agent_thread_join(threads[i], 10000), 0);
	}
	assert_int_equal(c.value, 4 * 20000);
}

struct spinner {
	struct agent_cancel *cancel;
	int spins;
};

static void spinner_fn(void *user_data)
{
	struct spinner *s = user_data;

	while (!agent_cancel_is_raised(s->cancel)) {
		s->spins++;
		agent_sleep_ms(1);
	}
}

static void test_cancel(void **state)
{
	struct agent_cancel cancel = {0};
	struct spinner s = {.cancel = &cancel};
	struct agent_thread *thread = NULL;

	(void)state;
	assert_false(agent_cancel_is_raised(&cancel));
	agent_cancel_raise(&cancel);
	assert_true(agent_cancel_is_raised(&cancel));
	agent_cancel_reset(&cancel);
	assert_false(agent_cancel_is_raised(&cancel));

	assert_int_equal(agent_thread_start(&thread, "spin", 4096, spinner_fn, &s), 0);
	assert_int_equal(agent_thread_join(thread, 30), -EAGAIN);
	agent_cancel_raise(&cancel);
	assert_int_equal(agent_thread_join(thread, 5000), 0);
	assert_true(s.spins > 0);
}

/* Last: fills the mutex and semaphore tables for the rest of the process. */
static void test_tables_full(void **state)
{
	struct agent_mutex *mutex = NULL;
	struct agent_sem *sem = NULL;

	(void)state;
	while (mutexes_taken < POSIX_MUTEX_SLOTS) {
		assert_int_equal(agent_mutex_init(&mutex), 0);
		mutexes_taken++;
	}
	assert_int_equal(agent_mutex_init(&mutex), -ENOMEM);
	while (sems_taken < POSIX_SEM_SLOTS) {
		new_sem(0, 1);
	}
	assert_int_equal(agent_sem_init(&sem, 0, 1), -ENOMEM);
	/* Bad arguments are still reported as such. */
	assert_int_equal(agent_sem_init(&sem, 0, 0), -EINVAL);
}

static void test_board(void **state)
{
	(void)state;
	assert_string_equal(agent_board_name(), "host_sim");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uptime_and_sleep),
		cmocka_unit_test(test_start_join),
		cmocka_unit_test(test_join_timeout),
		cmocka_unit_test(test_thread_table_and_stacks),
		cmocka_unit_test(test_sem_bounds),
		cmocka_unit_test(test_sem_wakes_waiter),
		cmocka_unit_test(test_mutex),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_board),
		cmocka_unit_test(test_tables_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
