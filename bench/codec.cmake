# bench_codec: pose codec bytes per joint, error and encode+decode time per entity-update for
# Fox Run, Fox Walk<->Run crossfades, CesiumMan and the 128-joint generated rig, at 60/30/20 Hz,
# delta and absolute. See the comment at the top of bench_codec.cpp and docs/codec.md.
# codec_tables: the static residual tables measured in and out of sample on the same
# scenarios (the comment at the top of codec_tables.cpp).
if(TARGET posecast_protocol)
  posecast_add_bench(bench_codec
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/bench_codec.cpp ${CMAKE_CURRENT_SOURCE_DIR}/codec_scenarios.cpp
    LIBS posecast::protocol posecast::rig)
endif()
