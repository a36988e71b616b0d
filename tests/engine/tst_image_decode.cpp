// Image decoding: every supported format gives the same pixels as a lossless PNG of the same
// picture (fixtures made by tests/fixtures/images/make_images.py with ImageMagick), EXIF
// orientation is applied, and hostile files are refused cleanly (this suite runs under ASan).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "image/exif_orientation.hpp"
#include "image/image_decode.hpp"
#include "waste/waste.hpp"

using namespace waste;
using namespace waste::image;

namespace {

const std::string kDir = std::string(WASTE_FIXTURES_DIR) + "/images/";

std::vector<uint8_t> readBytes(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Diff {
    int maxAbs = 0;
    double mean = 0;
};

Diff compare(const RgbImage &a, const RgbImage &b)
{
    Diff d;
    EXPECT_EQ(a.width, b.width);
    EXPECT_EQ(a.height, b.height);
    if (a.rgb.size() != b.rgb.size()) return Diff{255, 255};
    double sum = 0;
    for (size_t i = 0; i < a.rgb.size(); ++i) {
        const int e = std::abs(int(a.rgb[i]) - int(b.rgb[i]));
        d.maxAbs = std::max(d.maxAbs, e);
        sum += e;
    }
    d.mean = sum / double(a.rgb.size());
    return d;
}

ErrorCode refusalCode(std::span<const uint8_t> bytes, std::string *message = nullptr,
                      const DecodeOptions &opts = {})
{
    try {
        decodeImage(bytes, "hostile", opts);
    } catch (const Error &e) {
        if (message) *message = e.what();
        return e.code();
    }
    ADD_FAILURE() << "decoded an image that should have been refused";
    return ErrorCode::Io;
}

} // namespace

class LosslessFormats : public ::testing::TestWithParam<const char *> {};

TEST_P(LosslessFormats, SamePixelsAsThePng)
{
    const RgbImage ref = decodeImageFile(kDir + "pic.png");
    ASSERT_EQ(ref.width, 41);
    ASSERT_EQ(ref.height, 29);
    const RgbImage img = decodeImageFile(kDir + GetParam());
    const Diff d = compare(img, ref);
    EXPECT_EQ(d.maxAbs, 0) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LosslessFormats,
                         ::testing::Values("pic24.bmp", "pic8.bmp", "pic.gif", "pic.psd", "pic-bottomup.tga",
                                           "pic-topdown.tga", "pic16.png", "pic-interlaced.png",
                                           "rgba.png" /* alpha dropped, stored colour kept */));

TEST(ImageDecode, GreyBecomesEqualChannels)
{
    const RgbImage grey = decodeImageFile(kDir + "grey.png");
    const RgbImage rgb = decodeImageFile(kDir + "grey-rgb.png");
    EXPECT_EQ(compare(grey, rgb).maxAbs, 0);
    for (size_t i = 0; i < grey.rgb.size(); i += 3) {
        ASSERT_EQ(grey.rgb[i], grey.rgb[i + 1]);
        ASSERT_EQ(grey.rgb[i], grey.rgb[i + 2]);
    }
}

TEST(ImageDecode, JpegCloseToLibjpegDecode)
{
    // stb's integer IDCT differs from libjpeg-turbo by a few levels; the picture is the same.
    const RgbImage jpg = decodeImageFile(kDir + "grad.jpg");
    const Diff d = compare(jpg, decodeImageFile(kDir + "grad-jpg-libjpeg.png"));
    EXPECT_LE(d.maxAbs, 8);
    EXPECT_LT(d.mean, 1.0);
    const Diff toSource = compare(jpg, decodeImageFile(kDir + "grad.png"));
    EXPECT_LT(toSource.mean, 3.0);
    EXPECT_EQ(jpg.orientation, 1);
}

class ExifOrientation : public ::testing::TestWithParam<int> {};

TEST_P(ExifOrientation, ShowsThePictureUpright)
{
    const int o = GetParam();
    const std::string path = kDir + "exif-orientation" + std::to_string(o) + ".jpg";
    EXPECT_EQ(jpegExifOrientation(readBytes(path)), o);
    const RgbImage upright = decodeImageFile(kDir + "grad.png");
    const RgbImage img = decodeImageFile(path);
    EXPECT_EQ(img.orientation, o);
    const Diff d = compare(img, upright);
    EXPECT_LT(d.mean, 3.0) << "orientation " << o;
    EXPECT_LE(d.maxAbs, 48) << "orientation " << o;

    DecodeOptions asStored;
    asStored.applyExifOrientation = false;
    const RgbImage raw = decodeImageFile(path, asStored);
    EXPECT_EQ(raw.orientation, 1);
    EXPECT_EQ(raw.width, o >= 5 ? 40 : 64);
    if (o < 5) EXPECT_GT(compare(raw, upright).mean, 10.0); // as stored it really is turned
}

INSTANTIATE_TEST_SUITE_P(AllEight, ExifOrientation, ::testing::Range(2, 9));

TEST(ExifParser, MalformedBlocksMeanNoRotation)
{
    std::vector<uint8_t> jpg = readBytes(kDir + "exif-orientation6.jpg");
    ASSERT_EQ(jpegExifOrientation(jpg), 6);
    // Every truncation of the EXIF block (and the file) is read safely and means "as stored".
    for (size_t cut = 0; cut < 48; ++cut) {
        std::vector<uint8_t> part(jpg.begin(), jpg.begin() + long(cut));
        const int o = jpegExifOrientation(part);
        EXPECT_TRUE(o == 1 || o == 6);
    }
    // An IFD offset pointing far outside the block.
    std::vector<uint8_t> bad = jpg;
    bad[6 + 6 + 4] = 0x7F;
    EXPECT_EQ(jpegExifOrientation(bad), 1);
    // An orientation value out of range.
    bad = jpg;
    bad[6 + 6 + 8 + 2 + 8] = 0;
    bad[6 + 6 + 8 + 2 + 9] = 9;
    EXPECT_EQ(jpegExifOrientation(bad), 1);
}

TEST(HostileImages, TruncatedFilesAreRefused)
{
    for (const char *name : {"pic.png", "pic24.bmp", "pic8.bmp", "pic.gif", "pic.psd", "pic-bottomup.tga",
                             "pic-topdown.tga", "pic16.png", "pic-interlaced.png", "grad.jpg",
                             "exif-orientation6.jpg", "rgba.png"}) {
        const std::vector<uint8_t> whole = readBytes(kDir + name);
        ASSERT_GT(whole.size(), 100u) << name;
        for (double f : {0.02, 0.1, 0.3, 0.5, 0.7, 0.9}) {
            const std::vector<uint8_t> part(whole.begin(), whole.begin() + long(double(whole.size()) * f));
            std::string msg;
            const ErrorCode code = refusalCode(part, &msg);
            EXPECT_EQ(code, ErrorCode::Format) << name << " cut at " << f << ": " << msg;
        }
    }
}

TEST(HostileImages, HugeHeaderDimensionsRefusedBeforeDecoding)
{
    // PNG signature + IHDR claiming 9000 x 9000 = 81 M pixels (stb does not check chunk CRCs).
    std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                                0, 0, 0x23, 0x28, 0, 0, 0x23, 0x28, 8, 2, 0, 0, 0, 0, 0, 0, 0};
    std::string msg;
    EXPECT_EQ(refusalCode(png, &msg), ErrorCode::Unsupported);
    EXPECT_NE(msg.find("limit"), std::string::npos) << msg;
    // 100000 x 100000: stb's own header check already refuses it.
    for (size_t at : {16u, 20u}) png[at] = 0, png[at + 1] = 0x01, png[at + 2] = 0x86, png[at + 3] = 0xA0;
    const ErrorCode p = refusalCode(png, &msg);
    EXPECT_TRUE(p == ErrorCode::Unsupported || p == ErrorCode::Format) << msg;

    // GIF header: 65535 x 65535 logical screen.
    std::vector<uint8_t> gif = {'G', 'I', 'F', '8', '9', 'a', 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0};
    gif.resize(64, 0);
    const ErrorCode g = refusalCode(gif, &msg);
    EXPECT_TRUE(g == ErrorCode::Unsupported || g == ErrorCode::Format) << msg;

    // BMP: a real header with its dimensions rewritten to 30000 x 30000 (900 M pixels).
    std::vector<uint8_t> bmp = readBytes(kDir + "pic24.bmp");
    for (int at : {18, 22}) {
        bmp[size_t(at)] = 0x30;
        bmp[size_t(at) + 1] = 0x75;
        bmp[size_t(at) + 2] = 0;
        bmp[size_t(at) + 3] = 0;
    }
    EXPECT_EQ(refusalCode(bmp, &msg), ErrorCode::Unsupported) << msg;

    // A caller's smaller limit applies the same way.
    DecodeOptions small;
    small.maxPixels = 1000;
    EXPECT_EQ(refusalCode(readBytes(kDir + "pic.png"), &msg, small), ErrorCode::Unsupported);
}

TEST(HostileImages, NonImagesAreRefused)
{
    const std::string text = "This is a text file, not a picture.\n";
    std::string msg;
    EXPECT_EQ(refusalCode({reinterpret_cast<const uint8_t *>(text.data()), text.size()}, &msg), ErrorCode::Format);
    EXPECT_NE(msg.find("not an image"), std::string::npos) << msg;
    EXPECT_EQ(refusalCode({}, &msg), ErrorCode::Format);
    // PNM is compiled out, like the reference engine.
    const std::string ppm = "P6 2 2 255\n" + std::string(12, '\x7f');
    EXPECT_EQ(refusalCode({reinterpret_cast<const uint8_t *>(ppm.data()), ppm.size()}, &msg), ErrorCode::Format);
}

TEST(HostileImages, OversizedJpegHuffmanTableRefused)
{
    // stb 2.27 writes past its code-size table for a DHT with more than 256 codes.
    std::vector<uint8_t> jpg = readBytes(kDir + "grad.jpg");
    size_t at = 0;
    for (size_t i = 2; i + 1 < jpg.size(); ++i)
        if (jpg[i] == 0xFF && jpg[i + 1] == 0xC4) {
            at = i;
            break;
        }
    ASSERT_GT(at, 0u);
    for (size_t k = 0; k < 16; ++k) jpg[at + 5 + k] = 20; // 320 codes
    std::string msg;
    EXPECT_EQ(refusalCode(jpg, &msg), ErrorCode::Format);
    EXPECT_NE(msg.find("Huffman"), std::string::npos) << msg;
}

TEST(HostileImages, RandomBytesNeverCrash)
{
    // Random buffers and randomly damaged real files: refused with waste::Error or decoded,
    // never a crash or an out-of-bounds access (ASan).
    // WASTE_FUZZ_ROUNDS raises the count for a longer local campaign.
    const char *env = std::getenv("WASTE_FUZZ_ROUNDS");
    const int rounds = env ? std::max(1, std::atoi(env)) : 1;
    std::mt19937 rng(1234);
    for (int i = 0; i < 300 * rounds; ++i) {
        std::vector<uint8_t> junk(size_t(rng() % 2048));
        for (auto &b : junk) b = uint8_t(rng());
        try {
            decodeImage(junk, "junk");
        } catch (const Error &) {
        }
    }
    for (const char *name : {"pic.png", "pic24.bmp", "pic.gif", "pic.psd", "pic-topdown.tga", "grad.jpg"}) {
        const std::vector<uint8_t> whole = readBytes(kDir + name);
        for (int i = 0; i < 60 * rounds; ++i) {
            std::vector<uint8_t> damaged = whole;
            for (int k = 0; k < 4; ++k) damaged[rng() % damaged.size()] = uint8_t(rng());
            try {
                decodeImage(damaged, name);
            } catch (const Error &) {
            }
        }
    }
}

TEST(ImageDecode, FileErrorsNameTheFile)
{
    try {
        decodeImageFile(kDir + "no-such-file.png");
        FAIL();
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::Io);
        EXPECT_NE(std::string(e.what()).find("no-such-file.png"), std::string::npos);
    }
    EXPECT_THROW(decodeImageFile(kDir), Error); // a directory
}
