// waste::planRelease: the plan of a container not yet made, from the release's config.json.
//
// The trunk is enumerated tensor by tensor as the converter would store it (shapes from the
// config, formats from format::storedTrunkFormat, bytes from format's row arithmetic), so
// the floor matches what `waste plan` reads from the converted container's manifest; the
// expert records come from format's record layouts (VQ3R, or the release's native one).
#include "format/codebooks.hpp"
#include "format/expert_record.hpp"
#include "format/native_record.hpp"
#include "format/release_config.hpp"
#include "format/trunk_layout.hpp"
#include "plan/compute_estimate.hpp"
#include "plan/memory_plan.hpp"
#include "plan/plan_inputs.hpp"

#include <waste/release_plan.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>

namespace waste {

namespace {

using Json = nlohmann::json;

[[noreturn]] void refuse(const std::string &why) { throw Error(ErrorCode::Format, "config.json: " + why); }

struct Geometry {
    std::string arch;
    int64_t H = 0, L = 0, V = 0, NH = 0, E = 0, K = 0, IM = 0, NS = 0, FD = 0, I = 0, LT = 0;
    int64_t QL = 0, DC = 0, DN = 0, DR = 0, DV = 0, KH = 0, KD = 0, KC = 4, AR = 0;
    bool tied = false, outputGate = false, fullRankGate = false;
    std::vector<bool> kda; // per layer (0-based)
    std::vector<bool> moe; // per layer: routes to experts (else a dense MLP of width I)
    // GQA families (Qwen3-MoE, gpt-oss, GLM-4.5); GLM-4.5's q/k norms only where use_qk_norm,
    // its q/k/v biases, its sigmoid router's correction bias.
    bool gqa = false, qkNorm = false, attnBias = false, sigmoidRouter = false;
    int64_t KVH = 0, HD = 0, window = 0, slidingLayers = 0;
    // Qwen3-Next: Gated DeltaNet layers (in `kda`) with key/value heads and dims, the
    // shared expert's width.
    bool next = false;
    bool split = false; // Qwen3.5-MoE: the DeltaNet's projections stored apart
    int64_t LKH = 0, LVH = 0, LKD = 0, LVD = 0, SI = 0;
    // DeepSeek Sparse Attention: the indexer's heads, width and top-k; per layer, whether it
    // runs one (GLM-5.2's shared layers do not).
    int64_t HI = 0, DI = 0, TOPK = 0;
    std::vector<bool> indexer;
    // DeepSeek V4 Flash: its attention, streams and routing (format/dsv4_config).
    format::Dsv4Config v4;
};

// The release as the one config reader (format/release_config) sees it, in the letters the
// arithmetic below uses.
Geometry readGeometry(const Json &root)
{
    const format::ModelConfig c = format::readReleaseConfig(root);
    Geometry g;
    g.arch = c.arch;
    g.H = c.hidden;
    g.L = c.layers;
    g.V = c.vocab;
    g.NH = c.heads;
    g.E = c.experts;
    g.K = c.topK;
    g.IM = c.moeInter;
    g.NS = c.sharedExperts;
    g.FD = c.firstDense;
    g.I = c.inter;
    g.LT = c.latentMoe;
    g.QL = c.qLora;
    g.DC = c.kvLora;
    g.DN = c.qkNope;
    g.DR = c.qkRope;
    g.DV = c.vHead;
    g.AR = c.attnResBlock;
    g.KH = c.kdaHeads;
    g.KD = c.kdaDim;
    g.KC = c.convK;
    g.tied = c.tiedEmbeddings || c.g.tied;
    g.outputGate = c.mlaOutputGate;
    g.fullRankGate = c.fullRankGate;
    g.kda = c.isKda;
    for (int L = 0; L < c.layers; ++L)
        g.moe.push_back(c.moeLayer(L));
    g.gqa = c.g.on;
    g.qkNorm = c.g.qkNorm;
    g.attnBias = c.g.attnBias;
    g.sigmoidRouter = c.g.sigmoidRouter;
    g.KVH = c.g.kvHeads;
    g.HD = c.g.headDim;
    g.window = c.g.window;
    g.slidingLayers = std::count(c.g.sliding.begin(), c.g.sliding.end(), true);
    g.next = c.g.next;
    g.split = c.g.splitProjections;
    g.LKH = c.g.linKeyHeads;
    g.LVH = c.g.linValueHeads;
    g.LKD = c.g.linKeyDim;
    g.LVD = c.g.linValueDim;
    g.SI = c.g.sharedInter;
    if (c.dsa.on) {
        g.HI = c.dsa.heads;
        g.DI = c.dsa.headDim;
        g.TOPK = c.dsa.topk;
        for (int L = 0; L < c.layers; ++L)
            g.indexer.push_back(!c.dsa.sharedLayer(L));
    }
    g.v4 = c.v4;
    if (g.E <= 0 || g.K <= 0)
        refuse("not a mixture of experts this engine streams (experts, top-k and moe_intermediate_size needed)");
    return g;
}

struct TrunkTally {
    plan::PlanInputs *in;
    int trunkBits;
    int64_t bytes = 0;      // everything trunk.bin holds
    int64_t params = 0;
    int64_t embedParams = 0;

    void add(const std::string &name, std::vector<int64_t> shape)
    {
        int64_t elements = 1;
        for (int64_t d : shape)
            elements *= d;
        const format::TrunkFormat f = format::storedTrunkFormat(name, elements, shape.size(), trunkBits);
        const int64_t cols = shape.back(), rows = elements / cols;
        const int64_t b = f == format::TrunkFormat::F32
                              ? elements * 4
                              : rows * format::trunkRowBytes(f, cols, format::kTrunkGroup) +
                                    format::trunkScaleBytes(rows, cols, format::kTrunkGroup);
        bytes += b;
        params += elements;
        const bool embed = name.ends_with("embed_tokens.weight") || name == "embed.weight";
        if (embed && f != format::TrunkFormat::F32) {
            embedParams += elements;
            return; // a quantized embedding table stays on disk, a row per token
        }
        in->trunkBytes += b;
        if (!embed)
            plan::addTrunkWork(*in, name, format::trunkFormatName(f), b, shape);
    }
};

// The text model's trunk, tensor by tensor (names as the converter keeps them, which is all
// the format rules look at).
void enumerateTrunk(const Geometry &g, TrunkTally &t)
{
    const int64_t H = g.H, C = g.KH * g.KD;
    t.add("model.embed_tokens.weight", {g.V, H});
    for (int64_t l = 0; l < g.L; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        t.add(p + "input_layernorm.weight", {H});
        t.add(p + "post_attention_layernorm.weight", {H});
        if (g.AR > 0)
            for (const char *n : {"self_attention_res_norm", "self_attention_res_proj", "mlp_res_norm", "mlp_res_proj"})
                t.add(p + n + ".weight", {H});
        if (g.kda[size_t(l)]) {
            for (const char *x : {"q", "k", "v"}) {
                t.add(p + "self_attn." + x + "_proj.weight", {C, H});
                t.add(p + "self_attn." + x + "_conv1d.weight", {C, 1, g.KC});
            }
            t.add(p + "self_attn.f_a_proj.weight", {g.KD, H});
            t.add(p + "self_attn.f_b_proj.weight", {C, g.KD});
            t.add(p + "self_attn.b_proj.weight", {g.KH, H});
            t.add(p + "self_attn.A_log", {g.KD});
            t.add(p + "self_attn.dt_bias", {C});
            if (g.fullRankGate) {
                t.add(p + "self_attn.g_proj.weight", {C, H});
            } else {
                t.add(p + "self_attn.g_a_proj.weight", {g.KD, H});
                t.add(p + "self_attn.g_b_proj.weight", {C, g.KD});
            }
            t.add(p + "self_attn.o_norm.weight", {g.KD});
            t.add(p + "self_attn.o_proj.weight", {H, C});
        } else {
            if (g.QL > 0) {
                t.add(p + "self_attn.q_a_proj.weight", {g.QL, H});
                t.add(p + "self_attn.q_a_layernorm.weight", {g.QL});
                t.add(p + "self_attn.q_b_proj.weight", {g.NH * (g.DN + g.DR), g.QL});
            } else {
                t.add(p + "self_attn.q_proj.weight", {g.NH * (g.DN + g.DR), H});
            }
            t.add(p + "self_attn.kv_a_proj_with_mqa.weight", {g.DC + g.DR, H});
            t.add(p + "self_attn.kv_a_layernorm.weight", {g.DC});
            t.add(p + "self_attn.kv_b_proj.weight", {g.NH * (g.DN + g.DV), g.DC});
            if (g.outputGate)
                t.add(p + "self_attn.g_proj.weight", {g.NH * g.DV, H});
            t.add(p + "self_attn.o_proj.weight", {H, g.NH * g.DV});
            if (size_t(l) < g.indexer.size() && g.indexer[size_t(l)]) { // DSA's lightning indexer
                const std::string x = p + "self_attn.indexer.";
                t.add(x + "wq_b.weight", {g.HI * g.DI, g.QL});
                t.add(x + "wk.weight", {g.DI, H});
                t.add(x + "k_norm.weight", {g.DI});
                t.add(x + "k_norm.bias", {g.DI});
                t.add(x + "weights_proj.weight", {g.HI, H});
            }
        }
        if (!g.moe[size_t(l)]) {
            t.add(p + "mlp.gate_proj.weight", {g.I, H});
            t.add(p + "mlp.up_proj.weight", {g.I, H});
            t.add(p + "mlp.down_proj.weight", {H, g.I});
            continue;
        }
        const std::string m = p + "block_sparse_moe.";
        t.add(m + "gate.weight", {g.E, H});
        t.add(m + "gate.e_score_correction_bias", {g.E});
        if (g.LT > 0 && g.LT != H) {
            t.add(m + "routed_expert_down_proj.weight", {g.LT, H});
            t.add(m + "routed_expert_norm.weight", {g.LT});
            t.add(m + "routed_expert_up_proj.weight", {H, g.LT});
        }
        const int64_t ms = g.IM * std::max<int64_t>(g.NS, 1);
        t.add(m + "shared_experts.gate_proj.weight", {ms, H});
        t.add(m + "shared_experts.up_proj.weight", {ms, H});
        t.add(m + "shared_experts.down_proj.weight", {H, ms});
    }
    t.add("model.norm.weight", {H});
    if (g.AR > 0) {
        t.add("model.output_attn_res_norm.weight", {H});
        t.add("model.output_attn_res_proj.weight", {H});
    }
    if (!g.tied)
        t.add("lm_head.weight", {g.V, H});
}

// One Qwen3-Next layer past its two norms: Gated DeltaNet or gated attention (q_proj twice
// as wide), the router, the shared expert and its gate. The release's mtp.* block is not
// converted, so it is not counted.
void addQwen3NextLayer(const Geometry &g, TrunkTally &t, int64_t l)
{
    const int64_t H = g.H, nq = g.NH * g.HD, nkv = g.KVH * g.HD, Kw = g.LKH * g.LKD, Vw = g.LVH * g.LVD;
    const std::string p = "model.layers." + std::to_string(l) + ".";
    if (g.kda[size_t(l)]) {
        const std::string a = p + "linear_attn.";
        t.add(a + "A_log", {g.LVH});
        t.add(a + "conv1d.weight", {2 * Kw + Vw, 1, g.KC});
        t.add(a + "dt_bias", {g.LVH});
        if (g.split) { // Qwen3.5-MoE
            t.add(a + "in_proj_a.weight", {g.LVH, H});
            t.add(a + "in_proj_b.weight", {g.LVH, H});
            t.add(a + "in_proj_qkv.weight", {2 * Kw + Vw, H});
            t.add(a + "in_proj_z.weight", {Vw, H});
        } else {
            t.add(a + "in_proj_ba.weight", {2 * g.LVH, H});
            t.add(a + "in_proj_qkvz.weight", {2 * Kw + 2 * Vw, H});
        }
        t.add(a + "norm.weight", {g.LVD});
        t.add(a + "out_proj.weight", {H, Vw});
    } else {
        t.add(p + "self_attn.q_proj.weight", {2 * nq, H});
        t.add(p + "self_attn.k_proj.weight", {nkv, H});
        t.add(p + "self_attn.v_proj.weight", {nkv, H});
        t.add(p + "self_attn.o_proj.weight", {H, nq});
        t.add(p + "self_attn.q_norm.weight", {g.HD});
        t.add(p + "self_attn.k_norm.weight", {g.HD});
    }
    if (!g.moe[size_t(l)]) { // mlp_only_layers: a dense MLP, no shared expert
        t.add(p + "mlp.gate_proj.weight", {g.I, H});
        t.add(p + "mlp.up_proj.weight", {g.I, H});
        t.add(p + "mlp.down_proj.weight", {H, g.I});
        return;
    }
    t.add(p + "mlp.gate.weight", {g.E, H});
    t.add(p + "mlp.shared_expert.gate_proj.weight", {g.SI, H});
    t.add(p + "mlp.shared_expert.up_proj.weight", {g.SI, H});
    t.add(p + "mlp.shared_expert.down_proj.weight", {H, g.SI});
    t.add(p + "mlp.shared_expert_gate.weight", {1, H});
}

// One GLM-4.5 layer past its two norms: attention with q/k/v biases (and q/k norms where
// use_qk_norm), then a dense MLP (the first first_k_dense_replace layers) or the router, its
// correction bias and the shared experts. The MTP layer (index num_hidden_layers) is not
// converted, so it is not counted.
void addGlm4MoeLayer(const Geometry &g, TrunkTally &t, int64_t l)
{
    const int64_t H = g.H, nq = g.NH * g.HD, nkv = g.KVH * g.HD;
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.add(p + "self_attn.q_proj.weight", {nq, H});
    t.add(p + "self_attn.k_proj.weight", {nkv, H});
    t.add(p + "self_attn.v_proj.weight", {nkv, H});
    t.add(p + "self_attn.o_proj.weight", {H, nq});
    if (g.attnBias) {
        t.add(p + "self_attn.q_proj.bias", {nq});
        t.add(p + "self_attn.k_proj.bias", {nkv});
        t.add(p + "self_attn.v_proj.bias", {nkv});
    }
    if (g.qkNorm) {
        t.add(p + "self_attn.q_norm.weight", {g.HD});
        t.add(p + "self_attn.k_norm.weight", {g.HD});
    }
    if (!g.moe[size_t(l)]) {
        t.add(p + "mlp.gate_proj.weight", {g.I, H});
        t.add(p + "mlp.up_proj.weight", {g.I, H});
        t.add(p + "mlp.down_proj.weight", {H, g.I});
        return;
    }
    t.add(p + "mlp.gate.weight", {g.E, H});
    t.add(p + "mlp.gate.e_score_correction_bias", {g.E});
    if (g.SI > 0) {
        t.add(p + "mlp.shared_experts.gate_proj.weight", {g.SI, H});
        t.add(p + "mlp.shared_experts.up_proj.weight", {g.SI, H});
        t.add(p + "mlp.shared_experts.down_proj.weight", {H, g.SI});
    }
}

// Qwen3-MoE, Qwen3-Next, Qwen3.5-MoE, gpt-oss and GLM-4.5, tensor by tensor, as the
// converter names them (Qwen3.5's text model without its wrapper's prefix)
// (gpt-oss's per-expert biases are trunk tensors; its experts' weights are the records).
void enumerateGqaTrunk(const Geometry &g, TrunkTally &t)
{
    const int64_t H = g.H, nq = g.NH * g.HD, nkv = g.KVH * g.HD;
    const bool oss = g.arch == "gpt-oss";
    t.add("model.embed_tokens.weight", {g.V, H});
    for (int64_t l = 0; l < g.L; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        t.add(p + "input_layernorm.weight", {H});
        t.add(p + "post_attention_layernorm.weight", {H});
        if (g.next) {
            addQwen3NextLayer(g, t, l);
            continue;
        }
        if (g.sigmoidRouter) {
            addGlm4MoeLayer(g, t, l);
            continue;
        }
        t.add(p + "self_attn.q_proj.weight", {nq, H});
        t.add(p + "self_attn.k_proj.weight", {nkv, H});
        t.add(p + "self_attn.v_proj.weight", {nkv, H});
        t.add(p + "self_attn.o_proj.weight", {H, nq});
        if (oss) {
            t.add(p + "self_attn.q_proj.bias", {nq});
            t.add(p + "self_attn.k_proj.bias", {nkv});
            t.add(p + "self_attn.v_proj.bias", {nkv});
            t.add(p + "self_attn.o_proj.bias", {H});
            t.add(p + "self_attn.sinks", {g.NH});
            t.add(p + "mlp.router.weight", {g.E, H});
            t.add(p + "mlp.router.bias", {g.E});
            t.add(p + "mlp.experts.gate_up_proj_bias", {g.E, 2 * g.IM});
            t.add(p + "mlp.experts.down_proj_bias", {g.E, H});
        } else {
            t.add(p + "self_attn.q_norm.weight", {g.HD});
            t.add(p + "self_attn.k_norm.weight", {g.HD});
            if (g.moe[size_t(l)]) {
                t.add(p + "mlp.gate.weight", {g.E, H});
            } else { // mlp_only_layers: a dense MLP
                t.add(p + "mlp.gate_proj.weight", {g.I, H});
                t.add(p + "mlp.up_proj.weight", {g.I, H});
                t.add(p + "mlp.down_proj.weight", {H, g.I});
            }
        }
    }
    t.add("model.norm.weight", {H});
    if (!g.tied)
        t.add("lm_head.weight", {g.V, H});
}

// DeepSeek V4 Flash, tensor by tensor as its release names them (no "model." prefix): the
// hyper-connection mixes, the attention with its compressor (and indexer on ratio-4 layers),
// the router (tid2eid on the hash layers, else its bias) and the shared expert. The MTP block
// (mtp.0.*) is not converted, so it is not counted.
void enumerateDsv4Trunk(const Geometry &g, TrunkTally &t)
{
    const format::Dsv4Config &v = g.v4;
    const int64_t H = g.H, hc = v.hcMult, M = (2 + hc) * hc, D = v.headDim, Q = g.NH * D;
    t.add("embed.weight", {g.V, H});
    for (int64_t l = 0; l < g.L; ++l) {
        const std::string p = "layers." + std::to_string(l) + ".";
        for (const char *s : {"attn", "ffn"}) {
            t.add(p + "hc_" + s + "_fn", {M, hc * H});
            t.add(p + "hc_" + s + "_base", {M});
            t.add(p + "hc_" + s + "_scale", {3});
        }
        t.add(p + "attn_norm.weight", {H});
        t.add(p + "ffn_norm.weight", {H});
        const std::string a = p + "attn.";
        t.add(a + "attn_sink", {g.NH});
        t.add(a + "wq_a.weight", {g.QL, H});
        t.add(a + "q_norm.weight", {g.QL});
        t.add(a + "wq_b.weight", {Q, g.QL});
        t.add(a + "wkv.weight", {D, H});
        t.add(a + "kv_norm.weight", {D});
        t.add(a + "wo_a.weight", {int64_t(v.oGroups) * v.oLora, Q / v.oGroups});
        t.add(a + "wo_b.weight", {H, int64_t(v.oGroups) * v.oLora});
        const int ratio = v.ratio(int(l));
        const auto compressor = [&](const std::string &k, int64_t d, int64_t c) {
            t.add(k + "wkv.weight", {c * d, H});
            t.add(k + "wgate.weight", {c * d, H});
            t.add(k + "ape", {ratio, c * d});
            t.add(k + "norm.weight", {d});
        };
        if (ratio > 0)
            compressor(a + "compressor.", D, ratio == 4 ? 2 : 1);
        if (v.indexed(int(l))) {
            t.add(a + "indexer.wq_b.weight", {int64_t(v.indexHeads) * v.indexDim, g.QL});
            t.add(a + "indexer.weights_proj.weight", {v.indexHeads, H});
            compressor(a + "indexer.compressor.", v.indexDim, 2);
        }
        const std::string f = p + "ffn.";
        t.add(f + "gate.weight", {g.E, H});
        if (l < v.hashLayers)
            t.add(f + "gate.tid2eid", {g.V, g.K});
        else
            t.add(f + "gate.bias", {g.E});
        t.add(f + "shared_experts.w1.weight", {g.IM, H});
        t.add(f + "shared_experts.w2.weight", {H, g.IM});
        t.add(f + "shared_experts.w3.weight", {g.IM, H});
    }
    t.add("norm.weight", {H});
    t.add("head.weight", {g.V, H});
    t.add("hc_head_fn", {hc, hc * H});
    t.add("hc_head_base", {hc});
    t.add("hc_head_scale", {1});
}

void fillMachine(MemoryPlan &p, int64_t ramBytes)
{
    if (ramBytes <= 0)
        return; // planFromInputs measured this machine
    p.physical_ram_bytes = p.usable_ram_bytes = ramBytes;
    p.cap_bytes = ramBytes - ramBytes / 8;
    p.other_process_bytes = assumedOtherProcessBytes(ramBytes);
    p.cliff_bytes = pagingCliff(ramBytes, ramBytes, p.other_process_bytes);
}

} // namespace

int64_t assumedOtherProcessBytes(int64_t physicalBytes) { return physicalBytes / 6; }

ReleasePlan planRelease(const std::string &configJson, const ReleasePlanOptions &o)
{
    const Json root = Json::parse(configJson, nullptr, false);
    if (root.is_discarded() || !root.is_object())
        refuse("not a JSON object");
    const Geometry g = readGeometry(root);
    if (o.trunkBits != 4 && o.trunkBits != 8)
        throw Error(ErrorCode::Argument, "trunk bits must be 4 or 8");

    plan::PlanInputs in;
    in.layers = g.L;
    in.hidden = g.H;
    in.heads = g.NH;
    in.kvLora = g.DC;
    in.qkRope = g.DR;
    in.kdaHeads = g.KH;
    in.kdaDim = g.KD;
    in.convKernel = g.KC;
    in.kdaLayers = std::count(g.kda.begin(), g.kda.end(), true);
    in.moeInter = g.IM;
    in.inter = g.I > 0 ? g.I : g.IM;
    in.vocab = g.V;
    in.expertWidth = g.LT > 0 ? g.LT : g.H;
    in.sharedExperts = std::max<int64_t>(g.NS, 1);
    in.attnResBlock = g.AR;
    in.experts = g.E;
    in.topK = g.K;
    if (g.gqa) {
        in.gqaLayers = g.L;
        in.gqaSlidingLayers = g.slidingLayers;
        in.kvHeads = g.KVH;
        in.headDim = g.HD;
        in.window = g.window;
        in.sharedExperts = g.SI > 0 ? (g.SI + g.IM - 1) / g.IM : 0; // as plan_inputs reads a container
    }
    if (g.next) { // as plan_inputs reads a converted Qwen3-Next container
        in.gqaLayers = g.L - in.kdaLayers;
        in.kdaHeads = g.LVH;
        in.kdaDim = g.LVD;
        in.linearStateBytes = (g.LVH * g.LKD * g.LVD + (2 * g.LKH * g.LKD + g.LVH * g.LVD) * (g.KC - 1)) * 4;
    }
    in.moeLayers = std::count(g.moe.begin(), g.moe.end(), true);
    in.indexLayers = std::count(g.indexer.begin(), g.indexer.end(), true);
    in.indexHeadDim = g.DI;
    in.indexTopk = g.TOPK;
    if (g.v4.on) { // as plan_inputs reads a converted DeepSeek V4 container
        plan::addDsv4State(in, g.v4, int(g.L));
        in.sharedExperts = 1;
    }

    TrunkTally tally{&in, o.trunkBits};
    if (g.v4.on)
        enumerateDsv4Trunk(g, tally);
    else if (g.gqa)
        enumerateGqaTrunk(g, tally);
    else
        enumerateTrunk(g, tally);
    const int64_t W = in.expertWidth;
    const int64_t expertParams = 3 * g.IM * W;

    ReleasePlan out;
    out.arch = g.arch;
    out.total_params = tally.params + expertParams * g.E * in.moeLayers;
    out.active_params = tally.params - tally.embedParams + expertParams * g.K * in.moeLayers;

    auto layoutFor = [&](const std::string &name, int64_t record, const std::string &kernel, int64_t callSize,
                         int64_t extraDisk) {
        plan::PlanInputs p = in;
        p.recordBytes = p.maxRecordBytes = record;
        p.expertBytesTotal = record * g.E * in.moeLayers;
        plan::addLayerWork(p, kernel, callSize);
        ReleaseLayout l;
        l.expert_format = name;
        l.record_bytes = record;
        l.container_bytes = tally.bytes + p.expertBytesTotal + extraDisk;
        l.plan = plan::planFromInputs(p, o.ctx);
        fillMachine(l.plan, o.ramBytes);
        if (o.calibration) {
            const ComputeEstimate e = plan::estimateCompute(p, *o.calibration);
            l.compute_seconds = e.seconds;
            l.compute_overlap_seconds = e.overlapSeconds;
            l.compute_routed_seconds = e.routedExpertSeconds;
        }
        return l;
    };

    const int stages = 3;
    const format::RecordLayout vq = format::recordLayout(g.IM, W, stages, 8);
    const int64_t books = in.moeLayers * 3 * stages * format::codebookRecordBytes(256, 8);
    out.vq = layoutFor("VQ3R", vq.recordBytes, "VQ-expert",
                       2 * format::indexBytes(g.IM, W, stages, 8) + format::indexBytes(W, g.IM, stages, 8), books);
    if (const auto native = format::releaseExpertFormat(root)) {
        const format::NativeLayout nl = format::nativeRecordLayout(*native, g.IM, W);
        out.has_native = true;
        out.native = layoutFor(format::nativeFmtName(*native), nl.recordBytes,
                               std::string(format::nativeFmtName(*native)) + "-expert",
                               nl.payloadBytes[0] + nl.payloadBytes[1] + nl.payloadBytes[2] + nl.scaleBytes[0] +
                                   nl.scaleBytes[1] + nl.scaleBytes[2],
                               0);
    }
    return out;
}

} // namespace waste
