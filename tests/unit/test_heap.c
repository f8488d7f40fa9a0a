/*
 * The port's heap statistics (agent_heap_stats(), agent_heap_free(); the simulator's heap in
 * app/src/port/posix/heap.c), what a network connection takes from it, and the memory
 * figures and request samples built on them (app/src/agent/state/agent_mem.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_config.h"
#include "agent_mem.h"
#include "agent_port.h"
#include "provider.h"
#include "posix/posix_port.h"

#define TOTAL POSIX_HEAP_INTERNAL_BYTES
#define UNIT  POSIX_HEAP_UNIT_BYTES

static struct agent_heap_stats st;

static int setup(void **state)
{
	(void)state;
	posix_heap_reset();
	posix_pool_reset_all();
	agent_mem_reset();
	return 0;
}

static void stats(void)
{
	size_t free_bytes = 0;

	assert_int_equal(agent_heap_stats(AGENT_MEM_INTERNAL, &st), 0);
	/* The cheap call agrees with the full one. */
	assert_int_equal(agent_heap_free(AGENT_MEM_INTERNAL, &free_bytes), 0);
	assert_int_equal(free_bytes, st.free_bytes);
	assert_int_equal(st.free_bytes + st.allocated_bytes, st.total_bytes);
}

static void test_empty_heap(void **state)
{
	(void)state;
	stats();
	assert_int_equal(st.total_bytes, TOTAL);
	assert_int_equal(st.free_bytes, TOTAL);
	assert_int_equal(st.largest_free_bytes, TOTAL);
	assert_int_equal(st.allocated_bytes, 0);
	assert_int_equal(st.max_allocated_bytes, 0);
}

static void test_psram_has_no_heap(void **state)
{
	size_t free_bytes;

	(void)state;
	assert_int_equal(agent_heap_stats(AGENT_MEM_PSRAM, &st), -ENODEV);
	assert_int_equal(agent_heap_free(AGENT_MEM_PSRAM, &free_bytes), -ENODEV);
	assert_null(posix_heap_alloc(AGENT_MEM_PSRAM, 16));
	assert_int_equal(agent_heap_stats(AGENT_MEM_CLASS_COUNT, &st), -EINVAL);
	assert_int_equal(agent_heap_stats(AGENT_MEM_INTERNAL, NULL), -EINVAL);
}

static void test_alloc_free_and_high_water(void **state)
{
	void *a;
	void *b;

	(void)state;
	a = posix_heap_alloc(AGENT_MEM_INTERNAL, 100); /* rounded up to whole units */
	assert_non_null(a);
	stats();
	assert_int_equal(st.allocated_bytes, 112);
	assert_int_equal(st.free_bytes, TOTAL - 112);
	assert_int_equal(st.largest_free_bytes, TOTAL - 112);
	b = posix_heap_alloc(AGENT_MEM_INTERNAL, UNIT);
	assert_non_null(b);
	assert_ptr_equal((uint8_t *)b, (uint8_t *)a + 112);
	stats();
	assert_int_equal(st.max_allocated_bytes, 112 + UNIT);
	assert_int_equal(posix_heap_free(a), 0);
	assert_int_equal(posix_heap_free(b), 0);
	stats();
	assert_int_equal(st.allocated_bytes, 0);
	assert_int_equal(st.largest_free_bytes, TOTAL);
	/* The high-water mark stays. */
	assert_int_equal(st.max_allocated_bytes, 112 + UNIT);
	/* Freed twice, not a block, not the start of one, and NULL. */
	assert_int_equal(posix_heap_free(a), -EINVAL);
	assert_int_equal(posix_heap_free(&st), -EINVAL);
	a = posix_heap_alloc(AGENT_MEM_INTERNAL, 2 * UNIT);
	assert_int_equal(posix_heap_free((uint8_t *)a + UNIT), -EINVAL);
	assert_int_equal(posix_heap_free((uint8_t *)a + 1), -EINVAL);
	assert_int_equal(posix_heap_free(NULL), 0);
	assert_int_equal(posix_heap_free(a), 0);
	assert_null(posix_heap_alloc(AGENT_MEM_INTERNAL, 0));
}

/* What the port's OpenSSL allocator asks of a block: is it the heap's, how large was it asked. */
static void test_block_owner_and_size(void **state)
{
	uint8_t *a;

	(void)state;
	a = posix_heap_alloc(AGENT_MEM_INTERNAL, 100);
	assert_non_null(a);
	assert_true(posix_heap_owns(a));
	assert_true(posix_heap_owns(a + 111));
	assert_false(posix_heap_owns(&st));
	assert_false(posix_heap_owns(NULL));
	assert_int_equal(posix_heap_block_bytes(a), 100);
	assert_int_equal(posix_heap_block_bytes(a + UNIT), 0); /* inside a block, not one */
	assert_int_equal(posix_heap_block_bytes(a + 1), 0);
	assert_int_equal(posix_heap_block_bytes(&st), 0);
	assert_int_equal(posix_heap_free(a), 0);
	assert_int_equal(posix_heap_block_bytes(a), 0);
}

#if defined(__SANITIZE_ADDRESS__)
/*
 * Under AddressSanitizer the heap is poisoned but for the blocks handed out, up to the bytes
 * asked for: a write one byte past a block or into a freed block is reported (the child
 * dies), the last byte asked for and a block handed out again are writable.
 */
static uint8_t *asan_block;

static void write_last(void)
{
	asan_block[99] = 1;
}

static void write_past(void)
{
	asan_block[100] = 1;
}

static void write_freed(void)
{
	(void)posix_heap_free(asan_block);
	asan_block[0] = 1;
}

static void write_reused(void)
{
	(void)posix_heap_free(asan_block);
	asan_block = posix_heap_alloc(AGENT_MEM_INTERNAL, 100);
	asan_block[99] = 1;
}

static bool child_survives(void (*fn)(void))
{
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* The report of an expected error would read as a failure in the test log. */
		int null_fd = open("/dev/null", O_WRONLY);

		if (null_fd >= 0) {
			(void)dup2(null_fd, STDERR_FILENO);
		}
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_asan_sees_the_heap(void **state)
{
	(void)state;
	asan_block = posix_heap_alloc(AGENT_MEM_INTERNAL, 100);
	assert_non_null(asan_block);
	assert_true(child_survives(write_last));
	assert_false(child_survives(write_past));
	assert_false(child_survives(write_freed));
	assert_true(child_survives(write_reused));
	assert_int_equal(posix_heap_free(asan_block), 0);
}
#endif

/* The largest free block is the longest run of free units, not the free total. */
static void test_largest_block_under_fragmentation(void **state)
{
	void *a;
	void *b;
	void *c;

	(void)state;
	a = posix_heap_alloc(AGENT_MEM_INTERNAL, TOTAL / 4);
	b = posix_heap_alloc(AGENT_MEM_INTERNAL, TOTAL / 4);
	c = posix_heap_alloc(AGENT_MEM_INTERNAL, TOTAL / 4);
	assert_non_null(c);
	assert_int_equal(posix_heap_free(b), 0);
	stats();
	assert_int_equal(st.free_bytes, TOTAL / 2);
	assert_int_equal(st.largest_free_bytes, TOTAL / 4);
	/* So an allocation of the free total fails while the largest block still fits. */
	assert_null(posix_heap_alloc(AGENT_MEM_INTERNAL, TOTAL / 4 + UNIT));
	b = posix_heap_alloc(AGENT_MEM_INTERNAL, TOTAL / 4);
	assert_non_null(b);
	assert_int_equal(posix_heap_free(a), 0);
	assert_int_equal(posix_heap_free(b), 0);
	assert_int_equal(posix_heap_free(c), 0);
}

/* The heap's size is a bound: all of it at once, not a byte more. */
static void test_whole_heap_at_the_bound(void **state)
{
	void *all;

	(void)state;
	assert_null(posix_heap_alloc(AGENT_MEM_INTERNAL, TOTAL + 1));
	all = posix_heap_alloc(AGENT_MEM_INTERNAL, TOTAL);
	assert_non_null(all);
	stats();
	assert_int_equal(st.free_bytes, 0);
	assert_int_equal(st.largest_free_bytes, 0);
	assert_null(posix_heap_alloc(AGENT_MEM_INTERNAL, 1));
	assert_int_equal(posix_heap_free(all), 0);
}

/* ---- A connection holds heap while open ----------------------------------------------- */

static int listen_local(uint16_t *port)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
	*port = ntohs(addr.sin_port);
	return fd;
}

/*
 * A plain TCP connection takes nothing from the simulated heap (the host's kernel holds its
 * buffers): it connects with the heap full and the heap does not move. A TLS connection
 * takes OpenSSL's memory from it: with the heap full it cannot begin and fails with -ENOMEM.
 * (What a TLS connection really takes: tests/test_net_tls.py, with a TLS server.)
 */
static void test_connection_memory_comes_from_the_heap(void **state)
{
	struct agent_net *net;
	uint16_t port;
	int fd = listen_local(&port);
	void *all;

	(void)state;
	all = posix_heap_alloc(AGENT_MEM_INTERNAL, TOTAL);
	assert_non_null(all);
	assert_int_equal(agent_net_connect(&net, "127.0.0.1", port, false, 2000, NULL), 0);
	stats();
	assert_int_equal(st.allocated_bytes, TOTAL);
	assert_int_equal(agent_net_send(net, "x", 1, 2000, NULL), 0);
	agent_net_close(net);
	assert_int_equal(agent_net_connect(&net, "127.0.0.1", port, true, 2000, NULL), -ENOMEM);
	stats();
	assert_int_equal(st.allocated_bytes, TOTAL);
	assert_int_equal(st.max_allocated_bytes, TOTAL);
	assert_int_equal(posix_heap_free(all), 0);
	close(fd);
}

/* A request whose connection finds no memory says so (not "network error -12"). */
static char provider_error[200];

static int on_provider_event(void *user_data, const struct provider_event *ev)
{
	(void)user_data;
	if (ev->type == PROVIDER_ERROR) {
		snprintf(provider_error, sizeof(provider_error), "%s", ev->error.message);
	}
	return 0;
}

static void test_no_memory_for_a_connection_is_said(void **state)
{
	static struct agent_config cfg;
	struct provider_request req = {.config = &cfg, .instructions = "", .prompt = "hi",
				       .emit = on_provider_event};
	uint16_t port;
	int fd = listen_local(&port);
	void *all = posix_heap_alloc(AGENT_MEM_INTERNAL, TOTAL);

	(void)state;
	assert_non_null(all);
	snprintf(cfg.endpoint, sizeof(cfg.endpoint), "https://127.0.0.1:%u/v1/chat/completions",
		 (unsigned int)port);
	strcpy(cfg.model, "m");
	provider_error[0] = '\0';
	assert_int_equal(provider_run(&req), -ENOMEM);
	assert_string_equal(provider_error, "no memory for a connection to 127.0.0.1");
	assert_int_equal(posix_heap_free(all), 0);
	close(fd);
}

/* ---- Memory figures and request samples (agent_mem.c) ------------------------------------ */

static uint8_t pool_buf[4 * 64] __attribute__((aligned(8)));
static uint8_t psram_buf[2 * 128] __attribute__((aligned(8)));

static void test_figures_are_heap_plus_pools(void **state)
{
	struct agent_mem_figures mem[AGENT_MEM_CLASS_COUNT];
	struct agent_pool *internal;
	struct agent_pool *psram;
	void *block;
	void *heap_block;

	(void)state;
	assert_int_equal(agent_pool_init(&internal, "int", pool_buf, 64, 4, AGENT_MEM_INTERNAL), 0);
	assert_int_equal(agent_pool_init(&psram, "ext", psram_buf, 128, 2, AGENT_MEM_PSRAM), 0);
	heap_block = posix_heap_alloc(AGENT_MEM_INTERNAL, 1024);
	block = agent_pool_alloc(internal);
	agent_mem_read(mem);
	assert_true(mem[AGENT_MEM_INTERNAL].heap_present);
	assert_int_equal(mem[AGENT_MEM_INTERNAL].heap.free_bytes, TOTAL - 1024);
	assert_int_equal(mem[AGENT_MEM_INTERNAL].pool_free_bytes, 3 * 64);
	assert_int_equal(mem[AGENT_MEM_INTERNAL].free_bytes, TOTAL - 1024 + 3 * 64);
	assert_int_equal(mem[AGENT_MEM_INTERNAL].largest_free_bytes, TOTAL - 1024);
	assert_int_equal(agent_mem_free(AGENT_MEM_INTERNAL), TOTAL - 1024 + 3 * 64);
	/* No PSRAM heap: the PSRAM figures are its pools. */
	assert_false(mem[AGENT_MEM_PSRAM].heap_present);
	assert_int_equal(mem[AGENT_MEM_PSRAM].free_bytes, 2 * 128);
	assert_int_equal(mem[AGENT_MEM_PSRAM].largest_free_bytes, 128);
	assert_int_equal(mem[AGENT_MEM_PSRAM].pools, 1);
	assert_int_equal(agent_mem_free(AGENT_MEM_PSRAM), 2 * 128);
	agent_pool_free(internal, block);
	posix_heap_free(heap_block);
}

/* A block someone holds of the heap while a response streams in (any size will do). */
#define HELD (3u * 1024u)

static void test_request_samples(void **state)
{
	struct agent_mem_requests req;
	struct agent_pool *psram;
	void *held[2];
	void *conn;

	(void)state;
	assert_int_equal(agent_pool_init(&psram, "ext", psram_buf, 128, 2, AGENT_MEM_PSRAM), 0);
	agent_mem_requests_get(&req);
	assert_int_equal(req.requests, 0);
	assert_false(req.streamed);
	assert_false(req.last_known);

	/* As the provider does: begin, take its buffers, send, stream, complete, give back. */
	agent_mem_request_begin();
	held[0] = agent_pool_alloc(psram);
	held[1] = agent_pool_alloc(psram);
	agent_mem_http_request();
	conn = posix_heap_alloc(AGENT_MEM_INTERNAL, HELD);
	assert_true(agent_mem_stream_chunk(1000)); /* a response's first chunk is sampled */
	agent_mem_requests_get(&req);
	assert_true(req.last_known);
	assert_false(req.last_completed);
	assert_int_equal(req.psram_before, 2 * 128);
	assert_int_equal(req.internal_lowest_streaming, TOTAL - HELD);
	posix_heap_free(conn);
	assert_true(agent_mem_stream_chunk(2000)); /* more free now: the lowest stays */
	agent_mem_request_end();
	agent_pool_free(psram, held[0]);
	agent_pool_free(psram, held[1]);
	agent_mem_requests_get(&req);
	assert_int_equal(req.requests, 1);
	assert_true(req.streamed);
	assert_int_equal(req.internal_lowest_streaming, TOTAL - HELD);
	assert_true(req.last_completed);
	assert_int_equal(req.psram_before, 2 * 128);
	assert_int_equal(req.psram_at_completion, 0);

	/* The next request: counted, its own PSRAM figures; its first chunk is sampled 1 ms
	 * after the last sample, and being lower it lowers the mark. */
	agent_mem_request_begin();
	agent_mem_http_request();
	conn = posix_heap_alloc(AGENT_MEM_INTERNAL, 2 * HELD);
	assert_true(agent_mem_stream_chunk(2001));
	posix_heap_free(conn);
	agent_mem_request_end();
	agent_mem_requests_get(&req);
	assert_int_equal(req.requests, 2);
	assert_int_equal(req.internal_lowest_streaming, TOTAL - 2 * HELD);
	assert_int_equal(req.psram_before, 2 * 128);
	assert_int_equal(req.psram_at_completion, 2 * 128);
}

/*
 * The count is of HTTP requests: a turn that sends its request twice (the empty-turn retry)
 * counts two; the PSRAM figures stay those of the turn.
 */
static void test_each_http_request_counts(void **state)
{
	struct agent_mem_requests req;

	(void)state;
	agent_mem_request_begin();
	agent_mem_http_request();
	agent_mem_http_request();
	agent_mem_request_end();
	agent_mem_requests_get(&req);
	assert_int_equal(req.requests, 2);
	assert_true(req.last_completed);
}

/*
 * While a response streams in, a sample (a heap walk) is taken at its first chunk and then
 * once AGENT_MEM_SAMPLE_INTERVAL_MS have passed since the last one: one ms earlier, a lower
 * figure is not seen; at the interval it is. Every response's first chunk is sampled.
 */
static void test_stream_samples_are_rate_limited(void **state)
{
	struct agent_mem_requests req;
	const int64_t t0 = 5000;
	void *block;

	(void)state;
	agent_mem_http_request();
	assert_true(agent_mem_stream_chunk(t0));
	block = posix_heap_alloc(AGENT_MEM_INTERNAL, HELD);
	assert_false(agent_mem_stream_chunk(t0 + 1));
	assert_false(agent_mem_stream_chunk(t0 + AGENT_MEM_SAMPLE_INTERVAL_MS - 1));
	agent_mem_requests_get(&req);
	assert_int_equal(req.internal_lowest_streaming, TOTAL);
	assert_true(agent_mem_stream_chunk(t0 + AGENT_MEM_SAMPLE_INTERVAL_MS));
	agent_mem_requests_get(&req);
	assert_int_equal(req.internal_lowest_streaming, TOTAL - HELD);
	assert_false(agent_mem_stream_chunk(t0 + AGENT_MEM_SAMPLE_INTERVAL_MS + 1));
	posix_heap_free(block);

	/* A new request's first chunk, 2 ms after the last sample, is taken. */
	agent_mem_http_request();
	block = posix_heap_alloc(AGENT_MEM_INTERNAL, 2 * HELD);
	assert_true(agent_mem_stream_chunk(t0 + AGENT_MEM_SAMPLE_INTERVAL_MS + 2));
	agent_mem_requests_get(&req);
	assert_int_equal(req.internal_lowest_streaming, TOTAL - 2 * HELD);
	assert_false(agent_mem_stream_chunk(t0 + AGENT_MEM_SAMPLE_INTERVAL_MS + 3));
	posix_heap_free(block);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_empty_heap, setup),
		cmocka_unit_test_setup(test_psram_has_no_heap, setup),
		cmocka_unit_test_setup(test_alloc_free_and_high_water, setup),
		cmocka_unit_test_setup(test_block_owner_and_size, setup),
#if defined(__SANITIZE_ADDRESS__)
		cmocka_unit_test_setup(test_asan_sees_the_heap, setup),
#endif
		cmocka_unit_test_setup(test_largest_block_under_fragmentation, setup),
		cmocka_unit_test_setup(test_whole_heap_at_the_bound, setup),
		cmocka_unit_test_setup(test_connection_memory_comes_from_the_heap, setup),
		cmocka_unit_test_setup(test_no_memory_for_a_connection_is_said, setup),
		cmocka_unit_test_setup(test_figures_are_heap_plus_pools, setup),
		cmocka_unit_test_setup(test_request_samples, setup),
		cmocka_unit_test_setup(test_each_http_request_counts, setup),
		cmocka_unit_test_setup(test_stream_samples_are_rate_limited, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
