# The Lua 5.4 runtime for both builds (app/sim/CMakeLists.txt, app/CMakeLists.txt).
# Needs LUA_DIR (the interpreter's sources, scripts/fetch_lua.py). Defines:
#   agent_lua                  Lua's core and standard libraries, a static library
#   AGENT_LUA_ADAPTER_SOURCES  the adapter (this folder), compiled into the agent's core
#   AGENT_LUA_DEFINES          the definitions Lua and the adapter share
#
# Lua is compiled as ISO C with its default luaconf.h (64-bit integers, double floats), with
# the nesting limit of C calls and the parser lowered for the 16 KiB worker (docs/
# scripting.md, "Stack"). The io, os and package libraries and linit.c are left out: a
# script reaches files and the board through the device API, never through the C library.
# Third-party code: its warnings are not this project's -Werror.
# lstrlib.c's own MAXCCALLS bounds the recursion of its pattern matcher the same way.
set(AGENT_LUA_DEFINES LUAI_MAXCCALLS=64 MAXCCALLS=64)
file(GLOB AGENT_LUA_SOURCES ${LUA_DIR}/l*.c)
list(FILTER AGENT_LUA_SOURCES EXCLUDE REGEX "/(liolib|loslib|loadlib|linit)\\.c$")
file(GLOB AGENT_LUA_ADAPTER_SOURCES ${CMAKE_CURRENT_LIST_DIR}/*.c)
add_library(agent_lua STATIC ${AGENT_LUA_SOURCES})
target_include_directories(agent_lua SYSTEM PUBLIC ${LUA_DIR})
target_include_directories(agent_lua PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(agent_lua PUBLIC ${AGENT_LUA_DEFINES})
target_compile_options(agent_lua PRIVATE -w
                       -include ${CMAKE_CURRENT_LIST_DIR}/lua_port_config.h)
if(TARGET zephyr_interface)
  # An application library on Zephyr: the kernel's compile flags, include paths and libc.
  target_link_libraries(agent_lua PRIVATE zephyr_interface)
else()
  target_link_libraries(agent_lua PUBLIC m)
endif()
