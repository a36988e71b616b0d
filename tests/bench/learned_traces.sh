#!/usr/bin/env bash
# The expert cache on routing it was not developed on (issue 18, "a cache policy that
# generalises"): a tiny model of every supported architecture, scaled with --size, runs over
# varied text with `waste run --learn`; each run's usage.routing.jsonl is appended to one
# trace per architecture, and `waste cache-sim` replays it through the default policy and
# LRU against Belady's optimum at 0.5 / 1 / 2 / 3 working sets.
# (The tiny models' weights are random, so their routing is a shape test, not a real
# model's habits; the real-model figures stay bench_cache's: the OLMoE trace, and the routing of
# a small MoE trained here, tests/bench/trained_moe_trace.py.)
#
# Usage: tests/bench/learned_traces.sh [BUILD_DIR] [SIZE] [TOKENS_PER_TEXT]
#   defaults: build 128M 96; about 5 minutes on 2 cores, mostly making the models.
# The last line is the figure: the worst share of Belady at 1-3 working sets over all
# architectures, and the least margin over LRU there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
size=${2:-128M}
tokens=${3:-96}
waste=$build/bin/waste
[ -x "$waste" ] || { echo "learned_traces: $waste not built (cmake --build $build --target waste-cli)" >&2; exit 1; }
work=$build/bench-cache/learned-traces
mkdir -p "$work"

texts=(
  "The river ran past the mill, and the miller counted the sacks of grain one by one."
  "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\nprint([fib(i) for i in range(12)])"
  "Quarterly revenue rose 4.2% to 18,340 million; operating margin fell from 11.9% to 10.7%."
  "Der Zug nach Hamburg fährt heute von Gleis sieben ab, mit zwanzig Minuten Verspätung."
  "Explain, step by step, why the sum of two odd numbers is always even."
  "<html><body><h1>Orders</h1><table><tr><td>42</td><td>shipped</td></tr></table></body></html>"
)

share() { # hit_rate opt_hit_rate -> percent of Belady
  python3 -c "import sys; h, o = map(float, sys.argv[1:]); print(f'{100 * h / o:.1f}' if o > 0 else 'n/a')" "$@"
}

printf '%-12s %-22s %6s   %-27s   %-27s\n' arch "MoE layers x experts" tokens \
  "default % of Belady 0.5/1/2/3" "LRU % of Belady 0.5/1/2/3"
summary=$work/summary.txt
: > "$summary"
for arch in kimi-linear kimi-k3 deepseek-v3 kimi-k2 qwen3-moe gpt-oss; do
  model=$work/$arch.waste
  if [ ! -f "$model/manifest.json" ]; then
    rm -rf "$model"
    "$waste" mktiny "$model" --container --arch "$arch" --size "$size" >"$work/$arch.mktiny.log" 2>&1 ||
      { cat "$work/$arch.mktiny.log" >&2; exit 1; }
  fi
  trace=$work/$arch.jsonl
  : > "$trace"
  rm -f "$work/$arch-learn/"*
  mkdir -p "$work/$arch-learn"
  seed=1
  for t in "${texts[@]}"; do
    printf '%b' "$t" | "$waste" run "$model" --raw -q -n "$tokens" --temp 0.8 --seed "$seed" \
      --learn --usage "$work/$arch-learn/usage.waste" 2>/dev/null
    cat "$work/$arch-learn/usage.routing.jsonl" >> "$trace"
    seed=$((seed + 1))
  done
  shape=$(python3 -c "
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ids = [e for r in rows for layer in r['layers'] for e in layer]
print(len(rows[0]['layers']), max(ids) + 1, len(rows[0]['layers'][0]), len(rows))" "$trace")
  read -r layers experts topk n <<<"$shape"
  row_default=() row_lru=()
  for ws in 0.5 1 2 3; do
    for policy in default lru; do
      read -r h o < <("$waste" cache-sim "$trace" --ws "$ws" --policy "$policy" --json |
        python3 -c "import json, sys; j = json.load(sys.stdin); print(j['hit_rate'], j['opt_hit_rate'])")
      s=$(share "$h" "$o")
      if [ "$policy" = default ]; then row_default+=("$s"); else row_lru+=("$s"); fi
    done
  done
  printf '%-12s %-22s %6s   %-27s   %-27s\n' "$arch" "$layers x $experts, top-$topk" "$n" \
    "$(IFS=/; echo "${row_default[*]}")" "$(IFS=/; echo "${row_lru[*]}")"
  echo "$arch ${row_default[*]} | ${row_lru[*]}" >> "$summary"
done
python3 - "$summary" <<'PY'
import sys
worst, margin = 100.0, 100.0
for line in open(sys.argv[1]):
    arch, rest = line.split(" ", 1)
    d, l = rest.split("|")
    d = [float(x) for x in d.split()]
    l = [float(x) for x in l.split()]
    worst = min(worst, *d[1:])
    margin = min(margin, *(a - b for a, b in zip(d[1:], l[1:])))
print(f"learned traces of every architecture: default policy worst {worst:.1f}% of Belady at 1-3 working sets, "
      f"least margin over LRU {margin:+.1f} points")
PY
