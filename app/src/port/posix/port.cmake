# POSIX port of the agent: the library the host simulator and the host tests link.
#
# Include this file (include(), not add_subdirectory()) after setting:
#   AGENT_REPO_DIR  root of this repository
#   LITTLEFS_DIR    littlefs sources (lfs.c, lfs_util.c, bd/), as printed by
#                   scripts/fetch_littlefs.py
# It defines the static library target agent_port_posix: every posix/*.c, the parts both
# ports share (pool books and table, cancellation flags) and littlefs with its emulated block device (for power-loss tests). Linking
# it gives the include directories app/src/port, app/src/port/posix, LITTLEFS_DIR and
# LITTLEFS_DIR/bd, Threads::Threads, OpenSSL (TLS), the CA bundle generated from app/certs/,
# and the compile definition LFS_NO_MALLOC, under which
# littlefs needs caller buffers (lfs_file_opencfg with lfs_file_config.buffer). Warning
# flags and sanitizers are the including project's choice; nothing here sets them.

if(NOT DEFINED AGENT_REPO_DIR)
  message(FATAL_ERROR "port.cmake: set AGENT_REPO_DIR to the repository root")
endif()
if(NOT DEFINED LITTLEFS_DIR OR NOT EXISTS "${LITTLEFS_DIR}/lfs.c")
  message(FATAL_ERROR
    "port.cmake: LITTLEFS_DIR (${LITTLEFS_DIR}) holds no lfs.c; "
    "run scripts/fetch_littlefs.py and pass the directory it prints")
endif()

find_package(Threads REQUIRED)
# TLS of the network stream (net.c); Debian: libssl-dev.
find_package(OpenSSL REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(AGENT_PORT_POSIX_DIR "${AGENT_REPO_DIR}/app/src/port/posix")

set(AGENT_LITTLEFS_SOURCES
  "${LITTLEFS_DIR}/lfs.c"
  "${LITTLEFS_DIR}/lfs_util.c"
  "${LITTLEFS_DIR}/bd/lfs_emubd.c"
)

# Every concern of the port is one file in posix/ (console.c included), so a glob keeps
# the list complete as concerns are added.
file(GLOB AGENT_PORT_POSIX_SOURCES CONFIGURE_DEPENDS "${AGENT_PORT_POSIX_DIR}/*.c")

# The root CAs TLS trusts (docs/tls.md): scripts/gen_ca_bundle.py checks each PEM file of
# app/certs/ and writes them as DER arrays into a C file of the build directory.
file(GLOB AGENT_CA_PEMS CONFIGURE_DEPENDS "${AGENT_REPO_DIR}/app/certs/*.pem")
set(AGENT_CA_BUNDLE_C "${CMAKE_BINARY_DIR}/generated/agent_ca_bundle.c")
add_custom_command(
  OUTPUT "${AGENT_CA_BUNDLE_C}"
  COMMAND ${Python3_EXECUTABLE} "${AGENT_REPO_DIR}/scripts/gen_ca_bundle.py"
          --out "${AGENT_CA_BUNDLE_C}" ${AGENT_CA_PEMS}
  DEPENDS "${AGENT_REPO_DIR}/scripts/gen_ca_bundle.py" ${AGENT_CA_PEMS}
  COMMENT "Generating the CA bundle from app/certs"
  VERBATIM)

add_library(agent_port_posix STATIC
  ${AGENT_PORT_POSIX_SOURCES}
  "${AGENT_CA_BUNDLE_C}"
  "${AGENT_REPO_DIR}/app/src/port/pool_book.c"
  "${AGENT_REPO_DIR}/app/src/port/pool_table.c"
  "${AGENT_REPO_DIR}/app/src/port/cancel.c"
  "${AGENT_REPO_DIR}/app/src/port/settings_names.c"
  ${AGENT_LITTLEFS_SOURCES}
)

set_target_properties(agent_port_posix PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)

# app/src/port/posix is public as well: the simulator includes "posix_port.h" and
# "posix_console.h" by name, the tests as "posix/posix_port.h"; both resolve.
target_include_directories(agent_port_posix
  PUBLIC
    "${AGENT_REPO_DIR}/app/src/port"
    "${AGENT_PORT_POSIX_DIR}"
    "${LITTLEFS_DIR}"
    "${LITTLEFS_DIR}/bd"
)

# Declarations in lfs.h depend on LFS_NO_MALLOC, so users of the library see it too.
target_compile_definitions(agent_port_posix PUBLIC LFS_NO_MALLOC)

# littlefs is third-party code held to its own standards, not to the including project's
# -Werror: with NDEBUG its assert-only helpers are unused (-Wunused-function), and another
# compiler or a newer littlefs may warn differently. Silence warnings for its files only.
set_source_files_properties(${AGENT_LITTLEFS_SOURCES} PROPERTIES COMPILE_OPTIONS "-w")

# littlefs logs through printf to stdout, which is the simulator's shell; route its
# warnings and errors to stderr (posix_lfs_log.h). Only the library's own sources need it.
set_source_files_properties(${AGENT_LITTLEFS_SOURCES} PROPERTIES
  COMPILE_DEFINITIONS "LFS_DEFINES=posix_lfs_log.h")

target_link_libraries(agent_port_posix PUBLIC Threads::Threads OpenSSL::SSL OpenSSL::Crypto)
