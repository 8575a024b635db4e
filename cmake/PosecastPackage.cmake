# Install rules and the CMake package `posecast` (find_package(posecast CONFIG)), so a game
# server can link the installed libraries: posecast::server, posecast::net, posecast::sim,
# posecast::protocol, posecast::rig, posecast::core. Included from server/CMakeLists.txt once
# every target it exports exists. Since CMake 3.13 install(TARGETS) may name targets made in
# other directories, so the rooms' own CMakeLists need no install lines.
include(CMakePackageConfigHelpers)

set(_posecast_exported posecast_core posecast_rig posecast_sim posecast_protocol
    posecast_protocol_base posecast_protocol_generated posecast_asio posecast_net posecast_server)
if(TARGET posecast_tinygltf)  # cross builds compile tinygltf into the core's link line
  list(APPEND _posecast_exported posecast_tinygltf)
endif()
foreach(_target IN LISTS _posecast_exported)
  string(REPLACE "posecast_" "" _name ${_target})
  set_target_properties(${_target} PROPERTIES EXPORT_NAME ${_name})
endforeach()
# The generated FlatBuffers headers stay in the build tree: only protocol/src includes them, so
# the installed (link-only) target carries no include folder.
get_target_property(_posecast_generated_include posecast_protocol_generated INTERFACE_INCLUDE_DIRECTORIES)
set_property(TARGET posecast_protocol_generated PROPERTY
  INTERFACE_INCLUDE_DIRECTORIES "$<BUILD_INTERFACE:${_posecast_generated_include}>")

install(TARGETS ${_posecast_exported} EXPORT posecastTargets
  ARCHIVE DESTINATION lib LIBRARY DESTINATION lib RUNTIME DESTINATION bin
  INCLUDES DESTINATION include)
foreach(_room shared shared/rig sim protocol net server)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_room}/include/ DESTINATION include)
endforeach()
install(EXPORT posecastTargets NAMESPACE posecast:: DESTINATION lib/cmake/posecast)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/posecastConfig.cmake.in
  ${PROJECT_BINARY_DIR}/posecastConfig.cmake INSTALL_DESTINATION lib/cmake/posecast)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/posecastConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/posecastConfig.cmake ${PROJECT_BINARY_DIR}/posecastConfigVersion.cmake
  DESTINATION lib/cmake/posecast)
