#!/usr/bin/env bash
# Installs the Debian 12 packages that building, running and testing WASTE Studio need.
# Idempotent: it only calls apt-get when something is missing, and is quiet then.
set -euo pipefail

# Build and runtime (Qt 6.4 from Debian; websockets-dev is a missing dependency of httpserver-dev).
BUILD_PKGS=(
  cmake ninja-build g++ pkg-config
  qt6-base-dev qt6-declarative-dev qt6-httpserver-dev qt6-websockets-dev qt6-charts-dev
  qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts
  qml6-module-qtquick-window qml6-module-qtquick-templates qml6-module-qtqml-workerscript
  qml6-module-qtqml qml6-module-qtqml-models qml6-module-qtquick-dialogs
  qml6-module-qt-labs-folderlistmodel qml6-module-qt-labs-settings qml6-module-qtcharts
  qml6-module-qttest libqt6sql6-sqlite libqt6svg6 qt6-image-formats-plugins
  libstb-dev nlohmann-json3-dev libgl-dev libxkbcommon-dev
  fonts-dejavu-core libgl1-mesa-dri
)
# Tests only: reference computations, fixtures, packaging checks.
TEST_PKGS=( libgtest-dev python3-numpy python3-jinja2 curl imagemagick dpkg-dev file fio )
# The aarch64 kernel test (tst_aarch64_kernels): Debian's cross compiler and qemu's user mode.
TEST_PKGS+=( g++-aarch64-linux-gnu qemu-user )

want=("${BUILD_PKGS[@]}")
[ "${1:-}" = "--with-tests" ] && want+=("${TEST_PKGS[@]}")
# The official openai and @anthropic-ai/sdk clients' conformance tests (tests/serve) need node and npm: Debian's
# nodejs 18 runs the pinned openai client. A node installed another way is kept (NodeSource's
# nodejs bundles npm and conflicts with Debian's npm package).
if [ "${1:-}" = "--with-tests" ] && ! { command -v node && command -v npm; } >/dev/null 2>&1; then
  want+=(nodejs npm)
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing ${#missing[@]} Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
