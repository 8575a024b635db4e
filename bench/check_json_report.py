#!/usr/bin/env python3
"""Runs one benchmark program with --benchmark_format=json and checks that stdout is a valid
JSON report whose benchmarks carry the named counters as finite numbers: the form in which the
issues' checks read the figures (e.g. `bench_codec --benchmark_format=json`, counter
`bytes_per_joint`). Anything else a program prints on stdout (a log line) breaks the report.

usage: check_json_report.py BENCH FILTER COUNTER [COUNTER...]
  FILTER  a --benchmark_filter regex; it must select at least one benchmark
Exit 0 when every selected benchmark has every counter; 1 otherwise (the reason on stderr).
"""
import json
import math
import subprocess
import sys


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    bench, pattern, counters = argv[1], argv[2], argv[3:]
    run = subprocess.run([bench, f"--benchmark_filter={pattern}", "--benchmark_min_time=0.01",
                          "--benchmark_format=json"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{bench} exited with {run.returncode}:\n{run.stderr}", file=sys.stderr)
        return 1
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError as error:
        line = run.stdout.splitlines()[error.lineno - 1] if error.lineno else ""
        print(f"{bench}: stdout is not a JSON report ({error}); line: {line!r}", file=sys.stderr)
        return 1
    benchmarks = report.get("benchmarks", [])
    if not benchmarks:
        print(f"{bench}: no benchmark matches {pattern!r}", file=sys.stderr)
        return 1
    for b in benchmarks:
        if "error_message" in b:
            print(f"{b['name']}: {b['error_message']}", file=sys.stderr)
            return 1
        for counter in counters:
            value = b.get(counter)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                print(f"{b['name']}: counter {counter!r} missing or not a finite number ({value!r})",
                      file=sys.stderr)
                return 1
    print(f"{bench}: {len(benchmarks)} benchmark(s), counters {', '.join(counters)}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
