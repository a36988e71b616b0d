"""Qwen3.5-MoE (qwen3_5_moe): random checkpoints in the release layout and a float64 reference.

Layout: the release's multimodal config.json (tests/fixtures/release-configs/qwen3.5-122b-a10b.json,
Qwen3_5MoeForConditionalGeneration, the text model in a nested text_config) with small sizes;
BF16 shards of model.language_model.*, fused experts (mlp.experts.gate_up_proj [E, 2I, H],
mlp.experts.down_proj [E, H, I]), a gated shared expert, a tiny vision tower (model.visual.*)
that text-only eval must read past, lm_head, and one MTP layer (mtp.*) whose experts the
release stores one tensor each."""
import json
import os

import numpy as np

from safetensors_io import read_floats, write_checkpoint

MKTINY_ARCH = "qwen3.5-moe"
RELEASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "release-configs",
                       "qwen3.5-122b-a10b.json")
SMALL_TEXT = dict(head_dim=48, hidden_size=96, linear_key_head_dim=40, linear_num_key_heads=2, linear_num_value_heads=6,
                  linear_value_head_dim=24, moe_intermediate_size=40, num_attention_heads=6, num_experts=12,
                  num_experts_per_tok=3, num_hidden_layers=8, num_key_value_heads=2, shared_expert_intermediate_size=56,
                  rope_parameters=dict(mrope_interleaved=True, mrope_section=[2, 2, 2], partial_rotary_factor=0.25,
                                       rope_theta=10000, rope_type="default"))
SMALL_VISION = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, num_position_embeddings=16)
VARIANTS = {
    # head_dim 48 != 96/6, a quarter rotated, 2 key heads for 6 value heads, key width 40 > value width 24
    "A": dict(seed=4),
    # layer types off the every-4th pattern, A_log / dt_bias stored F32, MTP experts fused
    "B": dict(seed=4, a_log_f32=True, mtp_fused=True, num_hidden_layers=9, layer_types=[
        "linear_attention", "full_attention", "linear_attention", "linear_attention", "full_attention",
        "full_attention", "linear_attention", "linear_attention", "linear_attention"]),
    # the release's rope block (mrope_section [11, 11, 10], theta 1e7); as many key as value heads
    "C": dict(seed=19, linear_num_key_heads=4, linear_num_value_heads=4, linear_key_head_dim=32,
              linear_value_head_dim=32, rope_parameters=None),
}
WRONG_READING = "key heads tiled over the value heads (HF: repeat_interleave, key head j serves a run of value heads)"


# ---- Reference: float64 forward of Qwen3_5MoeForConditionalGeneration (text only), written from
# transformers' modeling_qwen3_5_moe.py (its configuration_qwen3_5_moe.py read at @008e5743). numpy only.

def rmsnorm1p(x, w, eps):   # Qwen3_5MoeRMSNorm: x * rsqrt(mean(x^2)+eps) * (1 + w)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (1.0 + w)


def silu(x):
    return x / (1.0 + np.exp(-x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


def linear_attn(c, W, p, h, wrong):
    """Gated DeltaNet."""
    T, nk, nv = h.shape[0], c["linear_num_key_heads"], c["linear_num_value_heads"]
    dk, dv, K = c["linear_key_head_dim"], c["linear_value_head_dim"], c["linear_conv_kernel_dim"]
    key_dim = nk * dk
    qkv = h @ W[p + "in_proj_qkv.weight"].T                       # [T, conv_dim]
    z = (h @ W[p + "in_proj_z.weight"].T).reshape(T, nv, dv)
    b = h @ W[p + "in_proj_b.weight"].T                           # [T, nv]
    a = h @ W[p + "in_proj_a.weight"].T                           # [T, nv]
    cw = W[p + "conv1d.weight"][:, 0, :]                          # [conv_dim, K]
    pad = np.concatenate([np.zeros((K - 1, qkv.shape[1])), qkv], 0)   # causal depthwise conv1d, then silu
    conv = silu(sum(pad[k:k + T] * cw[:, k][None, :] for k in range(K)))
    q = conv[:, :key_dim].reshape(T, nk, dk)
    k_ = conv[:, key_dim:2 * key_dim].reshape(T, nk, dk)
    v = conv[:, 2 * key_dim:].reshape(T, nv, dv)
    beta = sigmoid(b)
    g = -np.exp(W[p + "A_log"]) * softplus(a + W[p + "dt_bias"])
    # grouped value attention: q/k head j serves value heads j*r .. j*r+r-1 (repeat_interleave)
    grow = (lambda x: np.tile(x, (1, nv // nk, 1))) if wrong else (lambda x: np.repeat(x, nv // nk, axis=1))
    q, k_ = grow(q), grow(k_)
    # l2norm (eps inside rsqrt of sum of squares), q scaled by dk^-0.5
    q = q / np.sqrt(np.sum(q * q, -1, keepdims=True) + 1e-6) * dk ** -0.5
    k_ = k_ / np.sqrt(np.sum(k_ * k_, -1, keepdims=True) + 1e-6)
    S = np.zeros((nv, dk, dv))
    out = np.zeros((T, nv, dv))
    for t in range(T):
        S = S * np.exp(g[t])[:, None, None]
        delta = (v[t] - np.einsum("hk,hkv->hv", k_[t], S)) * beta[t][:, None]
        S = S + k_[t][:, :, None] * delta[:, None, :]
        out[t] = np.einsum("hk,hkv->hv", q[t], S)
    # gated RMSNorm: weight * norm(x) * silu(z)  (weight NOT 1-centred)
    o = out / np.sqrt(np.mean(out * out, -1, keepdims=True) + c["rms_norm_eps"]) * W[p + "norm.weight"] * silu(z)
    return o.reshape(T, nv * dv) @ W[p + "out_proj.weight"].T


def full_attn(c, W, p, h):
    """Gated attention, partial rope."""
    T, nh, nkv, hd, eps = h.shape[0], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
    qg = (h @ W[p + "q_proj.weight"].T).reshape(T, nh, 2 * hd)
    q, gate = rmsnorm1p(qg[..., :hd], W[p + "q_norm.weight"], eps), qg[..., hd:].reshape(T, nh * hd)
    k = rmsnorm1p((h @ W[p + "k_proj.weight"].T).reshape(T, nkv, hd), W[p + "k_norm.weight"], eps)
    v = (h @ W[p + "v_proj.weight"].T).reshape(T, nkv, hd)
    rp = c["rope_parameters"]
    dim = int(hd * rp["partial_rotary_factor"])
    fr = np.arange(T)[:, None] * (1.0 / (rp["rope_theta"] ** (np.arange(0, dim, 2) / dim)))[None, :]
    # text only: the 3 mrope rows carry identical positions, so the interleave is a no-op
    emb = np.concatenate([fr, fr], -1)
    cos, sin = np.cos(emb)[:, None, :], np.sin(emb)[:, None, :]

    def rot(x):
        xr = x[..., :dim]
        rh = np.concatenate([-xr[..., dim // 2:], xr[..., :dim // 2]], -1)
        return np.concatenate([xr * cos + rh * sin, x[..., dim:]], -1)
    q, k = rot(q), rot(k)
    k, v = np.repeat(k, nh // nkv, axis=1), np.repeat(v, nh // nkv, axis=1)   # repeat_kv: head i uses kv head i // rep
    s = np.einsum("thd,shd->hts", q, k) * hd ** -0.5
    s = np.where(np.triu(np.ones((T, T), bool), 1)[None], -np.inf, s)
    pr = np.exp(s - s.max(-1, keepdims=True))
    pr /= pr.sum(-1, keepdims=True)
    o = np.einsum("hts,shd->thd", pr, v).reshape(T, nh * hd) * sigmoid(gate)
    return o @ W[p + "o_proj.weight"].T


def moe(c, W, p, h):
    """Sparse MoE block with a gated shared expert."""
    k, I = c["num_experts_per_tok"], c["moe_intermediate_size"]
    sg, su, sd = (W[p + f"mlp.shared_expert.{n}_proj.weight"] for n in ("gate", "up", "down"))
    shared = sigmoid(h @ W[p + "mlp.shared_expert_gate.weight"].T) * ((silu(h @ sg.T) * (h @ su.T)) @ sd.T)
    logits = h @ W[p + "mlp.gate.weight"].T
    pr = np.exp(logits - logits.max(-1, keepdims=True))
    pr /= pr.sum(-1, keepdims=True)
    gu, dn = W[p + "mlp.experts.gate_up_proj"], W[p + "mlp.experts.down_proj"]   # [E, 2I, H], [E, H, I]
    out = np.zeros_like(h)
    for t in range(h.shape[0]):
        sel = np.argsort(-pr[t], kind="stable")[:k]
        for e, wt in zip(sel, pr[t][sel] / pr[t][sel].sum()):
            y = gu[e] @ h[t]
            out[t] += wt * (dn[e] @ (silu(y[:I]) * y[I:]))
    return out + shared


def reference(folder, ids, wrong=False):
    with open(os.path.join(folder, "config.json")) as f:
        c = json.load(f)["text_config"]
    W = read_floats(folder)
    eps, LM = c["rms_norm_eps"], "model.language_model."
    x = W[LM + "embed_tokens.weight"][np.asarray(ids)]
    for li, lt in enumerate(c["layer_types"][: c["num_hidden_layers"]]):
        p = f"{LM}layers.{li}."
        h = rmsnorm1p(x, W[p + "input_layernorm.weight"], eps)
        x = x + (linear_attn(c, W, p + "linear_attn.", h, wrong) if lt == "linear_attention"
                 else full_attn(c, W, p + "self_attn.", h))
        x = x + moe(c, W, p, rmsnorm1p(x, W[p + "post_attention_layernorm.weight"], eps))
    return rmsnorm1p(x, W[LM + "norm.weight"], eps) @ W["lm_head.weight"].T


# ---- Generator

def make_config(variant, tokdir):
    v = dict(VARIANTS[variant])
    for k in ("seed", "a_log_f32", "mtp_fused"):
        v.pop(k, None)
    with open(RELEASE) as f:
        cfg = json.load(f)
    with open(os.path.join(tokdir, "tokenizer.json")) as f:
        special = {t["content"]: t["id"] for t in json.load(f)["added_tokens"]}
    tc = cfg["text_config"]
    ntok = max(special.values()) + 1
    small = dict(SMALL_TEXT, **v)
    if small["rope_parameters"] is None:   # keep the release's
        del small["rope_parameters"]
    assert set(small) <= set(tc), set(small) - set(tc)
    tc.update(small, vocab_size=-(-ntok // 32) * 32 + 32, eos_token_id=special["<|im_end|>"])   # padded as released
    if "layer_types" not in v:
        tc["layer_types"] = ["linear_attention" if (i + 1) % tc["full_attention_interval"] else "full_attention"
                             for i in range(tc["num_hidden_layers"])]
    cfg["vision_config"].update(SMALL_VISION, out_hidden_size=tc["hidden_size"])
    for key, tok in (("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
                     ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>")):
        cfg[key] = special[tok]
    return cfg


def make_weights(cfg, rng, a_log_f32, mtp_fused):
    tc, vc = cfg["text_config"], cfg["vision_config"]
    H, V = tc["hidden_size"], tc["vocab_size"]
    nh, nkv, hd = tc["num_attention_heads"], tc["num_key_value_heads"], tc["head_dim"]
    nv, dv = tc["linear_num_value_heads"], tc["linear_value_head_dim"]
    key_dim, value_dim = tc["linear_num_key_heads"] * tc["linear_key_head_dim"], nv * dv
    conv_dim = 2 * key_dim + value_dim
    E, I, SI = tc["num_experts"], tc["moe_intermediate_size"], tc["shared_expert_intermediate_size"]
    lin = lambda o, i, gain=1.0: rng.standard_normal((o, i)) * (gain / np.sqrt(i))
    normw = lambda n: rng.standard_normal(n) * 0.35   # (1 + w) weights, random, not tiny
    T = {}   # name -> (dtype, array)

    def put(name, a, dt="BF16"):
        T[name] = (dt, np.asarray(a, dtype=np.float64))

    def moe(p):
        put(p + "mlp.gate.weight", lin(E, H, 5.0))
        put(p + "mlp.experts.gate_up_proj", np.stack([np.concatenate([lin(I, H, 1.2), lin(I, H, 1.2)]) for _ in range(E)]))
        put(p + "mlp.experts.down_proj", np.stack([lin(H, I) for _ in range(E)]))
        put(p + "mlp.shared_expert.gate_proj.weight", lin(SI, H, 1.2))
        put(p + "mlp.shared_expert.up_proj.weight", lin(SI, H, 1.2))
        put(p + "mlp.shared_expert.down_proj.weight", lin(H, SI))
        put(p + "mlp.shared_expert_gate.weight", lin(1, H, 1.5))

    def full_attn(p):
        put(p + "self_attn.q_proj.weight", lin(nh * hd * 2, H))
        put(p + "self_attn.k_proj.weight", lin(nkv * hd, H))
        put(p + "self_attn.v_proj.weight", lin(nkv * hd, H))
        put(p + "self_attn.o_proj.weight", lin(H, nh * hd, 2.0))
        put(p + "self_attn.q_norm.weight", normw(hd))
        put(p + "self_attn.k_norm.weight", normw(hd))

    LM = "model.language_model."
    put(LM + "embed_tokens.weight", rng.standard_normal((V, H)))
    for li, lt in enumerate(tc["layer_types"]):
        p = f"{LM}layers.{li}."
        put(p + "input_layernorm.weight", normw(H))
        put(p + "post_attention_layernorm.weight", normw(H))
        if lt == "linear_attention":
            a = p + "linear_attn."
            put(a + "in_proj_qkv.weight", lin(conv_dim, H))
            put(a + "in_proj_z.weight", lin(value_dim, H))
            put(a + "in_proj_b.weight", lin(nv, H))
            put(a + "in_proj_a.weight", lin(nv, H, 0.7))
            put(a + "conv1d.weight", rng.standard_normal((conv_dim, 1, tc["linear_conv_kernel_dim"])) * 0.6)
            put(a + "dt_bias", rng.standard_normal(nv) * 0.5, "F32" if a_log_f32 else "BF16")
            put(a + "A_log", np.log(rng.uniform(0.05, 1.5, nv)), "F32" if a_log_f32 else "BF16")
            put(a + "norm.weight", 1.0 + rng.standard_normal(dv) * 0.35)
            put(a + "out_proj.weight", lin(H, value_dim, 1.5))
        else:
            full_attn(p)
        moe(p)
    put(LM + "norm.weight", normw(H))
    put("lm_head.weight", lin(V, H, 4.0))
    put("mtp.fc.weight", lin(H, 2 * H))
    for n in ("pre_fc_norm_embedding", "pre_fc_norm_hidden", "norm", "layers.0.input_layernorm",
              "layers.0.post_attention_layernorm"):
        put(f"mtp.{n}.weight", normw(H))
    full_attn("mtp.layers.0.")
    moe("mtp.layers.0.")
    if not mtp_fused:   # the release ships the MTP experts unfused, one tensor per expert
        gu, dn = T.pop("mtp.layers.0.mlp.experts.gate_up_proj")[1], T.pop("mtp.layers.0.mlp.experts.down_proj")[1]
        for e in range(E):
            put(f"mtp.layers.0.mlp.experts.{e}.gate_proj.weight", gu[e, :I])
            put(f"mtp.layers.0.mlp.experts.{e}.up_proj.weight", gu[e, I:])
            put(f"mtp.layers.0.mlp.experts.{e}.down_proj.weight", dn[e])
    vh, vi, VP = vc["hidden_size"], vc["intermediate_size"], "model.visual."
    put(VP + "patch_embed.proj.weight",
        rng.standard_normal((vh, 3, vc["temporal_patch_size"], vc["patch_size"], vc["patch_size"])) * 0.02)
    put(VP + "patch_embed.proj.bias", np.zeros(vh))
    put(VP + "pos_embed.weight", rng.standard_normal((vc["num_position_embeddings"], vh)) * 0.02)
    for b in range(vc["depth"]):
        bp = f"{VP}blocks.{b}."
        for n in ("norm1", "norm2"):
            put(bp + n + ".weight", np.ones(vh))
            put(bp + n + ".bias", np.zeros(vh))
        for n, o, i in (("attn.qkv", 3 * vh, vh), ("attn.proj", vh, vh), ("mlp.linear_fc1", vi, vh),
                        ("mlp.linear_fc2", vh, vi)):
            put(bp + n + ".weight", lin(o, i))
            put(bp + n + ".bias", np.zeros(o))
    mh = vh * vc["spatial_merge_size"] ** 2
    put(VP + "merger.norm.weight", np.ones(vh))
    put(VP + "merger.norm.bias", np.zeros(vh))
    for n, o, i in (("linear_fc1", mh, mh), ("linear_fc2", H, mh)):
        put(VP + f"merger.{n}.weight", lin(o, i))
        put(VP + f"merger.{n}.bias", np.zeros(o))
    return T


def generate(variant, out, tokdir):
    v = VARIANTS[variant]
    cfg = make_config(variant, tokdir)
    T = make_weights(cfg, np.random.default_rng(v["seed"]), v.get("a_log_f32", False), v.get("mtp_fused", False))
    names = sorted(T)   # three shards in name order, as HF's save_pretrained cuts them
    write_checkpoint(out, cfg, [[(n, T[n][0], T[n][1]) for n in names[i * len(names) // 3:(i + 1) * len(names) // 3]]
                                for i in range(3)], tokdir)
    return list(range(3, 433, 11)), [1, 2, 5, 17, 40]
