#include "model/weights.hpp"

#include "waste/waste.hpp"

#include <cmath>

namespace waste::model {
namespace {

class Loader {
public:
    Loader(const format::Manifest &m, const format::Trunk &t, Weights &w) : m_m(m), m_t(t), m_w(w) {}

    [[noreturn]] void refuse(const std::string &name, const std::string &what) const
    {
        throw Error(ErrorCode::Format, m_t.file().path() + ": tensor " + m_m.prefix + name + " " + what +
                                           " (the container does not match its config; re-convert it)");
    }

    TensorPtr optional(const std::string &name, bool resident = true)
    {
        TensorPtr t = m_t.load(name, resident);
        if (t)
            m_w.residentBytes += t->residentBytes();
        return t;
    }

    // A matrix [out, in], any trunk format.
    TensorPtr mat(const std::string &name, int64_t out, int64_t in, bool resident = true)
    {
        TensorPtr t = optional(name, resident);
        if (!t)
            refuse(name, "is missing");
        if (t->shape.size() != 2 || t->rows != out || t->cols != in)
            refuse(name, "has shape " + shapeText(*t) + ", expected [" + std::to_string(out) + ", " + std::to_string(in) + "]");
        return t;
    }

    // A raw f32 array read as at least n values; must be stored as F32.
    TensorPtr vec(const std::string &name, int64_t n)
    {
        TensorPtr t = optional(name);
        if (!t)
            refuse(name, "is missing");
        if (t->format != format::TrunkFormat::F32)
            refuse(name, "must be stored as F32");
        if (t->rows * t->cols < n)
            refuse(name, "has " + std::to_string(t->rows * t->cols) + " values, needs " + std::to_string(n));
        return t;
    }

    static std::string shapeText(const format::TrunkTensor &t)
    {
        std::string s = "[";
        for (size_t i = 0; i < t.shape.size(); ++i)
            s += (i ? ", " : "") + std::to_string(t.shape[i]);
        return s + "]";
    }

private:
    const format::Manifest &m_m;
    const format::Trunk &m_t;
    Weights &m_w;
};

// Qwen3-Next stores its RMSNorm weights zero-centred and applies 1 + w: the sum is taken
// once here, in f32 as the release's code takes it, so the forward pass multiplies by
// the applied weight like every other family's.
TensorPtr appliedNorm(const TensorPtr &stored, bool zeroCentred)
{
    if (!zeroCentred)
        return stored;
    auto t = std::make_shared<format::TrunkTensor>(*stored);
    for (float &v : t->f32)
        v = 1.0f + v;
    return t;
}

void loadGatedDeltaNet(Loader &ld, const format::ModelConfig &c, const std::string &p, GdnWeights &w)
{
    const format::GqaConfig &g = c.g;
    const int64_t Hd = c.hidden, Kw = g.linKeyWidth(), Vw = g.linValueWidth(), Hv = g.linValueHeads;
    const std::string a = p + "linear_attn.";
    if (g.splitProjections) { // Qwen3.5-MoE
        w.qkv = ld.mat(a + "in_proj_qkv.weight", 2 * Kw + Vw, Hd);
        w.z = ld.mat(a + "in_proj_z.weight", Vw, Hd);
        w.b = ld.mat(a + "in_proj_b.weight", Hv, Hd);
        w.a = ld.mat(a + "in_proj_a.weight", Hv, Hd);
    } else {
        w.qkvz = ld.mat(a + "in_proj_qkvz.weight", 2 * Kw + 2 * Vw, Hd);
        w.ba = ld.mat(a + "in_proj_ba.weight", 2 * Hv, Hd);
    }
    w.conv = ld.vec(a + "conv1d.weight", int64_t(g.linConvWidth()) * c.convK);
    w.aLog = ld.vec(a + "A_log", Hv);
    w.dtBias = ld.vec(a + "dt_bias", Hv);
    w.norm = ld.vec(a + "norm.weight", g.linValueDim);
    w.out = ld.mat(a + "out_proj.weight", Hd, Vw);
}

} // namespace

// Qwen3-MoE and gpt-oss: GQA attention and routed experts on every layer, no shared
// expert, the head tied to the embedding table where the config says so. Qwen3-Next:
// Gated DeltaNet on the layers isKda marks, gated attention on the others, a gated
// shared expert, zero-centred norms; Qwen3.5-MoE the same with the DeltaNet's projections
// apart. GLM-4.5: q/k/v biases, dense first layers, a sigmoid
// router with its correction bias and ungated shared experts.
Weights loadGqaWeights(const format::Manifest &m, const format::Trunk &trunk)
{
    const format::ModelConfig &c = m.config;
    const format::GqaConfig &g = c.g;
    Weights w;
    Loader ld(m, trunk, w);
    const int64_t Hd = c.hidden, V = c.vocab, nq = int64_t(c.heads) * g.headDim, nkv = int64_t(g.kvHeads) * g.headDim;
    w.embed = ld.mat("model.embed_tokens.weight", V, Hd, /*resident=*/g.tied); // a tied table is the head too
    const bool zc = g.zeroCentredNorm;
    w.norm = appliedNorm(ld.vec("model.norm.weight", Hd), zc);
    w.head = g.tied ? w.embed : ld.mat("lm_head.weight", V, Hd);
    w.layers.resize(static_cast<size_t>(c.layers));
    const bool oss = c.arch == "gpt-oss";
    for (int L = 0; L < c.layers; ++L) {
        LayerWeights &lw = w.layers[static_cast<size_t>(L)];
        const std::string p = "model.layers." + std::to_string(L) + ".";
        lw.inNorm = appliedNorm(ld.vec(p + "input_layernorm.weight", Hd), zc);
        lw.postNorm = appliedNorm(ld.vec(p + "post_attention_layernorm.weight", Hd), zc);
        GqaWeights &a = lw.g;
        const std::string s = p + "self_attn.";
        lw.kda = g.next && c.isKda[static_cast<size_t>(L)];
        if (lw.kda) {
            loadGatedDeltaNet(ld, c, p, lw.gdn);
        } else {
            a.q = ld.mat(s + "q_proj.weight", g.outputGate ? 2 * nq : nq, Hd);
            a.k = ld.mat(s + "k_proj.weight", nkv, Hd);
            a.v = ld.mat(s + "v_proj.weight", nkv, Hd);
            a.o = ld.mat(s + "o_proj.weight", Hd, nq);
            if (g.attnBias) {
                a.qBias = ld.vec(s + "q_proj.bias", nq);
                a.kBias = ld.vec(s + "k_proj.bias", nkv);
                a.vBias = ld.vec(s + "v_proj.bias", nkv);
            }
            if (g.outBias)
                a.oBias = ld.vec(s + "o_proj.bias", Hd);
            if (g.qkNorm) {
                a.qNorm = appliedNorm(ld.vec(s + "q_norm.weight", g.headDim), zc);
                a.kNorm = appliedNorm(ld.vec(s + "k_norm.weight", g.headDim), zc);
            }
            if (g.sinks)
                a.sinks = ld.vec(s + "sinks", c.heads);
        }
        const std::string mp = p + "mlp.";
        lw.moe = c.moeLayer(L);
        if (!lw.moe) { // Qwen3's mlp_only_layers, GLM's first layers: a dense MLP, intermediate_size wide
            lw.dense.gate = ld.mat(mp + "gate_proj.weight", c.inter, Hd);
            lw.dense.up = ld.mat(mp + "up_proj.weight", c.inter, Hd);
            lw.dense.down = ld.mat(mp + "down_proj.weight", Hd, c.inter);
            continue;
        }
        MoeWeights &e = lw.moeW;
        e.router = ld.mat(mp + (oss ? "router.weight" : "gate.weight"), c.experts, Hd);
        if (g.routerBias)
            e.routerBias = ld.vec(mp + "router.bias", c.experts);
        if (g.sigmoidRouter)
            e.bias = ld.vec(mp + "gate.e_score_correction_bias", c.experts);
        if (g.expertBias) {
            e.gateUpBias = ld.vec(mp + "experts.gate_up_proj_bias", int64_t(c.experts) * 2 * c.moeInter);
            e.downBias = ld.vec(mp + "experts.down_proj_bias", int64_t(c.experts) * Hd);
        }
        if (g.sharedInter > 0) {
            // Qwen3-Next: one gated "shared_expert"; GLM-4.5: "shared_experts", ungated.
            const std::string se = mp + (g.next ? "shared_expert." : "shared_experts.");
            e.shared.gate = ld.mat(se + "gate_proj.weight", g.sharedInter, Hd);
            e.shared.up = ld.mat(se + "up_proj.weight", g.sharedInter, Hd);
            e.shared.down = ld.mat(se + "down_proj.weight", Hd, g.sharedInter);
            if (g.next)
                e.sharedGate = ld.mat(mp + "shared_expert_gate.weight", 1, Hd);
        }
        if (!m.banks.count(L))
            throw Error(ErrorCode::Format, "manifest.json: MoE layer " + std::to_string(L) +
                                               " has no expert bank in 'layers'; the container is incomplete");
    }
    return w;
}

namespace {

// Rows [r0, r0 + n) of a resident matrix as a matrix of its own (V4's wo_a per output group).
TensorPtr rowSlice(const format::TrunkTensor &t, int64_t r0, int64_t n)
{
    auto s = std::make_shared<format::TrunkTensor>();
    s->name = t.name + "[" + std::to_string(r0) + ":" + std::to_string(r0 + n) + "]";
    s->format = t.format;
    s->rows = n;
    s->cols = t.cols;
    s->group = t.group;
    s->groups = t.groups;
    s->rowBytes = t.rowBytes;
    s->shape = {n, t.cols};
    if (t.isGrouped()) {
        s->payload.assign(t.payload.begin() + r0 * t.rowBytes, t.payload.begin() + (r0 + n) * t.rowBytes);
        s->scales.assign(t.scales.begin() + r0 * t.groups, t.scales.begin() + (r0 + n) * t.groups);
    } else {
        s->f32.assign(t.f32.begin() + r0 * t.cols, t.f32.begin() + (r0 + n) * t.cols);
    }
    return s;
}

void loadDsv4Compressor(Loader &ld, const std::string &p, int ratio, int64_t dim, int64_t Hd, Dsv4CompressorWeights &w)
{
    const int64_t c = ratio == 4 ? 2 : 1;
    w.wkv = ld.mat(p + "wkv.weight", c * dim, Hd);
    w.wgate = ld.mat(p + "wgate.weight", c * dim, Hd);
    w.ape = ld.vec(p + "ape", ratio * c * dim);
    w.norm = ld.vec(p + "norm.weight", dim);
}

// DeepSeek V4 Flash in the release's names (no "model." prefix): embed, head, norm, the
// hyper-connection mixes, and per layer attn.* (with compressor. and indexer. where its ratio
// asks), attn_norm, ffn_norm and ffn.* (gate with bias, or tid2eid on the hash layers).
Weights loadDsv4Weights(const format::Manifest &m, const format::Trunk &trunk)
{
    const format::ModelConfig &c = m.config;
    const format::Dsv4Config &v = c.v4;
    Weights w;
    Loader ld(m, trunk, w);
    const int64_t Hd = c.hidden, V = c.vocab, hc = v.hcMult, D = v.headDim, nh = c.heads;
    const int64_t mixes = (2 + hc) * hc;
    w.embed = ld.mat("embed.weight", V, Hd, /*resident=*/false);
    w.norm = ld.vec("norm.weight", Hd);
    w.head = ld.mat("head.weight", V, Hd);
    w.hcHeadFn = ld.mat("hc_head_fn", hc, hc * Hd);
    w.hcHeadBase = ld.vec("hc_head_base", hc);
    w.hcHeadScale = ld.vec("hc_head_scale", 1);
    w.layers.resize(static_cast<size_t>(c.layers));
    for (int L = 0; L < c.layers; ++L) {
        LayerWeights &lw = w.layers[static_cast<size_t>(L)];
        Dsv4Weights &a = lw.v4;
        const std::string p = "layers." + std::to_string(L) + ".";
        a.hcAttnFn = ld.mat(p + "hc_attn_fn", mixes, hc * Hd);
        a.hcAttnBase = ld.vec(p + "hc_attn_base", mixes);
        a.hcAttnScale = ld.vec(p + "hc_attn_scale", 3);
        a.hcFfnFn = ld.mat(p + "hc_ffn_fn", mixes, hc * Hd);
        a.hcFfnBase = ld.vec(p + "hc_ffn_base", mixes);
        a.hcFfnScale = ld.vec(p + "hc_ffn_scale", 3);
        lw.inNorm = ld.vec(p + "attn_norm.weight", Hd);
        lw.postNorm = ld.vec(p + "ffn_norm.weight", Hd);
        const std::string s = p + "attn.";
        a.wqA = ld.mat(s + "wq_a.weight", c.qLora, Hd);
        a.qNorm = ld.vec(s + "q_norm.weight", c.qLora);
        a.wqB = ld.mat(s + "wq_b.weight", nh * D, c.qLora);
        a.wkv = ld.mat(s + "wkv.weight", D, Hd);
        a.kvNorm = ld.vec(s + "kv_norm.weight", D);
        a.sinks = ld.vec(s + "attn_sink", nh);
        const int64_t G = v.oGroups, groupIn = nh * D / G;
        const TensorPtr woA = ld.mat(s + "wo_a.weight", G * v.oLora, groupIn);
        if (woA->onDisk)
            ld.refuse(s + "wo_a.weight", "must be resident");
        for (int64_t g = 0; g < G; ++g)
            a.woA.push_back(rowSlice(*woA, g * v.oLora, v.oLora));
        a.woB = ld.mat(s + "wo_b.weight", Hd, G * v.oLora);
        const int ratio = v.ratio(L);
        if (ratio > 0)
            loadDsv4Compressor(ld, s + "compressor.", ratio, D, Hd, a.comp);
        if (v.indexed(L)) {
            a.indexWqB = ld.mat(s + "indexer.wq_b.weight", int64_t(v.indexHeads) * v.indexDim, c.qLora);
            a.indexWeights = ld.mat(s + "indexer.weights_proj.weight", v.indexHeads, Hd);
            loadDsv4Compressor(ld, s + "indexer.compressor.", 4, v.indexDim, Hd, a.indexComp);
        }
        lw.moe = true;
        MoeWeights &e = lw.moeW;
        const std::string f = p + "ffn.";
        e.router = ld.mat(f + "gate.weight", c.experts, Hd);
        if (L < v.hashLayers) {
            a.tid2eid = ld.vec(f + "gate.tid2eid", V * c.topK);
            for (float id : a.tid2eid->f32)
                if (!(id >= 0.0f && id < float(c.experts)) || id != std::floor(id))
                    ld.refuse(f + "gate.tid2eid", "holds an expert id outside 0.." + std::to_string(c.experts - 1));
        } else {
            e.bias = ld.vec(f + "gate.bias", c.experts);
        }
        e.shared.gate = ld.mat(f + "shared_experts.w1.weight", c.moeInter, Hd);
        e.shared.up = ld.mat(f + "shared_experts.w3.weight", c.moeInter, Hd);
        e.shared.down = ld.mat(f + "shared_experts.w2.weight", Hd, c.moeInter);
        if (!m.banks.count(L))
            throw Error(ErrorCode::Format, "manifest.json: MoE layer " + std::to_string(L) +
                                               " has no expert bank in 'layers'; the container is incomplete");
    }
    return w;
}

} // namespace

Weights loadWeights(const format::Manifest &m, const format::Trunk &trunk)
{
    const format::ModelConfig &c = m.config;
    if (c.v4.on)
        return loadDsv4Weights(m, trunk);
    if (c.g.on)
        return loadGqaWeights(m, trunk);
    Weights w;
    Loader ld(m, trunk, w);
    const int64_t Hd = c.hidden, V = c.vocab;
    w.embed = ld.mat("model.embed_tokens.weight", V, Hd, /*resident=*/false);
    w.norm = ld.vec("model.norm.weight", Hd);
    w.head = ld.mat("lm_head.weight", V, Hd);
    if (c.attnResBlock > 0) {
        w.outResNorm = ld.vec("model.output_attn_res_norm.weight", Hd);
        w.outResProj = ld.vec("model.output_attn_res_proj.weight", Hd);
    }
    w.layers.resize(static_cast<size_t>(c.layers));
    for (int L = 0; L < c.layers; ++L) {
        LayerWeights &lw = w.layers[static_cast<size_t>(L)];
        const std::string p = "model.layers." + std::to_string(L) + ".";
        lw.inNorm = ld.vec(p + "input_layernorm.weight", Hd);
        lw.postNorm = ld.vec(p + "post_attention_layernorm.weight", Hd);
        if (c.attnResBlock > 0) {
            lw.attnResNorm = ld.vec(p + "self_attention_res_norm.weight", Hd);
            lw.attnResProj = ld.vec(p + "self_attention_res_proj.weight", Hd);
            lw.mlpResNorm = ld.vec(p + "mlp_res_norm.weight", Hd);
            lw.mlpResProj = ld.vec(p + "mlp_res_proj.weight", Hd);
        }
        lw.kda = c.isKda[static_cast<size_t>(L)];
        if (lw.kda) {
            const int64_t H = c.kdaHeads, D = c.kdaDim, C = H * D, K = c.convK;
            KdaWeights &k = lw.k;
            const std::string a = p + "self_attn.";
            k.q = ld.mat(a + "q_proj.weight", C, Hd);
            k.k = ld.mat(a + "k_proj.weight", C, Hd);
            k.v = ld.mat(a + "v_proj.weight", C, Hd);
            k.qConv = ld.vec(a + "q_conv1d.weight", C * K);
            k.kConv = ld.vec(a + "k_conv1d.weight", C * K);
            k.vConv = ld.vec(a + "v_conv1d.weight", C * K);
            k.fa = ld.mat(a + "f_a_proj.weight", D, Hd);
            k.fb = ld.mat(a + "f_b_proj.weight", C, D);
            k.b = ld.mat(a + "b_proj.weight", H, Hd);
            k.aLog = ld.vec(a + "A_log", H);
            k.dtBias = ld.vec(a + "dt_bias", C);
            if (c.fullRankGate) {
                k.g = ld.mat(a + "g_proj.weight", C, Hd);
            } else {
                k.ga = ld.mat(a + "g_a_proj.weight", D, Hd);
                k.gb = ld.mat(a + "g_b_proj.weight", C, D);
            }
            k.oNorm = ld.vec(a + "o_norm.weight", D);
            k.o = ld.mat(a + "o_proj.weight", Hd, C);
        } else {
            const int64_t nh = c.heads, dq = c.qkNope + c.qkRope;
            MlaWeights &q = lw.m;
            const std::string a = p + "self_attn.";
            if (c.qLora > 0) {
                q.qa = ld.mat(a + "q_a_proj.weight", c.qLora, Hd);
                q.qaNorm = ld.vec(a + "q_a_layernorm.weight", c.qLora);
                q.qb = ld.mat(a + "q_b_proj.weight", nh * dq, c.qLora);
            } else {
                q.q = ld.mat(a + "q_proj.weight", nh * dq, Hd);
            }
            q.kva = ld.mat(a + "kv_a_proj_with_mqa.weight", c.kvLora + c.qkRope, Hd);
            q.kvaNorm = ld.vec(a + "kv_a_layernorm.weight", c.kvLora);
            q.kvb = ld.mat(a + "kv_b_proj.weight", nh * (c.qkNope + c.vHead), c.kvLora);
            q.o = ld.mat(a + "o_proj.weight", Hd, nh * c.vHead);
            if (c.mlaOutputGate)
                q.g = ld.mat(a + "g_proj.weight", nh * c.vHead, Hd);
            if (c.dsa.on && !c.dsa.sharedLayer(L)) {
                const int64_t Hi = c.dsa.heads, Di = c.dsa.headDim;
                const std::string x = a + "indexer.";
                q.idx.wqb = ld.mat(x + "wq_b.weight", Hi * Di, c.qLora);
                q.idx.wk = ld.mat(x + "wk.weight", Di, Hd);
                q.idx.kNorm = ld.vec(x + "k_norm.weight", Di);
                q.idx.kNormBias = ld.vec(x + "k_norm.bias", Di);
                q.idx.headWeights = ld.mat(x + "weights_proj.weight", Hi, Hd);
            }
        }
        lw.moe = c.moeLayer(L);
        if (lw.moe) {
            MoeWeights &e = lw.moeW;
            const std::string a = p + c.moeBlock; // "block_sparse_moe." or DeepSeek's "mlp."
            const int64_t Ms = int64_t(c.moeInter) * (c.sharedExperts > 1 ? c.sharedExperts : 1);
            e.router = ld.mat(a + "gate.weight", c.experts, Hd);
            e.bias = ld.optional(a + "gate.e_score_correction_bias");
            if (e.bias && (e.bias->format != format::TrunkFormat::F32 || e.bias->rows * e.bias->cols < c.experts))
                e.bias = nullptr; // WASTE treats a missing or non-F32 bias as zeros
            e.shared.gate = ld.mat(a + "shared_experts.gate_proj.weight", Ms, Hd);
            e.shared.up = ld.mat(a + "shared_experts.up_proj.weight", Ms, Hd);
            e.shared.down = ld.mat(a + "shared_experts.down_proj.weight", Hd, Ms);
            if (c.latentMoe > 0) {
                e.latentDown = ld.mat(a + "routed_expert_down_proj.weight", c.latentMoe, Hd);
                e.latentUp = ld.mat(a + "routed_expert_up_proj.weight", Hd, c.latentMoe);
                if (c.latentNorm)
                    e.latentNorm = ld.vec(a + "routed_expert_norm.weight", c.latentMoe);
            }
            if (!m.banks.count(L))
                throw Error(ErrorCode::Format, "manifest.json: MoE layer " + std::to_string(L) +
                                                   " has no expert bank in 'layers'; the container is incomplete");
        } else {
            const std::string a = p + "mlp.";
            lw.dense.gate = ld.mat(a + "gate_proj.weight", c.inter, Hd);
            lw.dense.up = ld.mat(a + "up_proj.weight", c.inter, Hd);
            lw.dense.down = ld.mat(a + "down_proj.weight", Hd, c.inter);
        }
    }
    return w;
}

} // namespace waste::model
