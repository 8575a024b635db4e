# bench_sampling: sample + local-to-model + palette per entity-tick (Fox.glb and the generated
# 128-joint rig), N = 1..10000 entities. See the comment at the top of bench_sampling.cpp.
posecast_add_bench(bench_sampling
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/bench_sampling.cpp
  LIBS posecast::core posecast::rig)
