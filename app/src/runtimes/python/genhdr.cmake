# Steps of MicroPython's header generation that write a generator's standard output to a file
# (run by python.cmake as `cmake -P genhdr.cmake`, so no shell redirection is needed and the
# file changes only when its contents do). STEP selects:
#
#   qstrdata  The qstr definitions: QSTRDEFS (a |-separated list: MicroPython's
#             py/qstrdefs.h, the port's qstrdefsport.h and the collected MP_QSTR_ names) are
#             put through the C preprocessor (CC with the flags of RSP) with every Q(...) line
#             in quotes, so that nothing inside a qstr is expanded as a macro, and then given
#             to makeqstrdata.py (PYTHON, MPY_PY_DIR), which writes OUT.
#   stdout    PYTHON runs SCRIPT on INPUT; its output becomes OUT.
cmake_minimum_required(VERSION 3.20)

function(write_if_changed path text)
  if(EXISTS ${path})
    file(READ ${path} old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE ${path} "${text}")
endfunction()

function(run_python out)
  execute_process(COMMAND ${PYTHON} ${ARGN}
                  OUTPUT_VARIABLE text RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGN} failed (${rc}): ${err}")
  endif()
  write_if_changed(${out} "${text}")
endfunction()

if(STEP STREQUAL "qstrdata")
  string(REPLACE "|" ";" inputs "${QSTRDEFS}")
  set(quoted "")
  foreach(input IN LISTS inputs)
    file(READ ${input} text)
    string(APPEND quoted "\n${text}\n")
  endforeach()
  string(REGEX REPLACE "\nQ\\(([^\n]*)\\)" "\n\"Q(\\1)\"" quoted "${quoted}")
  set(quoted_file ${OUT}.quoted.c)
  file(WRITE ${quoted_file} "${quoted}")
  execute_process(COMMAND ${CC} -E @${RSP} ${quoted_file}
                  OUTPUT_VARIABLE pre RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "preprocessing the qstr definitions failed (${rc}): ${err}")
  endif()
  # "Q(...)" back to Q(...), one per line as makeqstrdata.py reads them.
  string(REGEX REPLACE "\"(Q\\([^\n]*\\))\"" "\\1" pre "${pre}")
  file(WRITE ${OUT}.preprocessed "${pre}")
  run_python(${OUT} ${MPY_PY_DIR}/makeqstrdata.py ${OUT}.preprocessed)
elseif(STEP STREQUAL "stdout")
  run_python(${OUT} ${SCRIPT} ${INPUT})
else()
  message(FATAL_ERROR "genhdr.cmake: unknown STEP '${STEP}'")
endif()
