"""GLM-5 family (glm_moe_dsa): random checkpoints in the GLM-5 and GLM-5.2 release layouts and a
float64 reference.

Layout: the releases' config.json (tests/fixtures/release-configs/glm-5.json, glm-5.2.json) with
small sizes; BF16 shards cut across layers, F32 e_score_correction_bias, one tensor per expert,
the lightning indexer (wq_b, wk, k_norm weight and bias, weights_proj), the MTP layer at index
num_hidden_layers. GLM-5.2 adds explicit indexer_types (layers that reuse the previous top-k)
and mlp_layer_types, a head_dim equal to the nope width, and an MTP layer carrying embed_tokens."""
import json
import os

import numpy as np

from safetensors_io import bf16_round, read_floats, write_checkpoint

MKTINY_ARCH = "glm-moe-dsa"
CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "release-configs")
SMALL = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=48, kv_lora_rank=32,
             qk_nope_head_dim=24, qk_rope_head_dim=16, qk_head_dim=40, v_head_dim=32, head_dim=16,
             index_n_heads=8, index_head_dim=32, index_topk=10, n_routed_experts=8, num_experts_per_tok=2,
             n_group=4, topk_group=2, first_k_dense_replace=1, moe_intermediate_size=32, intermediate_size=96,
             num_hidden_layers=4)
VARIANTS = {
    "glm5": dict(release="glm-5.json", seed=110),
    # 5 layers, indexer_types full, full, shared, full, shared (offset 2, every 2nd)
    "glm52": dict(release="glm-5.2.json", seed=11, num_hidden_layers=5, head_dim=24, index_skip_topk_offset=2,
                  index_topk_freq=2),
    # the release's proportions: one expert group, v wider than nope, half of each indexer head rotated
    "glm5_wide": dict(release="glm-5.json", seed=19, hidden_size=256, q_lora_rank=128, kv_lora_rank=96,
                      qk_nope_head_dim=48, qk_rope_head_dim=32, qk_head_dim=80, v_head_dim=64, head_dim=32,
                      index_n_heads=16, index_head_dim=64, index_topk=32, n_routed_experts=16, num_experts_per_tok=4,
                      n_group=1, topk_group=1, first_k_dense_replace=2, moe_intermediate_size=64, intermediate_size=384),
}
WRONG_READING = "RoPE on split halves, as an older HF revision had it (HF now: interleaved pairs)"


# ---- Reference: float64 forward of GlmMoeDsaForCausalLM, written from the public HF transformers
# modeling_glm_moe_dsa.py:
#  * RMSNorm: w * x * rsqrt(mean(x^2)+eps); q_a_layernorm / kv_a_layernorm use the class default eps=1e-6,
#    input/post/final norms use rms_norm_eps.
#  * MLA: q = q_b(rms(q_a(x))) split [nope, rope]; kv_a -> [kv_lora, rope]; kv_b -> per head [nope, v];
#    k_rope shared over heads; scaling = qk_head_dim^-0.5 (rope_type default -> no mscale).
#  * RoPE: rope dim = qk_rope_head_dim, inv_freq = theta^(-2i/d). Newest HF (modular @01f8fa55):
#    interleaved pairs for BOTH the main attention and the indexer. Older HF (modeling @00371f38):
#    split-half (NeoX) for both -- the wrong reading here.
#  * Indexer: q = wq_b(q_resid) [IH, ID] split [rope, pass]; k = LayerNorm(wk(x)) split [rope, pass];
#    score[s,t] = sum_h w[s,h] * relu(q[s,h].k[t] * ID^-0.5), w = weights_proj(x) * IH^-0.5;
#    + causal mask; top min(index_topk, T). Attention limited to those keys (and causal).
#  * indexer_types: "shared" layers reuse the previous layer's top-k.
#  * MoE: sigmoid router, + e_score_correction_bias for choice, group top-2 sum, topk_group groups,
#    top-k experts, weights = sigmoid scores gathered, normalized (+1e-20), * routed_scaling_factor;
#    + shared experts.

def indexer_types(cfg):
    if cfg.get("indexer_types") is not None:
        return list(cfg["indexer_types"])
    freq, off = max(cfg.get("index_topk_freq", 1), 1), cfg.get("index_skip_topk_offset", 2)
    return ["full" if max(i - off + 1, 0) % freq == 0 else "shared" for i in range(cfg["num_hidden_layers"])]


def mlp_types(cfg):
    if cfg.get("mlp_layer_types") is not None:
        return list(cfg["mlp_layer_types"])
    L = cfg["num_hidden_layers"]
    nd = min(cfg.get("first_k_dense_replace", 3), L)
    return ["dense"] * nd + ["sparse"] * (L - nd)


def rms(x, w, eps):
    return w * (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps))


def layernorm(x, w, b, eps=1e-6):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * w + b


def rope_tables(cfg, S):
    d = cfg["qk_rope_head_dim"]
    theta = cfg.get("rope_parameters", {}).get("rope_theta", cfg.get("rope_theta", 10000.0))
    ang = np.arange(S)[:, None] * (1.0 / theta ** (np.arange(0, d, 2) / d))[None, :]
    return np.cos(ang), np.sin(ang)


def apply_rope(x, cos, sin, half):
    """x [S, ..., d]; cos/sin [S, d/2]. Interleaved pairs are kept in place (HF returns them
    de-interleaved, the same permutation for q and k, so the dot products agree)."""
    shape = (x.shape[0],) + (1,) * (x.ndim - 2) + (cos.shape[-1],)
    c, s = cos.reshape(shape), sin.reshape(shape)
    if half:
        h = x.shape[-1] // 2
        x1, x2 = x[..., :h], x[..., h:]
        return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return np.stack([x1 * c - x2 * s, x2 * c + x1 * s], -1).reshape(x.shape)


def indexer(cfg, W, p, xn, q_resid, cos, sin, half):
    S = xn.shape[0]
    IH, ID, R, K = cfg["index_n_heads"], cfg["index_head_dim"], cfg["qk_rope_head_dim"], cfg["index_topk"]
    q = (q_resid @ W[p + "indexer.wq_b.weight"].T).reshape(S, IH, ID)
    k = layernorm(xn @ W[p + "indexer.wk.weight"].T, W[p + "indexer.k_norm.weight"], W[p + "indexer.k_norm.bias"])
    q = np.concatenate([apply_rope(q[..., :R], cos, sin, half), q[..., R:]], -1)
    k = np.concatenate([apply_rope(k[:, :R], cos, sin, half), k[:, R:]], -1)
    sc = np.maximum(np.einsum("shd,td->sht", q, k) * ID ** -0.5, 0.0)
    w = (xn @ W[p + "indexer.weights_proj.weight"].T) * IH ** -0.5
    idx = np.where(np.triu(np.ones((S, S), bool), 1), -np.inf, np.einsum("sht,sh->st", sc, w))
    return np.argsort(-idx, axis=-1, kind="stable")[:, : min(K, S)]


def attention(cfg, W, p, xn, cos, sin, half, prev_sel, itype):
    S, H = xn.shape[0], cfg["num_attention_heads"]
    dn, dr, dv, kvr = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"], cfg["kv_lora_rank"]
    q_resid = rms(xn @ W[p + "q_a_proj.weight"].T, W[p + "q_a_layernorm.weight"], 1e-6)
    q = (q_resid @ W[p + "q_b_proj.weight"].T).reshape(S, H, dn + dr)
    ckv = xn @ W[p + "kv_a_proj_with_mqa.weight"].T
    kv = (rms(ckv[:, :kvr], W[p + "kv_a_layernorm.weight"], 1e-6) @ W[p + "kv_b_proj.weight"].T).reshape(S, H, dn + dv)
    q_rot, k_rot = apply_rope(q[..., dn:], cos, sin, half), apply_rope(ckv[:, kvr:], cos, sin, half)
    scores = (np.einsum("shd,thd->hst", q[..., :dn], kv[..., :dn]) + np.einsum("shd,td->hst", q_rot, k_rot))
    scores *= (dn + dr) ** -0.5
    sel = indexer(cfg, W, p, xn, q_resid, cos, sin, half) if itype == "full" else prev_sel
    allowed = np.zeros((S, S), bool)
    np.put_along_axis(allowed, sel, True, axis=1)
    allowed &= np.tril(np.ones((S, S), bool))
    scores = np.where(allowed[None], scores, -np.inf)
    pr = np.exp(scores - scores.max(-1, keepdims=True))
    pr /= pr.sum(-1, keepdims=True)
    o = np.einsum("hst,thd->shd", pr, kv[..., dn:]).reshape(S, H * dv)
    return o @ W[p + "o_proj.weight"].T, sel


def silu(x):
    return x / (1.0 + np.exp(-x))


def mlp(W, p, x):
    return (silu(x @ W[p + "gate_proj.weight"].T) * (x @ W[p + "up_proj.weight"].T)) @ W[p + "down_proj.weight"].T


def moe(cfg, W, p, x):
    E, K, G, TG = cfg["n_routed_experts"], cfg["num_experts_per_tok"], cfg["n_group"], cfg["topk_group"]
    s = 1.0 / (1.0 + np.exp(-(x @ W[p + "gate.weight"].T)))
    sc = s + W[p + "gate.e_score_correction_bias"]
    gs = np.sort(sc.reshape(-1, G, E // G), axis=-1)[..., -2:].sum(-1)
    gmask = np.zeros_like(gs)
    np.put_along_axis(gmask, np.argsort(-gs, axis=-1, kind="stable")[:, :TG], 1.0, axis=1)
    scm = np.where(np.repeat(gmask, E // G, axis=1) > 0, sc, -np.inf)
    tidx = np.argsort(-scm, axis=-1, kind="stable")[:, :K]
    tw = np.take_along_axis(s, tidx, 1)
    if cfg.get("norm_topk_prob", True):
        tw = tw / (tw.sum(-1, keepdims=True) + 1e-20)
    tw = tw * cfg["routed_scaling_factor"]
    out = mlp(W, p + "shared_experts.", x)
    for t in range(x.shape[0]):
        for j in range(K):
            out[t] += tw[t, j] * mlp(W, f"{p}experts.{tidx[t, j]}.", x[t:t + 1])[0]
    return out


def forward(cfg, W, ids, half=False):
    eps = cfg["rms_norm_eps"]
    h = W["model.embed_tokens.weight"][np.array(ids)]
    cos, sin = rope_tables(cfg, len(ids))
    sel = None
    for li, (itype, mtype) in enumerate(zip(indexer_types(cfg), mlp_types(cfg))):
        p = f"model.layers.{li}."
        a, sel = attention(cfg, W, p + "self_attn.", rms(h, W[p + "input_layernorm.weight"], eps), cos, sin, half,
                           sel, itype)
        h = h + a
        xn = rms(h, W[p + "post_attention_layernorm.weight"], eps)
        h = h + (moe(cfg, W, p + "mlp.", xn) if mtype == "sparse" else mlp(W, p + "mlp.", xn))
    return rms(h, W["model.norm.weight"], eps) @ W["lm_head.weight"].T


def reference(folder, ids, wrong=False):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    return forward(cfg, read_floats(folder), ids, half=wrong)


# ---- Generator

def make_config(variant, tokdir):
    v = dict(VARIANTS[variant])
    with open(os.path.join(CONFIGS, v.pop("release"))) as f:
        cfg = json.load(f)
    v.pop("seed")
    small = dict(SMALL, **v)
    assert set(small) <= set(cfg), set(small) - set(cfg)
    cfg.update(small)
    L = cfg["num_hidden_layers"]
    if "indexer_types" in cfg:   # GLM-5.2 lists both per layer
        cfg["indexer_types"] = indexer_types(dict(cfg, indexer_types=None))
        nd = cfg["first_k_dense_replace"]
        cfg["mlp_layer_types"] = ["dense"] * nd + ["sparse"] * (L - nd)
    with open(os.path.join(tokdir, "config.json")) as f:
        tc = json.load(f)
    with open(os.path.join(tokdir, "tokenizer.json")) as f:
        tok = json.load(f)
    ntok = max(list(tok["model"]["vocab"].values()) + [a["id"] for a in tok["added_tokens"]]) + 1
    cfg.update(vocab_size=-(-ntok // 32) * 32 + 32, eos_token_id=tc["eos_token_id"], pad_token_id=tc["pad_token_id"])
    return cfg, ntok


def make_weights(cfg, rng):
    N = lambda *shape, std=1.0: rng.standard_normal(shape) * std
    lin = lambda o, i, gain=1.0: N(o, i, std=gain / i ** 0.5)
    nrm = lambda n: 1.0 + N(n, std=0.1)
    Hs, V, H = cfg["hidden_size"], cfg["vocab_size"], cfg["num_attention_heads"]
    dn, dr, dv = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
    ql, kvl, IH, ID = cfg["q_lora_rank"], cfg["kv_lora_rank"], cfg["index_n_heads"], cfg["index_head_dim"]
    E, Im, I, L = cfg["n_routed_experts"], cfg["moe_intermediate_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    T = [("model.embed_tokens.weight", N(V, Hs))]
    for li in range(L + 1):
        p = f"model.layers.{li}."
        if li == L:   # the MTP layer
            T += [(p + "eh_proj.weight", lin(Hs, 2 * Hs)), (p + "enorm.weight", nrm(Hs)), (p + "hnorm.weight", nrm(Hs)),
                  (p + "shared_head.norm.weight", nrm(Hs)), (p + "shared_head.head.weight", lin(V, Hs, 3.0))]
            if "indexer_types" in cfg:   # GLM-5.2's MTP layer has its own copy of the embedding
                T.append((p + "embed_tokens.weight", N(V, Hs)))
        a = p + "self_attn."
        T += [(p + "input_layernorm.weight", nrm(Hs)), (p + "post_attention_layernorm.weight", nrm(Hs)),
              (a + "q_a_proj.weight", lin(ql, Hs)), (a + "q_a_layernorm.weight", nrm(ql)),
              (a + "q_b_proj.weight", lin(H * (dn + dr), ql, 1.5)),
              (a + "kv_a_proj_with_mqa.weight", lin(kvl + dr, Hs, 1.5)), (a + "kv_a_layernorm.weight", nrm(kvl)),
              (a + "kv_b_proj.weight", lin(H * (dn + dv), kvl, 1.5)), (a + "o_proj.weight", lin(Hs, H * dv, 0.7)),
              (a + "indexer.wq_b.weight", lin(IH * ID, ql)), (a + "indexer.wk.weight", lin(ID, Hs)),
              (a + "indexer.k_norm.weight", nrm(ID)), (a + "indexer.k_norm.bias", N(ID, std=0.1)),
              (a + "indexer.weights_proj.weight", lin(IH, Hs))]
        m = p + "mlp."
        if li >= cfg["first_k_dense_replace"]:
            T += [(m + "gate.weight", lin(E, Hs, 2.0)), (m + "gate.e_score_correction_bias", N(E, std=0.1))]
            for e in [f"experts.{e}." for e in range(E)] + ["shared_experts."]:
                T += [(m + e + "gate_proj.weight", lin(Im, Hs)), (m + e + "up_proj.weight", lin(Im, Hs)),
                      (m + e + "down_proj.weight", lin(Hs, Im, 0.7))]
        else:
            T += [(m + "gate_proj.weight", lin(I, Hs)), (m + "up_proj.weight", lin(I, Hs)),
                  (m + "down_proj.weight", lin(Hs, I, 0.7))]
    T += [("model.norm.weight", nrm(Hs)), ("lm_head.weight", lin(V, Hs, 3.0))]
    return [(n, "F32", a.astype(np.float32).astype(np.float64)) if n.endswith("correction_bias")
            else (n, "BF16", bf16_round(a)) for n, a in T]


def generate(variant, out, tokdir):
    cfg, ntok = make_config(variant, tokdir)
    rng = np.random.default_rng(VARIANTS[variant]["seed"])
    T = make_weights(cfg, rng)
    per = -(-len(T) // 3)   # three shards in tensor order, layers cut across them
    write_checkpoint(out, cfg, [T[i:i + per] for i in range(0, len(T), per)], tokdir)
    K = cfg["index_topk"]
    return [int(i) for i in rng.integers(0, ntok, 40)], sorted({1, 5, K, K + 1, 25, 40})
