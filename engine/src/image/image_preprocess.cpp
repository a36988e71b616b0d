#include "image/image_preprocess.hpp"

#include <algorithm>
#include <cmath>

#include "waste/waste.hpp"

namespace waste::image {

PatchGrid chooseGrid(int srcWidth, int srcHeight, int maxPatches)
{
    if (srcWidth <= 0 || srcHeight <= 0 || maxPatches < 4)
        throw Error(ErrorCode::Argument, "image grid: invalid source size or patch budget");
    // f64 throughout, truncation toward zero, as the reference engine does.
    const double ws = double(srcWidth), hs = double(srcHeight);
    double scale = std::sqrt(double(maxPatches) / (ws * hs / 196.0));
    if (scale > 1.0) scale = 1.0;
    int gw = int(ws * scale / 14.0 + 0.5);
    int gh = int(hs * scale / 14.0 + 0.5);
    gw = std::max(gw, 2) & ~1;
    gh = std::max(gh, 2) & ~1;
    // Rounding can overshoot the budget: trim the longer side two patches at a time.
    while (int64_t(gw) * gh > maxPatches && (gw > 2 || gh > 2)) {
        if (gw >= gh && gw > 2) gw -= 2;
        else if (gh > 2) gh -= 2;
        else break;
    }
    return PatchGrid{gh, gw};
}

PatchTensor makePatches(const RgbImage &img, int maxPatches, const std::array<float, 3> &mean,
                        const std::array<float, 3> &stdev)
{
    PatchTensor out;
    out.grid = chooseGrid(img.width, img.height, maxPatches);
    const int gw = out.grid.gw, gh = out.grid.gh;
    const int W = kPatchSize * gw, H = kPatchSize * gh;
    const int ws = img.width, hs = img.height;
    out.values.assign(size_t(out.grid.patches()) * kPatchValues, 0.0f);

    const float rx = float(ws) / float(W);
    const float ry = float(hs) / float(H);
    // Horizontal taps are the same for every row: compute them once.
    std::vector<int> x0s(static_cast<size_t>(W)), x1s(static_cast<size_t>(W));
    std::vector<float> wxs(static_cast<size_t>(W));
    for (int X = 0; X < W; ++X) {
        const float fx = (float(X) + 0.5f) * rx - 0.5f;
        const float fl = std::floor(fx);
        const float wx = fx - fl;
        int x0 = int(fl), x1 = x0 + 1;
        x0 = std::clamp(x0, 0, ws - 1);
        x1 = std::clamp(x1, 0, ws - 1);
        x0s[size_t(X)] = x0;
        x1s[size_t(X)] = x1;
        wxs[size_t(X)] = wx;
    }
    for (int Y = 0; Y < H; ++Y) {
        const float fy = (float(Y) + 0.5f) * ry - 0.5f;
        const float fl = std::floor(fy);
        const float wy = fy - fl;
        int y0 = int(fl), y1 = y0 + 1;
        y0 = std::clamp(y0, 0, hs - 1);
        y1 = std::clamp(y1, 0, hs - 1);
        const int py = Y / kPatchSize, j = Y % kPatchSize;
        for (int X = 0; X < W; ++X) {
            const int x0 = x0s[size_t(X)], x1 = x1s[size_t(X)];
            const float wx = wxs[size_t(X)];
            const int px = X / kPatchSize, k = X % kPatchSize;
            float *patch = &out.values[(size_t(py) * size_t(gw) + size_t(px)) * kPatchValues];
            for (int c = 0; c < 3; ++c) {
                const float a = float(img.at(x0, y0, c)), b = float(img.at(x1, y0, c));
                const float d = float(img.at(x0, y1, c)), e = float(img.at(x1, y1, c));
                // One f32 operation per step, in this order (bit-identical to the reference).
                const float top = (1.0f - wx) * a + wx * b;
                const float bottom = (1.0f - wx) * d + wx * e;
                const float s = (1.0f - wy) * top + wy * bottom;
                const float v = (s / 255.0f - mean[size_t(c)]) / stdev[size_t(c)];
                patch[c * 196 + j * kPatchSize + k] = v;
            }
        }
    }
    return out;
}

} // namespace waste::image
