#!/usr/bin/env bash
# Every speed target's benchmark, old build against new, as alternating pairs on each vCPU
# (scripts/ab.sh; docs/performance.md): the comparison a session quotes when it changes a hot
# path. Prints the sampling gauge of both vCPUs between sets, so slow spells show.
#
# Usage: scripts/ab-targets.sh OLD_BUILD NEW_BUILD [PAIRS]
#   OLD_BUILD, NEW_BUILD  Release build directories with bench/ built (e.g. a worktree of the
#                         old commit: git worktree add /tmp/old COMMIT; cmake ...; cmake --build)
#   PAIRS                 pairs per benchmark and vCPU (default 5)
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 OLD_BUILD NEW_BUILD [PAIRS]" >&2
  exit 2
fi
old="$1" new="$2" pairs="${3:-5}"
cd "$(dirname "$0")/.."
source scripts/speed-targets.sh
for build in "$old" "$new"; do
  for bench in "${speed_target_benches[@]}"; do
    [[ -x "$build/bench/bench_$bench" ]] || { echo "$0: $build/bench/bench_$bench missing" >&2; exit 1; }
  done
done

gauge() {
  for cpu in 0 1; do
    printf 'gauge vCPU%s: ' "$cpu"
    taskset -c "$cpu" "$new/bench/bench_sampling" --benchmark_filter='SampleLocalToModelPalette/Fox/10000$' \
      --benchmark_min_time=0.2 2>/dev/null | grep -o 'ns_per_entity=[0-9.]*' || echo '?'
  done
}

pair() {  # label bench filter counter cpu
  echo "## $1, vCPU $5"
  scripts/ab.sh "$old/bench/bench_$2" "$new/bench/bench_$2" "$3" "$pairs" "$4" "$5" | tail -2
}

date -u
gauge
for cpu in 0 1; do
  for t in "${speed_targets[@]}"; do
    IFS='|' read -r label bench filter counter _ <<<"$t"
    pair "$label" "$bench" "$filter" "$counter" "$cpu"
  done
  date -u
  gauge
done
