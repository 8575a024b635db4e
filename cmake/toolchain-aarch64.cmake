# Cross-compiling posecast for aarch64 Linux on Debian 12, for the determinism matrix
# (scripts/determinism-matrix.sh). Binaries run under user-mode QEMU:
#     qemu-aarch64 -L /usr/aarch64-linux-gnu ./posecast run SCENARIO.json
#
#   cmake -S . -B build-arm -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
#         -DPOSECAST_CROSS_COMPILER=gcc|clang -DPOSECAST_MINIMAL=ON
#
# gcc: aarch64-linux-gnu-g++ (package g++-aarch64-linux-gnu).
# clang: clang++ --target=aarch64-linux-gnu, using the same GNU cross sysroot and libstdc++.
#
# Header-only dependencies (GLM, nlohmann json, tinygltf's header) live in /usr/include, which a
# cross compiler must not search as a whole (it would pick up x86-64 glibc headers). So this file
# builds a small prefix in the build tree holding links to just those headers and to their CMake
# package files, and points find_package at it. tinygltf has no aarch64 library in Debian: the
# core compiles its implementation from the header instead (POSECAST_TINYGLTF_FROM_SOURCE).
# CLI11 is header-only (linked the same way). zstd's headers are shared by every architecture;
# its aarch64 library comes from libzstd-dev:arm64 (scripts/install-deps.sh --matrix), linked
# statically so that the programs run under QEMU without an aarch64 libzstd.so on its path.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(POSECAST_CROSS_TRIPLE aarch64-linux-gnu)
set(POSECAST_CROSS_SYSROOT /usr/aarch64-linux-gnu)

# try_compile projects re-read this file; pass the compiler choice on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES POSECAST_CROSS_COMPILER)
if(NOT POSECAST_CROSS_COMPILER)
  set(POSECAST_CROSS_COMPILER gcc)
endif()

# Programs link statically: Debian 12's qemu-user (7.2) on recent host kernels hangs in a
# dynamically linked aarch64 program's first pthread_create (glibc's walk of its thread-stack
# cache never ends), so a World with two threads never started; static programs start threads
# normally. It also spares QEMU the search for the aarch64 shared libraries.
if(POSECAST_CROSS_COMPILER STREQUAL "gcc")
  set(CMAKE_C_COMPILER ${POSECAST_CROSS_TRIPLE}-gcc)
  set(CMAKE_CXX_COMPILER ${POSECAST_CROSS_TRIPLE}-g++)
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
elseif(POSECAST_CROSS_COMPILER STREQUAL "clang")
  set(CMAKE_C_COMPILER clang)
  set(CMAKE_CXX_COMPILER clang++)
  set(CMAKE_C_COMPILER_TARGET ${POSECAST_CROSS_TRIPLE})
  set(CMAKE_CXX_COMPILER_TARGET ${POSECAST_CROSS_TRIPLE})
  # Link with the GNU cross binutils (clang finds them through the gcc-cross installation).
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=bfd -static")
  set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=bfd")
else()
  message(FATAL_ERROR "POSECAST_CROSS_COMPILER must be gcc or clang, not '${POSECAST_CROSS_COMPILER}'")
endif()

# The prefix of header-only dependencies (see above), rebuilt at every configure.
set(_posecast_cross_prefix "${CMAKE_BINARY_DIR}/cross-prefix")
if(NOT CMAKE_BINARY_DIR MATCHES "CMakeFiles/CMakeScratch|CMakeFiles/CMakeTmp")
  file(MAKE_DIRECTORY "${_posecast_cross_prefix}/include" "${_posecast_cross_prefix}/share/cmake"
       "${_posecast_cross_prefix}/lib/cmake/TinyGLTF")
  foreach(_link glm nlohmann tiny_gltf.h CLI zstd.h zstd_errors.h)
    if(NOT EXISTS "${_posecast_cross_prefix}/include/${_link}")
      file(CREATE_LINK "/usr/include/${_link}" "${_posecast_cross_prefix}/include/${_link}" SYMBOLIC)
    endif()
  endforeach()
  # Debian's package files compute their prefix from their own path, three levels up: linked
  # here, they name ${prefix}/include, i.e. the links above.
  foreach(_pkg glm nlohmann_json)
    if(NOT EXISTS "${_posecast_cross_prefix}/share/cmake/${_pkg}")
      file(CREATE_LINK "/usr/share/cmake/${_pkg}" "${_posecast_cross_prefix}/share/cmake/${_pkg}" SYMBOLIC)
    endif()
  endforeach()
  file(WRITE "${_posecast_cross_prefix}/lib/cmake/TinyGLTF/TinyGLTFConfig.cmake"
"# tinygltf for cross builds: the header only; posecast_core compiles the implementation
# (POSECAST_TINYGLTF_FROM_SOURCE, shared/CMakeLists.txt).
if(NOT TARGET TinyGLTF::TinyGLTF)
  add_library(TinyGLTF::TinyGLTF INTERFACE IMPORTED)
  set_target_properties(TinyGLTF::TinyGLTF PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES \"${_posecast_cross_prefix}/include\")
endif()
set(TinyGLTF_FOUND TRUE)
")
  file(MAKE_DIRECTORY "${_posecast_cross_prefix}/lib/cmake/zstd")
  file(WRITE "${_posecast_cross_prefix}/lib/cmake/zstd/zstdConfig.cmake"
"# zstd for cross builds: the shared headers and the aarch64 static library.
if(NOT TARGET zstd::libzstd_static AND EXISTS /usr/lib/${POSECAST_CROSS_TRIPLE}/libzstd.a)
  add_library(zstd::libzstd_static STATIC IMPORTED)
  set_target_properties(zstd::libzstd_static PROPERTIES
    IMPORTED_LOCATION /usr/lib/${POSECAST_CROSS_TRIPLE}/libzstd.a
    INTERFACE_INCLUDE_DIRECTORIES \"${_posecast_cross_prefix}/include\")
endif()
set(zstd_FOUND TRUE)
")
  set(POSECAST_TINYGLTF_FROM_SOURCE ON CACHE BOOL "Compile tinygltf from its header (cross builds)" FORCE)
endif()

set(CMAKE_FIND_ROOT_PATH "${POSECAST_CROSS_SYSROOT}" "${_posecast_cross_prefix}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(glm_DIR "${_posecast_cross_prefix}/share/cmake/glm" CACHE PATH "" FORCE)
set(nlohmann_json_DIR "${_posecast_cross_prefix}/share/cmake/nlohmann_json" CACHE PATH "" FORCE)
set(TinyGLTF_DIR "${_posecast_cross_prefix}/lib/cmake/TinyGLTF" CACHE PATH "" FORCE)
set(zstd_DIR "${_posecast_cross_prefix}/lib/cmake/zstd" CACHE PATH "" FORCE)

# ctest and add_test run target programs through QEMU.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;${POSECAST_CROSS_SYSROOT})
