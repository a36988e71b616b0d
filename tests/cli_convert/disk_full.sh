#!/bin/bash
# A write failure part-way (as if the disk filled up) exits non-zero with a one-line
# reason saying how to resume; the rerun completes to the same bytes.
set -uo pipefail
WASTE=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
"$WASTE" mktiny hf --hf --seed 4 2>/dev/null || exit 1
"$WASTE" convert hf ref 2>/dev/null || exit 1
"$WASTE" convert hf out --fail-after 3700000 2>err.log
rc=$?
[ $rc -ne 0 ] || { echo "FAIL: exit status 0 on a full disk"; exit 1; }
tail -1 err.log
tail -1 err.log | grep -q "disk full" || { echo "FAIL: no disk-full message"; exit 1; }
tail -1 err.log | grep -q "run the same command again to resume" || { echo "FAIL: no resume hint"; exit 1; }
[ ! -f out/manifest.json ] || { echo "FAIL: manifest written"; exit 1; }
"$WASTE" convert hf out 2>resume.log || { cat resume.log; exit 1; }
diff -r ref out || exit 1
# Refusals: missing source, bad option, non-empty different target.
"$WASTE" convert nowhere out2 2>e1.log && { echo "FAIL: missing source accepted"; exit 1; }
[ "$(wc -l < e1.log)" -eq 1 ] || { echo "FAIL: error is not one line"; cat e1.log; exit 1; }
"$WASTE" convert hf out3 --trunk-bits 5 2>/dev/null && { echo "FAIL: --trunk-bits 5 accepted"; exit 1; }
"$WASTE" convert hf out --trunk-bits 8 2>e2.log && { echo "FAIL: converted over a different container"; exit 1; }
cat e2.log
echo "disk full: resumable"
