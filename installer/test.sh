#!/usr/bin/env bash
# Sets everything up (Debian packages, build) and runs every test with ctest.
# Extra arguments go to ctest (e.g. -R engine). WASTE_SANITIZE=address,undefined builds
# with sanitizers into build-sanitize/; ctest then hands every test tests/sanitize/lsan.supp
# (Qt's own leaks) through LSAN_OPTIONS (tests/sanitize/ctest_env.cmake.in).
set -euo pipefail
cd "$(dirname "$0")/.."
bash installer/install-deps.sh --with-tests
dir=build
extra=()
if [ -n "${WASTE_SANITIZE:-}" ]; then
  dir=build-sanitize
  extra=(-DWASTE_SANITIZE="$WASTE_SANITIZE" -DWASTE_BUILD_BENCH=OFF)
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
mkdir -p -m 700 "$PWD/$dir/test-output/xdg"
export XDG_RUNTIME_DIR="$PWD/$dir/test-output/xdg" QT_QPA_PLATFORM=offscreen
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" "$@"
