# The portable core's folders, bottom layer first (docs/architecture.md), and their sources.
# Included by both builds (app/CMakeLists.txt, app/sim/CMakeLists.txt); headers are included
# by name, so every folder is an include directory. tests/test_core_includes.py keeps the
# include directions between the folders.
#
# Defines AGENT_CORE_DIRS (the folders) and AGENT_CORE_SOURCES (every *.c in them).
set(AGENT_CORE_DIRS
  ${CMAKE_CURRENT_LIST_DIR}/agent/state
  ${CMAKE_CURRENT_LIST_DIR}/agent/wire
  ${CMAKE_CURRENT_LIST_DIR}/tools
  ${CMAKE_CURRENT_LIST_DIR}/script
  ${CMAKE_CURRENT_LIST_DIR}/modules
  ${CMAKE_CURRENT_LIST_DIR}/agent/store
  ${CMAKE_CURRENT_LIST_DIR}/agent/provider
  ${CMAKE_CURRENT_LIST_DIR}/agent/request
  ${CMAKE_CURRENT_LIST_DIR}/agent/shell
  ${CMAKE_CURRENT_LIST_DIR}/agent/mgmt)
list(TRANSFORM AGENT_CORE_DIRS APPEND "/*.c" OUTPUT_VARIABLE AGENT_CORE_GLOBS)
file(GLOB AGENT_CORE_SOURCES CONFIGURE_DEPENDS ${AGENT_CORE_GLOBS})
