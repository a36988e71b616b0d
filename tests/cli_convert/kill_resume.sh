#!/bin/bash
# SIGKILL a conversion part-way through, rerun it, and require the same bytes as an
# uninterrupted run; a finished folder never shows a manifest before it is complete.
set -euo pipefail
WASTE=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
"$WASTE" mktiny hf --hf --seed 3 2>/dev/null
"$WASTE" convert hf ref --jobs 2 2>/dev/null

killed=0
for attempt in 1 2 3 4 5; do
    rm -rf out
    "$WASTE" convert hf out --jobs 2 2>convert.log &
    pid=$!
    # Wait until two units are committed (the MoE layers still to come), then kill.
    while kill -0 $pid 2>/dev/null; do
        if [ -f out/.waste-convert.json ] && grep -q '"units_done":[2-4]' out/.waste-convert.json; then
            kill -9 $pid
            break
        fi
        sleep 0.02
    done
    if wait $pid; then
        echo "attempt $attempt: conversion finished before it could be killed; retrying"
        continue
    fi
    killed=1
    break
done
[ $killed = 1 ] || { echo "FAIL: never managed to kill the conversion mid-way"; exit 1; }
[ ! -f out/manifest.json ] || { echo "FAIL: a killed conversion left a manifest.json"; exit 1; }
ls out
"$WASTE" convert hf out --jobs 1 2>resume.log
grep -q "resum" resume.log || { echo "FAIL: the rerun did not resume"; cat resume.log; exit 1; }
diff -r ref out
echo "kill-and-resume: identical"
