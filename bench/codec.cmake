# bench_codec: pose codec bytes per joint, error and encode+decode time per entity-update for
# Fox Run, Fox Walk<->Run crossfades, CesiumMan and the 128-joint generated rig, at 60/30/20 Hz,
# delta and absolute. See the comment at the top of bench_codec.cpp and docs/codec.md.
# codec_tables: the static residual tables measured in and out of sample on the same
# scenarios (the comment at the top of codec_tables.cpp). Both stream the codec's scenarios
# (protocol/pgo/codec_scenarios.h), the ones its profile-guided build trains on.
set(_codec_scenarios ${PROJECT_SOURCE_DIR}/protocol/pgo/codec_scenarios.cpp)
if(TARGET posecast_protocol)
  posecast_add_bench(bench_codec
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/bench_codec.cpp ${_codec_scenarios}
    LIBS posecast::protocol posecast::rig)
  target_include_directories(bench_codec PRIVATE ${PROJECT_SOURCE_DIR}/protocol/pgo)
endif()
if(TARGET posecast_protocol)
  add_executable(codec_tables ${CMAKE_CURRENT_SOURCE_DIR}/codec_tables.cpp ${_codec_scenarios})
  target_include_directories(codec_tables PRIVATE ${PROJECT_SOURCE_DIR}/protocol/pgo)
  target_link_libraries(codec_tables PRIVATE posecast::protocol posecast::rig)
  get_filename_component(_assets "${PROJECT_SOURCE_DIR}/../shared/assets" ABSOLUTE)
  target_compile_definitions(codec_tables PRIVATE POSECAST_ASSETS_DIR="${_assets}")
  posecast_warnings(codec_tables)
endif()
if(TARGET codec_tables)
  # The report runs and estimates every scenario it can build (the generated rig always).
  add_test(NAME codec_tables_report COMMAND codec_tables)
  set_tests_properties(codec_tables_report PROPERTIES
    PASS_REGULAR_EXPRESSION "GenRig128 +20Hz +[0-9]+\\.[0-9]+ +[0-9]+\\.[0-9]+ +[0-9]+\\.[0-9]+")
endif()
