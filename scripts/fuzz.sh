#!/usr/bin/env bash
# Fuzzes the hostile-input decoders with libFuzzer (clang, ASan + UBSan):
#   fuzz_message_decode  every datagram the server or client may receive
#   fuzz_pose_decode     pose codec streams against real reference poses
#   fuzz_recording_reader  recording files (replay/): reader and a short replay
#   fuzz_gltf_import     glTF/.glb files: the importer, then sampling and palettes of what loads
#   fuzz_scenario        scenario files: the parser, then a short run of what parses
#   fuzz_server_config   posecast-server's command line and JSON config file
# Usage: scripts/fuzz.sh [seconds per target] [target...]   (default 60 s, every target; CI
#        runs a short pass with 20). Naming targets builds and runs only those, e.g.
#        scripts/fuzz.sh 600 fuzz_recording_reader
# Builds in build-fuzz/, generates a seed corpus (valid messages and poses) in
# build-fuzz/corpus/<target>, and fails on the first crash (the reproducer is left in
# build-fuzz/artifacts/).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
all_targets=(fuzz_message_decode fuzz_pose_decode fuzz_recording_reader fuzz_gltf_import fuzz_scenario
  fuzz_server_config)
targets=("${@:-${all_targets[@]}}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t' (${all_targets[*]})" >&2; exit 2; }
done
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "fuzz.sh: seconds must be a whole number, got '$seconds'" >&2
  exit 2
fi
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (scripts/install-deps.sh installs it)" >&2
  exit 1
fi

build=build-fuzz
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" \
  -DPOSECAST_SANITIZERS=address,undefined -DPOSECAST_FUZZ=ON \
  -DPOSECAST_BUILD_TESTS=OFF -DPOSECAST_BUILD_BENCH=OFF >/dev/null
# Each target with the program that writes its seeds.
build_targets=()
for t in "${targets[@]}"; do
  build_targets+=("$t")
  case $t in
    fuzz_message_decode | fuzz_pose_decode) build_targets+=(fuzz_seed_corpus) ;;
    fuzz_recording_reader) build_targets+=(fuzz_recording_seeds) ;;
    fuzz_gltf_import) build_targets+=(fuzz_gltf_seeds) ;;
  esac
done
cmake --build "$build" -j"$(nproc)" --target $(printf '%s\n' "${build_targets[@]}" | sort -u)

corpus="$build/corpus"
artifacts="$build/artifacts"
mkdir -p "$corpus/fuzz_message_decode" "$corpus/fuzz_pose_decode" "$corpus/fuzz_recording_reader" \
  "$corpus/fuzz_gltf_import" "$corpus/fuzz_scenario" "$corpus/fuzz_server_config" "$artifacts"
wants() { [[ " ${targets[*]} " == *" $1 "* ]]; }
if wants fuzz_message_decode || wants fuzz_pose_decode; then
  "$build/fuzz/fuzz_seed_corpus" "$corpus/fuzz_message_decode" "$corpus/fuzz_pose_decode"
fi
if wants fuzz_recording_reader; then "$build/fuzz/fuzz_recording_seeds" "$corpus/fuzz_recording_reader"; fi
if wants fuzz_gltf_import; then "$build/fuzz/fuzz_gltf_seeds" "$corpus/fuzz_gltf_import" >/dev/null; fi
# The scenario seeds: every scenario file in the repository (golden, regression, the demo).
for f in tests/golden/*.json tests/regress/*.json server/scenarios/*.json; do
  cp "$f" "$corpus/fuzz_scenario/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
done
# The server configuration seeds: command lines (one argument per line) and config documents.
printf -- '--models\ngen-rig:24,gen-rig:64\n--tick-rate\n60\n--send-rate=20\n--threads\n2\n' \
  >"$corpus/fuzz_server_config/seed-flags"
printf -- '--listen=127.0.0.1:0\n--grant\n1\n--bandwidth\n900\n--log-level\nwarn\n--duration\n1.5\n' \
  >"$corpus/fuzz_server_config/seed-flags-2"
printf -- '--replay\nrun.pcrec\n--assets\nmodels\n--metrics-interval\n0\n' \
  >"$corpus/fuzz_server_config/seed-replay"
printf '{"models": ["gen-rig:24"], "listen": "0.0.0.0:7777", "tick_rate": 60, "send_rate": 20, "max_clients": 8, "recipes": "on", "spread_phases": false, "client_timeout": 5}' \
  >"$corpus/fuzz_server_config/seed-config.json"
printf '{"scenario": "demo.json", "grant": 1, "log_level": "info", "threads": 2, "bandwidth_kbit": 1200}' \
  >"$corpus/fuzz_server_config/seed-config-2.json"

status=0
for target in "${targets[@]}"; do
  echo "=== $target for ${seconds}s"
  max_len=4096  # every seed is smaller (the glTF seeds: 0.7-2 KB; the scenario seeds: 4 KB or less)
  if ! UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "$build/fuzz/$target" "$corpus/$target" -max_total_time="$seconds" -max_len=$max_len \
      -rss_limit_mb=2048 -artifact_prefix="$artifacts/$target-" -print_final_stats=1 \
      2>"$build/$target.log"; then
    echo "fuzz.sh: $target FAILED; see $build/$target.log and $artifacts/" >&2
    tail -n 40 "$build/$target.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$build/$target.log" | tail -n 2
  fi
done
exit $status
