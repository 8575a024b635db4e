# Runs PROGRAM with ARGS (a ;-list) and checks its exit code (EXPECTED) and, when given, that
# its stderr holds ERROR (the common style: "program: --flag: reason").
#   cmake -DPROGRAM=... "-DARGS=--clients;0" -DEXPECTED=2 "-DERROR=..." -P expect_command_line.cmake
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(NOT code EQUAL EXPECTED)
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: exit code ${code}, expected ${EXPECTED}\nstdout: ${out}\nstderr: ${err}")
endif()
# expect_in(TEXT WANTED WHAT): fails unless TEXT holds WANTED (when WANTED is not empty).
function(expect_in text wanted what)
  if(NOT wanted STREQUAL "")
    string(FIND "${text}" "${wanted}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${PROGRAM} ${ARGS}: ${what} lacks '${wanted}':\n${text}")
    endif()
  endif()
endfunction()
expect_in("${err}" "${ERROR}" stderr)
expect_in("${out}" "${OUTPUT}" stdout)
