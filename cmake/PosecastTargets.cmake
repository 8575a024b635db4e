# Helpers shared by every posecast target.

# posecast_warnings(<target>): the project's warning set, as errors when
# POSECAST_WARNINGS_AS_ERRORS is on (CI). Third-party headers are included as SYSTEM.
function(posecast_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
    -Wno-sign-conversion -Wnon-virtual-dtor -Woverloaded-virtual -Wnull-dereference
    -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 at -O2/-O3 reports -Wrestrict false positives inside libstdc++'s std::string
    # operator+ (GCC bug 105329); they are not in our code.
    target_compile_options(${target} PRIVATE -Wno-restrict)
    # GCC's -Wpsabi note ("the ABI for passing parameters with 32-byte alignment has changed")
    # fires once per file on the always-inlined eight-lane helpers whatever simd4.h's pragma
    # says; no vector ever crosses a call boundary there (simd4.h), so it is noise.
    target_compile_options(${target} PRIVATE -Wno-psabi)
  endif()
  if(POSECAST_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# posecast_library(<target> <name> <sources...>): one of the project's libraries:
# `posecast::<name>` as its alias, <this directory>/include as its public headers (include/
# once installed: cmake/PosecastPackage.cmake) and the project's warnings. The caller adds
# its dependencies (target_link_libraries) and anything else it needs.
function(posecast_library target name)
  add_library(${target} ${ARGN})
  add_library(posecast::${name} ALIAS ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  posecast_warnings(${target})
endfunction()

# posecast_glue_optimisation(<target> [LEVEL]): LEVEL (default -O1; the tests pass -O0) in
# optimised builds for code that is glue, not a hot path: test executables, command-line
# programs, the rig generator, the soak tool, the viewer program (a clean
# build is compile-bound on 2 cores, and at -O3 these targets would be about half of its
# compile CPU; docs/building.md). The libraries that do the per-tick and per-frame work (core, sim, protocol,
# replay, net, server, client, render) keep -O3, so the benchmarks measure what they did, but
# for their glue files (parsers, reports: posecast_glue_objects below). Results do not depend
# on it: -ffp-contract=off and no fast-math hold at every level (the determinism matrix gets
# the same bits at -O0 and -O2).
# GCC 12 at -O1 reports false positives inside libstdc++'s std::string copy (char_traits.h:
# -Warray-bounds, -Wstringop-overflow, -Wstringop-overread), as it does -Wrestrict at -O2
# (posecast_warnings above), so those are off for glue code compiled by GCC.
function(posecast_glue_optimisation target)
  set(level -O1)
  if(ARGC GREATER 1)
    set(level ${ARGV1})
  endif()
  target_compile_options(${target} PRIVATE $<$<OR:$<CONFIG:Release>,$<CONFIG:RelWithDebInfo>>:${level}>)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow
      -Wno-stringop-overread)
  endif()
endfunction()

# posecast_glue_objects(<target> <objects> SOURCES <files...>): the files are glue inside a
# hot library (a file parser, a report writer): compiled as an object library <objects> at
# -O1 in optimised builds (posecast_glue_optimisation), still in unity batches, and linked
# into <target>, whose include directories and link dependencies (their usage requirements)
# it takes. Per-file options would take the files out of the unity batches instead (CMake's
# rule), so every file would parse its heavy headers (tinygltf, nlohmann json) on its own.
function(posecast_glue_objects target objects)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${objects} OBJECT ${ARG_SOURCES})
  target_include_directories(${objects} PRIVATE
    $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
  target_link_libraries(${objects} PRIVATE $<TARGET_PROPERTY:${target},LINK_LIBRARIES>)
  posecast_warnings(${objects})
  posecast_glue_optimisation(${objects})
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:${objects}>)
endfunction()
