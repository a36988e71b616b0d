// `waste mktiny --vision` containers open with a working tower: an image is encoded into the
// expected number of positions and changes what the model predicts.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "waste/convert.hpp"
#include "waste/waste.hpp"

using namespace waste;

TEST(VisionMktiny, OpensAndEncodesAnImage)
{
    const std::string dir = std::string(WASTE_TEST_OUTPUT_DIR) + "/vision-mktiny.waste";
    std::filesystem::remove_all(dir);
    TinyModelOptions o;
    o.vision = true;
    o.seed = 5;
    makeTinyContainer(dir, o);

    auto model = Model::open(dir);
    ASSERT_TRUE(model->info().hasVision);
    const std::string img = std::string(WASTE_FIXTURES_DIR) + "/vision-container/img_a.png";
    const int n = model->addImage(img); // 230x170 under 64 patches: 6x8 grid, 12 positions
    EXPECT_EQ(n, 12);
    std::vector<int32_t> tokens = model->tokenize(model->pendingImageMarkup(), true);
    const auto words = model->tokenize("Describe the picture.", true);
    tokens.insert(tokens.end(), words.begin(), words.end());
    const std::vector<float> withImage = model->eval(tokens);
    EXPECT_EQ(model->position(), int(tokens.size()) - 1 + n);
    for (float v : withImage) ASSERT_TRUE(std::isfinite(v));

    // The same prompt with a different picture gives different logits: the rows are used.
    model->resetState();
    model->addImage(std::string(WASTE_FIXTURES_DIR) + "/vision-container/img_b.jpg");
    std::vector<int32_t> other = model->tokenize(model->pendingImageMarkup(), true);
    other.insert(other.end(), words.begin(), words.end());
    const std::vector<float> withOther = model->eval(other);
    double diff = 0;
    for (size_t i = 0; i < withImage.size(); ++i) diff = std::max(diff, std::fabs(double(withImage[i]) - withOther[i]));
    EXPECT_GT(diff, 1e-4);
}
