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
