# cmake -DCOUNTS_DIR=<dir> -DDESTINATION=<file> -P copy_counts.cmake
# Copies the one .gcda file the training run left in COUNTS_DIR (its name is the instrumented
# object's path, mangled by GCC) to DESTINATION; fails unless there is exactly one.
file(GLOB_RECURSE _counts "${COUNTS_DIR}/*.gcda")
list(LENGTH _counts _n)
if(NOT _n EQUAL 1)
  message(FATAL_ERROR "posecast_codec_train left ${_n} .gcda files in ${COUNTS_DIR}, not one: ${_counts}")
endif()
get_filename_component(_dir "${DESTINATION}" DIRECTORY)
file(MAKE_DIRECTORY "${_dir}")
file(COPY_FILE "${_counts}" "${DESTINATION}")
