// The reference containers (Kimi-Linear r3.waste, Kimi K3 k3s1.waste): our eval gives the
// reference engine's top-10 ids and logits (within 1e-3) on the "hello" and "fox"
// prompts, the tokenizer its ids, and `info` its fields.
#include <gtest/gtest.h>

#include "waste/waste.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace {

struct Fixture {
    std::string dir, name;
};
const Fixture kR3{std::string(WASTE_FIXTURES_DIR) + "/reference-container/", "r3"};
const Fixture kK3{std::string(WASTE_FIXTURES_DIR) + "/k3-container/", "k3s1"};

nlohmann::json readJson(const std::string &path)
{
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

std::vector<int32_t> ids(const Fixture &f, const std::string &name)
{
    return readJson(f.dir + f.name + ".tok." + name + ".json")["ids"].get<std::vector<int32_t>>();
}

void checkEval(const Fixture &f, const std::string &name)
{
    auto model = waste::Model::open(f.dir + f.name + ".waste");
    const nlohmann::json ref = readJson(f.dir + f.name + ".eval." + name + ".json");
    const std::vector<int32_t> prompt = ids(f, name);
    ASSERT_EQ(static_cast<int>(prompt.size()), ref["prompt_tokens"].get<int>());
    const std::vector<float> logits = model->eval(prompt);
    ASSERT_EQ(static_cast<int>(logits.size()), ref["vocab"].get<int>());
    const auto top = waste::topTokens(logits, 10);
    ASSERT_EQ(top.size(), ref["top"].size());
    for (size_t i = 0; i < top.size(); ++i) {
        EXPECT_EQ(top[i].id, ref["top"][i]["id"].get<int>()) << name << " rank " << i;
        EXPECT_NEAR(top[i].logit, ref["top"][i]["logit"].get<double>(), 1e-3) << name << " rank " << i;
        EXPECT_NEAR(top[i].prob, ref["top"][i]["prob"].get<double>(), 1e-4) << name << " rank " << i;
    }
}

} // namespace

TEST(ReferenceEval, KimiLinearHello) { checkEval(kR3, "hello"); }

TEST(ReferenceEval, KimiLinearFox) { checkEval(kR3, "fox"); }

TEST(ReferenceEval, K3Hello) { checkEval(kK3, "hello"); }

TEST(ReferenceEval, K3Fox) { checkEval(kK3, "fox"); }

void checkTokenizer(const Fixture &f)
{
    auto model = waste::Model::open(f.dir + f.name + ".waste");
    EXPECT_EQ(model->tokenize("Hello there", true), ids(f, "hello"));
    std::string fox;
    for (int i = 0; i < 5; ++i)
        fox += (i ? " " : "") + std::string("The quick brown fox jumps over the lazy dog.");
    EXPECT_EQ(model->tokenize(fox, true), ids(f, "fox"));
}

TEST(ReferenceEval, TokenizerMatchesReferenceIds)
{
    checkTokenizer(kR3);
    checkTokenizer(kK3);
}

void checkInfo(const Fixture &f)
{
    auto model = waste::Model::open(f.dir + f.name + ".waste");
    const nlohmann::json ref = readJson(f.dir + f.name + ".info.json");
    const waste::ModelInfo &info = model->info();
    EXPECT_EQ(info.arch, ref["arch"].get<std::string>());
    EXPECT_EQ(info.layers, ref["layers"].get<int>());
    EXPECT_EQ(info.experts, ref["experts"].get<int>());
    EXPECT_EQ(info.topK, ref["top_k"].get<int>());
    EXPECT_EQ(info.hidden, ref["hidden"].get<int>());
    EXPECT_EQ(info.paramsTotal, ref["params_total"].get<int64_t>());
    EXPECT_EQ(info.paramsActive, ref["params_active"].get<int64_t>());
    EXPECT_EQ(info.quantization, ref["quantization"].get<std::string>());
    // The cache is budget-dependent; on a machine with room for 3 working sets it is this,
    // less the state checkpoint this engine keeps in it (the reference keeps none).
    EXPECT_EQ(info.expertCacheBytes + waste::planMemory(f.dir + f.name + ".waste").checkpoint_bytes,
              ref["expert_cache_bytes"].get<int64_t>());
}

TEST(ReferenceEval, InfoMatchesReference)
{
    checkInfo(kR3);
    checkInfo(kK3);
}
