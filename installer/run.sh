#!/usr/bin/env bash
# Sets everything up (Debian packages, build) and launches WASTE Studio.
# On first run the app generates a tiny demo model, so it works with no download.
#   --no-launch   build only (CI uses it to check that the test command works after this one)
# Other arguments go to the app.
set -euo pipefail
cd "$(dirname "$0")/.."
launch=1
if [ "${1:-}" = "--no-launch" ]; then launch=0; shift; fi
bash installer/install-deps.sh
# Every option this build depends on is stated, because build/ is shared with
# installer/test.sh and CMake would otherwise keep whatever the other command left cached.
# Switching the test options only changes which targets exist, so nothing is recompiled.
# ccache, when installed, makes rebuilds after a pull or a second clone fast.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWASTE_BUILD_APP=ON \
  -DWASTE_BUILD_TESTS=OFF -DWASTE_BUILD_BENCH=OFF -DWASTE_SANITIZE= "${launcher[@]}" >/dev/null
bash installer/build.sh build waste-studio waste-cli
[ "$launch" = 1 ] || exit 0
exec build/bin/waste-studio "$@"
