# agent_fetch_sources(VAR SCRIPT WHAT), for both builds (app/sim/CMakeLists.txt and
# app/CMakeLists.txt). Needs AGENT_REPO_DIR and Python3_EXECUTABLE.
#
# Third-party C sources: a directory given with -D<VAR>=..., else what the script under
# scripts/ settles on (a west workspace's module, or the sources carried by a PyPI package
# it pins by version and SHA-256); the script prints that directory as its last line.
function(agent_fetch_sources var script what)
  if(${var})
    message(STATUS "${what}: ${${var}}")
    return()
  endif()
  execute_process(
    COMMAND ${Python3_EXECUTABLE} ${AGENT_REPO_DIR}/scripts/${script}
    OUTPUT_VARIABLE out
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scripts/${script} failed under ${Python3_EXECUTABLE}")
  endif()
  string(STRIP "${out}" out)
  string(REGEX REPLACE ".*\n" "" dir "${out}")
  set(${var} "${dir}" CACHE PATH "${what} C sources")
  message(STATUS "${what}: ${dir}")
endfunction()
