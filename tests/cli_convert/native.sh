#!/bin/bash
# Native experts through the real executable: `mktiny --k3 --hf --experts-layout fp8b128`
# then `convert --experts native --json` ends stdout with one JSON line (source_bytes,
# seconds, mb_per_s, the format); `info --json` says FP8B128 and the record size; `eval`
# answers. An INT4 pack-quantized release converts to native records by default, a bf16
# one to VQ3R; INT4 groups of 128 to INT4G32 (scales re-laid) and FP8 with per-row scales
# to VQ3R, native refused by name; a bad --experts value exits non-zero and says which
# values it takes.
set -euo pipefail
WASTE=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
fail() { echo "FAIL: $*"; exit 1; }

"$WASTE" mktiny fp8 --k3 --hf --experts-layout fp8b128 2>/dev/null
grep -q '"weight_block_size"' fp8/config.json || fail "no FP8 quantization_config in config.json"
last=$("$WASTE" convert fp8 c --experts native --json 2>/dev/null | tail -n 1)
python3 - "$last" <<'PY' || fail "convert --json: $last"
import json, sys
j = json.loads(sys.argv[1])
assert j["source_bytes"] > 0 and j["seconds"] > 0 and j["mb_per_s"] > 0, j
assert j["expert_format"] == "FP8B128", j
PY
info=$("$WASTE" info c --json)
python3 - "$info" c/manifest.json <<'PY' || fail "info --json: $info"
import json, sys
i = json.loads(sys.argv[1])
m = json.load(open(sys.argv[2]))
bank = m["layers"]["1"]
assert i["expert_format"] == "FP8B128", i
assert i["record_bytes"] == bank["bytes"] // bank["experts"], i
assert "experts FP8B128" in i["quantization"], i
PY
"$WASTE" eval c "The capital of France is" --json | python3 -c 'import json,sys; assert json.load(sys.stdin)["top"]' \
  || fail "eval on native FP8 records"

"$WASTE" mktiny int4 --k3 --hf --experts-layout int4g32 2>/dev/null
grep -q '"pack-quantized"' int4/config.json || fail "no pack-quantized quantization_config in config.json"
fmt=$("$WASTE" convert int4 c4 --json 2>/dev/null | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["expert_format"])')
[ "$fmt" = INT4G32 ] || fail "an INT4 release converted to $fmt by default"

# Scaled layouts: INT4 groups of 128 re-lay into INT4G32 by default; FP8 with one scale
# per row cannot be held exactly, so native is refused by name and the default is VQ3R.
"$WASTE" mktiny g128 --k3 --hf --experts-layout int4g128 2>/dev/null
grep -q '"group_size": 128' g128/config.json || fail "no group_size 128 in config.json"
fmt=$("$WASTE" convert g128 c128 --json 2>/dev/null | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["expert_format"])')
[ "$fmt" = INT4G32 ] || fail "an INT4 groups-of-128 release converted to $fmt by default"
"$WASTE" mktiny chan --k3 --hf --experts-layout fp8-channel 2>/dev/null
grep -q '"float-quantized"' chan/config.json || fail "no float-quantized quantization_config in config.json"
if "$WASTE" convert chan bad --experts native 2>err; then fail "native records were written for per-row FP8 scales"; fi
head -n 1 err | grep -q "experts.0.w1.weight' is FP8 e4m3 with one scale per row.*--experts q4 or vq3r" \
  || fail "the per-row FP8 refusal said: $(cat err)"
fmt=$("$WASTE" convert chan cc --json 2>/dev/null | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["expert_format"])')
[ "$fmt" = VQ3R ] || fail "a per-row FP8 release converted to $fmt by default"
"$WASTE" eval cc "The capital of France is" --json | python3 -c 'import json,sys; assert json.load(sys.stdin)["top"]' \
  || fail "eval on the per-row FP8 release in VQ3R"

"$WASTE" mktiny bf16 --hf 2>/dev/null
fmt=$("$WASTE" convert bf16 cb --json 2>/dev/null | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["expert_format"])')
[ "$fmt" = VQ3R ] || fail "a bf16 release converted to $fmt by default"

if "$WASTE" convert fp8 bad --experts q3 2>err; then fail "--experts q3 was accepted"; fi
head -n 1 err | grep -q "native, vq3r or q4, not 'q3'" || fail "a bad --experts value said: $(cat err)"
echo "native: FP8B128 and INT4G32 records, JSON figure, info and eval; scaled layouts re-laid or refused"
