// The header probe names the size the decoder will produce (EXIF orientation included) for
// every fixture image, and refuses what the decoder refuses on its header.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "image/image_decode.hpp"
#include "image/image_probe.hpp"
#include "waste/waste.hpp"

using namespace waste;
using namespace waste::image;

TEST(ImageProbe, SizeMatchesTheDecodedPicture)
{
    int checked = 0;
    for (const std::string dir : {"/images/", "/vision-container/"}) {
        for (const auto &e : std::filesystem::directory_iterator(std::string(WASTE_FIXTURES_DIR) + dir)) {
            const std::string ext = e.path().extension().string();
            if (ext != ".png" && ext != ".jpg" && ext != ".gif" && ext != ".bmp" && ext != ".tga" && ext != ".psd")
                continue;
            const RgbImage img = decodeImageFile(e.path().string());
            const ImageHeader h = probeImageFile(e.path().string());
            EXPECT_EQ(h.width, img.width) << e.path();
            EXPECT_EQ(h.height, img.height) << e.path();
            ++checked;
        }
    }
    EXPECT_GE(checked, 20); // the rotated JPEGs (orientations 5..8 swap the sides) among them
}

TEST(ImageProbe, RefusesWhatIsNotAnImage)
{
    const std::string path = std::string(WASTE_TEST_OUTPUT_DIR) + "/probe-not-an-image.png";
    std::ofstream(path) << "just some text, not pixels\n";
    EXPECT_THROW(probeImageFile(path), Error);
    EXPECT_THROW(probeImageFile(path + ".missing"), Error);
}
