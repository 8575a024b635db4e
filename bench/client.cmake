# bench_client: the network client's CPU per frame and entity (decode + interpolate + palette)
# against a real server over loopback UDP in simulated time. See bench_client.cpp.
if(TARGET posecast_client AND TARGET posecast_server)
  find_package(spdlog CONFIG REQUIRED)
  posecast_add_bench(bench_client
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/bench_client.cpp
    LIBS posecast_client posecast_server posecast_rig spdlog::spdlog)
endif()
