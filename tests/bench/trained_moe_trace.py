#!/usr/bin/python3
"""Routing that was learned, not generated: trains a small byte-level mixture-of-experts
language model with Debian's python3-torch and records which experts it routes each token
to, as a trace for bench_cache (the reference tooling's JSON Lines: {"tok", "layers"}).

The expert cache's policy was developed on one real trace (OLMoE, tests/fixtures/traces);
the synthetic shapes beside it are a generator's. A model trained here routes by what it
learned of its text (letters, spaces, punctuation, code), with the temporal structure real
routing has, and nobody tuned the policy on it.

The model: bytes in, 6 layers of causal attention (4 heads, width 128) and a routed MoE
feed-forward (32 experts of width 128, top-4 by softmax router, weights renormalised over
the four, the Switch/Mixtral load-balancing loss at 0.01), as OLMoE and Mixtral route.
Trained on Debian's own text, present on any Debian 12 machine with python3: the licence
texts in /usr/share/common-licenses (prose) and the Python 3.11 standard library (code).
The routing is recorded over text held out from training: the GPL-3 licence and the stdlib
modules whose names start with a letter from n to z, alternating prose and code.

Usage: /usr/bin/python3 tests/bench/trained_moe_trace.py OUT.jsonl [--minutes M] [--tokens N]
       [--layers L] [--experts E] [--top-k K] [--expert-width W] [--seed S]
(about M minutes of training, default 40, in batches of 8 windows of 128 bytes; N recorded
tokens, default 600; the shape defaults to the one above). Needs `apt-get install
python3-torch`; with Debian's reference BLAS a step of the default shape takes about 3 s on
2 cores, with `libopenblas0-pthread` installed about 1 s.
Not run by ctest; its output is the fixtures tests/fixtures/traces/bytemoe_600.jsonl (40
minutes, 2 cores) and bytemoe_8x64_600.jsonl (60 minutes, --layers 8 --experts 64 --top-k 8
--expert-width 64 --seed 2): see their lines in tests/fixtures/README.md. Training is seeded,
but threads make its floating point differ from run to run, so a rerun gives other routing
of the same kind, not these bytes.
"""
import argparse
import glob
import json
import math
import os
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("trained_moe_trace.py needs Debian's python3-torch (apt-get install python3-torch) "
             "and Debian's /usr/bin/python3")

LAYERS, WIDTH, HEADS, EXPERTS, TOP_K, EXPERT_WIDTH, CONTEXT = 6, 128, 4, 32, 4, 128, 128


def read(paths, limit):
    out = bytearray()
    for p in sorted(paths):
        try:
            with open(p, "rb") as f:
                out += f.read()
        except OSError:
            continue
        if len(out) >= limit:
            break
    return bytes(out[:limit])


def corpora():
    licences = [p for p in glob.glob("/usr/share/common-licenses/*") if os.path.isfile(p)]
    stdlib = glob.glob("/usr/lib/python3.11/*.py")
    held_prose = [p for p in licences if os.path.basename(p) == "GPL-3"]
    train_prose = [p for p in licences if p not in held_prose]
    held_code = [p for p in stdlib if os.path.basename(p)[0].lower() >= "n"]
    train_code = [p for p in stdlib if p not in held_code]
    if not held_prose or not train_code or not held_code:
        sys.exit("needs /usr/share/common-licenses/GPL-3 and /usr/lib/python3.11 (Debian 12)")
    train = read(train_prose, 2_000_000) + read(train_code, 6_000_000)
    return train, read(held_prose, 200_000), read(held_code, 200_000)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.qkv, self.out = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
        self.router = nn.Linear(WIDTH, EXPERTS, bias=False)
        self.up = nn.Parameter(torch.randn(EXPERTS, WIDTH, EXPERT_WIDTH) / math.sqrt(WIDTH))
        self.down = nn.Parameter(torch.randn(EXPERTS, EXPERT_WIDTH, WIDTH) / math.sqrt(EXPERT_WIDTH))

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, HEADS, WIDTH // HEADS).permute(2, 0, 3, 1, 4)
        # Causal attention written out (Debian 12's torch 1.13 has no scaled_dot_product_attention).
        score = (q @ k.transpose(-1, -2)) / math.sqrt(WIDTH // HEADS)
        score = score.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        a = F.softmax(score, dim=-1) @ v
        x = x + self.out(a.transpose(1, 2).reshape(b, t, WIDTH))
        h = self.n2(x).reshape(b * t, WIDTH)
        probs = F.softmax(self.router(h), dim=-1)
        weight, chosen = probs.topk(TOP_K, dim=-1)
        weight = weight / weight.sum(-1, keepdim=True)
        y = torch.zeros_like(h)
        for e in range(EXPERTS):
            rows, slot = (chosen == e).nonzero(as_tuple=True)
            if rows.numel():
                ye = F.gelu(h[rows] @ self.up[e]) @ self.down[e]
                y.index_add_(0, rows, ye * weight[rows, slot].unsqueeze(-1))
        # Switch-style balance: experts' share of routed tokens times their mean router probability.
        share = F.one_hot(chosen, EXPERTS).float().sum(1).mean(0) / TOP_K
        balance = EXPERTS * (share * probs.mean(0)).sum()
        return x + y.view(b, t, WIDTH), balance, chosen.view(b, t, TOP_K)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(256, WIDTH)
        self.pos = nn.Parameter(torch.zeros(CONTEXT, WIDTH))
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm, self.head = nn.LayerNorm(WIDTH), nn.Linear(WIDTH, 256)

    def forward(self, ids):
        x = self.embed(ids) + self.pos[: ids.shape[1]]
        balance, routes = 0.0, []
        for blk in self.blocks:
            x, bal, chosen = blk(x)
            balance = balance + bal
            routes.append(chosen)
        return self.head(self.norm(x)), balance / LAYERS, routes


def main():
    global LAYERS, EXPERTS, TOP_K, EXPERT_WIDTH
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the trace to write (JSON Lines)")
    parser.add_argument("--minutes", type=float, default=40.0, help="training time (default 40)")
    parser.add_argument("--tokens", type=int, default=600, help="tokens of routing to record (default 600)")
    parser.add_argument("--layers", type=int, default=LAYERS, help=f"MoE layers (default {LAYERS})")
    parser.add_argument("--experts", type=int, default=EXPERTS, help=f"experts per layer (default {EXPERTS})")
    parser.add_argument("--top-k", type=int, default=TOP_K, help=f"experts picked per token (default {TOP_K})")
    parser.add_argument("--expert-width", type=int, default=EXPERT_WIDTH,
                        help=f"an expert's hidden width (default {EXPERT_WIDTH})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the initial weights and batches (default 0)")
    args = parser.parse_args()
    minutes, tokens = args.minutes, args.tokens
    LAYERS, EXPERTS, TOP_K, EXPERT_WIDTH = args.layers, args.experts, args.top_k, args.expert_width
    if not (1 <= TOP_K <= EXPERTS) or LAYERS < 1 or EXPERT_WIDTH < 1:
        sys.exit("needs 1 <= --top-k <= --experts, and at least one layer and a width of 1")
    torch.manual_seed(args.seed)
    torch.set_num_threads(os.cpu_count() or 2)
    train, prose, code = corpora()
    data = torch.frombuffer(bytearray(train), dtype=torch.uint8).long()
    model = Model()
    # AdamW at 6e-4 after 100 steps of warm-up, gradients clipped at 1: at 2e-3 without either
    # the loss stopped falling at 3.1 bits per byte after 200 steps and drifted up.
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.01)
    warm = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / 100))
    start, step = time.time(), 0
    while time.time() - start < minutes * 60:
        at = torch.randint(0, len(data) - CONTEXT - 1, (8,))
        batch = torch.stack([data[i : i + CONTEXT + 1] for i in at])
        logits, balance, _ = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 256), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        (loss + 0.01 * balance).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        warm.step()
        step += 1
        if step % 200 == 0:
            print(f"step {step}, {time.time() - start:.0f} s: {loss.item() / math.log(2):.3f} bits per byte, "
                  f"balance {balance.item():.3f}", file=sys.stderr)
    # Record: held-out text in windows of the training context, prose and code taking turns;
    # every window's routing counts from its first byte (each token routed as the model
    # routes it in a decode of that window).
    model.eval()
    rows, sources, n = [], [prose, code], 0
    with torch.no_grad():
        w = 0
        while len(rows) < tokens:
            src = sources[w % 2]
            off = (w // 2) * CONTEXT
            window = src[off : off + CONTEXT]
            if len(window) < CONTEXT:
                break
            _, _, routes = model(torch.tensor(list(window)).unsqueeze(0))
            for t in range(CONTEXT):
                if len(rows) >= tokens:
                    break
                rows.append([sorted(int(e) for e in routes[l][0, t]) for l in range(LAYERS)])
            w += 1
    with open(args.out, "w") as f:
        for i, layers in enumerate(rows):
            f.write(json.dumps({"tok": i + 1, "layers": layers}) + "\n")
    print(f"trained {step} steps; wrote {len(rows)} tokens of routing to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
