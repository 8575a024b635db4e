# bench_hit: a lag-compensated hit query against 100 and 1,000 moving entities at a view time
# 100 ms back (median and p99 per query), and the history's memory per entity
# (docs/hit-queries.md).
if(TARGET posecast_server)
  posecast_add_bench(bench_hit
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_hit.cpp
    LIBS posecast_server posecast_rig)
endif()
