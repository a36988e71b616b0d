#!/bin/bash
# mktiny --hf is deterministic from the seed; convert with 1, 2 and 3 jobs (more
# workers than this machine's cores: the pool's split varies most), with the
# scalar kernels instead of the CPU's SIMD ones (WASTE_BACKEND=cpu: the nearest-entry
# search must pick the same entries on every level), and mktiny --container all give
# the same container bytes; another seed differs.
set -euo pipefail
WASTE=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
"$WASTE" mktiny a --hf --seed 9 2>/dev/null
"$WASTE" mktiny b --hf --seed 9 2>/dev/null
diff -r a b
"$WASTE" convert a c1 --jobs 1 2>/dev/null
"$WASTE" convert a c2 --jobs 2 2>/dev/null
diff -r c1 c2
"$WASTE" convert a c4 --jobs 3 2>/dev/null
diff -r c1 c4
WASTE_BACKEND=cpu "$WASTE" convert a c3 --jobs 2 2>/dev/null
diff -r c1 c3
"$WASTE" mktiny d --container --seed 9 2>/dev/null
diff -r c1 d
"$WASTE" mktiny e --seed 10 2>/dev/null
if cmp -s c1/experts-L1.bin e/experts-L1.bin; then echo "FAIL: the seed changes nothing"; exit 1; fi
echo "determinism: identical"
