/*
 * The Lua 5.4 sources (scripts/fetch_lua.py) built as the simulator builds them, embedded the
 * way the script runner will embed them (issue "Scripting"): a state whose allocator has a
 * byte bound, errors with their line, the bound reached as LUA_ERRMEM, a count hook that
 * stops `while true do end`, and every byte given back by lua_close().
 *
 * The allocator here is the C library's behind a counter; the runner's own heap (a bounded
 * region behind the port's heap API) is the next step and gets its own test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

struct bounded {
	size_t limit;
	size_t used;
	size_t peak;
};

static void *bounded_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct bounded *b = ud;
	size_t old = ptr != NULL ? osize : 0;

	if (nsize == 0) {
		free(ptr);
		b->used -= old;
		return NULL;
	}
	if (nsize > old && b->used + (nsize - old) > b->limit) {
		return NULL; /* Lua raises LUA_ERRMEM */
	}
	void *p = realloc(ptr, nsize);

	if (p != NULL) {
		b->used = b->used - old + nsize;
		if (b->used > b->peak) {
			b->peak = b->used;
		}
	}
	return p;
}

static struct bounded heap;

static lua_State *open_state(size_t limit)
{
	lua_State *L;

	heap = (struct bounded){.limit = limit};
	L = lua_newstate(bounded_alloc, &heap);
	assert_non_null(L);
	luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
	luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
	luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
	luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
	lua_settop(L, 0);
	return L;
}

static void close_state(lua_State *L)
{
	lua_close(L);
	assert_int_equal(heap.used, 0); /* every byte given back */
}

static int run(lua_State *L, const char *source)
{
	int rc = luaL_loadbuffer(L, source, strlen(source), "=script");

	return rc != LUA_OK ? rc : lua_pcall(L, 0, 1, 0);
}

static void test_runs_a_chunk(void **state)
{
	lua_State *L = open_state(64 * 1024);

	(void)state;
	assert_int_equal(run(L, "local t = {} for i = 1, 6 do t[i] = i end\n"
				"return #t * 7"),
			 LUA_OK);
	assert_int_equal(lua_tointeger(L, -1), 42);
	assert_string_equal(LUA_VERSION_MAJOR "." LUA_VERSION_MINOR, "5.4");
	close_state(L);
}

static void test_error_has_its_line(void **state)
{
	lua_State *L = open_state(64 * 1024);

	(void)state;
	assert_int_equal(run(L, "local x = nil\nreturn x.y"), LUA_ERRRUN);
	assert_non_null(strstr(lua_tostring(L, -1), "script:2:"));
	lua_pop(L, 1);
	assert_int_equal(run(L, "return 1 +"), LUA_ERRSYNTAX);
	assert_non_null(strstr(lua_tostring(L, -1), "script:1:"));
	close_state(L);
}

static void test_the_bound_is_an_error_not_a_crash(void **state)
{
	const size_t limit = 48 * 1024;
	lua_State *L = open_state(limit);

	(void)state;
	assert_int_equal(run(L, "local t = {} for i = 1, 1e7 do t[i] = i end"), LUA_ERRMEM);
	assert_true(heap.peak <= limit);
	lua_settop(L, 0);
	lua_gc(L, LUA_GCCOLLECT);
	/* The state is still usable once the table is collected. */
	assert_int_equal(run(L, "return 'ok'"), LUA_OK);
	assert_string_equal(lua_tostring(L, -1), "ok");
	close_state(L);
}

static int hook_calls;

static void stop_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	if (++hook_calls == 100) {
		luaL_error(L, "cancelled");
	}
}

static void test_a_count_hook_stops_an_endless_loop(void **state)
{
	lua_State *L = open_state(64 * 1024);

	(void)state;
	hook_calls = 0;
	lua_sethook(L, stop_hook, LUA_MASKCOUNT, 1000);
	assert_int_equal(run(L, "while true do end"), LUA_ERRRUN);
	assert_non_null(strstr(lua_tostring(L, -1), "cancelled"));
	assert_int_equal(hook_calls, 100);
	close_state(L);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_a_chunk),
		cmocka_unit_test(test_error_has_its_line),
		cmocka_unit_test(test_the_bound_is_an_error_not_a_crash),
		cmocka_unit_test(test_a_count_hook_stops_an_endless_loop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
