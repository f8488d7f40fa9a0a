# Builds the agent firmware (app/) for a Twister suite. Twister builds the directory that
# holds a testcase.yaml, so each suite's CMakeLists.txt includes this file, which points
# Zephyr at app/ for everything else:
# - APPLICATION_CONFIG_DIR: where prj.conf and boards/<target>.conf|.overlay are looked up
#   (Zephyr's cmake/modules/configuration_files.cmake);
# - KCONFIG_ROOT: the application's Kconfig, app/Kconfig (cmake/modules/kconfig.cmake);
# - app/CMakeLists.txt itself, included: it finds Zephyr and adds its sources relative to
#   its own location.
get_filename_component(AGENT_APP_DIR ${CMAKE_CURRENT_LIST_DIR}/../app ABSOLUTE)
# Zephyr's build scripts and the application's (gen_reference.py, gen_ca_bundle.py) run under
# Zephyr's choice of Python (cmake/modules/python.cmake): Python3_EXECUTABLE, else west's
# WEST_PYTHON, else the first python on PATH. Outside west, prefer the project's .venv.
if(NOT DEFINED Python3_EXECUTABLE AND NOT DEFINED WEST_PYTHON
   AND EXISTS ${AGENT_APP_DIR}/../.venv/bin/python)
  set(Python3_EXECUTABLE ${AGENT_APP_DIR}/../.venv/bin/python)
endif()
set(APPLICATION_CONFIG_DIR ${AGENT_APP_DIR})
# A suite may put test-only symbols over app/Kconfig (a Kconfig file that sources it).
if(DEFINED AGENT_KCONFIG_ROOT)
  set(KCONFIG_ROOT ${AGENT_KCONFIG_ROOT})
else()
  set(KCONFIG_ROOT ${AGENT_APP_DIR}/Kconfig)
endif()
include(${AGENT_APP_DIR}/CMakeLists.txt)
