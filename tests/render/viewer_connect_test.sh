#!/usr/bin/env bash
# A viewer connected to a live server over loopback renders what the server
# streams. Starts posecast-server (generated rig, demo scenario), takes two headless
# screenshots with `posecast-viewer --connect`, and checks each has content (pixels other than
# the background colour) and that they differ (the entities moved). A third viewer runs with
# --interpolate-poses: it must draw the entities too and show none of them from clip recipes,
# where the default viewer shows some from recipes (docs/client.md). Run through
# run_with_display.sh. Usage: viewer_connect_test.sh SERVER VIEWER SCENARIO OUT_DIR
set -euo pipefail
server=$1 viewer=$2 scenario=$3 out=$4
port=$((21000 + $$ % 1000))  # fixed base + pid: parallel runs rarely collide
mkdir -p "$out"
rm -f "$out/connect_a.png" "$out/connect_b.png" "$out/connect_c.png"
# The server outlives both viewers (the trap stops it): under ASan on a loaded 2-core machine
# the two headless viewers together once took longer than 20 s. A long client timeout keeps a
# viewer whose llvmpipe frames stall for seconds connected.
"$server" --models gen-rig:24 --scenario "$scenario" --listen "127.0.0.1:$port" --duration 600 \
  --client-timeout 60 >"$out/connect_server.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
sleep 0.5
"$viewer" --connect "127.0.0.1:$port" --frames 30 --screenshot "$out/connect_a.png" --stats | tee "$out/connect_a.log"
"$viewer" --connect "127.0.0.1:$port" --models-dir "$out" --frames 30 --screenshot "$out/connect_b.png"
"$viewer" --connect "127.0.0.1:$port" --frames 30 --screenshot "$out/connect_c.png" \
  --interpolate-poses --stats | tee "$out/connect_c.log"
# "N of M entity-frames from clip recipes": N > 0 by default, N = 0 with --interpolate-poses.
recipe_frames() { sed -n 's/.*, \([0-9]*\) of \([0-9]*\) entity-frames from clip recipes.*/\1 \2/p' "$1"; }
read -r a_recipes a_frames <<<"$(recipe_frames "$out/connect_a.log")"
read -r c_recipes c_frames <<<"$(recipe_frames "$out/connect_c.log")"
if [[ -z "${a_frames:-}" || -z "${c_frames:-}" ]]; then
  echo "FAIL: a viewer did not report its recipe frames"; exit 1
fi
if (( a_frames == 0 || a_recipes == 0 )); then
  echo "FAIL: the default viewer showed no entity from a clip recipe ($a_recipes of $a_frames)"; exit 1
fi
if (( c_frames == 0 || c_recipes != 0 )); then
  echo "FAIL: --interpolate-poses showed $c_recipes of $c_frames entity-frames from recipes"; exit 1
fi
PNG_PIXELS_DIR="$(dirname "$0")" PYTHONDONTWRITEBYTECODE=1 python3 - "$out/connect_a.png" "$out/connect_b.png" "$out/connect_c.png" <<'PY'
import os, sys
sys.path.insert(0, os.environ["PNG_PIXELS_DIR"])
from png_pixels import read_png

(wa, ha, bpp, a), (wb, hb, _, b) = read_png(sys.argv[1]), read_png(sys.argv[2])
assert (wa, ha) == (wb, hb), 'screenshots differ in size'
pixels = wa * ha
background = a[:bpp]  # top-left corner: sky
content = sum(1 for i in range(0, len(a), bpp) if a[i:i + bpp] != background)
# The generated rig's material is warm (red well above blue); the sky and ground are grey.
rig = sum(1 for i in range(0, len(a), bpp) if a[i] > a[i + 2] + 40)
changed = sum(1 for i in range(0, len(a), bpp) if a[i:i + bpp] != b[i:i + bpp])
print(f'{wa}x{ha}: {content} non-background pixels in A, {rig} rig-coloured, {changed} pixels differ A vs B')
if content < pixels // 100: sys.exit('FAIL: first screenshot is (nearly) empty')
if rig < pixels // 200: sys.exit('FAIL: first screenshot shows no rig (no streamed entity drawn)')
if changed < pixels // 1000: sys.exit('FAIL: the two screenshots are the same: nothing moved')
wc, hc, bppc, c = read_png(sys.argv[3])
rig_c = sum(1 for i in range(0, len(c), bppc) if c[i] > c[i + 2] + 40)
print(f'--interpolate-poses: {rig_c} rig-coloured pixels')
# The demo crowd walks over the ground and the fixed camera sees less of it as it spreads: this
# third run starts later (seconds later under the sanitizers), so the bound is a few distant
# rigs' worth (about 460 pixels at 1280x720), not the first screenshot's share.
if rig_c < wc * hc // 2000: sys.exit('FAIL: the --interpolate-poses screenshot shows no rig')
print('PASS')
PY
