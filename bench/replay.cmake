# bench_replay: recording size per minute, recording overhead on the tick, headless replay
# speed and seek latency (Fox.glb and the generated 24-joint rig, 100 entities).
posecast_add_bench(bench_replay
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_replay.cpp
  LIBS posecast::replay posecast::rig)
