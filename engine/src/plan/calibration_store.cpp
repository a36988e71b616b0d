// A compute calibration as numbers the planner reads (time for a call of a given size) and
// as the file it is kept in between runs.
#include <waste/calibration.hpp>
#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace waste {

using Json = nlohmann::json;

double ComputeCalibration::secondsFor(const std::string &kernel, int64_t size) const
{
    std::vector<std::pair<double, double>> pts;
    for (const KernelTiming &t : timings)
        if (t.kernel == kernel)
            pts.emplace_back(double(t.size), t.seconds);
    if (pts.empty())
        return -1;
    std::sort(pts.begin(), pts.end());
    if (pts.size() == 1)
        return pts[0].second * double(size) / std::max(pts[0].first, 1.0);
    // Piecewise linear in size; past either end, the end segment's slope (a call never
    // costs less than nothing, so the small end is held at its smallest measured time
    // scaled down no further than by half).
    size_t i = 1;
    while (i + 1 < pts.size() && double(size) > pts[i].first)
        ++i;
    const auto [x0, y0] = pts[i - 1];
    const auto [x1, y1] = pts[i];
    const double y = y0 + (y1 - y0) * (double(size) - x0) / (x1 - x0);
    return std::max(y, pts[0].second * 0.5);
}

std::string calibrationToJson(const ComputeCalibration &c)
{
    Json j;
    j["machine"] = c.machine;
    j["threads"] = c.threads;
    j["seconds"] = c.seconds;
    j["decode_scale"] = c.decodeScale;
    if (!c.decodeScaleError.empty())
        j["decode_scale_error"] = c.decodeScaleError;
    if (c.smallKernelSeconds > 0)
        j["small_model"] = {{"kernel_seconds", c.smallKernelSeconds},
                            {"token_seconds", c.smallTokenSeconds},
                            {"scale_model_kernel_seconds", c.scaleKernelSeconds}};
    Json rows = Json::array();
    for (const KernelTiming &t : c.timings)
        rows.push_back({{"kernel", t.kernel}, {"size", t.size}, {"seconds", t.seconds}});
    j["timings"] = rows;
    return j.dump(1);
}

ComputeCalibration calibrationFromJson(const std::string &text)
{
    const Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("machine") || !j["machine"].is_string() ||
        !j.contains("timings") || !j["timings"].is_array())
        throw Error(ErrorCode::Format, "not a compute calibration (machine and timings expected)");
    ComputeCalibration c;
    c.machine = j["machine"].get<std::string>();
    c.threads = j.value("threads", 0);
    c.seconds = j.value("seconds", 0.0);
    c.decodeScale = j.value("decode_scale", 1.0);
    if (j.contains("decode_scale_error") && j["decode_scale_error"].is_string())
        c.decodeScaleError = j["decode_scale_error"].get<std::string>();
    if (!(c.decodeScale >= kMinDecodeScale && c.decodeScale <= kMaxDecodeScale))
        throw Error(ErrorCode::Format, "compute calibration: decode_scale out of range");
    if (j.contains("small_model")) {
        const Json &m = j["small_model"];
        auto seconds = [&m](const char *key) {
            const double v = m.is_object() && m.contains(key) && m[key].is_number() ? m[key].get<double>() : -1.0;
            if (!(v > 0 && v < 1e3))
                throw Error(ErrorCode::Format, std::string("compute calibration: small_model.") + key + " out of range");
            return v;
        };
        c.smallKernelSeconds = seconds("kernel_seconds");
        c.smallTokenSeconds = seconds("token_seconds");
        c.scaleKernelSeconds = seconds("scale_model_kernel_seconds");
        if (c.scaleKernelSeconds <= c.smallKernelSeconds)
            throw Error(ErrorCode::Format, "compute calibration: the small model's kernels are not the smaller");
    }
    for (const Json &t : j["timings"]) {
        if (!t.is_object() || !t.contains("kernel") || !t["kernel"].is_string() || !t.contains("size") ||
            !t["size"].is_number() || !t.contains("seconds") || !t["seconds"].is_number())
            throw Error(ErrorCode::Format, "compute calibration: a timing without kernel, size and seconds");
        const double s = t["seconds"].get<double>();
        if (!(s > 0 && s < 1e3))
            throw Error(ErrorCode::Format, "compute calibration: seconds out of range");
        c.timings.push_back({t["kernel"].get<std::string>(), t["size"].get<int64_t>(), s});
    }
    return c;
}

namespace {

void writeCalibration(const std::string &path, const ComputeCalibration &c)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    const fs::path tmp = fs::path(path).string() + ".part";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << calibrationToJson(c);
        if (!f)
            return; // a read-only cache folder costs a re-run next time, nothing more
    }
    fs::rename(tmp, path, ec);
}

} // namespace

ComputeCalibration cachedCalibration(const std::string &path, bool rerun, int threads)
{
    if (!rerun) {
        std::ifstream f(path, std::ios::binary);
        if (f) {
            const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            try {
                ComputeCalibration c = calibrationFromJson(text);
                if (c.machine == calibrationMachineKey(threads)) {
                    if (!c.decodeScaleError.empty()) {
                        // Its decode scale fell back to 1: try that part again (a few
                        // seconds), since the cause (a full temporary folder) may be gone.
                        measureDecode(c, threads);
                        writeCalibration(path, c);
                    }
                    return c;
                }
            } catch (const Error &) {
                // a damaged or foreign file: measure again and replace it
            }
        }
    }
    ComputeCalibration c = calibrateCompute(threads);
    writeCalibration(path, c);
    return c;
}

} // namespace waste
