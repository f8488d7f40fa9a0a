# The MicroPython runtime for both builds (app/sim/CMakeLists.txt, app/CMakeLists.txt).
# Needs MICROPYTHON_DIR (MicroPython's core, scripts/fetch_micropython.py) and
# Python3_EXECUTABLE. Defines:
#   agent_micropython             MicroPython's core (py/), a static library
#   AGENT_PYTHON_ADAPTER_SOURCES  the adapter (this folder), compiled into the agent's core
#
# MicroPython is configured by this folder's mpconfigport.h (docs/scripting-python.md). Its
# generated headers (the qstr pool, the module and root-pointer tables, the version) are made
# at build time by MicroPython's own generators, as its ports do: every core source is put
# through the target's C preprocessor (the same compiler and flags as the build) and the
# MP_QSTR_ names, MP_REGISTER_MODULE and MP_REGISTER_ROOT_POINTER lines found are collected.
# Third-party code: its warnings are not this project's -Werror; the adapter's are.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(AGENT_PY_PORT_DIR ${CMAKE_CURRENT_LIST_DIR})
set(AGENT_PY_GEN_DIR ${CMAKE_CURRENT_BINARY_DIR}/micropython)
set(AGENT_PY_GENHDR ${AGENT_PY_GEN_DIR}/genhdr)
set(AGENT_PY_MPY_PY ${MICROPYTHON_DIR}/py)
file(GLOB AGENT_MICROPYTHON_SOURCES ${AGENT_PY_MPY_PY}/*.c)
set(AGENT_PYTHON_ADAPTER_SOURCES ${AGENT_PY_PORT_DIR}/python_runtime.c
                                 ${AGENT_PY_PORT_DIR}/python_device.c)
set(AGENT_PY_INCLUDES ${MICROPYTHON_DIR} ${AGENT_PY_PORT_DIR} ${AGENT_PY_GEN_DIR})
set(AGENT_PY_HEADERS
  ${AGENT_PY_GENHDR}/mpversion.h ${AGENT_PY_GENHDR}/qstrdefs.generated.h
  ${AGENT_PY_GENHDR}/moduledefs.h ${AGENT_PY_GENHDR}/root_pointers.h)
# The preprocessor's flags, one per line, for `cc @file`: the include directories MicroPython
# needs and, on Zephyr, the application's (its compiler options name the target CPU and its C
# library, which decide what MicroPython's headers see).
set(AGENT_PY_CPP_RSP ${AGENT_PY_GENHDR}/cppflags.rsp)
set(AGENT_PY_CPP_FLAGS "")
foreach(dir IN LISTS AGENT_PY_INCLUDES)
  string(APPEND AGENT_PY_CPP_FLAGS "-I${dir}\n")
endforeach()

add_library(agent_micropython STATIC ${AGENT_MICROPYTHON_SOURCES} ${AGENT_PY_HEADERS})
target_include_directories(agent_micropython SYSTEM PUBLIC ${AGENT_PY_INCLUDES})
# Optimised whatever the build type (the simulator's Debug builds): the interpreter's frames
# at -O0 are several times larger, and scripts run on the worker's stack (docs/scripting-
# python.md, "Stack"). On Zephyr the kernel's optimisation flag comes later and applies.
target_compile_options(agent_micropython PRIVATE -w -O2)
if(TARGET zephyr_interface)
  # An application library on Zephyr, as Lua's: the kernel's compile flags, include paths
  # and C library. The qstr scan preprocesses with the same flags.
  target_link_libraries(agent_micropython PRIVATE zephyr_interface)
  zephyr_get_include_directories_for_lang(C zephyr_includes DELIMITER "\n")
  zephyr_get_system_include_directories_for_lang(C zephyr_system_includes DELIMITER "\n")
  zephyr_get_compile_definitions_for_lang(C zephyr_definitions DELIMITER "\n")
  zephyr_get_compile_options_for_lang(C zephyr_options DELIMITER "\n")
  string(APPEND AGENT_PY_CPP_FLAGS "${zephyr_includes}\n${zephyr_system_includes}\n"
                "${zephyr_definitions}\n${zephyr_options}\n")
else()
  target_link_libraries(agent_micropython PUBLIC m)
  # Under UndefinedBehaviorSanitizer (the sanitised simulator, the fuzz targets), two checks
  # are off for MicroPython's own sources, which do both on purpose with a length of 0: adding
  # 0 to a NULL pointer (py/bc.c, a call without arguments) and passing NULL to memcpy()
  # (py/mpz.c, an integer of no digits). Every other check stays on.
  target_compile_options(agent_micropython PRIVATE
                         -fno-sanitize=pointer-overflow -fno-sanitize=nonnull-attribute)
endif()
file(GENERATE OUTPUT ${AGENT_PY_CPP_RSP} CONTENT "${AGENT_PY_CPP_FLAGS}"
     TARGET agent_micropython)

# MicroPython's version (from its mpconfig.h, not from the Git checkout around the fetched
# folder) and build date.
file(STRINGS ${AGENT_PY_MPY_PY}/mpconfig.h AGENT_PY_VERSION_LINES
     REGEX "^#define MICROPY_VERSION_(MAJOR|MINOR|MICRO) ")
string(REGEX REPLACE ".*MAJOR \\(?([0-9]+).*MINOR \\(?([0-9]+).*MICRO \\(?([0-9]+).*"
       "v\\1.\\2.\\3" AGENT_PY_VERSION "${AGENT_PY_VERSION_LINES}")
add_custom_command(
  OUTPUT ${AGENT_PY_GENHDR}/mpversion.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${AGENT_PY_GENHDR}
  COMMAND ${CMAKE_COMMAND} -E env MICROPY_GIT_TAG=${AGENT_PY_VERSION}
          MICROPY_GIT_HASH=fetched
          ${Python3_EXECUTABLE} ${AGENT_PY_MPY_PY}/makeversionhdr.py
          ${AGENT_PY_GENHDR}/mpversion.h
  DEPENDS ${AGENT_PY_MPY_PY}/mpconfig.h ${AGENT_PY_MPY_PY}/makeversionhdr.py
  COMMENT "MicroPython: mpversion.h"
  VERBATIM)

# Every core source through the preprocessor (NO_QSTR: the generated headers are not
# needed yet), then the three kinds of declaration split out and collected.
add_custom_command(
  OUTPUT ${AGENT_PY_GENHDR}/qstr.i.last
  COMMAND ${Python3_EXECUTABLE} ${AGENT_PY_MPY_PY}/makeqstrdefs.py
          pp ${CMAKE_C_COMPILER} -E output ${AGENT_PY_GENHDR}/qstr.i.last
          cflags @${AGENT_PY_CPP_RSP} -DNO_QSTR cxxflags -DNO_QSTR
          sources ${AGENT_MICROPYTHON_SOURCES}
  DEPENDS ${AGENT_MICROPYTHON_SOURCES} ${AGENT_PY_PORT_DIR}/mpconfigport.h
          ${AGENT_PY_PORT_DIR}/mphalport.h ${AGENT_PY_GENHDR}/mpversion.h ${AGENT_PY_CPP_RSP}
  COMMENT "MicroPython: preprocessing the core for its qstrs, modules and root pointers"
  VERBATIM)
foreach(mode qstr module root_pointer)
  add_custom_command(
    OUTPUT ${AGENT_PY_GENHDR}/${mode}.collected
    COMMAND ${CMAKE_COMMAND} -E remove_directory ${AGENT_PY_GENHDR}/${mode}
    COMMAND ${Python3_EXECUTABLE} ${AGENT_PY_MPY_PY}/makeqstrdefs.py
            split ${mode} ${AGENT_PY_GENHDR}/qstr.i.last ${AGENT_PY_GENHDR}/${mode} _
    COMMAND ${Python3_EXECUTABLE} ${AGENT_PY_MPY_PY}/makeqstrdefs.py
            cat ${mode} _ ${AGENT_PY_GENHDR}/${mode} ${AGENT_PY_GENHDR}/${mode}.collected
    COMMAND ${CMAKE_COMMAND} -E touch ${AGENT_PY_GENHDR}/${mode}.collected
    DEPENDS ${AGENT_PY_GENHDR}/qstr.i.last
    VERBATIM)
endforeach()

set(AGENT_PY_GENHDR_SCRIPT ${AGENT_PY_PORT_DIR}/genhdr.cmake)
add_custom_command(
  OUTPUT ${AGENT_PY_GENHDR}/qstrdefs.generated.h
  COMMAND ${CMAKE_COMMAND} -DSTEP=qstrdata -DPYTHON=${Python3_EXECUTABLE}
          -DMPY_PY_DIR=${AGENT_PY_MPY_PY} -DCC=${CMAKE_C_COMPILER} -DRSP=${AGENT_PY_CPP_RSP}
          "-DQSTRDEFS=${AGENT_PY_MPY_PY}/qstrdefs.h|${AGENT_PY_PORT_DIR}/qstrdefsport.h|${AGENT_PY_GENHDR}/qstr.collected"
          -DOUT=${AGENT_PY_GENHDR}/qstrdefs.generated.h -P ${AGENT_PY_GENHDR_SCRIPT}
  DEPENDS ${AGENT_PY_GENHDR}/qstr.collected ${AGENT_PY_MPY_PY}/qstrdefs.h
          ${AGENT_PY_PORT_DIR}/qstrdefsport.h ${AGENT_PY_MPY_PY}/makeqstrdata.py
          ${AGENT_PY_GENHDR_SCRIPT}
  COMMENT "MicroPython: qstrdefs.generated.h"
  VERBATIM)
add_custom_command(
  OUTPUT ${AGENT_PY_GENHDR}/moduledefs.h
  COMMAND ${CMAKE_COMMAND} -DSTEP=stdout -DPYTHON=${Python3_EXECUTABLE}
          -DSCRIPT=${AGENT_PY_MPY_PY}/makemoduledefs.py
          -DINPUT=${AGENT_PY_GENHDR}/module.collected
          -DOUT=${AGENT_PY_GENHDR}/moduledefs.h -P ${AGENT_PY_GENHDR_SCRIPT}
  DEPENDS ${AGENT_PY_GENHDR}/module.collected ${AGENT_PY_MPY_PY}/makemoduledefs.py
          ${AGENT_PY_GENHDR_SCRIPT}
  COMMENT "MicroPython: moduledefs.h"
  VERBATIM)
add_custom_command(
  OUTPUT ${AGENT_PY_GENHDR}/root_pointers.h
  COMMAND ${CMAKE_COMMAND} -DSTEP=stdout -DPYTHON=${Python3_EXECUTABLE}
          -DSCRIPT=${AGENT_PY_MPY_PY}/make_root_pointers.py
          -DINPUT=${AGENT_PY_GENHDR}/root_pointer.collected
          -DOUT=${AGENT_PY_GENHDR}/root_pointers.h -P ${AGENT_PY_GENHDR_SCRIPT}
  DEPENDS ${AGENT_PY_GENHDR}/root_pointer.collected ${AGENT_PY_MPY_PY}/make_root_pointers.py
          ${AGENT_PY_GENHDR_SCRIPT}
  COMMENT "MicroPython: root_pointers.h"
  VERBATIM)

# The adapter includes MicroPython's headers, so it waits for the generated ones.
set_source_files_properties(${AGENT_PYTHON_ADAPTER_SOURCES} PROPERTIES
  OBJECT_DEPENDS "${AGENT_PY_HEADERS}")
