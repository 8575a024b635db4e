#!/usr/bin/env bash
# Runs a command with an X display for OpenGL tests: as is when DISPLAY is set, else under
# xvfb-run (1280x720x24, as docs/viewer.md describes), else as is (the tests then try EGL
# surfaceless and skip when that fails too).
set -euo pipefail
if [[ -n "${DISPLAY:-}" ]] || ! command -v xvfb-run >/dev/null 2>&1; then
  exec "$@"
fi
exec xvfb-run -a -s "-screen 0 1280x720x24" "$@"
