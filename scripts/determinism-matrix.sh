#!/usr/bin/env bash
# The determinism matrix (docs/determinism.md): builds the `posecast` CLI with gcc and clang, at
# -O0 and -O2, for x86-64 and for aarch64 (cross-compiled, run under qemu-aarch64), runs every
# golden scenario (tests/golden/*.json) with 1 and 2 threads in every build, and checks that each
# run prints the final world hash and run hash committed in tests/golden/*.hashes. It also
# replays the regression suite's recordings (tests/regress/*.pcrec, recorded by a gcc x86-64
# Release build: `posecast regress --update`) with --verify, from the start and after a seek
# into the middle: every replayed tick's world hash and tick check must equal the recorded ones on every cell.
# Scenarios using the public sample assets (../shared/assets) run only when that folder exists.
#
# Two more cells run the gcc-x86_64-O2 build under qemu-x86_64 emulating older CPUs, so that
# the kernels compiled several times (target_clones: AVX-512, AVX2 and baseline versions, picked
# at load time from the CPU's features; shared/src/simd4.h) are all checked, not only the ones
# this machine's CPU selects: "+Haswell" (AVX2, no AVX-512) and "+qemu64" (baseline x86-64).
#
#   scripts/determinism-matrix.sh                    all ten cells
#   scripts/determinism-matrix.sh --cells "gcc-x86_64-O2 clang-aarch64-O0"
#   scripts/determinism-matrix.sh --update-goldens   rewrite tests/golden/*.hashes from the
#                                                     gcc-x86_64-O2 cell (intended changes only)
#   --jobs N        parallel compile jobs (default: nproc)
#   --build-root D  where the cell builds go (default: build-matrix)
#
# Prints a table (cell x scenario) and exits non-zero on any mismatch, failed build or failed
# run. Builds are incremental: a second run only rebuilds what changed.
# Needs: scripts/install-deps.sh --matrix (clang, g++-aarch64-linux-gnu, qemu-user).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

all_cells="gcc-x86_64-O0 gcc-x86_64-O2 clang-x86_64-O0 clang-x86_64-O2 gcc-aarch64-O0 gcc-aarch64-O2 clang-aarch64-O0 clang-aarch64-O2 gcc-x86_64-O2+Haswell gcc-x86_64-O2+qemu64"
cells=$all_cells
jobs=$(nproc)
build_root=build-matrix
update=0
while (($#)); do
  case "$1" in
    --cells) cells=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --build-root) build_root=$2; shift 2 ;;
    --update-goldens) update=1; cells=gcc-x86_64-O2; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "determinism-matrix: unknown argument $1" >&2; exit 2 ;;
  esac
done

assets_dir=$(cd "$root/.." && pwd)/shared/assets
# runnable SCENARIO_JSON WHAT: false (saying so) when the scenario names a file under
# shared/assets and the public sample models are absent.
runnable() {
  if grep -q 'shared/assets' "$1" && [[ ! -d $assets_dir ]]; then
    echo "determinism-matrix: skipping $2 ($assets_dir absent)"
    return 1
  fi
}
scenarios=()
for json in tests/golden/*.json; do
  name=$(basename "$json" .json)
  runnable "$json" "$name" && scenarios+=("$name")
done
((${#scenarios[@]})) || { echo "determinism-matrix: no scenario to run" >&2; exit 1; }
recordings=()
for rec in tests/regress/*.pcrec; do
  name=$(basename "$rec" .pcrec)
  runnable "tests/regress/$name.json" "the replay of $name" && recordings+=("$name")
done

# configure_cell CELL DIR: a minimal build (core, rig, sim, cli) of the cell's flavour.
configure_cell() {
  local cell=$1 dir=$2 compiler arch opt
  IFS=- read -r compiler arch opt <<<"$cell"
  local args=(-S "$root" -B "$dir" -G Ninja -DPOSECAST_MINIMAL=ON -DPOSECAST_WARNINGS_AS_ERRORS=OFF)
  # Debug / Release with explicit optimisation flags and no debug info (faster builds).
  if [[ $opt == O0 ]]; then
    args+=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0" "-DCMAKE_C_FLAGS_DEBUG=-O0")
  else
    args+=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG")
  fi
  if [[ $arch == aarch64 ]]; then
    args+=(-DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-aarch64.cmake" -DPOSECAST_CROSS_COMPILER="$compiler")
  elif [[ $compiler == gcc ]]; then
    args+=(-DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc)
  else
    args+=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang)
  fi
  cmake "${args[@]}" >"$dir.configure.log" 2>&1
}

# Every run of a cell's program is bounded, so that a hung emulator fails its cell instead of
# stalling CI: the slowest run (an -O0 aarch64 build under QEMU on a busy machine) takes a
# few minutes.
run_timeout=900

# emulator CELL: the command prefix that runs the cell's binaries (none for native x86-64).
emulator() {
  case $1 in
    *aarch64*) echo "qemu-aarch64 -L /usr/aarch64-linux-gnu" ;;
    *+*) echo "qemu-x86_64 -cpu ${1#*+}" ;;
  esac
}

# run_scenario CELL DIR SCENARIO THREADS: prints "FINAL RUN" hashes, or nothing on failure.
run_scenario() {
  local cell=$1 dir=$2 scenario=$3 threads=$4 out
  local cmd=(timeout "$run_timeout" $(emulator "$cell") "$dir/cli/posecast" run "tests/golden/$scenario.json" --threads "$threads" --no-progress)
  if ! out=$("${cmd[@]}" 2>"$dir.run.log"); then
    timed_out "$?" "$cell" "$scenario"
    return 1
  fi
  awk '/^final_world_hash /{f=$2} /^run_hash /{r=$2} END{print f, r}' <<<"$out"
}

# replay_recording CELL DIR NAME FROM: replays tests/regress/NAME.pcrec from tick FROM (a seek
# when > 0) with --verify; fails on any divergence from the recorded hashes.
replay_recording() {
  local cell=$1 dir=$2 name=$3 from=$4
  local cmd=(timeout "$run_timeout" $(emulator "$cell") "$dir/cli/posecast" replay "tests/regress/$name.pcrec" --verify --from "$from")
  "${cmd[@]}" >"$dir.replay.log" 2>&1 || { local rc=$?; timed_out "$rc" "$cell" "replay of $name"; return "$rc"; }
}
# timed_out RC CELL WHAT: says so when RC is timeout(1)'s.
timed_out() {
  if [[ $1 == 124 ]]; then echo "    $2: $3 timed out after $run_timeout s" >&2; fi
}
# The tick in the middle of a recording's scenario (not on a checkpoint, so the seek restores
# one and re-simulates the ticks after it).
replay_seek_tick() {
  local ticks
  ticks=$(grep -o '"ticks": *[0-9]*' "tests/regress/$1.json" | grep -o '[0-9]*$')
  echo $((ticks / 2 + 7))
}
golden_of() {  # golden_of SCENARIO -> "FINAL RUN"
  awk '/^final_world_hash /{f=$2} /^run_hash /{r=$2} END{print f, r}' "tests/golden/$1.hashes" 2>/dev/null
}

# CPU seconds (user + sys) used by finished child processes so far, from the `times` builtin,
# into the variable named $1. `times` must run in this shell: in a $(...) subshell it would
# report the subshell's own (empty) children.
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
child_cpu() {
  times >"$times_file"
  printf -v "$1" '%s' "$(awk 'NR == 2 {
    split($1, u, /[ms]/); split($2, s, /[ms]/)
    printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2]
  }' "$times_file")"
}

start_all=$(date +%s)
mkdir -p "$build_root"
declare -A result
failures=0
timing=()
for cell in $cells; do
  [[ " $all_cells " == *" $cell "* ]] || { echo "determinism-matrix: unknown cell $cell" >&2; exit 2; }
  base=${cell%%+*}  # an emulated-CPU cell runs its base cell's build
  dir="$build_root/$base"
  t0=$(date +%s)
  child_cpu c0
  echo "--- $cell: building ($(date +%T))"
  if ! { [[ -f $dir/build.ninja ]] || configure_cell "$base" "$dir"; } ||
     ! cmake --build "$dir" -j"$jobs" --target posecast >"$dir.build.log" 2>&1; then
    echo "    BUILD FAILED, see $dir.configure.log / $dir.build.log"
    for s in "${scenarios[@]}"; do result[$cell,$s]="build-failed"; done
    for r in "${recordings[@]}"; do result[$cell,replay-$r]="build-failed"; done
    failures=$((failures + 1))
    timing+=("$cell build failed")
    continue
  fi
  t1=$(date +%s)
  child_cpu c1
  echo "--- $cell: running ($(date +%T))"
  for s in "${scenarios[@]}"; do
    status=ok
    for threads in 1 2; do
      if ! got=$(run_scenario "$cell" "$dir" "$s" "$threads") || [[ -z $got || $got == " " ]]; then
        status="run-failed"
        echo "    $s threads $threads: RUN FAILED ($(head -c 300 "$dir.run.log"))"
        break
      fi
      if ((update)); then
        ticks=$(awk '/^ticks /{print $2}' "tests/golden/$s.hashes" 2>/dev/null || true)
        read -r final run <<<"$got"
        if ((threads == 1)); then
          {
            echo "# Golden hashes of $s.json: what \`posecast run\` prints on every build, thread count and CPU."
            echo "# Change only for an intended change of results: scripts/determinism-matrix.sh --update-goldens"
            echo "ticks $(grep -o '"ticks": *[0-9]*' "tests/golden/$s.json" | grep -o '[0-9]*$')"
            echo "final_world_hash $final"
            echo "run_hash $run"
          } >"tests/golden/$s.hashes"
        fi
        status=updated
      elif [[ $got != "$(golden_of "$s")" ]]; then
        status="MISMATCH"
        echo "    $s threads $threads: got $got, golden $(golden_of "$s")"
        break
      fi
    done
    result[$cell,$s]=$status
    [[ $status == ok || $status == updated ]] || failures=$((failures + 1))
  done
  for r in "${recordings[@]}"; do
    status=ok
    for from in 0 "$(replay_seek_tick "$r")"; do
      if ! replay_recording "$cell" "$dir" "$r" "$from"; then
        status="DIVERGED"
        echo "    replay $r --from $from: $(tail -c 300 "$dir.replay.log")"
        break
      fi
    done
    result[$cell,replay-$r]=$status
    [[ $status == ok ]] || failures=$((failures + 1))
  done
  t2=$(date +%s)
  child_cpu c2
  timing+=("$cell: build $((t1 - t0)) s wall / $((c1 - c0)) s CPU, runs $((t2 - t1)) s wall / $((c2 - c1)) s CPU")
done

echo
printf '%-18s' "cell"
columns=("${scenarios[@]}")
for r in "${recordings[@]}"; do columns+=("replay-$r"); done
for s in "${columns[@]}"; do printf ' %-18s' "$s"; done
echo
for cell in $cells; do
  printf '%-18s' "$cell"
  for s in "${columns[@]}"; do printf ' %-18s' "${result[$cell,$s]:-?}"; done
  echo
done
echo
printf '%s\n' "${timing[@]}"
child_cpu c_end
echo "total $(($(date +%s) - start_all)) s wall, $c_end s CPU (on $(nproc) cores)"
if ((failures)); then
  echo "determinism-matrix: $failures FAILED" >&2
  exit 1
fi
echo "determinism-matrix: all cells give the golden hashes and replay every recording bit-exactly"
