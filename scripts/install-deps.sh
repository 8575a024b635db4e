#!/usr/bin/env bash
# Installs the Debian 12 packages posecast needs. Idempotent: packages already present are
# skipped, and apt is only called when something is missing.
#   scripts/install-deps.sh --demo     what the demo builds and runs with (no test packages)
#   scripts/install-deps.sh            the above + what the tests need (GoogleTest, GoogleMock,
#                                      Google Benchmark, Python for the spec-reference checks)
#   scripts/install-deps.sh --matrix   the above + clang, the cross toolchain and emulator of the
#                                      determinism matrix, and libFuzzer's runtime (test.sh --full)
# A package missing from these lists shows up on a fresh system only:
# `../shared/tools/fresh-check.sh 'scripts/demo.sh'` (and 'scripts/test.sh') checks that.
set -euo pipefail

demo_packages=(build-essential cmake ninja-build pkg-config libasio-dev libflatbuffers-dev
  flatbuffers-compiler libglm-dev libtinygltf-dev libglfw3-dev libspdlog-dev libgl-dev
  libopengl-dev libegl-dev libgl1-mesa-dri libstb-dev nlohmann-json3-dev libimgui-dev xvfb xauth
  libzstd-dev libcli11-dev)
test_packages=(libgtest-dev libgmock-dev libbenchmark-dev python3)
# libzstd-dev:arm64: the aarch64 zstd library the cross-compiled cells link (the arm64
# architecture is added to dpkg for it).
matrix_packages=(clang g++-aarch64-linux-gnu qemu-user libclang-rt-14-dev libzstd-dev:arm64)

packages=("${demo_packages[@]}")
case "${1:-}" in
  --demo) ;;
  "") packages+=("${test_packages[@]}") ;;
  --matrix) packages+=("${test_packages[@]}" "${matrix_packages[@]}") ;;
  *) echo "install-deps.sh: unknown argument $1 (--demo, --matrix or none)" >&2; exit 2 ;;
esac

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
if [[ " ${missing[*]} " == *":arm64 "* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
fi
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
