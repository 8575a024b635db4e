#!/usr/bin/env bash
# Where one function's instructions go, by source file and line: callgrind counts every
# instruction the function executes itself (code inlined into it included, callees not) and
# addr2line maps each instruction address to the source line it was compiled from. So an
# inlined helper's cost shows under its own file and line. Exact, whatever the timing level
# (docs/performance.md, "Two timing levels"); used to see which part of a kernel (say the
# codec's entropy coder against its prediction) its instructions are spent in.
#
# Usage: scripts/icount-lines.sh BENCH FILTER FUNCTION [TOP]
#   BENCH     a benchmark binary built with debug info (e.g. a Release build configured with
#             -DCMAKE_CXX_FLAGS=-g: the optimised code, with line tables)
#   FILTER    a --benchmark_filter regex selecting one benchmark
#   FUNCTION  a substring of the (demangled) function name; every function containing it counts
#   TOP       how many lines to list (default 25)
# Prints the instructions per source file, then the TOP costliest lines. Needs valgrind,
# binutils (addr2line) and python3. Runs about 50x slower than the benchmark itself.
# Example: scripts/icount-lines.sh build-g/bench/bench_codec 'FoxRun/20Hz/delta$' decode_body_fast
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 BENCH FILTER FUNCTION [TOP]" >&2
  exit 2
fi
bench=$1 filter=$2 function=$3 top=${4:-25}
[[ -x "$bench" ]] || { echo "$0: $bench is not an executable" >&2; exit 1; }
for tool in valgrind addr2line python3; do
  command -v "$tool" >/dev/null || { echo "$0: $tool not found (apt-get install valgrind binutils python3)" >&2; exit 1; }
done

out=$(mktemp /tmp/icount-lines.XXXXXX)
trap 'rm -f "$out" "$out.log"' EXIT
if ! valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$out" "$bench" \
    --benchmark_filter="$filter" --benchmark_min_time=0.05 >"$out.log" 2>&1; then
  echo "$0: the benchmark failed under valgrind:" >&2
  tail -5 "$out.log" >&2
  exit 1
fi

python3 - "$out" "$bench" "$function" "$top" <<'EOF'
import collections, re, subprocess, sys
profile, binary, wanted, top = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

# callgrind's format with --dump-instr=yes: "fn=(id) name" starts a function's block; cost
# lines are "ADDRESS LINE COST" with addresses absolute (0x...) or relative (+n, -n, *) to the
# previous one; a "calls=" line makes the next cost line a call's inclusive cost (skipped:
# only the function's own instructions count). Names are compressed as "(id) name" once, then
# "(id)".
names = {}
def expand(token):
    m = re.match(r"\((\d+)\)(?: (.*))?", token)
    if not m:
        return token
    if m.group(2):
        names[m.group(1)] = m.group(2)
    return names.get(m.group(1), "")

costs = collections.Counter()
current, skip_next, address = "", False, 0
for line in open(profile):
    line = line.rstrip("\n")
    if line.startswith("fn="):
        current = expand(line[3:])
        continue
    if line.startswith("cfn="):
        expand(line[4:])
        continue
    if line.startswith("calls="):
        skip_next = True
        continue
    if not line or line[0] not in "0123456789+-*":
        continue
    fields = line.split()
    a = fields[0]
    if a.startswith("0x"):
        address = int(a, 16)
    elif a[0] == "+":
        address += int(a[1:])
    elif a[0] == "-":
        address -= int(a[1:])
    elif a != "*":
        address = int(a)
    if skip_next:
        skip_next = False
        continue
    if wanted in current and len(fields) >= 2:
        costs[address] += int(fields[-1])

if not costs:
    sys.exit(f"no instructions of a function matching {wanted!r} (is the filter right?)")
addresses = sorted(costs)
located = subprocess.run(["addr2line", "-e", binary] + [hex(a) for a in addresses],
                         capture_output=True, text=True, check=True).stdout.splitlines()
by_line, by_file = collections.Counter(), collections.Counter()
for a, where in zip(addresses, located):
    where = where.split(" (discriminator")[0]
    file = where.rsplit(":", 1)[0].rsplit("/", 1)[-1]
    by_line[where.rsplit("/", 1)[-1]] += costs[a]
    by_file[file] += costs[a]
total = sum(costs.values())
print(f"{total:,} instructions in functions matching {wanted!r}")
print("\nby file:")
for file, n in by_file.most_common():
    print(f"{n:>14,} {100 * n / total:5.1f} %  {file}")
print(f"\nthe {top} costliest lines:")
for where, n in by_line.most_common(top):
    print(f"{n:>14,} {100 * n / total:5.1f} %  {where}")
EOF
