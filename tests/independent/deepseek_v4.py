"""DeepSeek V4 Flash (deepseek_v4): random checkpoints in the release layout and a float64 reference.

Layout: the release's config.json (tests/fixtures/release-configs/deepseek-v4-flash.json) with
small sizes; names without a `model.` prefix; an FP8 e4m3 trunk with F8_E8M0 128x128 block
scales, FP4 e2m1 experts packed two to a byte in I8 with F8_E8M0 scales per 32, BF16/F32
elsewhere, hash-routed first layers (gate.tid2eid, I64), the mtp.0.* block; three shards."""
import json
import math
import os

import numpy as np

from safetensors_io import E2M1, E4M3, bf16_round, e2m1_encode, e4m3_encode, e8m0_decode, read_checkpoint, write_checkpoint

MKTINY_ARCH = "deepseek-v4"
RELEASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "release-configs",
                       "deepseek-v4-flash.json")
SMALL = dict(H=192, nh=4, D=128, rd=32, qL=96, G=2, oL=48, win=12, Hi=8, Di=64, topk=3, E=8, K=3, I=64, hash=3, V=512,
             ratios=[0, 0, 4, 8, 4, 8, 4], mtp_ratio=4, factor=8, orig=512, theta=10000, ctheta=160000, hc_eps=1e-6,
             rms_eps=1e-6, rsf=1.5, lim=10.0, hc_iters=20)
VARIANTS = {
    # ratio-4 layers (overlapping compressor + indexer) and ratio-8 layers (plain compressor)
    "A": dict(seed=1234),
    # the release's ratio-128 layers and its ratio-0 MTP entry; 130 tokens reach the first 128-row block
    "C": dict(seed=5, ratios=[0, 0, 4, 128, 4, 128, 4], mtp_ratio=0, win=8, topk=4, tokens=130),
    # config scalars off the release's: the SwiGLU clamp bites at 1.0, fewer Sinkhorn rounds, other eps and rope
    "D": dict(seed=77, rms_eps=1e-5, hc_eps=1e-4, hc_iters=10, rsf=2.5, lim=1.0, factor=16, orig=1024, theta=20000,
              ctheta=80000),
}
WRONG_READING = "attention output left rotated (HF: apply_rotary_pos_emb with -sin undoes the rope on it)"


# ---- Reference: float64 numpy forward of HF transformers' modeling_deepseek_v4.py (plain float, no
# FP8/FP4 activation rounding), reading a RELEASE-layout checkpoint and dequantizing its weights.
# Mapping release -> HF: attn.wq_a=q_a_proj, q_norm=q_a_norm, wq_b=q_b_proj, wkv=kv_proj,
# kv_norm, wo_a=o_a_proj (grouped), wo_b=o_b_proj, attn_sink=sinks, compressor.{wkv,wgate,ape,norm}
# = {kv_proj,gate_proj,position_bias,kv_norm}, indexer.wq_b=q_b_proj, indexer.weights_proj=scorer.weights_proj,
# ffn.gate.{weight,bias,tid2eid}, experts.E.w1/w3/w2 = gate/up/down, hc_{attn,ffn}_{fn,base,scale},
# hc_head_*, attn_norm=input_layernorm, ffn_norm=post_attention_layernorm.

def load(folder):
    """Float64 weights: e4m3 x 2^(e8m0) per 128x128 block; e2m1 pairs (low nibble first) x 2^(e8m0) per 32."""
    raw = read_checkpoint(folder)
    W = {}
    for k, (dt, a) in raw.items():
        if dt == "F8_E4M3":
            s = e8m0_decode(raw[k[:-7] + ".scale"][1])
            W[k] = E4M3[a] * np.repeat(np.repeat(s, 128, 0), 128, 1)[: a.shape[0], : a.shape[1]]
        elif dt == "I8":
            q = np.stack([E2M1[a & 0xF], E2M1[a >> 4]], -1).reshape(a.shape[0], -1)
            W[k] = q * np.repeat(e8m0_decode(raw[k[:-7] + ".scale"][1]), 32, 1)
        elif not (k.endswith(".scale") and k[:-6] + ".weight" in raw):
            W[k] = a
    return W


class Cfg:
    def __init__(self, cfg):
        self.H, self.nh, self.D = cfg["hidden_size"], cfg["num_attention_heads"], cfg["head_dim"]
        self.rd, self.G, self.oL = cfg["qk_rope_head_dim"], cfg["o_groups"], cfg["o_lora_rank"]
        self.win, self.Hi, self.Di, self.topk = cfg["sliding_window"], cfg["index_n_heads"], cfg["index_head_dim"], cfg["index_topk"]
        self.K, self.nhash, self.L = cfg["num_experts_per_tok"], cfg.get("num_hash_layers", 3), cfg["num_hidden_layers"]
        self.ratios = cfg["compress_ratios"][: self.L]
        self.eps, self.hceps, self.iters = cfg["rms_norm_eps"], cfg["hc_eps"], cfg["hc_sinkhorn_iters"]
        self.lim, self.rsf, self.hc = cfg["swiglu_limit"], cfg["routed_scaling_factor"], cfg["hc_mult"]
        rs = cfg["rope_scaling"]
        self.inv_main = 1.0 / (cfg["rope_theta"] ** (np.arange(0, self.rd, 2) / self.rd))
        self.inv_comp = yarn_inv(self.rd, cfg["compress_rope_theta"], rs["factor"], rs["original_max_position_embeddings"],
                                 rs.get("beta_fast", 32), rs.get("beta_slow", 1))


def yarn_inv(dim, base, factor, orig, beta_fast, beta_slow):
    # modeling_rope_utils._compute_yarn_parameters (truncate=True); attention_factor forced 1.0 by the config
    pos_freqs = base ** (np.arange(0, dim, 2) / dim)
    cd = lambda r: (dim * math.log(orig / (r * 2 * math.pi))) / (2 * math.log(base))
    low, high = max(math.floor(cd(beta_fast)), 0), min(math.ceil(cd(beta_slow)), dim - 1)
    if low == high:
        high += 0.001
    ef = 1 - np.clip((np.arange(dim // 2) - low) / (high - low), 0, 1)
    return 1.0 / (factor * pos_freqs) * (1 - ef) + 1.0 / pos_freqs * ef


def rms(x, w, eps):
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return y * w if w is not None else y


def rope(x, inv, pos, sign=1.0):
    # apply_rotary_pos_emb on the trailing 2*len(inv) channels, pairs interleaved; x [..., T, d], pos [T]
    rdim = 2 * len(inv)
    ang = pos[:, None] * inv[None, :]
    c, s = np.repeat(np.cos(ang), 2, -1), np.repeat(np.sin(ang), 2, -1) * sign
    r = x[..., -rdim:]
    rot = np.stack([-r[..., 1::2], r[..., 0::2]], -1).reshape(r.shape)
    return np.concatenate([x[..., :-rdim], r * c + rot * s], -1)


def softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0))
    return e / e.sum(axis=axis, keepdims=True)


def compressor(W, p, x, ratio, d, overlap, inv, eps):
    kv, gate = x @ W[p + "wkv.weight"].T, x @ W[p + "wgate.weight"].T
    nw = x.shape[0] // ratio
    if nw == 0:
        return np.zeros((0, d))
    ck = kv[: nw * ratio].reshape(nw, ratio, -1)
    cg = gate[: nw * ratio].reshape(nw, ratio, -1) + W[p + "ape"]
    if overlap:   # each row also pools the previous window's first half
        nk, ng = np.zeros((nw, 2 * ratio, d)), np.full((nw, 2 * ratio, d), -np.inf)
        nk[:, ratio:], ng[:, ratio:] = ck[..., d:], cg[..., d:]
        nk[1:, :ratio], ng[1:, :ratio] = ck[:-1, :, :d], cg[:-1, :, :d]
        ck, cg = nk, ng
    out = rms((ck * softmax(cg, 1)).sum(1), W[p + "norm.weight"], eps)
    return rope(out, inv, np.arange(nw) * float(ratio))


def topk_lower(s, k):
    return np.lexsort((np.arange(s.shape[-1]), -s))[:k]   # descending, ties to the lower index


def attention(W, c, L, x, wrong):
    p = f"layers.{L}.attn."
    T, D, ratio = x.shape[0], c.D, c.ratios[L]
    inv = c.inv_main if ratio == 0 else c.inv_comp
    pos = np.arange(T, dtype=np.float64)
    qr = rms(x @ W[p + "wq_a.weight"].T, W[p + "q_norm.weight"], c.eps)
    q = rope(rms((qr @ W[p + "wq_b.weight"].T).reshape(T, c.nh, D).transpose(1, 0, 2), None, c.eps), inv, pos)
    kv = rope(rms(x @ W[p + "wkv.weight"].T, W[p + "kv_norm.weight"], c.eps), inv, pos)
    i = np.arange(T)
    mask = np.where((i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - c.win), 0.0, -np.inf)
    keys = kv
    if ratio > 0:
        rows = compressor(W, p + "compressor.", x, ratio, D, ratio == 4, c.inv_comp, c.eps)
        n, thr = rows.shape[0], (i + 1) // ratio   # a row is visible once its window is complete
        bias = np.where(np.arange(n)[None, :] < thr[:, None], 0.0, -np.inf)
        if ratio == 4:   # the lightning indexer keeps the top-k visible rows
            ik = compressor(W, p + "indexer.compressor.", x, 4, c.Di, True, c.inv_comp, c.eps)
            qi = rope((qr @ W[p + "indexer.wq_b.weight"].T).reshape(T, c.Hi, c.Di).transpose(1, 0, 2), c.inv_comp, pos)
            sc = np.maximum(np.einsum("htd,nd->thn", qi, ik), 0) * c.Di ** -0.5
            wt = (x @ W[p + "indexer.weights_proj.weight"].T) * c.Hi ** -0.5
            s = np.where(bias == 0, (sc * wt[..., None]).sum(1), -np.inf)
            bias = np.full((T, n), -np.inf)
            for t in range(T):
                bias[t, [j for j in topk_lower(s[t], min(c.topk, n)) if j < thr[t]]] = 0.0
        keys = np.concatenate([kv, rows], 0)
        mask = np.concatenate([mask, bias], 1)
    logits = (q @ keys.T) * D ** -0.5 + mask   # [nh, T, S]
    sink = np.broadcast_to(W[p + "attn_sink"][:, None, None], (c.nh, T, 1))
    o = softmax(np.concatenate([logits, sink], -1), -1)[..., :-1] @ keys   # [nh, T, D]
    if not wrong:
        o = rope(o, inv, pos, sign=-1.0)
    o = o.transpose(1, 0, 2).reshape(T, c.G, -1)
    z = np.einsum("tgd,grd->tgr", o, W[p + "wo_a.weight"].reshape(c.G, c.oL, -1)).reshape(T, -1)
    return z @ W[p + "wo_b.weight"].T


def silu(x):
    return x / (1 + np.exp(-x))


def mlp(W, p, x, lim):
    g = np.minimum(x @ W[p + "w1.weight"].T, lim)
    u = np.clip(x @ W[p + "w3.weight"].T, -lim, lim)
    return (silu(g) * u) @ W[p + "w2.weight"].T


def moe(W, c, L, x, ids):
    p = f"layers.{L}.ffn."
    scores = np.sqrt(np.logaddexp(0, x @ W[p + "gate.weight"].T))   # sqrtsoftplus
    if L < c.nhash:
        idx = W[p + "gate.tid2eid"][ids].astype(int)
    else:
        idx = np.stack([topk_lower(scores[t] + W[p + "gate.bias"], c.K) for t in range(x.shape[0])])
    w = np.take_along_axis(scores, idx, 1)
    w = w / (w.sum(-1, keepdims=True) + 1e-20) * c.rsf
    y = mlp(W, p + "shared_experts.", x, c.lim)
    for t in range(x.shape[0]):
        for j in range(idx.shape[1]):
            y[t] += w[t, j] * mlp(W, p + f"experts.{idx[t, j]}.", x[t:t + 1], c.lim)[0]
    return y


def hyper(W, pfx, X, c):
    T, hc = X.shape[0], c.hc
    m = rms(X.reshape(T, -1), None, c.eps) @ W[pfx + "fn"].T   # input_norm uses rms_norm_eps
    sc, b = W[pfx + "scale"], W[pfx + "base"]
    pre = 1 / (1 + np.exp(-(m[:, :hc] * sc[0] + b[:hc]))) + c.hceps
    post = 2 / (1 + np.exp(-(m[:, hc:2 * hc] * sc[1] + b[hc:2 * hc])))
    comb = softmax((m[:, 2 * hc:] * sc[2] + b[2 * hc:]).reshape(T, hc, hc), -1) + c.hceps
    comb = comb / (comb.sum(-2, keepdims=True) + c.hceps)
    for _ in range(c.iters - 1):
        comb = comb / (comb.sum(-1, keepdims=True) + c.hceps)
        comb = comb / (comb.sum(-2, keepdims=True) + c.hceps)
    return post, comb, (pre[..., None] * X).sum(1)


def reference(folder, ids, wrong=False):
    with open(os.path.join(folder, "config.json")) as f:
        c = Cfg(json.load(f))
    W = load(folder)
    ids = np.asarray(ids)
    T = len(ids)
    X = np.repeat(W["embed.weight"][ids][:, None, :], c.hc, 1)
    for L in range(c.L):
        post, comb, a = hyper(W, f"layers.{L}.hc_attn_", X, c)
        o = attention(W, c, L, rms(a, W[f"layers.{L}.attn_norm.weight"], c.eps), wrong)
        X = post[..., None] * o[:, None, :] + np.swapaxes(comb, -1, -2) @ X
        post, comb, a = hyper(W, f"layers.{L}.hc_ffn_", X, c)
        o = moe(W, c, L, rms(a, W[f"layers.{L}.ffn_norm.weight"], c.eps), ids)
        X = post[..., None] * o[:, None, :] + np.swapaxes(comb, -1, -2) @ X
    m = rms(X.reshape(T, -1), None, c.eps) @ W["hc_head_fn"].T
    pre = 1 / (1 + np.exp(-(m * W["hc_head_scale"][0] + W["hc_head_base"]))) + c.hceps
    return rms((pre[..., None] * X).sum(1), W["norm.weight"], c.eps) @ W["head.weight"].T


# ---- Generator

def make_weights(P, rng):
    H, nh, D, qL, G, oL = P["H"], P["nh"], P["D"], P["qL"], P["G"], P["oL"]
    Hi, Di, E, K, I, V, hc = P["Hi"], P["Di"], P["E"], P["K"], P["I"], P["V"], 4
    T = {}
    r = lambda *s: rng.standard_normal(s)
    mat = lambda o, i, gain=1.0: r(o, i) / np.sqrt(i) * gain
    norm = lambda n: 1 + 0.15 * r(n)

    def bf16(name, x):
        T[name] = ("BF16", bf16_round(x))

    def f32(name, x):
        T[name] = ("F32", np.float32(x))

    def fp8(prefix, o, i, gain=1.0):
        """e4m3 codes, one power-of-two (E8M0) scale per 128x128 block; block magnitudes differ."""
        w = mat(o, i, gain)
        sc, codes = np.zeros((-(-o // 128), -(-i // 128)), dtype=np.uint8), np.zeros((o, i), dtype=np.uint8)
        for a in range(sc.shape[0]):
            for b in range(sc.shape[1]):
                blk = w[a * 128:(a + 1) * 128, b * 128:(b + 1) * 128] * 2.0 ** rng.uniform(-1, 1)
                e = int(np.ceil(np.log2(np.abs(blk).max() / 448.0)))
                sc[a, b] = e + 127
                codes[a * 128:(a + 1) * 128, b * 128:(b + 1) * 128] = e4m3_encode(blk / 2.0 ** e)
        T[prefix + ".weight"] = ("F8_E4M3", codes)
        T[prefix + ".scale"] = ("F8_E8M0", sc)

    def fp4(prefix, o, i, gain=1.0):
        """e2m1 codes, two to a byte (low nibble first), one E8M0 scale per 32 inputs."""
        blk = mat(o, i, gain).reshape(o, i // 32, 32)
        e = np.ceil(np.log2(np.abs(blk).max(-1) / 6.0)).astype(int)
        codes = e2m1_encode(blk / 2.0 ** e[..., None]).reshape(o, i)
        T[prefix + ".weight"] = ("I8", (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8))
        T[prefix + ".scale"] = ("F8_E8M0", (e + 127).astype(np.uint8))

    M = (2 + hc) * hc
    bf16("embed.weight", mat(V, H, np.sqrt(H)))

    def block(p, ra, hashed):
        for s in ("attn", "ffn"):
            f32(p + f"hc_{s}_fn", mat(M, hc * H, 1.5))
            f32(p + f"hc_{s}_base", 0.3 * r(M))
            f32(p + f"hc_{s}_scale", 1 + 0.2 * r(3))
        bf16(p + "attn_norm.weight", norm(H))
        bf16(p + "ffn_norm.weight", norm(H))
        a = p + "attn."
        f32(a + "attn_sink", 0.5 * r(nh))
        fp8(a + "wq_a", qL, H)
        bf16(a + "q_norm.weight", norm(qL))
        fp8(a + "wq_b", nh * D, qL)
        fp8(a + "wkv", D, H)
        bf16(a + "kv_norm.weight", 1.5 * norm(D))
        fp8(a + "wo_a", G * oL, nh * D // G)
        fp8(a + "wo_b", H, G * oL, 0.5)
        if ra > 0:
            c, k = 2 if ra == 4 else 1, a + "compressor."
            bf16(k + "wkv.weight", mat(c * D, H))
            bf16(k + "wgate.weight", mat(c * D, H))
            f32(k + "ape", 0.5 * r(ra, c * D))
            bf16(k + "norm.weight", 1.5 * norm(D))
        if ra == 4:
            i = a + "indexer."
            fp8(i + "wq_b", Hi * Di, qL)
            bf16(i + "weights_proj.weight", mat(Hi, H))
            bf16(i + "compressor.wkv.weight", mat(2 * Di, H))
            bf16(i + "compressor.wgate.weight", mat(2 * Di, H))
            f32(i + "compressor.ape", 0.5 * r(4, 2 * Di))
            bf16(i + "compressor.norm.weight", norm(Di))
        f = p + "ffn."
        bf16(f + "gate.weight", mat(E, H, 2.0))
        if hashed:
            T[f + "gate.tid2eid"] = ("I64", np.stack([rng.permutation(E)[:K] for _ in range(V)]))
        else:
            f32(f + "gate.bias", 0.2 * r(E))
        fp8(f + "shared_experts.w1", I, H, 2.0)
        fp8(f + "shared_experts.w3", I, H, 2.0)
        fp8(f + "shared_experts.w2", H, I, 0.5)
        for e in range(E):
            fp4(f + f"experts.{e}.w1", I, H, 2.0)
            fp4(f + f"experts.{e}.w3", I, H, 2.0)
            fp4(f + f"experts.{e}.w2", H, I, 0.5)

    for L, ra in enumerate(P["ratios"]):
        block(f"layers.{L}.", ra, L < P["hash"])
    block("mtp.0.", P["mtp_ratio"], False)   # the engine reads it past, as HF does
    fp8("mtp.0.e_proj", H, H)
    fp8("mtp.0.h_proj", H, H)
    for n in ("enorm", "hnorm", "norm"):
        bf16(f"mtp.0.{n}.weight", norm(H))
    f32("mtp.0.hc_head_fn", r(hc, hc * H) / np.sqrt(hc * H))
    f32("mtp.0.hc_head_base", 0.3 * r(hc))
    f32("mtp.0.hc_head_scale", 1 + 0.2 * r(1))
    bf16("norm.weight", norm(H))
    bf16("head.weight", mat(V, H))
    f32("hc_head_fn", mat(hc, hc * H, 1.5))
    f32("hc_head_base", 0.3 * r(hc))
    f32("hc_head_scale", 1 + 0.2 * r(1))
    return T


def generate(variant, out, tokdir):
    P = dict(SMALL, **VARIANTS[variant])
    T = make_weights(P, np.random.default_rng(P["seed"]))
    with open(RELEASE) as f:
        cfg = json.load(f)
    with open(os.path.join(tokdir, "config.json")) as f:
        tc = json.load(f)
    cfg.update(hidden_size=P["H"], num_attention_heads=P["nh"], head_dim=P["D"], qk_rope_head_dim=P["rd"],
               q_lora_rank=P["qL"], o_groups=P["G"], o_lora_rank=P["oL"], sliding_window=P["win"],
               index_n_heads=P["Hi"], index_head_dim=P["Di"], index_topk=P["topk"], n_routed_experts=P["E"],
               num_experts_per_tok=P["K"], moe_intermediate_size=P["I"], num_hash_layers=P["hash"], vocab_size=P["V"],
               num_hidden_layers=len(P["ratios"]), compress_ratios=P["ratios"] + [P["mtp_ratio"]], rope_theta=P["theta"],
               compress_rope_theta=P["ctheta"], hc_eps=P["hc_eps"], rms_norm_eps=P["rms_eps"], routed_scaling_factor=P["rsf"],
               swiglu_limit=P["lim"], hc_sinkhorn_iters=P["hc_iters"], bos_token_id=tc["bos_token_id"],
               eos_token_id=tc["eos_token_id"])
    cfg["rope_scaling"].update(factor=P["factor"], original_max_position_embeddings=P["orig"])
    names = sorted(T)
    per = -(-len(names) // 3)
    write_checkpoint(out, cfg, [[(n, *T[n]) for n in names[i:i + per]] for i in range(0, len(names), per)], tokdir)
    ids = [int(i) for i in np.random.default_rng(33).integers(0, 400, P.get("tokens", 40))]
    return ids, [1, 5, 17, 40] + ([128, P["tokens"]] if "tokens" in P else [])
