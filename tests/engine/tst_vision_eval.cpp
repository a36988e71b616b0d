// Images through the whole model: waste::Model::addImage, the media block, the placeholder
// expansion and the embedding splice in the forward pass reproduce the reference engine's
// expanded ids and all 316 logits for every case of tests/fixtures/vision-container.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "model/vision_placement.hpp"
#include "waste/waste.hpp"

using namespace waste;

namespace {

const std::string kDir = std::string(WASTE_FIXTURES_DIR) + "/vision-container/";

template <typename T> std::vector<T> readNumbers(const std::string &path)
{
    std::ifstream in(path);
    std::vector<T> v;
    for (T x; in >> x;) v.push_back(x);
    return v;
}

struct Prepared {
    std::vector<int32_t> tokens;   // block tokens ++ prompt tokens, one media token per image
    std::vector<int32_t> expanded; // what the model sees
};

Prepared prepare(Model &m, const std::vector<std::string> &images, const std::string &prompt)
{
    std::vector<int> positions;
    for (const auto &im : images) positions.push_back(m.addImage(kDir + im));
    Prepared p;
    p.tokens = m.tokenize(m.pendingImageMarkup(), true);
    const auto words = m.tokenize(prompt, true);
    p.tokens.insert(p.tokens.end(), words.begin(), words.end());
    p.expanded = vision::expandMediaTokens(p.tokens, 313, positions);
    return p;
}

} // namespace

TEST(VisionEval, FixtureCasesMatchReferenceLogits)
{
    std::ifstream in(kDir + "index.json");
    const auto index = nlohmann::json::parse(in);
    auto model = Model::open(kDir + "v1.waste");
    ASSERT_TRUE(model->info().hasVision);
    for (const auto &c : index["cases"]) {
        SCOPED_TRACE(c["json"].get<std::string>());
        model->resetState();
        const Prepared p = prepare(*model, c["images"].get<std::vector<std::string>>(), c["prompt"].get<std::string>());
        EXPECT_EQ(int(p.expanded.size()), c["prompt_tokens"].get<int>());
        EXPECT_EQ(p.expanded, readNumbers<int32_t>(kDir + c["ids"].get<std::string>()));
        // The shared front-end path builds the same prompt (and leaves the images pending).
        std::vector<std::string> paths;
        for (const auto &im : c["images"]) paths.push_back(kDir + im.get<std::string>());
        const std::vector<int32_t> viaHelper = promptWithImages(*model, paths, c["prompt"].get<std::string>());
        EXPECT_EQ(viaHelper, p.tokens);
        const std::vector<float> logits = model->eval(viaHelper);
        const auto want = readNumbers<double>(kDir + c["logits"].get<std::string>());
        ASSERT_EQ(logits.size(), want.size());
        double maxDiff = 0;
        for (size_t i = 0; i < want.size(); ++i) maxDiff = std::max(maxDiff, std::fabs(double(logits[i]) - want[i]));
        EXPECT_LT(maxDiff, 1e-4);
        std::cout << c["json"].get<std::string>() << ": max |logit diff| " << maxDiff << "\n";
        EXPECT_EQ(model->position(), int(p.expanded.size()));
        EXPECT_TRUE(model->pendingImageMarkup().empty()); // used by this evaluation only
    }
}

TEST(VisionEval, ImagePositionsStayInTheStateAcrossTurns)
{
    auto model = Model::open(kDir + "v1.waste");
    // One call: image + "Describe the picture." + " And again."
    Prepared whole = prepare(*model, {"img_a.png"}, "Describe the picture.");
    const auto more = model->tokenize(" And again.", true);
    whole.tokens.insert(whole.tokens.end(), more.begin(), more.end());
    const std::vector<float> once = model->eval(whole.tokens);
    // Two turns: the second sends text only; the image is not re-encoded nor re-sent.
    model->resetState();
    const Prepared first = prepare(*model, {"img_a.png"}, "Describe the picture.");
    model->eval(first.tokens);
    const std::vector<float> twice = model->eval(more);
    ASSERT_EQ(once.size(), twice.size());
    double maxDiff = 0;
    for (size_t i = 0; i < once.size(); ++i) maxDiff = std::max(maxDiff, std::fabs(double(once[i]) - twice[i]));
    EXPECT_LT(maxDiff, 1e-5);
}

TEST(VisionEval, PlaceholderCountMustMatchTheImages)
{
    auto model = Model::open(kDir + "v1.waste");
    model->addImage(kDir + "img_a.png");
    model->addImage(kDir + "img_a.png");
    // Three placeholders for two images, then one for two.
    EXPECT_THROW(model->eval(model->tokenize("<|media_pad|><|media_pad|><|media_pad|>", true)), Error);
    model->addImage(kDir + "img_a.png");
    model->addImage(kDir + "img_a.png");
    EXPECT_THROW(model->eval(model->tokenize("<|media_pad|>", true)), Error);
    EXPECT_EQ(model->position(), 0);
}

// Tokens with no placeholder leave added images waiting for the evaluation that places them
// (the app reads a prompt's text-only head, kept in the prompt cache, before its pictures):
// read in two parts, the prompt gives the one-part read's logits bit for bit.
TEST(VisionEval, ImagesWaitThroughATextOnlyPart)
{
    auto whole = Model::open(kDir + "v1.waste");
    const int positions = whole->addImage(kDir + "img_a.png");
    const std::vector<int32_t> head = whole->tokenize("A picture:", true); // more than one token: a pass, as the rest is
    ASSERT_GT(head.size(), 1u);
    const std::vector<int32_t> rest = whole->tokenize("<|media_pad|>B", true);
    std::vector<int32_t> all = head;
    all.insert(all.end(), rest.begin(), rest.end());
    const std::vector<float> once = whole->eval(all);

    auto parts = Model::open(kDir + "v1.waste");
    EXPECT_EQ(parts->addImage(kDir + "img_a.png"), positions);
    parts->eval(head);
    EXPECT_EQ(parts->position(), int(head.size()));
    const std::vector<float> twice = parts->eval(rest);
    EXPECT_EQ(parts->position(), whole->position());
    EXPECT_EQ(twice, once);
    // Placed, the image is used up: a placeholder now has no image.
    EXPECT_THROW(parts->eval(parts->tokenize("<|media_pad|>", true)), Error);
}

TEST(VisionEval, GenerateCountsImagePositionsInThePrompt)
{
    auto model = Model::open(kDir + "v1.waste");
    const Prepared p = prepare(*model, {"img_b.jpg"}, "A");
    GenParams g;
    g.maxTokens = 3;
    const GenResult r = model->generate(p.tokens, g);
    EXPECT_EQ(r.promptTokens, int(p.expanded.size()));
    EXPECT_EQ(r.tokens.size(), 3u);
}

TEST(VisionEval, RefusedImageLeavesNothingPending)
{
    auto model = Model::open(kDir + "v1.waste");
    EXPECT_THROW(promptWithImages(*model, {kDir + "img_a.png", kDir + "README.md"}, "A"), Error);
    EXPECT_TRUE(model->pendingImageMarkup().empty());
}

TEST(VisionEval, TextOnlyContainerRefusesImages)
{
    auto model = Model::open(std::string(WASTE_FIXTURES_DIR) + "/reference-container/r3.waste");
    EXPECT_FALSE(model->info().hasVision);
    EXPECT_THROW(model->addImage(kDir + "img_a.png"), Error);
}
