#!/usr/bin/env bash
# Sets everything up (Debian packages, build) and launches WASTE Studio.
# On first run the app generates a tiny demo model, so it works with no download.
set -euo pipefail
cd "$(dirname "$0")/.."
bash installer/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWASTE_BUILD_TESTS=OFF -DWASTE_BUILD_BENCH=OFF >/dev/null
cmake --build build --target waste-studio waste-cli -j"$(nproc)"
exec build/bin/waste-studio "$@"
