// manifest.json of a WASTE v0 container, parsed as untrusted input.
// Every dimension is bounded here; offsets are checked against file sizes by the
// loaders (trunk.cpp, expert_bank.cpp) once the files are open.
#pragma once

#include "format/dsa_config.hpp"
#include "format/rope_params.hpp"
#include "format/dsv4_config.hpp"
#include "format/gqa_config.hpp"
#include "format/trunk_layout.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace waste::format {

struct TrunkEntry {
    std::string name;
    int rawFmt = 0;
    TrunkFormat format = TrunkFormat::F32;
    int64_t off = 0;
    int64_t scaleOff = 0;
    std::vector<int64_t> shape;
    int64_t rows = 0;   // product of all dimensions but the last
    int64_t cols = 0;   // last dimension (N)
    int64_t group = kTrunkGroup;
    int64_t bytes = 0;  // payload + scales, as the manifest says (planning only; loaders use the shape)
    int64_t elements() const { return rows * cols; }
};

struct ModelConfig {
    std::string arch; // "kimi-linear", "kimi-k3", or the architectures string
    int layers = 0, hidden = 0, vocab = 0, heads = 0;
    int experts = 0, topK = 0, moeInter = 0, sharedExperts = 0, firstDense = 0, inter = 0;
    int kvLora = 0, qLora = 0, qkNope = 0, qkRope = 0, vHead = 0;
    float eps = 1e-5f;
    float routedScale = 1.0f;
    bool renormalize = false;
    int64_t eosId = 0;
    int kdaHeads = 0, kdaDim = 0, convK = 4;
    std::vector<bool> isKda; // per layer
    // Kimi K3 switches (absent on Kimi-Linear).
    int latentMoe = 0;
    bool latentNorm = false;
    int attnResBlock = 0;
    bool mlaOutputGate = false;
    bool situ = false;
    float situBeta = 1.0f, situLinearBeta = 0.0f;
    bool fullRankGate = false;
    float gateLowerBound = 0.0f;
    bool tiedEmbeddings = false; // tie_word_embeddings (the config's or its wrapper's): no lm_head of its own
    // DeepSeek-V3 family (deepseek_config.cpp): group-limited routing, rotated MLA dims,
    // and the name of the MoE block ("mlp." there).
    int groups = 1, topkGroups = 1;
    RopeParams rope;
    std::string moeBlock = "block_sparse_moe.";
    // DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5.x; dsa_config.cpp): the lightning indexer.
    DsaConfig dsa;
    // Grouped-query attention families (Qwen3-MoE, gpt-oss; gqa_config.cpp).
    GqaConfig g;
    // DeepSeek V4 Flash (dsv4_config.cpp): compressed-KV attention, hyper-connections, hash routing.
    Dsv4Config v4;

    // Per layer: a dense MLP (intermediate_size wide) in place of the experts, past the first
    // firstDense layers too (Qwen3-MoE's mlp_only_layers and decoder_sparse_step). Empty: none.
    std::vector<bool> denseMlp;

    int kdaLayerCount() const;
    // Whether layer L routes to experts (else it runs the dense MLP).
    bool moeLayer(int L) const
    {
        return experts > 0 && L >= firstDense && !(size_t(L) < denseMlp.size() && denseMlp[size_t(L)]);
    }
    int expertWidth() const { return latentMoe > 0 ? latentMoe : hidden; }
};

struct ExpertQuant {
    std::string fmtName = "VQ3R";
    // VQ geometry (codebooks.bin); unused by native records.
    int stages = 3, vecDim = 8, entries = 256, indexBits = 8;
    // A native record format id (native_record.hpp: MXFP4, FP8B128, INT4G32, BF16) when
    // fmtName names one; 0 for VQ records. Native banks need no codebooks.bin.
    uint8_t native = 0;
    bool isNative() const { return native != 0; }
};

struct BankEntry {
    int layer = 0;
    std::string file;
    int experts = 0;
    int64_t bytes = 0;
    int64_t recordBytes = 0;
    int64_t codebookBase = 0;
};

struct Manifest {
    std::string prefix;
    ModelConfig config;
    ExpertQuant quant;
    std::map<int, BankEntry> banks; // keyed by layer
    std::vector<TrunkEntry> trunk;

    const TrunkEntry *find(const std::string &nameWithoutPrefix) const;
};

// Limits that keep an untrusted manifest from asking for absurd allocations.
struct Limits {
    static constexpr int kMaxLayers = 128;
    static constexpr int kMaxHidden = 1 << 16;
    static constexpr int kMaxVocab = 1 << 22;
    static constexpr int kMaxHeads = 1024;
    static constexpr int kMaxHeadDim = 4096;
    static constexpr int kMaxExperts = 65535;
    static constexpr int kMaxTopK = 64;
    static constexpr int kMaxInter = 1 << 20;
    static constexpr int kMaxConvK = 64;
    static constexpr int64_t kMaxGroup = 1 << 20;
    static constexpr int kMaxTrunkEntries = 1 << 20;
};

// What every complaint about a manifest ends with: the container, not the model, is at fault.
inline constexpr const char *kContainerAdvice = " (the container is damaged or not WASTE v0; re-convert it)";

// Parses the manifest text; `where` names the file in error messages.
Manifest parseManifest(const std::string &text, const std::string &where);

// The trunk index alone, for code that reads trunk tensors without opening the model
// (the vision tower's loader): the same format_version, prefix and trunk checks as
// parseManifest, and of the text config only hidden_size and vocab_size (0 if absent).
struct TrunkIndex {
    std::string prefix;
    int hidden = 0, vocab = 0;
    std::vector<TrunkEntry> trunk;
};
TrunkIndex parseTrunkIndex(const std::string &text, const std::string &where);

} // namespace waste::format
