/*
 * The Lua 5.4 runtime of the script runner (script_runtime.h; docs/scripting.md, "Lua").
 *
 * One fresh Lua state per run, allocating only from the run's region heap; closed at the end
 * of every run, which gives every block back. The state opens the base, coroutine, table,
 * string, math and utf8 libraries, not io, os, package or debug: a script reaches files and
 * the board through the `device` table. `print` writes to the run's captured output;
 * dofile and loadfile are gone and load takes text only (Lua's binary chunks are not safe
 * to load from an untrusted source). A count hook checks the deadline and the cancel flag
 * every SCRIPT_HOOK_INSTRUCTIONS instructions, and every device call checks it on return
 * (device.sleep_ms returns early when the run must stop); once the run must stop every
 * instruction raises, so a pcall cannot swallow the stop.
 *
 * Lua runs two kinds of code with its hooks off: finalizers (__gc) and the message handler of
 * an error raised from a hook. Neither could be stopped, so setmetatable refuses a metatable
 * with a __gc field, and xpcall calls its handler after the stack is unwound (as pcall, then
 * the handler on the error), where the hook works.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

#include "script_runtime.h"

#define STOP_MESSAGE "script stopped"

struct lua_run {
	struct script_exec *ex;
	bool stopping;	/* the hook raises on every instruction */
	bool compiling; /* setup() is loading the chunk: an error there is a syntax error */
	uintptr_t stack_start; /* the C stack where the run began (frame address) */
	size_t stack_max;      /* script_exec_c_stack_max() */
};

/* Every hook event the run needs: the stop check (count) and the C stack check (calls). */
#define HOOK_MASK (LUA_MASKCOUNT | LUA_MASKCALL)

static void *region_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct lua_run *run = ud;
	struct agent_region *heap = script_exec_heap(run->ex);

	(void)osize;
	if (nsize == 0u) {
		agent_region_free(heap, ptr);
		return NULL;
	}
	return agent_region_realloc(heap, ptr, nsize);
}

static struct lua_run *run_of(lua_State *L)
{
	void *ud = NULL;

	(void)lua_getallocf(L, &ud);
	return ud;
}

static void count_hook(lua_State *L, lua_Debug *ar);

/* The run must stop: raise now, and from now on on every instruction. Does not return. */
static void raise_stop(lua_State *L, struct lua_run *run)
{
	if (!run->stopping) {
		run->stopping = true;
		/* From now on every instruction raises: a pcall that catches the stop is left by
		 * the next instruction after it. */
		lua_sethook(L, count_hook, HOOK_MASK, 1);
	}
	lua_pushliteral(L, STOP_MESSAGE);
	lua_error(L);
}

/*
 * The C stack the run has taken since it began. Lua bounds nested C calls by count
 * (LUAI_MAXCCALLS), but one level of C recursion (a gsub callback, a __tostring through
 * string.format, a sort comparator, a pcall) takes up to 2 KiB: 64 of them would overflow the
 * 16 KiB worker. Every call into a function passes the call hook, which refuses to go deeper
 * than script_exec_c_stack_max() with an error the script may catch (docs/scripting.md, "Stack").
 */
static size_t stack_taken(const struct lua_run *run)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);

	return run->stack_start > here ? run->stack_start - here : here - run->stack_start;
}

static void count_hook(lua_State *L, lua_Debug *ar)
{
	struct lua_run *run = run_of(L);

	if (ar->event != LUA_HOOKCOUNT) {
		if (stack_taken(run) > run->stack_max) {
			luaL_error(L, "C stack overflow (nesting takes more than %d bytes)",
				   (int)run->stack_max);
		}
		return;
	}
	if (script_exec_check(run->ex) != SCRIPT_COMPLETED) {
		raise_stop(L, run);
	}
}

static int lua_print(lua_State *L)
{
	struct lua_run *run = run_of(L);
	int n = lua_gettop(L);

	for (int i = 1; i <= n; i++) {
		size_t len;
		const char *text = luaL_tolstring(L, i, &len);

		if (i > 1) {
			script_exec_write(run->ex, "\t", 1);
		}
		script_exec_write(run->ex, text, len);
		lua_pop(L, 1);
	}
	script_exec_write(run->ex, "\n", 1);
	return 0;
}

/* ---- The device table ----------------------------------------------------------------------- */

struct lua_sink {
	lua_State *L;
	int depth;
	bool is_list[SCRIPT_SINK_DEPTH + 1];
	lua_Integer next[SCRIPT_SINK_DEPTH + 1];
};

/* A value was pushed: put it into the container it belongs to (the result stays on top). */
static void sink_place(struct lua_sink *s)
{
	if (s->depth == 0) {
		return;
	}
	if (s->is_list[s->depth]) {
		lua_rawseti(s->L, -2, ++s->next[s->depth]);
	} else {
		lua_rawset(s->L, -3); /* [map, key, value] */
	}
}

static void sink_none(void *ctx)
{
	struct lua_sink *s = ctx;

	lua_pushnil(s->L);
	sink_place(s);
}

static void sink_boolean(void *ctx, bool value)
{
	struct lua_sink *s = ctx;

	lua_pushboolean(s->L, value);
	sink_place(s);
}

static void sink_integer(void *ctx, int64_t value)
{
	struct lua_sink *s = ctx;

	lua_pushinteger(s->L, (lua_Integer)value);
	sink_place(s);
}

static void sink_string(void *ctx, const char *text, size_t len)
{
	struct lua_sink *s = ctx;

	lua_pushlstring(s->L, text, len);
	sink_place(s);
}

static void sink_begin(struct lua_sink *s, bool is_list)
{
	if (s->depth == SCRIPT_SINK_DEPTH) {
		luaL_error(s->L, "device API result nested too deep");
	}
	lua_newtable(s->L);
	s->depth++;
	s->is_list[s->depth] = is_list;
	s->next[s->depth] = 0;
}

static void sink_end(struct lua_sink *s)
{
	s->depth--;
	sink_place(s);
}

static void sink_list_begin(void *ctx)
{
	sink_begin(ctx, true);
}

static void sink_map_begin(void *ctx)
{
	sink_begin(ctx, false);
}

static void sink_end_any(void *ctx)
{
	sink_end(ctx);
}

static void sink_key(void *ctx, const char *key)
{
	struct lua_sink *s = ctx;

	lua_pushstring(s->L, key);
}

static const struct script_sink_ops lua_sink_ops = {
	.none = sink_none,
	.boolean = sink_boolean,
	.integer = sink_integer,
	.string = sink_string,
	.list_begin = sink_list_begin,
	.list_end = sink_end_any,
	.map_begin = sink_map_begin,
	.key = sink_key,
	.map_end = sink_end_any,
};

static int device_call(lua_State *L)
{
	const struct script_fn *fn = script_api_get((size_t)lua_tointeger(L, lua_upvalueindex(1)));
	struct script_arg args[SCRIPT_FN_ARGS_MAX] = {0};
	char error[SCRIPT_ERROR_MAX + 1];
	struct lua_sink sink = {.L = L};
	struct script_sink out = {.ops = &lua_sink_ops, .ctx = &sink};
	int argc = lua_gettop(L);
	int err;

	if (argc < fn->args_min || argc > fn->args_max) {
		return luaL_error(L, "device.%s takes %d to %d arguments: %s", fn->name,
				  fn->args_min, fn->args_max, fn->signature);
	}
	for (int i = 0; i < argc; i++) {
		if (fn->types[i] == SCRIPT_ARG_INT) {
			args[i].integer = luaL_checkinteger(L, i + 1);
		} else {
			args[i].str = luaL_checklstring(L, i + 1, &args[i].len);
		}
	}
	err = script_api_call(run_of(L)->ex, fn, args, (uint8_t)argc, &out, error);
	if (script_exec_check(run_of(L)->ex) != SCRIPT_COMPLETED) {
		raise_stop(L, run_of(L)); /* a sleep cut short: the script goes no further */
	}
	if (err != 0) {
		return luaL_error(L, "device.%s: %s", fn->name, error);
	}
	return 1;
}

static void open_device(lua_State *L)
{
	size_t count = script_api_count();

	lua_createtable(L, 0, (int)count);
	for (size_t i = 0; i < count; i++) {
		lua_pushinteger(L, (lua_Integer)i);
		lua_pushcclosure(L, device_call, 1);
		lua_setfield(L, -2, script_api_get(i)->name);
	}
	lua_setglobal(L, "device");
}

/* ---- The run -------------------------------------------------------------------------------- */

static const luaL_Reg libs[] = {
	{LUA_GNAME, luaopen_base},	   {LUA_COLIBNAME, luaopen_coroutine},
	{LUA_TABLIBNAME, luaopen_table},   {LUA_STRLIBNAME, luaopen_string},
	{LUA_MATHLIBNAME, luaopen_math},   {LUA_UTF8LIBNAME, luaopen_utf8},
};

/*
 * Text chunks only: Lua's binary chunks are not checked and can corrupt the interpreter.
 * No finalizers and no handler that runs inside the hook (see the top of this file).
 */
static const char text_only_load[] =
	"local load, pcall, rawget, setmt, type, error = load, pcall, rawget, setmetatable, "
	"type, error\n"
	"_G.load = function(chunk, name, mode, env) return load(chunk, name, 't', env) end\n"
	"_G.setmetatable = function(t, mt)\n"
	"  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then\n"
	"    error('__gc is not available to scripts (a finalizer cannot be stopped)', 2)\n"
	"  end\n"
	"  return setmt(t, mt)\n"
	"end\n"
	"local function handled(msgh, ok, ...)\n"
	"  if ok then return true, ... end\n"
	"  return false, msgh(...)\n"
	"end\n"
	"_G.xpcall = function(f, msgh, ...)\n"
	"  if type(msgh) ~= 'function' then\n"
	"    error(\"bad argument #2 to 'xpcall' (function expected)\", 2)\n"
	"  end\n"
	"  return handled(msgh, pcall(f, ...))\n"
	"end\n";

/*
 * Runs protected: opens the libraries, makes `arg` and `device`, loads the chunk, and returns
 * it followed by the arguments it gets as its `...`.
 */
static int setup(lua_State *L)
{
	struct lua_run *run = run_of(L);
	struct script_exec *ex = run->ex;
	const char *chunk = script_exec_chunk_name(ex);
	char name[SCRIPT_MESSAGE_MAX + 2];
	const char *source;
	size_t len;
	uint8_t argc = script_exec_argc(ex);

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		luaL_requiref(L, libs[i].name, libs[i].func, 1);
		lua_pop(L, 1);
	}
	lua_pushcfunction(L, lua_print);
	lua_setglobal(L, "print");
	lua_pushnil(L);
	lua_setglobal(L, "dofile");
	lua_pushnil(L);
	lua_setglobal(L, "loadfile");
	if (luaL_loadbufferx(L, text_only_load, sizeof(text_only_load) - 1u, "=load", "t") !=
	    LUA_OK) {
		return lua_error(L);
	}
	lua_call(L, 0, 0);
	open_device(L);
	lua_createtable(L, argc, 1);
	for (uint8_t i = 0; i < argc; i++) {
		lua_pushstring(L, script_exec_arg(ex, i));
		lua_rawseti(L, -2, i);
	}
	lua_setglobal(L, "arg");
	/* "=name" keeps the name as is in messages: "<stdin>:3: ..." */
	(void)snprintf(name, sizeof(name), "=%s", chunk);
	source = script_exec_source(ex, &len);
	run->compiling = true;
	if (luaL_loadbufferx(L, source, len, name, "t") != LUA_OK) {
		return lua_error(L);
	}
	run->compiling = false;
	for (uint8_t i = 1; i < argc; i++) {
		lua_pushstring(L, script_exec_arg(ex, i));
	}
	return argc;
}

/* "<chunk>:<line>: message" -> line and message; 0 when the message has no such prefix. */
static int32_t split_position(const char *chunk, const char **message)
{
	size_t chunk_len = strlen(chunk);
	const char *text = *message;
	int32_t line = 0;
	const char *p;

	if (strncmp(text, chunk, chunk_len) != 0 || text[chunk_len] != ':') {
		return 0;
	}
	p = text + chunk_len + 1;
	while (*p >= '0' && *p <= '9' && line < 10000000) {
		line = line * 10 + (*p++ - '0');
	}
	if (line == 0 || p[0] != ':' || p[1] != ' ') {
		return 0;
	}
	*message = p + 2;
	return line;
}

static void report_error(lua_State *L, struct lua_run *run, int status)
{
	struct script_exec *ex = run->ex;
	enum script_outcome stop = script_exec_check(ex);
	const char *message;
	int32_t line;

	if (stop != SCRIPT_COMPLETED) {
		script_exec_stopped(ex, stop);
		return;
	}
	if (status == LUA_ERRMEM) {
		script_exec_out_of_memory(ex);
		return;
	}
	message = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
	if (message == NULL) {
		message = lua_type(L, -1) == LUA_TNIL ? "nil" : "(error object is not a string)";
	}
	line = split_position(script_exec_chunk_name(ex), &message);
	script_exec_exception(ex,
			      run->compiling && status != LUA_ERRERR ? "syntax error"
			      : status == LUA_ERRERR		 ? "error in error handling"
								 : "runtime error",
			      message, line);
}

static void lua_run(struct script_exec *ex)
{
	struct lua_run run = {.ex = ex};
	lua_State *L = lua_newstate(region_alloc, &run);
	int status;

	if (L == NULL) {
		script_exec_out_of_memory(ex);
		return;
	}
	run.stack_start = (uintptr_t)__builtin_frame_address(0);
	run.stack_max = script_exec_c_stack_max(ex);
	lua_sethook(L, count_hook, HOOK_MASK, SCRIPT_HOOK_INSTRUCTIONS);
	lua_pushcfunction(L, setup);
	status = lua_pcall(L, 0, LUA_MULTRET, 0);
	if (status == LUA_OK) {
		script_exec_release_source(ex);
		status = lua_pcall(L, lua_gettop(L) - 1, 0, 0);
	}
	if (status != LUA_OK) {
		report_error(L, &run, status);
	}
	/* No script code runs here: a script cannot make a finalizer (setmetatable). */
	lua_close(L);
}

static const struct script_runtime lua_runtime = {
	.lang = SCRIPT_LANG_LUA,
	.name = "lua",
	.job = "script_lua",
	.run = lua_run,
};

const struct script_runtime *script_runtime_lua(void)
{
	return &lua_runtime;
}
