/*
 * agent_fs_read_exact() and agent_fs_write_all() (app/src/agent/state/agent_fs_io.c), the
 * one copy of the loops the conversation store, the module journal and the memory store
 * share, over a file API of the test's own: reads and writes that move at most a few bytes a
 * call, an end of file, an error after some bytes, a write that moves nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "agent_fs_io.h"

struct agent_file {
	uint8_t data[64];
	size_t size; /* bytes in the file */
	size_t pos;
	size_t step;	 /* bytes a call moves at most */
	int fail_at;	 /* the call that fails with -EIO (0: none) */
	int calls;
	size_t capacity; /* writes stop here: 0 bytes moved */
};

int agent_fs_read(struct agent_file *file, void *buf, size_t len)
{
	size_t n = file->size - file->pos;

	if (++file->calls == file->fail_at) {
		return -EIO;
	}
	n = n < len ? n : len;
	n = n < file->step ? n : file->step;
	memcpy(buf, &file->data[file->pos], n);
	file->pos += n;
	return (int)n;
}

int agent_fs_write(struct agent_file *file, const void *buf, size_t len)
{
	size_t n = file->capacity - file->pos;

	if (++file->calls == file->fail_at) {
		return -EIO;
	}
	n = n < len ? n : len;
	n = n < file->step ? n : file->step;
	memcpy(&file->data[file->pos], buf, n);
	file->pos += n;
	return (int)n;
}

static struct agent_file file_of(const char *text, size_t step)
{
	struct agent_file f = {.size = strlen(text), .step = step, .capacity = 64};

	memcpy(f.data, text, f.size);
	return f;
}

static void test_read_exact_loops_over_short_reads(void **state)
{
	struct agent_file f = file_of("0123456789", 3);
	char buf[16] = {0};

	(void)state;
	/* N bytes asked, N in the file: all of them in four calls of at most 3 */
	assert_int_equal(agent_fs_read_exact(&f, buf, 10), 10);
	assert_memory_equal(buf, "0123456789", 10);
	assert_int_equal(f.calls, 4);
	/* nothing asked: nothing read, no call */
	assert_int_equal(agent_fs_read_exact(&f, buf, 0), 0);
	assert_int_equal(f.calls, 4);
}

static void test_read_exact_stops_at_the_end_of_the_file(void **state)
{
	struct agent_file f = file_of("0123456789", 4);
	char buf[16];

	(void)state;
	/* N + 1 asked: the N there are, the end of the file after them */
	assert_int_equal(agent_fs_read_exact(&f, buf, 11), 10);
	assert_memory_equal(buf, "0123456789", 10);
	assert_int_equal(agent_fs_read_exact(&f, buf, 1), 0);
}

static void test_read_exact_gives_the_error(void **state)
{
	struct agent_file f = file_of("0123456789", 2);
	char buf[16];

	(void)state;
	f.fail_at = 3; /* after 4 bytes */
	assert_int_equal(agent_fs_read_exact(&f, buf, 10), -EIO);
	assert_memory_equal(buf, "0123", 4);
}

static void test_write_all(void **state)
{
	struct agent_file f = file_of("", 3);

	(void)state;
	assert_int_equal(agent_fs_write_all(&f, "abcdefgh", 8), 0);
	assert_memory_equal(f.data, "abcdefgh", 8);
	assert_int_equal(f.calls, 3);
	/* room for exactly what is written: N fits, N + 1 does not */
	f = file_of("", 5);
	f.capacity = 4;
	assert_int_equal(agent_fs_write_all(&f, "wxyz", 4), 0);
	f.pos = 0;
	assert_int_equal(agent_fs_write_all(&f, "vwxyz", 5), -ENOSPC);
	f = file_of("", 2);
	f.fail_at = 2;
	assert_int_equal(agent_fs_write_all(&f, "abcdef", 6), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_exact_loops_over_short_reads),
		cmocka_unit_test(test_read_exact_stops_at_the_end_of_the_file),
		cmocka_unit_test(test_read_exact_gives_the_error),
		cmocka_unit_test(test_write_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
