# Builds the agent firmware (app/) for a Twister suite. Twister builds the directory that
# holds a testcase.yaml, so each suite's CMakeLists.txt includes this file, which points
# Zephyr at app/ for everything else:
# - APPLICATION_CONFIG_DIR: where prj.conf and boards/<target>.conf|.overlay are looked up
#   (Zephyr's cmake/modules/configuration_files.cmake);
# - KCONFIG_ROOT: the application's Kconfig, app/Kconfig (cmake/modules/kconfig.cmake);
# - app/CMakeLists.txt itself, included: it finds Zephyr and adds its sources relative to
#   its own location.
get_filename_component(AGENT_APP_DIR ${CMAKE_CURRENT_LIST_DIR}/../app ABSOLUTE)
set(APPLICATION_CONFIG_DIR ${AGENT_APP_DIR})
set(KCONFIG_ROOT ${AGENT_APP_DIR}/Kconfig)
include(${AGENT_APP_DIR}/CMakeLists.txt)
