#!/usr/bin/env python3
"""Runs Google Benchmark programs of one or two build folders side by side.

Usage:
  bench/compare.py [options] BENCH FILTER BUILD [BUILD_B]
  bench/compare.py [options] --targets BUILD [BUILD_B]

  BENCH    a benchmark program of bench/: sampling, animator, client, codec, replay
           (BUILD/bench/bench_BENCH)
  FILTER   a --benchmark_filter regex; every benchmark it selects is reported
  BUILD    a Release build folder; with BUILD_B the two are compared (B against A)
  --targets  every speed target's benchmark (docs/performance.md) instead of BENCH FILTER

Options:
  --rounds N      runs per build (default 5); the builds alternate A, B, A, B, ... so that a
                  machine whose speed drifts slows both alike
  --min-time S    --benchmark_min_time of each run (default 0.3)
  --counter NAME  the user counter to read (default ns_per_entity, else the CPU time in ns)
  --cpu C         pin every run to CPU C (taskset); default unpinned
  --icount [RE]   instead of timing: instructions per call of the functions whose name matches
                  RE (default posecast::), counted by valgrind's callgrind in one run per build.
                  Exact whatever the machine's load; it does not see cache misses or stalls
  --inclusive     with --icount: count each function with its callees (default: its own)
  --top N         with --icount: how many functions to list (default 15)

Output, per benchmark: each build's median over its runs (and the range), and with two
builds the ratio B/A of the medians and the median of the per-round ratios (the two runs of
a round are seconds apart, so a drift between rounds cancels out of their ratio). For a time,
below 1 means B is faster; for a rate (x_realtime), above 1.

Exit code 0; 1 when a program is missing or fails; 2 for a bad command line.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

# Every speed target with a Google Benchmark measure: (label, bench, filter, counter, scale).
# scale turns the JSON counter into the label's unit (bench_client reports seconds per entity).
SPEED_TARGETS = [
    ("sampling Fox/10000 (ns, <= 400)", "sampling", r"SampleLocalToModelPalette/Fox/10000$", "ns_per_entity", 1),
    ("animator Fox/100, 1 thread (ns, <= 500)", "animator", r"Fox/100/threads:1$", "ns_per_entity", 1),
    ("animator Fox/10000, 1 thread (ns, <= 700)", "animator", r"Fox/10000/threads:1$", "ns_per_entity", 1),
    ("animator Fox/10000, 2 threads (ns)", "animator", r"Fox/10000/threads:2$", "ns_per_entity", 1),
    ("client Fox/100 (us, <= 2)", "client", r"ClientFrame/Fox/100$", "ns_per_entity", 1e6),
    ("client GenRig24/100 (us, <= 2)", "client", r"ClientFrame/GenRig24/100$", "ns_per_entity", 1e6),
    ("replay Fox (x real time, >= 200)", "replay", r"ReplaySpeed/Fox", "x_realtime", 1),
    ("codec FoxRun/20Hz/delta (ns, <= 1000)", "codec", r"FoxRun/20Hz/delta$", "ns_per_entity", 1),
]

TIME_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def fail(message, code=1):
    print(f"compare.py: {message}", file=sys.stderr)
    sys.exit(code)


def program(build, bench):
    path = os.path.join(build, "bench", f"bench_{bench}")
    if not os.access(path, os.X_OK):
        fail(f"{path} is not an executable (build the target bench_{bench} in {build})")
    return path


def run_once(path, bench_filter, args):
    """One run of a benchmark program; returns {benchmark name: figure}."""
    command = [path, f"--benchmark_filter={bench_filter}", f"--benchmark_min_time={args.min_time}",
               "--benchmark_format=json"]
    if args.cpu is not None:
        command = ["taskset", "-c", str(args.cpu)] + command
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{' '.join(command)} failed:\n{result.stderr.strip()[-2000:]}")
    report = json.loads(result.stdout)
    figures = {}
    for entry in report.get("benchmarks", []):
        if entry.get("run_type") == "aggregate" or entry.get("error_occurred"):
            continue
        if args.counter in entry:
            figures[entry["name"]] = float(entry[args.counter])
        else:
            figures[entry["name"]] = float(entry["cpu_time"]) * TIME_UNIT_NS[entry.get("time_unit", "ns")]
    return figures


def time_side_by_side(paths, bench_filter, args):
    """Alternating runs; returns {benchmark: [per-build list of figures]}."""
    runs = {}
    for _ in range(args.rounds):
        for index, path in enumerate(paths):
            for name, value in run_once(path, bench_filter, args).items():
                runs.setdefault(name, [[] for _ in paths])[index].append(value)
    return runs


def fmt(value):
    return f"{value:.4g}"


def print_timing(runs, builds, scale=1.0, label=None):
    for name, per_build in runs.items():
        print(label or name)
        for build, values in zip(builds, per_build):
            scaled = [v * scale for v in values]
            print(f"  {build:28} median {fmt(statistics.median(scaled)):>9}   "
                  f"range {fmt(min(scaled))}-{fmt(max(scaled))}   ({len(scaled)} runs)")
        if len(per_build) == 2 and per_build[0] and len(per_build[0]) == len(per_build[1]):
            a, b = per_build
            ratio = statistics.median(b) / statistics.median(a)
            per_round = statistics.median(y / x for x, y in zip(a, b))
            print(f"  B/A: {ratio:.3f} (medians), {per_round:.3f} (median of the per-round ratios)")


def callgrind_per_call(path, bench_filter, args):
    """Instructions per call of the functions matching args.icount, in one callgrind run."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", path,
                   f"--benchmark_filter={bench_filter}", "--benchmark_min_time=0.05"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"the benchmark failed under valgrind:\n{result.stderr.strip()[-2000:]}")
        # One block per function: a line per caller ("<", with "(N x)" calls), then the
        # function's own line ("*"); --threshold=100 lists every function.
        annotate = subprocess.run(
            ["callgrind_annotate", "--threshold=100", f"--inclusive={'yes' if args.inclusive else 'no'}",
             "--tree=caller", out], capture_output=True, text=True, check=True)
    wanted = re.compile(args.icount)
    per_call, calls = {}, 0
    for line in annotate.stdout.splitlines():
        match = re.match(r"\s*([\d,]+) \([^)]*\)\s+([<*])\s+(.*)", line)
        if not match:
            if not line.strip():
                calls = 0
            continue
        cost, kind, rest = int(match.group(1).replace(",", "")), match.group(2), match.group(3)
        if kind == "<":
            count = re.search(r"\(([\d,]+)x\)", rest)
            calls += int(count.group(1).replace(",", "")) if count else 0
            continue
        name = re.sub(r" \[/[^]]*\]$", "", re.sub(r"^\?\?\?:", "", rest))
        if wanted.search(name) and calls:
            per_call[name] = (cost / calls, cost)
        calls = 0
    return per_call


def print_icount(tables, builds, top):
    first = tables[0]
    names = sorted(first, key=lambda n: first[n][1], reverse=True)[:top]
    header = "".join(f"{os.path.basename(os.path.normpath(b))[:14]:>16}" for b in builds)
    print(f"instructions per call{header}{'   B/A' if len(builds) == 2 else ''}  function")
    for name in names:
        cells = [table.get(name, (float("nan"), 0))[0] for table in tables]
        row = "".join(f"{c:16,.0f}" for c in cells)
        ratio = f"{cells[1] / cells[0]:6.3f}" if len(cells) == 2 and cells[0] else ""
        print(f"{'':21}{row}{ratio}  {name[:100]}")


def parse_arguments():
    parser = argparse.ArgumentParser(add_help=False, usage=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.3)
    parser.add_argument("--counter", default="ns_per_entity")
    parser.add_argument("--cpu", type=int)
    parser.add_argument("--icount", nargs="?", const="posecast::")
    parser.add_argument("--inclusive", action="store_true")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--targets", action="store_true")
    parser.add_argument("-h", "--help", action="store_true")
    parser.add_argument("rest", nargs="*")
    args = parser.parse_args()
    if args.help:
        print(__doc__)
        sys.exit(0)
    wanted = (1, 2) if args.targets else (3, 4)
    if len(args.rest) not in wanted or args.rounds < 1:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    return args


def main():
    args = parse_arguments()
    if args.targets:
        builds, jobs = args.rest, [(label, bench, flt, counter, scale)
                                   for label, bench, flt, counter, scale in SPEED_TARGETS]
    else:
        bench, bench_filter, *builds = args.rest
        jobs = [(None, bench, bench_filter, args.counter, 1.0)]
    if args.icount is not None:
        for tool in ("valgrind", "callgrind_annotate"):
            if not shutil.which(tool):
                fail(f"{tool} not found (Debian: apt-get install valgrind)")
    for label, bench, bench_filter, counter, scale in jobs:
        paths = [program(build, bench) for build in builds]
        if args.icount is not None:
            print(f"== bench_{bench} '{bench_filter}'")
            print_icount([callgrind_per_call(p, bench_filter, args) for p in paths], builds, args.top)
            continue
        args.counter = counter
        runs = time_side_by_side(paths, bench_filter, args)
        if not runs:
            print(f"{label or bench_filter}: no benchmark ran (a sample asset missing?)")
        print_timing(runs, builds, scale, label)


if __name__ == "__main__":
    main()
