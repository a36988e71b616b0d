// The tiny Kimi-Linear-shaped model behind `waste mktiny`: every tensor name and shape
// a Kimi-Linear checkpoint has (dense layer 0, KDA layers, an MLA layer, routed +
// shared experts), scaled down, with values generated from the seed on demand.
#pragma once

#include "convert/model_source.hpp"
#include "convert/tiny_tokenizer.hpp"

#include <waste/convert.hpp>

#include <map>

namespace waste::convert {

struct TinyDims {
    int hidden = 256, layers = 4, firstDense = 1, inter = 512, moeInter = 128, experts = 8, topK = 2, shared = 1;
    int kdaHeads = 4, kdaHeadDim = 64, convKernel = 4;
    int mlaHeads = 4, qkNope = 32, qkRope = 16, vHead = 32, kvLora = 64;
    std::vector<int> kdaLayers{1, 2, 4}, fullAttnLayers{3}; // 1-based, as in Kimi-Linear's config
    bool vision = false;
    int vtHidden = 32, vtHeads = 2, vtQkv = 32, vtInter = 64, vtLayers = 2, vtGrid = 8;
};

TinyDims tinyDimsFor(const TinyModelOptions &options);

class TinySource : public ModelSource {
public:
    explicit TinySource(const TinyModelOptions &options);
    std::string configText() const override { return m_config; }
    std::optional<std::string> sideFile(const std::string &name) const override;
    std::vector<std::string> tensorNames() const override;
    SourceTensor info(const std::string &name) const override;
    void readRows(const SourceTensor &t, int64_t row0, int64_t rows, float *out) const override;
    std::string identity() const override;
    int64_t totalBytes() const override { return m_totalBytes; }

    // Tensors in checkpoint order (globals, then layer by layer), for writing shards.
    const std::vector<std::string> &order() const { return m_order; }
    const TinyDims &dims() const { return m_dims; }

private:
    enum class Init { Matrix, Norm, ALog, DtBias, Conv, Bias, Embedding };
    struct Tensor {
        SourceTensor info;
        Init init = Init::Matrix;
        uint64_t key = 0;
    };
    void add(const std::string &name, std::vector<int64_t> shape, Init init);

    TinyModelOptions m_options;
    TinyDims m_dims;
    std::map<std::string, Tensor> m_tensors;
    std::vector<std::string> m_order;
    std::map<std::string, std::string> m_files; // side files
    std::string m_config;
    int64_t m_totalBytes = 0;
};

} // namespace waste::convert
