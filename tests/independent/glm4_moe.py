"""GLM-4.5 family (glm4_moe): random checkpoints in the release layout and a float64 reference.

Layout: GLM-4.5's own config.json (tests/fixtures/release-configs/glm-4.5.json) with small
sizes, BF16 shards with an F32 e_score_correction_bias, one tensor per expert, the MTP layer at
index num_hidden_layers, a vocabulary padded past the tokenizer's as the release pads it."""
import json
import os

import numpy as np

from safetensors_io import bf16_round, read_floats, write_checkpoint

MKTINY_ARCH = "glm4-moe"
RELEASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "release-configs", "glm-4.5.json")
COMMON = dict(partial_rotary_factor=0.5, n_shared_experts=1, attention_bias=True, norm_topk_prob=True,
              rms_norm_eps=1e-05)
VARIANTS = {
    # GLM-4.5 / 4.7: q/k norm, group-limited routing over 4 groups (2 kept)
    "A": dict(COMMON, hidden_size=192, num_attention_heads=6, num_key_value_heads=2, head_dim=48,
              intermediate_size=352, moe_intermediate_size=80, n_routed_experts=16, n_group=4, topk_group=2,
              num_experts_per_tok=4, routed_scaling_factor=2.5, first_k_dense_replace=2, num_hidden_layers=5,
              rope_theta=1000000, use_qk_norm=True, seed=30),
    # GLM-4.5-Air: no q/k norm, one key/value head, head_dim past hidden/heads
    "B": dict(COMMON, hidden_size=160, num_attention_heads=5, num_key_value_heads=1, head_dim=64,
              intermediate_size=288, moe_intermediate_size=64, n_routed_experts=12, n_group=3, topk_group=2,
              num_experts_per_tok=3, routed_scaling_factor=1.75, first_k_dense_replace=1, num_hidden_layers=6,
              rope_theta=10000, use_qk_norm=False, seed=4321),
    # widths no multiple of 8: hidden 100, expert width 36, dense width 150, 5 rotated pairs per head
    "E": dict(COMMON, hidden_size=100, num_attention_heads=5, num_key_value_heads=5, head_dim=20,
              intermediate_size=150, moe_intermediate_size=36, n_routed_experts=6, n_group=2, topk_group=1,
              num_experts_per_tok=2, routed_scaling_factor=2.0, first_k_dense_replace=1, num_hidden_layers=5,
              rope_theta=10000, use_qk_norm=True, seed=99),
}
WRONG_READING = "RoPE rotates interleaved pairs (HF: rotate_half)"


# ---- Reference: float64 forward of Glm4MoeForCausalLM, written from HF transformers'
# modeling_glm4_moe.py (Glm4MoeRotaryEmbedding, apply_rotary_pos_emb/rotate_half, Glm4MoeAttention,
# Glm4MoeMLP, Glm4MoeMoE.route_tokens_to_experts, Glm4MoeDecoderLayer, Glm4MoeModel,
# Glm4MoeForCausalLM). numpy float64.

def rmsnorm(x, w, eps):
    return w * (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate((-x[..., h:], x[..., :h]), axis=-1)


def rope_cos_sin(cfg, T):
    dim = int(cfg["head_dim"] * cfg["partial_rotary_factor"])
    inv_freq = 1.0 / (float(cfg["rope_theta"]) ** (np.arange(0, dim, 2) / dim))
    freqs = np.arange(T)[:, None] * inv_freq[None, :]
    emb = np.concatenate((freqs, freqs), axis=-1)
    return np.cos(emb), np.sin(emb)


def apply_rope(x, cos, sin, interleaved):  # x [H, T, hd]; only the first cos.shape[-1] channels rotate
    rot = cos.shape[-1]
    xr, xp = x[..., :rot], x[..., rot:]
    if interleaved:  # the wrong reading: pairs (2i, 2i+1)
        c, s = cos[:, : rot // 2], sin[:, : rot // 2]
        a, b = xr[..., 0::2], xr[..., 1::2]
        xr = np.stack([a * c - b * s, b * c + a * s], -1).reshape(xr.shape)
        return np.concatenate([xr, xp], -1)
    return np.concatenate([xr * cos + rotate_half(xr) * sin, xp], axis=-1)


def silu(x):
    return x / (1.0 + np.exp(-x))


def mlp(x, W, p):
    return (silu(x @ W[p + "gate_proj.weight"].T) * (x @ W[p + "up_proj.weight"].T)) @ W[p + "down_proj.weight"].T


def attention(x, W, p, cfg, cos, sin, wrong):
    T, H, KV, hd = x.shape[0], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]

    def proj(n, heads):
        y = x @ W[p + n + ".weight"].T
        if cfg["attention_bias"]:
            y = y + W[p + n + ".bias"]
        return y.reshape(T, heads, hd)
    q, k, v = proj("q_proj", H), proj("k_proj", KV), proj("v_proj", KV)
    if cfg["use_qk_norm"]:
        q = rmsnorm(q, W[p + "q_norm.weight"], cfg["rms_norm_eps"])
        k = rmsnorm(k, W[p + "k_norm.weight"], cfg["rms_norm_eps"])
    q, k, v = q.transpose(1, 0, 2), k.transpose(1, 0, 2), v.transpose(1, 0, 2)
    q, k = apply_rope(q, cos, sin, wrong), apply_rope(k, cos, sin, wrong)
    k, v = np.repeat(k, H // KV, axis=0), np.repeat(v, H // KV, axis=0)  # repeat_kv: head h reads h // (H/KV)
    s = (q @ k.transpose(0, 2, 1)) * hd ** -0.5
    s = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, s)
    a = np.exp(s - s.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    return (a @ v).transpose(1, 0, 2).reshape(T, H * hd) @ W[p + "o_proj.weight"].T


def route(x, W, p, cfg):
    """Experts and weights per token; also each token's smallest group or expert margin."""
    E, G, TG, K = cfg["n_routed_experts"], cfg["n_group"], cfg["topk_group"], cfg["num_experts_per_tok"]
    scores = 1.0 / (1.0 + np.exp(-(x @ W[p + "gate.weight"].T)))
    choice = scores + W[p + "gate.e_score_correction_bias"]
    gs = np.sort(choice.reshape(-1, G, E // G), axis=-1)[..., -2:].sum(-1)   # topk(2).sum per group
    gidx = np.argsort(-gs, axis=-1, kind="stable")[:, :TG]
    gmask = np.zeros_like(gs)
    np.put_along_axis(gmask, gidx, 1.0, axis=1)
    sfc = np.where(np.repeat(gmask, E // G, axis=1) > 0, choice, 0.0)   # masked_fill(~mask, 0.0)
    idx = np.argsort(-sfc, axis=-1, kind="stable")[:, :K]
    w = np.take_along_axis(scores, idx, axis=1)
    if cfg["norm_topk_prob"]:
        w = w / (w.sum(-1, keepdims=True) + 1e-20)
    gsrt, ssrt = -np.sort(-gs, axis=-1), -np.sort(-sfc, axis=-1)
    gmargin = gsrt[:, TG - 1] - gsrt[:, TG] if TG < G else np.inf
    return idx, w * cfg["routed_scaling_factor"], np.minimum(gmargin, ssrt[:, K - 1] - ssrt[:, K])


def moe(x, W, p, cfg):
    idx, w, _ = route(x, W, p, cfg)
    out = mlp(x, W, p + "shared_experts.")
    for t in range(x.shape[0]):
        for j in range(idx.shape[1]):
            out[t] += w[t, j] * mlp(x[t:t + 1], W, p + f"experts.{idx[t, j]}.")[0]
    return out


def forward(W, cfg, ids, wrong=False, upto_router=None):
    """Logits [T, V]; with upto_router=L, the input of layer L's router instead."""
    eps = cfg["rms_norm_eps"]
    cos, sin = rope_cos_sin(cfg, len(ids))
    h = W["model.embed_tokens.weight"][np.array(ids)]
    for L in range(cfg["num_hidden_layers"]):   # the MTP layer is no part of the forward
        p = f"model.layers.{L}."
        h = h + attention(rmsnorm(h, W[p + "input_layernorm.weight"], eps), W, p + "self_attn.", cfg, cos, sin, wrong)
        x = rmsnorm(h, W[p + "post_attention_layernorm.weight"], eps)
        if upto_router == L:
            return x
        h = h + (moe(x, W, p + "mlp.", cfg) if L >= cfg["first_k_dense_replace"] else mlp(x, W, p + "mlp."))
    return rmsnorm(h, W["model.norm.weight"], eps) @ W["lm_head.weight"].T


def reference(folder, ids, wrong=False):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    return forward(read_floats(folder), cfg, ids, wrong)


# ---- Generator

def generate(variant, out, tokdir):
    v = dict(VARIANTS[variant])
    g = np.random.default_rng(v.pop("seed"))
    rn = lambda *s: g.standard_normal(s)
    with open(RELEASE) as f:
        cfg = json.load(f)
    assert set(v) <= set(cfg), set(v) - set(cfg)
    cfg.update(v)
    with open(os.path.join(tokdir, "tokenizer.json")) as f:
        tok = json.load(f)
    ntok = max(list(tok["model"]["vocab"].values()) + [a["id"] for a in tok["added_tokens"]]) + 1
    with open(os.path.join(tokdir, "config.json")) as f:
        tc = json.load(f)
    V = (ntok + 63) // 64 * 64 + 128   # padded past the tokenizer, as 151552 is
    cfg.update(vocab_size=V, pad_token_id=tc["pad_token_id"], eos_token_id=tc["eos_token_id"])

    H, KV, hd, h = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"], cfg["hidden_size"]
    E, NL = cfg["n_routed_experts"], cfg["num_hidden_layers"]
    W = {"model.embed_tokens.weight": rn(V, h)}
    norm = lambda n: 1.0 + 0.2 * rn(n)

    def ffn(p, inter):
        W[p + "gate_proj.weight"] = rn(inter, h) / h ** 0.5
        W[p + "up_proj.weight"] = rn(inter, h) / h ** 0.5
        W[p + "down_proj.weight"] = 0.7 * rn(h, inter) / inter ** 0.5

    for L in range(NL + 1):
        p = f"model.layers.{L}."
        W[p + "input_layernorm.weight"] = norm(h)
        W[p + "post_attention_layernorm.weight"] = norm(h)
        a = p + "self_attn."
        for n, rows in (("q_proj", H * hd), ("k_proj", KV * hd), ("v_proj", KV * hd)):
            W[a + n + ".weight"] = rn(rows, h) / h ** 0.5
            W[a + n + ".bias"] = 0.3 * rn(rows)
        W[a + "o_proj.weight"] = 0.7 * rn(h, H * hd) / (H * hd) ** 0.5
        if cfg["use_qk_norm"]:
            W[a + "q_norm.weight"] = norm(hd)
            W[a + "k_norm.weight"] = norm(hd)
        if L >= cfg["first_k_dense_replace"]:
            for e in range(E):
                ffn(p + f"mlp.experts.{e}.", cfg["moe_intermediate_size"])
            ffn(p + "mlp.shared_experts.", cfg["moe_intermediate_size"] * cfg["n_shared_experts"])
        else:
            ffn(p + "mlp.", cfg["intermediate_size"])
    W["model.norm.weight"] = norm(h)
    W["lm_head.weight"] = 4.0 * rn(V, h) / h ** 0.5
    p = f"model.layers.{NL}."   # the MTP layer's extras, as released
    W[p + "enorm.weight"] = norm(h)
    W[p + "hnorm.weight"] = norm(h)
    W[p + "eh_proj.weight"] = rn(h, 2 * h) / (2 * h) ** 0.5
    W[p + "shared_head.norm.weight"] = norm(h)
    W[p + "shared_head.head.weight"] = 4.0 * rn(V, h) / h ** 0.5
    W[p + "embed_tokens.weight"] = W["model.embed_tokens.weight"]
    W = {k: bf16_round(a) for k, a in W.items()}
    ids = [int(i) for i in g.integers(0, ntok, 40)]

    # Routers drawn layer by layer, keeping the draw whose group and expert choices are furthest
    # from a tie on this prompt, so float32 rounding cannot flip one.
    for L in range(cfg["first_k_dense_replace"], NL + 1):
        p = f"model.layers.{L}.mlp."
        x = forward(W, cfg, ids, upto_router=L) if L < NL else None
        best = None
        for _ in range(1 if x is None else 500):
            W[p + "gate.weight"] = bf16_round(1.5 * rn(E, h) / h ** 0.5)
            W[p + "gate.e_score_correction_bias"] = g.random(E).astype(np.float32) * 0.15
            margin = np.inf if x is None else route(x, W, p, cfg)[2].min()
            if best is None or margin > best[0]:
                best = (margin, W[p + "gate.weight"], W[p + "gate.e_score_correction_bias"])
        W[p + "gate.weight"], W[p + "gate.e_score_correction_bias"] = best[1], best[2]

    # Four shards as a release splits them: one MoE layer's experts across two, the MTP layer last.
    def shard(n):
        if not n.startswith("model.layers."):
            return 0 if n == "model.embed_tokens.weight" else 2
        layer = int(n.split(".")[2])
        if layer == NL:
            return 3
        if layer < 2:
            return 0
        if layer == 2 or (layer == 3 and ".experts." in n and int(n.split(".experts.")[1].split(".")[0]) < E // 2):
            return 1
        return 2
    shards = [[] for _ in range(4)]
    for n in W:
        shards[shard(n)].append((n, "F32" if n.endswith("correction_bias") else "BF16", W[n]))
    write_checkpoint(out, cfg, shards, tokdir)
    return ids, [1, 5, 17, 40]
