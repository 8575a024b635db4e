# Sourced by scripts/targets-status.sh and scripts/ab-targets.sh: every speed target's
# benchmark, one list so the two scripts measure the same things (docs/performance.md,
# "The commands").
#
# Each entry: label|bench|filter|counter|scale
#   label    what the scripts print; its "<= X" / ">= X" is the target (targets-status.sh
#            counts the runs that miss it)
#   bench    the benchmark program, build/bench/bench_<bench>
#   filter   the --benchmark_filter selecting one benchmark
#   counter  the figure's counter
#   scale    the JSON counter times this is the figure in the label's unit (the client's
#            counter is in seconds per entity in the JSON report)
speed_targets=(
  "#2 sampling Fox/10000 (ns, <= 400)|sampling|SampleLocalToModelPalette/Fox/10000\$|ns_per_entity|1"
  "#3 animator Fox/100 (ns, <= 500)|animator|Fox/100/threads:1\$|ns_per_entity|1"
  "#3 animator Fox/10000 (ns, <= 700)|animator|Fox/10000/threads:1\$|ns_per_entity|1"
  "#4 client Fox/100 (us, <= 2)|client|ClientFrame/Fox/100\$|ns_per_entity|1e6"
  "#4 client GenRig24/100 (us, <= 2)|client|ClientFrame/GenRig24/100\$|ns_per_entity|1e6"
  "#5 replay Fox (x real time, >= 200)|replay|ReplaySpeed/Fox|x_realtime|1"
  "#6 codec FoxRun/20Hz/delta (ns, <= 1000)|codec|FoxRun/20Hz/delta\$|ns_per_entity|1"
)
# The benchmark programs the list names.
speed_target_benches=(sampling animator replay client codec)
