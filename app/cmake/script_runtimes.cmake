# agent_add_script_runtimes(TARGET VISIBILITY LUA_ON PYTHON_ON), for both builds: for each
# script runtime the configuration enables, fetch its interpreter's pinned sources once per
# checkout (build/third_party/), build them as a library of their own (warnings off), and add
# its adapter (app/src/runtimes/NAME, held to the project's warnings) to TARGET, which links
# the library with VISIBILITY. docs/scripting.md, "Sources". Needs AGENT_REPO_DIR and
# Python3_EXECUTABLE. A macro: the runtimes' files define variables for the caller.
include(${CMAKE_CURRENT_LIST_DIR}/fetch_sources.cmake)

macro(agent_add_script_runtimes target visibility lua_on python_on)
  if(${lua_on})
    agent_fetch_sources(LUA_DIR fetch_lua.py "Lua 5.4")
    include(${AGENT_REPO_DIR}/app/src/runtimes/lua/lua.cmake)
    target_sources(${target} PRIVATE ${AGENT_LUA_ADAPTER_SOURCES})
    target_link_libraries(${target} ${visibility} agent_lua)
  endif()
  if(${python_on})
    agent_fetch_sources(MICROPYTHON_DIR fetch_micropython.py "MicroPython")
    include(${AGENT_REPO_DIR}/app/src/runtimes/python/python.cmake)
    target_sources(${target} PRIVATE ${AGENT_PYTHON_ADAPTER_SOURCES})
    target_link_libraries(${target} ${visibility} agent_micropython)
  endif()
endmacro()
