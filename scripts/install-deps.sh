#!/usr/bin/env bash
# Installs the Debian 12 packages posecast needs. Idempotent: packages already present are
# skipped, and apt is only called when something is missing.
#   scripts/install-deps.sh            build + test packages
#   scripts/install-deps.sh --matrix   also the cross toolchains for the determinism matrix
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config libasio-dev libflatbuffers-dev
  flatbuffers-compiler libglm-dev libtinygltf-dev libglfw3-dev libspdlog-dev libgtest-dev
  libbenchmark-dev libgl-dev libopengl-dev libegl-dev libgl1-mesa-dri libstb-dev
  nlohmann-json3-dev xvfb xauth clang libimgui-dev python3)
if [[ "${1:-}" == "--matrix" ]]; then
  packages+=(g++-aarch64-linux-gnu qemu-user libclang-rt-14-dev)  # cross matrix; libFuzzer runtime
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
