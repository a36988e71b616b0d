"""Qwen3-MoE (qwen3_moe): random checkpoints in the release layout and a float64 reference.

Layout: Qwen3-30B-A3B's config.json (tests/fixtures/release-configs/qwen3-30b-a3b.json) with small
sizes, BF16 shards, one tensor per expert; the variants place dense layers among the MoE layers
the two ways the config can (mlp_only_layers, decoder_sparse_step), tie the embeddings, and fuse
the experts as transformers 5 saves them."""
import json
import os

import numpy as np

from safetensors_io import bf16_round, read_floats, write_checkpoint

MKTINY_ARCH = "qwen3-moe"
RELEASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "release-configs",
                       "qwen3-30b-a3b.json")
SMALL = dict(head_dim=16, hidden_size=64, intermediate_size=96, max_window_layers=6, moe_intermediate_size=32,
             num_attention_heads=4, num_experts=8, num_experts_per_tok=2, num_hidden_layers=6, num_key_value_heads=2)
VARIANTS = {
    "A": dict(seed=1012, mlp_only_layers=[0, 3]),   # dense layers 0 and 3 among MoE layers
    "B": dict(seed=1066, decoder_sparse_step=2, mlp_only_layers=[3]),   # MoE iff not listed and (i+1) % 2 == 0: 1, 5
    "E": dict(seed=1078, tie_word_embeddings=True, mlp_only_layers=[0], num_hidden_layers=4, max_window_layers=4),
    # the experts fused as transformers 5 holds and saves them: gate_up_proj [E, 2 Im, H] (gate
    # half first), down_proj [E, H, Im]
    "F": dict(seed=1012, mlp_only_layers=[0, 3], fused=True),
}
WRONG_READING = "top-k routing weights left unnormalised (config: norm_topk_prob true)"


# ---- Reference: float64 forward of Qwen3MoeForCausalLM, transcribed from HF transformers
# src/transformers/models/qwen3_moe/modeling_qwen3_moe.py (+ configuration_qwen3_moe.py).

def is_moe_layer(cfg, i):
    # Qwen3MoeDecoderLayer.__init__: (layer_idx not in config.mlp_only_layers) and
    # (config.num_experts > 0 and (layer_idx + 1) % config.decoder_sparse_step == 0)
    return i not in cfg["mlp_only_layers"] and cfg["num_experts"] > 0 and (i + 1) % cfg["decoder_sparse_step"] == 0


def rmsnorm(x, w, eps):
    return w * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))


def silu(x):
    return x / (1.0 + np.exp(-x))


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def mlp(x, W, p):
    return (silu(x @ W[p + "gate_proj.weight"].T) * (x @ W[p + "up_proj.weight"].T)) @ W[p + "down_proj.weight"].T


def forward(cfg, W, ids, wrong=False):
    nh, nkv, hd, eps = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"], cfg["rms_norm_eps"]
    T, K = len(ids), cfg["num_experts_per_tok"]
    x = W["model.embed_tokens.weight"][np.asarray(ids)]
    # default rope: inv_freq = 1/base^(arange(0,dim,2)/dim); emb = cat(freqs, freqs)
    fr = np.outer(np.arange(T), 1.0 / (cfg["rope_theta"] ** (np.arange(0, hd, 2) / hd)))
    cos, sin = np.cos(np.concatenate([fr, fr], -1)), np.sin(np.concatenate([fr, fr], -1))
    mask = np.triu(np.full((T, T), -np.inf), 1)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rmsnorm(x, W[p + "input_layernorm.weight"], eps)
        q = rmsnorm((h @ W[p + "self_attn.q_proj.weight"].T).reshape(T, nh, hd), W[p + "self_attn.q_norm.weight"], eps)
        k = rmsnorm((h @ W[p + "self_attn.k_proj.weight"].T).reshape(T, nkv, hd), W[p + "self_attn.k_norm.weight"], eps)
        v = (h @ W[p + "self_attn.v_proj.weight"].T).reshape(T, nkv, hd).transpose(1, 0, 2)
        q, k = q.transpose(1, 0, 2), k.transpose(1, 0, 2)   # [heads, T, hd]
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = np.repeat(k, nh // nkv, axis=0), np.repeat(v, nh // nkv, axis=0)   # repeat_kv: head j uses kv head j // rep
        s = q @ k.transpose(0, 2, 1) * hd ** -0.5 + mask
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        x = x + (a @ v).transpose(1, 0, 2).reshape(T, nh * hd) @ W[p + "self_attn.o_proj.weight"].T
        h = rmsnorm(x, W[p + "post_attention_layernorm.weight"], eps)
        if not is_moe_layer(cfg, i):
            x = x + mlp(h, W, p + "mlp.")
            continue
        rl = h @ W[p + "mlp.gate.weight"].T   # softmax over all experts, then top-k
        pr = np.exp(rl - rl.max(-1, keepdims=True))
        pr /= pr.sum(-1, keepdims=True)
        sel = np.argsort(-pr, axis=-1, kind="stable")[:, :K]
        wts = np.take_along_axis(pr, sel, -1)
        if cfg["norm_topk_prob"] != wrong:
            wts = wts / wts.sum(-1, keepdims=True)
        for t in range(T):
            for j in range(K):
                x[t] += wts[t, j] * mlp(h[t:t + 1], W, p + f"mlp.experts.{sel[t, j]}.")[0]
    x = rmsnorm(x, W["model.norm.weight"], eps)
    return x @ (W["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else W["lm_head.weight"]).T


def unfuse(W):
    """Per-expert matrices out of transformers 5's fused ones (gate_up_proj[e].chunk(2))."""
    for name in [n for n in W if n.endswith("mlp.experts.gate_up_proj")]:
        p = name[: -len("gate_up_proj")]
        gate_up, down = W.pop(name), W.pop(p + "down_proj")
        for e in range(gate_up.shape[0]):
            W[f"{p}{e}.gate_proj.weight"], W[f"{p}{e}.up_proj.weight"] = np.split(gate_up[e], 2)
            W[f"{p}{e}.down_proj.weight"] = down[e]
    return W


def reference(folder, ids, wrong=False):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    return forward(cfg, unfuse(read_floats(folder)), ids, wrong)


# ---- Generator

def generate(variant, out, tokdir):
    v = dict(VARIANTS[variant])
    rng = np.random.default_rng(v.pop("seed"))
    fused = v.pop("fused", False)
    with open(RELEASE) as f:
        cfg = json.load(f)
    with open(os.path.join(tokdir, "config.json")) as f:
        tc = json.load(f)
    small = dict(SMALL, **v)
    assert set(small) <= set(cfg), set(small) - set(cfg)
    cfg.update(small, vocab_size=tc["vocab_size"], bos_token_id=tc["bos_token_id"], eos_token_id=tc["eos_token_id"])
    H, nh, nkv, hd = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    V, Im = cfg["vocab_size"], cfg["moe_intermediate_size"]
    lin = lambda o, i, gain=1.0: bf16_round(rng.standard_normal((o, i)) * gain / np.sqrt(i))
    normw = lambda n, mean=1.0, spread=0.15: bf16_round(mean + spread * rng.standard_normal(n))

    W = {"model.embed_tokens.weight": bf16_round(rng.standard_normal((V, H)))}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        W[p + "input_layernorm.weight"] = normw(H)
        W[p + "post_attention_layernorm.weight"] = normw(H)
        W[p + "self_attn.q_proj.weight"] = lin(nh * hd, H)
        W[p + "self_attn.k_proj.weight"] = lin(nkv * hd, H)
        W[p + "self_attn.v_proj.weight"] = lin(nkv * hd, H)
        W[p + "self_attn.o_proj.weight"] = lin(H, nh * hd, 0.7)
        # q/k norm weights that differ per channel and scale up, so attention is not uniform
        W[p + "self_attn.q_norm.weight"] = normw(hd, 1.3, 0.3)
        W[p + "self_attn.k_norm.weight"] = normw(hd, 1.3, 0.3)
        if is_moe_layer(cfg, i):
            W[p + "mlp.gate.weight"] = lin(cfg["num_experts"], H, 5.0)
            ffns = [(f"mlp.experts.{e}.", Im) for e in range(cfg["num_experts"])]
        else:
            ffns = [("mlp.", cfg["intermediate_size"])]
        for f, width in ffns:
            W[p + f + "gate_proj.weight"] = lin(width, H, 1.5)
            W[p + f + "up_proj.weight"] = lin(width, H, 1.5)
            W[p + f + "down_proj.weight"] = lin(H, width)
        if fused and is_moe_layer(cfg, i):
            ex = p + "mlp.experts."
            E = range(cfg["num_experts"])
            W[ex + "gate_up_proj"] = np.stack([np.concatenate([W.pop(f"{ex}{e}.gate_proj.weight"),
                                                               W.pop(f"{ex}{e}.up_proj.weight")]) for e in E])
            W[ex + "down_proj"] = np.stack([W.pop(f"{ex}{e}.down_proj.weight") for e in E])
    W["model.norm.weight"] = normw(H)
    if not cfg["tie_word_embeddings"]:
        W["lm_head.weight"] = lin(V, H, 4.0)
    # shards: the embedding and the first half of the layers; the rest
    first = lambda n: n.startswith("model.embed") or (n.startswith("model.layers.") and
                                                       int(n.split(".")[2]) < cfg["num_hidden_layers"] // 2)
    write_checkpoint(out, cfg, [[(n, "BF16", a) for n, a in W.items() if first(n) == s] for s in (True, False)], tokdir)
    ids = [int(t) for t in np.random.default_rng(VARIANTS[variant]["seed"] + 1).integers(0, V, 40)]
    return ids, [1, 5, 17, 40]
