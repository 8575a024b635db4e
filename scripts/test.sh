#!/usr/bin/env bash
# The test command: installs what it needs (Debian 12), configures, builds and runs every test.
#   scripts/test.sh                 Release build in build/, all unit and integration tests (ctest)
#   scripts/test.sh --full          also (what CI runs, see .ci/run):
#                                   - an ASan+UBSan build (build-asan/) and its tests (all but the
#                                     label spec_reference: the Python spec comparisons are numeric
#                                     checks, already run in the Release pass, and take minutes
#                                     under the sanitizers);
#                                   - the determinism matrix on the cells that, with the two
#                                     builds above (gcc x86-64 -O3 and -O0, both running the
#                                     golden-hash tests), cover every pair of compiler, target and
#                                     optimisation level: clang-x86_64-O0 gcc-aarch64-O0
#                                     clang-aarch64-O2, and gcc-x86_64-O2 under qemu-x86_64 as
#                                     an AVX2-only (only on an AVX-512 host, where the native
#                                     builds run other clones) and a baseline x86-64 CPU (the
#                                     kernels' other target_clones versions; docs/determinism.md);
#                                   - a short fuzzing pass (20 s a target).
#   --matrix-all                    with --full: all ten matrix cells (about 5 more minutes)
#   --werror                        warnings as errors (CI)
# Exit code: non-zero when any step fails.
set -euo pipefail
cd "$(dirname "$0")/.."

full=0
werror=OFF
matrix_cells="clang-x86_64-O0 gcc-aarch64-O0 clang-aarch64-O2 gcc-x86_64-O2+Haswell gcc-x86_64-O2+qemu64"
for arg in "$@"; do
  case "$arg" in
    --full) full=1 ;;
    --werror) werror=ON ;;
    --matrix-all) matrix_cells=all ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

if ((full)); then scripts/install-deps.sh --matrix; else scripts/install-deps.sh; fi
jobs=$(nproc)
start=$(date +%s)

step() { echo; echo "=== $* ($(date +%T), $(($(date +%s) - start)) s in)"; }

step "Release build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPOSECAST_BUILD_TESTS=ON -DPOSECAST_BUILD_BENCH=ON -DPOSECAST_WARNINGS_AS_ERRORS=$werror >/dev/null
cmake --build build -j"$jobs"
step "Tests (Release)"
ctest --test-dir build --output-on-failure -j"$jobs"

if ((full)); then
  step "ASan + UBSan build"
  # -g1: line tables for sanitizer reports, without full debug info (a faster build).
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
    -DCMAKE_C_FLAGS_DEBUG="-O0 -g1" -DPOSECAST_SANITIZERS=address,undefined \
    -DPOSECAST_BUILD_BENCH=OFF -DPOSECAST_WARNINGS_AS_ERRORS=$werror >/dev/null
  cmake --build build-asan -j"$jobs"
  step "Tests (ASan + UBSan)"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE spec_reference
  # The "+Haswell" cell runs the AVX2 target_clones under emulation: on a CPU without AVX-512
  # the native builds above already run exactly those, so it would repeat them.
  if [[ $matrix_cells != all ]] && ! grep -qw avx512f /proc/cpuinfo; then
    matrix_cells=$(echo ${matrix_cells/gcc-x86_64-O2+Haswell/})
    echo "(no AVX-512 here: the native builds run the AVX2 clones; gcc-x86_64-O2+Haswell skipped)"
  fi
  step "Determinism matrix ($matrix_cells)"
  if [[ $matrix_cells == all ]]; then
    scripts/determinism-matrix.sh
  else
    scripts/determinism-matrix.sh --cells "$matrix_cells"
  fi
  step "Fuzzing (short pass)"
  scripts/fuzz.sh 20
fi
step "All tests passed"
