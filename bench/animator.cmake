# bench_animator: the World's evaluation pass (blend + local-to-model + palette at 60 Hz ticks)
# for Fox (Walk+Run) and the 128-joint generated rig, N entities, 1 and 2 threads.
posecast_add_bench(bench_animator
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_animator.cpp
  LIBS posecast::sim posecast::rig)
