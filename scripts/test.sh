#!/usr/bin/env bash
# The test command: installs what it needs (Debian 12), configures, builds and runs every test.
#   scripts/test.sh            Release build in build/, all unit and integration tests (ctest)
#   scripts/test.sh --full     also: ASan+UBSan build and tests, the determinism matrix, and a
#                              short fuzzing pass (what CI runs; see .ci/run)
#   --werror                   warnings as errors (CI)
# Exit code: non-zero when any step fails.
set -euo pipefail
cd "$(dirname "$0")/.."

full=0
werror=OFF
for arg in "$@"; do
  case "$arg" in
    --full) full=1 ;;
    --werror) werror=ON ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

if ((full)); then scripts/install-deps.sh --matrix; else scripts/install-deps.sh; fi
jobs=$(nproc)

step() { echo; echo "=== $* ($(date +%T))"; }

step "Release build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOSECAST_WARNINGS_AS_ERRORS=$werror >/dev/null
cmake --build build -j"$jobs"
step "Tests (Release)"
ctest --test-dir build --output-on-failure -j"$jobs"

if ((full)); then
  step "ASan + UBSan build"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPOSECAST_SANITIZERS=address,undefined \
    -DPOSECAST_BUILD_BENCH=OFF -DPOSECAST_WARNINGS_AS_ERRORS=$werror >/dev/null
  cmake --build build-asan -j"$jobs"
  step "Tests (ASan + UBSan)"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs"
  if [[ -x scripts/determinism-matrix.sh ]]; then
    step "Determinism matrix"
    scripts/determinism-matrix.sh
  fi
  if [[ -x scripts/fuzz.sh ]]; then
    step "Fuzzing (short pass)"
    scripts/fuzz.sh 20
  fi
fi
step "All tests passed"
