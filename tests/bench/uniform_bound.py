#!/usr/bin/env python3
"""What any online cache policy can reach on routing with no memory: uniform random routing
of a model's shape, through `waste cache-sim`, the default policy and LRU against Belady.

Usage: uniform_bound.py WASTE OUT_DIR [--tokens N]

When each token's experts are drawn independently of the past, no policy can tell which
record comes back next, so every online policy's expected hit rate is the share of the
records its cache holds, while Belady's optimum uses the future. The tiny models'
random-weight traces are close to this; their share of optimum is bounded by it.
"""
import json
import os
import random
import subprocess
import sys

# (name, MoE layers, experts, top-k): the tiny models of the README's learned traces, and
# OLMoE's shape (the real trace's).
SHAPES = (("kimi-k3", 5, 546, 4), ("qwen3-moe", 4, 227, 4), ("gpt-oss", 4, 341, 4), ("kimi-k2", 6, 24, 8),
          ("olmoe", 16, 64, 8))


def main():
    argv = sys.argv[1:]
    tokens = 600
    if "--tokens" in argv:
        i = argv.index("--tokens")
        tokens = int(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) != 2:
        sys.exit(__doc__)
    waste, out = argv
    os.makedirs(out, exist_ok=True)
    print("| shape | ws | slots | reuse | LRU | Belady | reuse / Belady |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, layers, experts, k in SHAPES:
        rng = random.Random(1)
        path = os.path.join(out, f"uniform-{name}.jsonl")
        with open(path, "w") as f:
            for t in range(tokens):
                f.write(json.dumps({"tok": t, "layers": [sorted(rng.sample(range(experts), k)) for _ in range(layers)]}) + "\n")
        for ws in (1, 2, 3):
            got = {}
            for policy in ("reuse", "lru"):
                p = subprocess.run([waste, "cache-sim", path, "--ws", str(ws), "--policy", policy, "--json"],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"cache-sim {path}: {p.stderr.strip()}")
                got[policy] = json.loads(p.stdout)
            r, l = got["reuse"], got["lru"]
            print(f"| {name} {layers} x {experts}, top-{k} | {ws} | {r['slots']} | {r['hit_rate'] * 100:.1f} % | "
                  f"{l['hit_rate'] * 100:.1f} % | {r['opt_hit_rate'] * 100:.1f} % | "
                  f"{r['hit_rate'] / r['opt_hit_rate'] * 100:.1f} % |", flush=True)


if __name__ == "__main__":
    main()
