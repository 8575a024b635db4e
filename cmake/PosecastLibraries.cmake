# Third-party libraries found here once, each behind a project target so a missing package
# gives one clear message naming its Debian package (scripts/install-deps.sh installs them all).
#   posecast_zstd   zstd (libzstd-dev): the compression and checksum of recording chunks
#   posecast_cli11  CLI11 (libcli11-dev, header-only): the command lines of every program

find_package(zstd CONFIG QUIET)
add_library(posecast_zstd INTERFACE)
if(TARGET zstd::libzstd_shared)
  target_link_libraries(posecast_zstd INTERFACE zstd::libzstd_shared)
elseif(TARGET zstd::libzstd_static)  # cross builds (cmake/toolchain-aarch64.cmake)
  target_link_libraries(posecast_zstd INTERFACE zstd::libzstd_static)
else()
  message(FATAL_ERROR "posecast needs zstd: install libzstd-dev (scripts/install-deps.sh installs it).")
endif()

find_package(CLI11 CONFIG QUIET)
add_library(posecast_cli11 INTERFACE)
if(TARGET CLI11::CLI11)
  target_link_libraries(posecast_cli11 INTERFACE CLI11::CLI11)
else()
  find_path(POSECAST_CLI11_INCLUDE_DIR CLI/CLI.hpp)
  if(NOT POSECAST_CLI11_INCLUDE_DIR)
    message(FATAL_ERROR "posecast needs CLI11: install libcli11-dev (scripts/install-deps.sh installs it).")
  endif()
  target_include_directories(posecast_cli11 SYSTEM INTERFACE ${POSECAST_CLI11_INCLUDE_DIR})
endif()
