#!/usr/bin/env bash
# A/B timing of two builds of one Google Benchmark program on this noisy shared VM
# (docs/performance.md, "Two timing levels"): runs OLD and NEW alternately N times, pinned to
# one vCPU, and prints every figure and the medians.
#
# Usage: scripts/ab.sh OLD NEW FILTER [N] [COUNTER] [CPU]
#   OLD, NEW  the two benchmark binaries (copy the old one aside before rebuilding)
#   FILTER    --benchmark_filter regex (one benchmark)
#   N         pairs to run (default 7)
#   COUNTER   a user counter to read (default ns_per_entity), or "cpu" for the CPU-time column
#   CPU       the vCPU to pin to (default 0); run once per vCPU and quote both
# Example: scripts/ab.sh /tmp/bench_client.old build/bench/bench_client 'ClientFrame/GenRig24/100$' 7 ns_per_entity 1
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 OLD NEW FILTER [N] [COUNTER] [CPU]" >&2
  exit 2
fi
old="$1" new="$2" filter="$3" n="${4:-7}" counter="${5:-ns_per_entity}" cpu="${6:-0}"
for bin in "$old" "$new"; do
  [[ -x "$bin" ]] || { echo "$0: $bin is not an executable" >&2; exit 1; }
done

run() {  # prints one figure of binary $1
  local out
  out=$(taskset -c "$cpu" "$1" --benchmark_filter="$filter" --benchmark_min_time=0.3 2>/dev/null)
  if [[ "$counter" == cpu ]]; then
    awk '/^BM_/{print $4; exit}' <<<"$out"
  else
    grep -o "$counter=[0-9.]*[kMu]*s*" <<<"$out" | head -1 | cut -d= -f2
  fi
}
# Google Benchmark prints counters with SI prefixes ("1.07k", "3.28ks", "2.9us"): the median
# is taken over the values with a k or M prefix multiplied out (a run printing 997.3 and another
# 1.12k sort as 997.3 < 1120), in the counter's own unit.
median() {
  printf "%s\n" "$@" | awk '{v = $1; m = 1; sub(/s$/, "", v); sub(/[mu]$/, "", v)
    if (v ~ /k$/) { m = 1e3; sub(/k$/, "", v) } else if (v ~ /M$/) { m = 1e6; sub(/M$/, "", v) }
    printf "%.6g\n", v * m}' | sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'
}

a=() b=()
for _ in $(seq "$n"); do
  a+=("$(run "$old")")
  b+=("$(run "$new")")
done
# Per-pair ratios new/old: the two runs of a pair are seconds apart, so a level change between
# pairs cancels out of their ratio.
ratios=()
for i in "${!a[@]}"; do
  ratios+=("$(awk -v x="$(median "${a[$i]}")" -v y="$(median "${b[$i]}")" 'BEGIN{printf "%.3f", y / x}')")
done
echo "vCPU $cpu, $filter, $counter"
echo "old: ${a[*]} median $(median "${a[@]}")"
echo "new: ${b[*]} median $(median "${b[@]}")"
echo "new/old per pair: ${ratios[*]} median $(median "${ratios[@]}")"
