#!/usr/bin/env bash
# Instructions per call of the hottest functions of one Google Benchmark, counted by callgrind:
# an exact figure that this VM's timing levels and neighbours do not move (docs/performance.md,
# "Two timing levels"). Use it beside scripts/ab.sh when a kernel change is within the time
# noise: fewer instructions per call is a real, if partial, measure of a gain.
#
# Usage: scripts/icount.sh [--inclusive] BENCH FILTER [FUNCTIONS] [TOP]
#   --inclusive  count each function with its callees (default: its own instructions only;
#                a kernel split into an out-of-line helper then looks cheaper than it is)
#   BENCH      a benchmark binary of a Release build (e.g. build/bench/bench_animator)
#   FILTER     a --benchmark_filter regex selecting one benchmark
#   FUNCTIONS  a regex on function names to list (default: posecast::, the project's own)
#   TOP        how many of them, by instructions (default 15)
# Prints per function: its instructions (its own, or with --inclusive its callees' too), its
# calls and the ratio. The whole program is counted, every thread (the World's workers
# evaluate), set-up included, for the iterations Google Benchmark picks with
# --benchmark_min_time=0.05: totals differ between runs and set-up functions appear too, so
# compare the per-call figures of the hot functions.
# Needs valgrind (Debian: apt-get install valgrind) and python3. Runs about 50x slower than the
# benchmark itself.
# Example: scripts/icount.sh build/bench/bench_animator 'Animator/Fox/100/threads:1$'
set -euo pipefail
inclusive=no
if [[ ${1:-} == --inclusive ]]; then
  inclusive=yes
  shift
fi
if [[ $# -lt 2 ]]; then
  echo "usage: $0 [--inclusive] BENCH FILTER [FUNCTIONS] [TOP]" >&2
  exit 2
fi
bench=$1 filter=$2 functions=${3:-posecast::} top=${4:-15}
[[ -x "$bench" ]] || { echo "$0: $bench is not an executable" >&2; exit 1; }
for tool in valgrind callgrind_annotate python3; do
  command -v "$tool" >/dev/null || { echo "$0: $tool not found (apt-get install valgrind python3)" >&2; exit 1; }
done

out=$(mktemp /tmp/icount.XXXXXX)
trap 'rm -f "$out" "$out.log"' EXIT
if ! valgrind --tool=callgrind --callgrind-out-file="$out" "$bench" --benchmark_filter="$filter" \
    --benchmark_min_time=0.05 >"$out.log" 2>&1; then
  echo "$0: the benchmark failed under valgrind:" >&2
  tail -5 "$out.log" >&2
  exit 1
fi

# callgrind_annotate --tree=caller prints one block per function (--threshold=100: every
# function, not only those making up the first 99 % of the cost): a line per caller ("<",
# with its call count "(N x)") and the function's own line ("*", its exclusive cost).
callgrind_annotate --threshold=100 --inclusive="$inclusive" --tree=caller "$out" | python3 -c '
import re, sys
top, wanted = int(sys.argv[1]), re.compile(sys.argv[2])
rows, calls = [], 0
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) \([^)]*\)\s+([<*])\s+(.*)", line)
    if not m:
        if not line.strip():
            calls = 0
        continue
    cost, kind, rest = int(m.group(1).replace(",", "")), m.group(2), m.group(3)
    if kind == "<":
        n = re.search(r"\(([\d,]+)x\)", rest)
        calls += int(n.group(1).replace(",", "")) if n else 0
    else:
        name = re.sub(r"^\?\?\?:", "", rest)
        name = re.sub(r" \[/[^]]*\]$", "", name)
        if wanted.search(name):
            rows.append((cost, calls, name))
        calls = 0
rows.sort(reverse=True)
print("%14s %10s %10s  function" % ("instructions", "calls", "per call"))
for cost, n, name in rows[:top]:
    per = f"{cost / n:,.0f}" if n else "-"
    print(f"{cost:>14,} {n:>10,} {per:>10}  {name[:110]}")
' "$top" "$functions"
