# Runs PROGRAM with ARGS (a ;-list) and checks its exit code (EXPECTED) and, when given, that
# its stderr holds ERROR (the common style: "program: --flag: reason").
#   cmake -DPROGRAM=... "-DARGS=--clients;0" -DEXPECTED=2 "-DERROR=..." -P expect_command_line.cmake
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(NOT code EQUAL EXPECTED)
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: exit code ${code}, expected ${EXPECTED}\nstdout: ${out}\nstderr: ${err}")
endif()
if(DEFINED ERROR)
  string(FIND "${err}" "${ERROR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${PROGRAM} ${ARGS}: stderr lacks '${ERROR}':\n${err}")
  endif()
endif()
if(DEFINED OUTPUT)
  string(FIND "${out}" "${OUTPUT}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${PROGRAM} ${ARGS}: stdout lacks '${OUTPUT}':\n${out}")
  endif()
endif()
