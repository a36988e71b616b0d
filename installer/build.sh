#!/usr/bin/env bash
# Builds a configured tree: bash installer/build.sh DIR [TARGET...]
# Used by run.sh and test.sh. When the parallel build fails, it says how much disk and
# memory were left, then builds once more with one job. A compiler killed from outside (out
# of memory, out of disk, a signal) prints nothing of its own, so without this a log cannot
# tell such a failure from an error in the code; a real error fails the second pass too,
# this time with the compiler's message last.
set -euo pipefail
dir=$1
shift
targets=()
for t in "$@"; do targets+=(--target "$t"); done
if cmake --build "$dir" -j"$(nproc)" "${targets[@]}"; then
  exit 0
fi
echo "build.sh: the build in $dir failed; disk and memory now:" >&2
df -h "$dir" >&2 || true
free -m >&2 || true
echo "build.sh: building again with one job, so that an error in the code shows its message" >&2
cmake --build "$dir" -j1 "${targets[@]}"
