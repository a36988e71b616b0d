"""DeepSeek-V3.2 (deepseek_v32): random checkpoints in the release layout and a float64 reference.

Layout: the release's config.json (tests/fixtures/release-configs/deepseek-v3.2.json) with small
sizes; FP8 e4m3 weights with an F32 weight_scale_inv per 128x128 block (partial edge blocks,
blocks of different magnitude) for every matrix the release stores so; BF16 embedding, lm_head,
norms, router gate, indexer weights_proj and MTP eh_proj/shared_head; F32
e_score_correction_bias and indexer k_norm weight and bias; the MTP layer with its own
embed_tokens; three shards."""
import json
import math
import os

import numpy as np

from safetensors_io import E4M3, bf16_round, e4m3_encode, read_checkpoint, write_checkpoint

MKTINY_ARCH = "deepseek-v32"
RELEASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "release-configs",
                       "deepseek-v3.2.json")
SMALL = dict(hidden_size=256, intermediate_size=320, moe_intermediate_size=96, num_hidden_layers=3,
             first_k_dense_replace=1, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=192, kv_lora_rank=160,
             qk_nope_head_dim=64, qk_rope_head_dim=32, v_head_dim=48, index_n_heads=16, index_head_dim=64,
             index_topk=10, n_routed_experts=8, num_experts_per_tok=2, n_group=4, topk_group=2, n_shared_experts=1,
             num_nextn_predict_layers=1)
VARIANTS = {
    "base": dict(seed=91),
    # the release's rope and indexer widths (rope 64, index_head_dim 128), 2 dense layers, 16 experts top-4
    "wide": dict(seed=38, hidden_size=320, qk_rope_head_dim=64, qk_nope_head_dim=96, v_head_dim=80, index_head_dim=128,
                 q_lora_rank=384, kv_lora_rank=288, num_hidden_layers=4, first_k_dense_replace=2, n_routed_experts=16,
                 num_experts_per_tok=4, moe_intermediate_size=80, intermediate_size=448, index_topk=12),
}
WRONG_READING = "indexer RoPE on interleaved pairs, as the main attention's (model.py: split halves)"


# ---- Reference: float64 forward of DeepSeek-V3.2, written from DeepSeek's inference/model.py (the
# V3.2 release copy in huggingface/transformers .../deepseek_v32/deepseek_files/inference/model.py,
# indexer RoPE non-interleaved), cross-checked with HF modeling_deepseek_v32.py. Float path: no
# act_quant / FP8 KV simulation, no Hadamard (orthogonal: q.k unchanged); indexer score =
# sum_h w_h * relu(q_h.k_t) * index_head_dim^-0.5 with w = weights_proj(x) * index_n_heads^-0.5;
# ties at the indexer's top-k boundary go to the earlier position. Weights: FP8 value *
# weight_scale_inv of its 128x128 block.

def load(folder):
    raw = read_checkpoint(folder)
    W = {}
    for name, (dtype, a) in raw.items():
        if dtype == "F8_E4M3":
            s = raw[name + "_scale_inv"][1]
            W[name] = E4M3[a] * np.repeat(np.repeat(s, 128, axis=0), 128, axis=1)[: a.shape[0], : a.shape[1]]
        elif not name.endswith("_scale_inv"):
            W[name] = a
    return W


def rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def layernorm(x, w, b, eps=1e-6):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * w + b


def silu(x):
    return x / (1 + np.exp(-x))


def yarn_freqs(cfg):
    dim, rs, base = cfg["qk_rope_head_dim"], cfg["rope_scaling"], cfg["rope_theta"]
    orig = rs["original_max_position_embeddings"]
    cdim = lambda nrot: dim * math.log(orig / (nrot * 2 * math.pi)) / (2 * math.log(base))
    low, high = max(math.floor(cdim(rs["beta_fast"])), 0), min(math.ceil(cdim(rs["beta_slow"])), dim - 1)
    if low == high:
        high += 0.001
    smooth = 1 - np.clip((np.arange(dim // 2) - low) / (high - low), 0, 1)
    freqs = 1.0 / (base ** (np.arange(0, dim, 2) / dim))
    return freqs / rs["factor"] * (1 - smooth) + freqs * smooth


def rope_interleaved(x, ang):
    """Pairs (2i, 2i+1) rotated by ang[..., i] (model.py's apply_rotary_emb default)."""
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[..., 0::2], x[..., 1::2]
    return np.stack([a * c - b * s, a * s + b * c], -1).reshape(x.shape)


def rope_half(x, ang):
    """Pairs (i, i + d/2) rotated by ang[..., i] (apply_rotary_emb(..., interleaved=False))."""
    h = x.shape[-1] // 2
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)


def indexer(c, W, l, x, qr, ang, wrong):
    p = f"model.layers.{l}.self_attn.indexer."
    T, inh, ihd, rope, k = x.shape[0], c["index_n_heads"], c["index_head_dim"], c["qk_rope_head_dim"], c["index_topk"]
    rot = rope_interleaved if wrong else rope_half
    q = (qr @ W[p + "wq_b.weight"].T).reshape(T, inh, ihd)
    q = np.concatenate([rot(q[..., :rope], ang[:, None, :]), q[..., rope:]], -1)   # the rope part first
    kk = layernorm(x @ W[p + "wk.weight"].T, W[p + "k_norm.weight"], W[p + "k_norm.bias"])
    kk = np.concatenate([rot(kk[:, :rope], ang), kk[:, rope:]], -1)
    w = (x @ W[p + "weights_proj.weight"].T) * inh ** -0.5
    score = np.einsum("sh,sht->st", w, np.maximum(np.einsum("shd,td->sht", q, kk), 0.0) * ihd ** -0.5)
    sel = np.tril(np.ones((T, T), dtype=bool))
    for s in range(k, T):   # rows with more candidates than the top-k keeps
        order = np.argsort(-score[s, : s + 1], kind="stable")
        sel[s] = False
        sel[s, order[:k]] = True
    return sel


def mla(c, W, l, x, ang, wrong):
    p = f"model.layers.{l}.self_attn."
    T, nh, nope, rope, vd = x.shape[0], c["num_attention_heads"], c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    kvlr = c["kv_lora_rank"]
    qr = rmsnorm(x @ W[p + "q_a_proj.weight"].T, W[p + "q_a_layernorm.weight"], 1e-6)   # RMSNorm(q_lora_rank): eps 1e-6
    q = (qr @ W[p + "q_b_proj.weight"].T).reshape(T, nh, nope + rope)
    q_pe = rope_interleaved(q[..., nope:], ang[:, None, :])
    kv = x @ W[p + "kv_a_proj_with_mqa.weight"].T
    k_pe = rope_interleaved(kv[:, kvlr:], ang)
    kvb = (rmsnorm(kv[:, :kvlr], W[p + "kv_a_layernorm.weight"], 1e-6) @ W[p + "kv_b_proj.weight"].T).reshape(T, nh, nope + vd)
    rs = c["rope_scaling"]
    mscale = 0.1 * rs["mscale_all_dim"] * math.log(rs["factor"]) + 1.0
    scale = (nope + rope) ** -0.5 * mscale * mscale
    scores = (np.einsum("shd,thd->sht", q[..., :nope], kvb[..., :nope]) + np.einsum("shr,tr->sht", q_pe, k_pe)) * scale
    scores = np.where(indexer(c, W, l, x, qr, ang, wrong)[:, None, :], scores, -np.inf)
    pr = np.exp(scores - scores.max(-1, keepdims=True))
    pr /= pr.sum(-1, keepdims=True)
    return np.einsum("sht,thd->shd", pr, kvb[..., nope:]).reshape(T, nh * vd) @ W[p + "o_proj.weight"].T


def mlp(W, p, x):
    return (silu(x @ W[p + "gate_proj.weight"].T) * (x @ W[p + "up_proj.weight"].T)) @ W[p + "down_proj.weight"].T


def moe(c, W, l, x):
    p = f"model.layers.{l}.mlp."
    E, K, G, TG = c["n_routed_experts"], c["num_experts_per_tok"], c["n_group"], c["topk_group"]
    s = 1 / (1 + np.exp(-(x @ W[p + "gate.weight"].T)))
    ch = s + W[p + "gate.e_score_correction_bias"]
    out = mlp(W, p + "shared_experts.", x)
    for t in range(x.shape[0]):
        gs = np.sort(ch[t].reshape(G, E // G), axis=-1)[:, -2:].sum(-1)
        go = np.argsort(-gs, kind="stable")
        allowed = np.repeat(np.isin(np.arange(G), go[:TG]), E // G)
        cc = np.where(allowed, ch[t], -np.inf)
        eo = np.argsort(-cc, kind="stable")
        wts = s[t, eo[:K]]
        if c["norm_topk_prob"]:
            wts = wts / (wts.sum() + 1e-20)
        for e, wgt in zip(eo[:K], wts * c["routed_scaling_factor"]):
            out[t] += wgt * mlp(W, p + f"experts.{e}.", x[t:t + 1])[0]
    return out


def forward(c, W, ids, wrong=False):
    eps = c["rms_norm_eps"]
    ang = np.arange(len(ids))[:, None] * yarn_freqs(c)[None, :]
    h = W["model.embed_tokens.weight"][ids]
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = h + mla(c, W, l, rmsnorm(h, W[p + "input_layernorm.weight"], eps), ang, wrong)
        xn = rmsnorm(h, W[p + "post_attention_layernorm.weight"], eps)
        h = h + (mlp(W, p + "mlp.", xn) if l < c["first_k_dense_replace"] else moe(c, W, l, xn))
    return rmsnorm(h, W["model.norm.weight"], eps) @ W["lm_head.weight"].T


def reference(folder, ids, wrong=False):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    return forward(cfg, load(folder), ids, wrong)


# ---- Generator

def make_config(variant, tokdir):
    with open(RELEASE) as f:
        cfg = json.load(f)
    with open(os.path.join(tokdir, "config.json")) as f:
        tc = json.load(f)
    small = dict(SMALL, **VARIANTS[variant])
    small.pop("seed")
    assert set(small) <= set(cfg), set(small) - set(cfg)
    cfg.update(small, vocab_size=tc["vocab_size"], bos_token_id=tc["bos_token_id"], eos_token_id=tc["eos_token_id"])
    return cfg


def make_weights(cfg, rng):
    T = []
    bf16 = lambda name, a: T.append((name, "BF16", bf16_round(a)))
    f32 = lambda name, a: T.append((name, "F32", np.float32(a).astype(np.float64)))
    norm = lambda name, n: bf16(name, 1.0 + 0.1 * rng.standard_normal(n))

    def fp8(name, shape, std):
        """e4m3 codes with one F32 scale_inv per 128x128 block; blocks of different magnitudes,
        so a block read with another block's scale shows."""
        w = rng.standard_normal(shape) * std
        br, bc = -(-shape[0] // 128), -(-shape[1] // 128)
        bmag = np.exp(rng.uniform(np.log(0.5), np.log(2.0), size=(br, bc)))
        scale, codes = np.zeros((br, bc), dtype=np.float32), np.zeros(shape, dtype=np.uint8)
        for i in range(br):
            for j in range(bc):
                blk = w[i * 128:(i + 1) * 128, j * 128:(j + 1) * 128] * bmag[i, j]
                scale[i, j] = np.abs(blk).max() / 448.0 * rng.uniform(1.0, 1.6)
                codes[i * 128:(i + 1) * 128, j * 128:(j + 1) * 128] = e4m3_encode(blk / np.float64(scale[i, j]))
        T.append((name, "F8_E4M3", codes))
        T.append((name + "_scale_inv", "F32", scale))

    H, V, nh = cfg["hidden_size"], cfg["vocab_size"], cfg["num_attention_heads"]
    qlr, kvlr = cfg["q_lora_rank"], cfg["kv_lora_rank"]
    nope, rope, vd = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
    inh, ihd = cfg["index_n_heads"], cfg["index_head_dim"]
    I, MI, E, L = cfg["intermediate_size"], cfg["moe_intermediate_size"], cfg["n_routed_experts"], cfg["num_hidden_layers"]
    bf16("model.embed_tokens.weight", rng.standard_normal((V, H)))
    embed = T[-1][2]
    for l in range(L + cfg["num_nextn_predict_layers"]):
        p = f"model.layers.{l}."
        norm(p + "input_layernorm.weight", H)
        norm(p + "post_attention_layernorm.weight", H)
        fp8(p + "self_attn.q_a_proj.weight", (qlr, H), 1 / np.sqrt(H))
        norm(p + "self_attn.q_a_layernorm.weight", qlr)
        fp8(p + "self_attn.q_b_proj.weight", (nh * (nope + rope), qlr), 1 / np.sqrt(qlr))
        fp8(p + "self_attn.kv_a_proj_with_mqa.weight", (kvlr + rope, H), 1 / np.sqrt(H))
        norm(p + "self_attn.kv_a_layernorm.weight", kvlr)
        fp8(p + "self_attn.kv_b_proj.weight", (nh * (nope + vd), kvlr), 1 / np.sqrt(kvlr))
        fp8(p + "self_attn.o_proj.weight", (H, nh * vd), 0.6 / np.sqrt(nh * vd))
        fp8(p + "self_attn.indexer.wq_b.weight", (inh * ihd, qlr), 1 / np.sqrt(qlr))
        fp8(p + "self_attn.indexer.wk.weight", (ihd, H), 1 / np.sqrt(H))
        f32(p + "self_attn.indexer.k_norm.weight", 1.0 + 0.2 * rng.standard_normal(ihd))
        f32(p + "self_attn.indexer.k_norm.bias", 0.2 * rng.standard_normal(ihd))
        bf16(p + "self_attn.indexer.weights_proj.weight", rng.standard_normal((inh, H)) * 2 / np.sqrt(H))
        if l < cfg["first_k_dense_replace"]:
            experts = ["mlp."]
        else:
            bf16(p + "mlp.gate.weight", rng.standard_normal((E, H)) * 2 / np.sqrt(H))
            f32(p + "mlp.gate.e_score_correction_bias", 0.1 * rng.standard_normal(E))
            experts = [f"mlp.experts.{e}." for e in range(E)] + ["mlp.shared_experts."]
        for e in experts:
            width = I if e == "mlp." else MI * (cfg["n_shared_experts"] if "shared" in e else 1)
            fp8(p + e + "gate_proj.weight", (width, H), 1 / np.sqrt(H))
            fp8(p + e + "up_proj.weight", (width, H), 1 / np.sqrt(H))
            fp8(p + e + "down_proj.weight", (H, width), 0.6 / np.sqrt(width))
        if l >= L:   # the MTP layer, DeepSeek-V3's layout: its own embedding, eh_proj in BF16, a shared head
            bf16(p + "embed_tokens.weight", embed)
            norm(p + "enorm.weight", H)
            norm(p + "hnorm.weight", H)
            bf16(p + "eh_proj.weight", rng.standard_normal((H, 2 * H)) / np.sqrt(2 * H))
            norm(p + "shared_head.norm.weight", H)
            bf16(p + "shared_head.head.weight", rng.standard_normal((V, H)) * 3 / np.sqrt(H))
    norm("model.norm.weight", H)
    bf16("lm_head.weight", rng.standard_normal((V, H)) * 3 / np.sqrt(H))
    return T


def generate(variant, out, tokdir):
    cfg = make_config(variant, tokdir)
    T = make_weights(cfg, np.random.default_rng(VARIANTS[variant]["seed"]))
    L = cfg["num_hidden_layers"]
    layer = lambda n: int(n.split(".")[2]) if n.startswith("model.layers.") else 0
    # shards: top level and layer 0; the other layers; the MTP layer
    write_checkpoint(out, cfg, [[t for t in T if layer(t[0]) == 0], [t for t in T if 0 < layer(t[0]) < L],
                                [t for t in T if layer(t[0]) >= L]], tokdir)
    K = cfg["index_topk"]
    return [int(i) for i in np.random.default_rng(0).integers(2, 400, 40)], [1, 5, K, K + 1, 25, 40]
