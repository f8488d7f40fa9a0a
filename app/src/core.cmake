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

# agent_packed_texts(TARGET SCOPE OUT_DIR DOTCONFIG WITH_PAGES): the texts of the tool
# definitions (every TOOL_TEXT of the core's sources) and, when WITH_PAGES is true, the
# reference pages of docs/reference/ that the configuration DOTCONFIG keeps, packed with one
# dictionary by scripts/gen_reference.py (docs/reference-format.md) into OUT_DIR:
# packed_texts.c/.h and reference_pages.c/.h. Adds them to TARGET and OUT_DIR to its include
# path with SCOPE (PUBLIC for a library whose users include tool.h).
set(AGENT_REPO_ROOT ${CMAKE_CURRENT_LIST_DIR}/../..)
function(agent_packed_texts target scope out_dir dotconfig with_pages)
  set(script ${AGENT_REPO_ROOT}/scripts/gen_reference.py)
  set(args --dotconfig ${dotconfig})
  foreach(dir ${AGENT_CORE_DIRS})
    list(APPEND args --texts-from ${dir})
  endforeach()
  list(APPEND args --texts-c ${out_dir}/packed_texts.c --texts-h ${out_dir}/packed_texts.h)
  set(outputs ${out_dir}/packed_texts.c ${out_dir}/packed_texts.h)
  list(TRANSFORM AGENT_CORE_DIRS APPEND "/*.h" OUTPUT_VARIABLE header_globs)
  file(GLOB depends CONFIGURE_DEPENDS ${header_globs})
  list(APPEND depends ${AGENT_CORE_SOURCES})
  if(with_pages)
    file(GLOB pages CONFIGURE_DEPENDS ${AGENT_REPO_ROOT}/docs/reference/*.md)
    list(APPEND depends ${pages})
    list(APPEND args --pages ${AGENT_REPO_ROOT}/docs/reference
         --out-c ${out_dir}/reference_pages.c --out-h ${out_dir}/reference_pages.h)
    list(APPEND outputs ${out_dir}/reference_pages.c ${out_dir}/reference_pages.h)
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${Python3_EXECUTABLE} ${script} ${args}
    DEPENDS ${script} ${AGENT_REPO_ROOT}/scripts/tool_texts.py ${dotconfig} ${depends}
    COMMENT "Packing the tool texts and the reference pages (scripts/gen_reference.py)"
    VERBATIM)
  target_sources(${target} PRIVATE ${outputs})
  target_include_directories(${target} ${scope} ${out_dir})
endfunction()
