// Test helpers: reading raw little-endian float32 fixture files and comparing arrays.
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

inline std::vector<float> readF32File(const std::string &path)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return {};
    const auto size = size_t(in.tellg());
    std::vector<float> v(size / 4);
    in.seekg(0);
    in.read(reinterpret_cast<char *>(v.data()), std::streamsize(v.size() * 4));
    return v;
}

// Largest |a - b| divided by the largest |b| (the "relative to the array's magnitude" measure
// the fixture README uses).
template <typename A, typename B> double maxRelativeDiff(const std::vector<A> &a, const std::vector<B> &b)
{
    double maxAbs = 0, maxDiff = 0;
    for (size_t i = 0; i < b.size(); ++i) {
        maxAbs = std::max(maxAbs, std::fabs(double(b[i])));
        maxDiff = std::max(maxDiff, std::fabs(double(a[i]) - double(b[i])));
    }
    return maxAbs > 0 ? maxDiff / maxAbs : maxDiff;
}
