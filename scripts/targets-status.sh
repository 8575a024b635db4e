#!/usr/bin/env bash
# One build's figure for every speed target, as docs/performance.md's status table quotes it:
# each target's benchmark run ROUNDS times on each vCPU (taskset, one run at a time, the
# targets interleaved so that a slow spell of the host hits them alike), then the lowest,
# median and highest figure per target over both vCPUs, how many runs missed the target, and
# the figures per vCPU. The 2-thread scaling
# of the animator runs unpinned (column "both" only).
# (docs/performance.md, "Two timing levels": the same binary runs 25-40 % slower on a vCPU
# the host is slowing, so a single figure says little; compare builds with scripts/ab.sh.)
#
# Usage: scripts/targets-status.sh [BUILD] [ROUNDS]
#   BUILD   a Release build directory with bench/ built (default: build)
#   ROUNDS  runs per target and vCPU (default 5)
# Needs the sample assets beside the checkout (../shared/assets) for the Fox benchmarks.
# Takes about 40 s per round. Run it on an otherwise idle machine: the animator figures are
# wall-clock time.
set -euo pipefail
build="${1:-build}" rounds="${2:-5}"
cd "$(dirname "$0")/.."
source scripts/speed-targets.sh
for bench in "${speed_target_benches[@]}"; do
  [[ -x "$build/bench/bench_$bench" ]] || { echo "$0: $build/bench/bench_$bench missing" >&2; exit 1; }
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "$0: ROUNDS must be a positive integer" >&2; exit 2; }

results=$(mktemp)
trap 'rm -f "$results"' EXIT
date -u
for ((round = 1; round <= rounds; ++round)); do
  for cpu in 0 1; do
    for t in "${speed_targets[@]}"; do
      IFS='|' read -r label bench filter counter scale <<<"$t"
      json=$(taskset -c "$cpu" "$build/bench/bench_$bench" --benchmark_filter="$filter" \
               --benchmark_min_time=0.3 --benchmark_format=json 2>/dev/null || true)
      if ! python3 -c "import json, sys; b = json.loads(sys.argv[1])['benchmarks'][0]; \
print(f'{sys.argv[2]}\t{sys.argv[3]}\t{b[sys.argv[4]] * float(sys.argv[5]):.4g}')" \
             "$json" "$label" "$cpu" "$counter" "$scale" >>"$results" 2>/dev/null; then
        echo "$0: no $counter from $bench '$filter' (assets missing?)" >&2
      elif [[ "$bench" == animator && "$filter" == 'Fox/10000/threads:1$' ]]; then
        pinned[cpu]=$(tail -n 1 "$results" | cut -f3)  # for the 2-thread figures below
      fi
    done
  done
  # 2-thread scaling (#3): threads:1 and threads:2 unpinned, the ratio of their wall-clock
  # time per entity-tick (the target's measure); and threads:2 against what the two vCPUs
  # give together (threads:1 pinned to each: this round's Fox/10000 figures above):
  # 1 / (1/t0 + 1/t1) over the 2-thread time, 1.0 when the two threads lose nothing to each
  # other. The host may slow one vCPU, so the first figure moves with which vCPU the single
  # thread ran on; the second does not.
  json=$("$build/bench/bench_animator" --benchmark_filter='Animator/Fox/10000/threads:(1|2)$' \
           --benchmark_min_time=0.3 --benchmark_format=json 2>/dev/null || true)
  if ! python3 -c "
import json, sys
b = {x['name']: x['ns_per_entity'] for x in json.loads(sys.argv[1])['benchmarks']}
one, two = b['BM_Animator/Fox/10000/threads:1'], b['BM_Animator/Fox/10000/threads:2']
print(f'#3 2 threads / 1 thread, Fox/10000 (x, >= 1.8)\tboth\t{one / two:.4g}')
pinned = [float(t) for t in sys.argv[2:4]]
print(f'#3 2 threads / both vCPUs\' sum (x, 1 = ideal)\tboth\t{1 / (1 / pinned[0] + 1 / pinned[1]) / two:.4g}')
" "$json" "${pinned[0]:-}" "${pinned[1]:-}" >>"$results" 2>/dev/null; then
    echo "$0: no 2-thread figures from bench_animator (assets missing?)" >&2
  fi
  unset pinned
  echo "round $round of $rounds done, $(date -u +%H:%M:%S)" >&2
done
date -u
python3 - "$results" <<'EOF'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, cpu, value = line.rstrip('\n').split('\t')
    rows.setdefault(label, {}).setdefault(cpu, []).append(float(value))
def span(values):
    values = sorted(values)
    return f"{values[0]:.4g} / {statistics.median(values):.4g} / {values[-1]:.4g}"
def missed(label, values):
    # The label's "<= X" or ">= X": how many runs miss the target.
    m = re.search(r"([<>]=) ([0-9.]+)", label)
    if not m:
        return "-"
    bound = float(m.group(2))
    bad = [v for v in values if (v > bound if m.group(1) == "<=" else v < bound)]
    return f"{len(bad)} of {len(values)}"
print(f"{'target':48} {'both vCPUs: low / median / high':32} {'missed':9} {'vCPU 0':24} {'vCPU 1':24}")
for label, by_cpu in rows.items():
    both = [v for vs in by_cpu.values() for v in vs]
    per_cpu = [span(by_cpu[c]) if c in by_cpu else "-" for c in ("0", "1")]
    print(f"{label:48} {span(both):32} {missed(label, both):9} {per_cpu[0]:24} {per_cpu[1]:24}")
EOF
