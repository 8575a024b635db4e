#!/usr/bin/env bash
# Runs a benchmark command at moments when the host has slowed one of this VM's vCPUs
# (docs/performance.md, "Two timing levels"): the slow level comes and goes in spells of
# seconds to minutes, so a target that must hold "in the slow level too" needs runs taken
# inside a spell.
#
# Usage: scripts/when-slowed.sh BUILD_DIR SECONDS THRESHOLD_NS -- COMMAND [ARGS...]
#   Every 20 s, for SECONDS, gauges both vCPUs with bench_sampling Fox/10000 (ns per entity,
#   0.2 s each). When either exceeds THRESHOLD_NS (e.g. 400), runs COMMAND once, then gauges
#   again so the log shows whether the spell lasted. Prints one line per gauge.
# Example: scripts/when-slowed.sh build 600 400 -- build/server/server_load --entities 10000 --seconds 15
set -euo pipefail
if [[ $# -lt 5 || "$4" != "--" ]]; then
  echo "usage: $0 BUILD_DIR SECONDS THRESHOLD_NS -- COMMAND [ARGS...]" >&2
  exit 2
fi
build="$1" seconds="$2" threshold="$3"
shift 4
gauge_bin="$build/bench/bench_sampling"
if [[ ! -x "$gauge_bin" ]]; then
  echo "$0: $gauge_bin not found (build the bench_sampling target)" >&2
  exit 1
fi
if ! [[ "$seconds" =~ ^[0-9]+$ && "$threshold" =~ ^[0-9]+$ ]]; then
  echo "$0: SECONDS and THRESHOLD_NS must be whole numbers" >&2
  exit 2
fi

gauge() {  # prints the Fox/10000 ns per entity on vCPU $1
  taskset -c "$1" "$gauge_bin" --benchmark_filter='SampleLocalToModelPalette/Fox/10000$' --benchmark_min_time=0.2 2>/dev/null |
    grep -o 'ns_per_entity=[0-9]*' | cut -d= -f2
}

end=$(( $(date +%s) + seconds ))
while (( $(date +%s) < end )); do
  g0=$(gauge 0) g1=$(gauge 1)
  echo "$(date +%H:%M:%S) gauge vCPU0=${g0} ns vCPU1=${g1} ns load=$(cut -d' ' -f1 /proc/loadavg)"
  if (( g0 > threshold || g1 > threshold )); then
    "$@"
    echo "  after: vCPU0=$(gauge 0) ns vCPU1=$(gauge 1) ns"
  fi
  sleep 20
done
