# Runs PROGRAM with ARGS (default: a model that does not exist) and checks its exit code.
if(NOT DEFINED ARGS)
  set(ARGS --models=/nonexistent/model.glb --listen=127.0.0.1:0 --duration=1)
endif()
separate_arguments(ARGS)
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE code OUTPUT_QUIET ERROR_QUIET TIMEOUT 30)
if(NOT code EQUAL EXPECTED)
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: exit code ${code}, expected ${EXPECTED}")
endif()
