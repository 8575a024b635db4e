#!/usr/bin/env bash
# The demo command: installs what it needs (Debian 12), builds, and runs the demo.
# Today: generates the project's rig, prints `posecast info` and evaluates the run clip.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target posecast
mkdir -p out
build/cli/posecast gen-rig --joints 24 --out out/rig24.glb
build/cli/posecast info out/rig24.glb
build/cli/posecast eval out/rig24.glb --clip run --time 0.25 | head -n 12
