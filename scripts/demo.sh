#!/usr/bin/env bash
# The demo command: installs what it needs (Debian 12), builds, and runs the demo: a
# posecast-server streaming a crowd of 24 generated rigs (walk, run, crossfades, an additive
# wave; server/scenarios/demo.json) on 127.0.0.1:7777, and a posecast-viewer connected to it.
# Without a display it says so and writes a screenshot under Xvfb to out/demo.png instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target posecast posecast-server posecast-viewer
mkdir -p out

build/server/posecast-server --models gen-rig:24 --scenario server/scenarios/demo.json \
  --listen 127.0.0.1:7777 >out/demo-server.log 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
sleep 0.5
echo "posecast-server running on 127.0.0.1:7777 (log: out/demo-server.log)"

if [[ -n "${DISPLAY:-}" ]]; then
  build/client/viewer/posecast-viewer --connect 127.0.0.1:7777
else
  echo "no display: rendering a screenshot under Xvfb"
  xvfb-run -a -s "-screen 0 1280x720x24" \
    build/client/viewer/posecast-viewer --connect 127.0.0.1:7777 --frames 90 \
    --screenshot out/demo.png --stats
  echo "screenshot: $(pwd)/out/demo.png"
fi
