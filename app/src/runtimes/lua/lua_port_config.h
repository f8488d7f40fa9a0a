/*
 * Forced into every source of the Lua library (lua.cmake, -include): what Lua would take
 * from the C library's stdio and clock, which the device does not offer a script.
 *
 * - Files: Lua scripts have no io library, and loadfile / dofile are removed from the base
 *   library by the adapter; luaL_loadfilex() is compiled anyway (lauxlib.c), so its stdio
 *   calls are mapped here to "no such file" instead of linking the C library's file layer
 *   (which the firmware's picolibc build has no POSIX calls under).
 * - Output: print is the adapter's (captured output); lauxlib's own writers go nowhere.
 * - table.sort's pivot randomisation reads clock(), absent on the firmware: a fixed pivot.
 */
#ifndef AGENT_LUA_PORT_CONFIG_H
#define AGENT_LUA_PORT_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#undef fopen
#undef freopen
#undef fclose
#undef getc
#undef ferror
#undef feof
#undef fread
#define fopen(name, mode)	 ((void)(name), (void)(mode), (FILE *)NULL)
#define freopen(name, mode, f)	 ((void)(name), (void)(mode), (void)(f), (FILE *)NULL)
#define fclose(f)		 ((void)(f), 0)
#define getc(f)			 ((void)(f), EOF)
#define ferror(f)		 ((void)(f), 0)
#define feof(f)			 ((void)(f), 1)
#define fread(buf, size, n, f)	 ((void)(buf), (void)(size), (void)(n), (void)(f), (size_t)0)

#define lua_writestring(s, l)	   ((void)(s), (void)(l))
#define lua_writeline()		   ((void)0)
#define lua_writestringerror(s, p) ((void)(s), (void)(p))

#define l_randomizePivot() 0u

#endif /* AGENT_LUA_PORT_CONFIG_H */
