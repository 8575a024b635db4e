#!/usr/bin/env bash
# The demo command: installs what it needs (Debian 12), builds, and runs the demo: a
# posecast-server streaming a crowd of 24 generated rigs moving over the ground (circling,
# lapping, crossing, standing and running by turns, an additive wave; server/scenarios/demo.json)
# on 127.0.0.1:7777 (POSECAST_DEMO_PORT to change it), and a posecast-viewer connected to it
# that owns one entity (--grant 1: WASD or the arrow keys steer it, C toggles the camera
# following it, keys 1-4 crossfade it to idle/walk/run/wave, Enter or a left click fires a hit
# query: --hit-right owners gives it the right). Without a display it says so and
# writes a screenshot under Xvfb to out/demo.png instead.
# Arguments are passed to posecast-server, e.g. a simulated link:
#   scripts/demo.sh --sim-latency 50 --sim-jitter 10 --sim-loss 5
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --demo
# Its own build folder, without tests and benchmarks: the demo needs neither their packages nor
# the minutes they take to compile.
cmake -S . -B build-demo -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPOSECAST_BUILD_TESTS=OFF -DPOSECAST_BUILD_BENCH=OFF >/dev/null
cmake --build build-demo -j"$(nproc)" --target posecast posecast-server posecast-viewer
mkdir -p out
port=${POSECAST_DEMO_PORT:-7777}

build-demo/server/posecast-server --scenario server/scenarios/demo.json --grant 1 --hit-right owners \
  --listen "127.0.0.1:$port" "$@" >out/demo-server.log 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
sleep 0.5
if ! kill -0 "$server_pid" 2>/dev/null; then
  cat out/demo-server.log >&2
  echo "demo: posecast-server did not start (its log above; if port $port is taken, set POSECAST_DEMO_PORT)" >&2
  exit 1
fi
echo "posecast-server running on 127.0.0.1:$port (log: out/demo-server.log)"

if [[ -n "${DISPLAY:-}" ]]; then
  echo "viewer keys: WASD/arrows steer your entity, C camera follow, 1-4 idle/walk/run/wave, Enter/click fire, F frame all, H overlay, Esc quit"
  build-demo/client/viewer/posecast-viewer --connect "127.0.0.1:$port"
else
  echo "no display: rendering a screenshot under Xvfb (the viewer's keys scripted with --act)"
  xvfb-run -a -s "-screen 0 1280x720x24" \
    build-demo/client/viewer/posecast-viewer --connect "127.0.0.1:$port" --frames 120 \
    --act "20:steer-faster,40:steer-left,80:steer-faster,100:fire" --overlay --screenshot out/demo.png --stats
  echo "screenshot: $(pwd)/out/demo.png"
fi
