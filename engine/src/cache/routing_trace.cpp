#include "cache/routing_trace.hpp"

#include <waste/waste.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace waste::cache {

int64_t RoutingTrace::accesses() const
{
    int64_t n = 0;
    for (const auto &tok : tokens)
        for (const auto &ids : tok)
            n += int64_t(ids.size());
    return n;
}

RoutingTrace parseRoutingTrace(const std::string &text, const std::string &name)
{
    // Bounds keep a hostile file from asking for absurd metadata tables.
    constexpr int kMaxLayers = 1024, kMaxExperts = 65536;
    RoutingTrace trace;
    std::istringstream in(text);
    std::string line;
    int lineNo = 0;
    while (std::getline(in, line)) {
        ++lineNo;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        auto fail = [&](const std::string &why) {
            return Error(ErrorCode::Format,
                         name + ":" + std::to_string(lineNo) + ": " + why + " (expected {\"tok\":n,\"layers\":[[ids]...]})");
        };
        nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("layers") || !j["layers"].is_array())
            throw fail("not a routing record");
        std::vector<std::vector<int>> tok;
        for (const auto &layer : j["layers"]) {
            if (!layer.is_array())
                throw fail("a layer is not a list of expert ids");
            std::vector<int> ids;
            for (const auto &id : layer) {
                if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= kMaxExperts)
                    throw fail("expert id out of range");
                ids.push_back(id.get<int>());
                trace.experts = std::max(trace.experts, ids.back() + 1);
            }
            tok.push_back(std::move(ids));
        }
        if (int(tok.size()) > kMaxLayers)
            throw fail("too many layers");
        if (trace.tokens.empty() && !tok.empty())
            trace.topK = int(tok[0].size());
        trace.layers = std::max(trace.layers, int(tok.size()));
        trace.tokens.push_back(std::move(tok));
    }
    if (trace.tokens.empty() || trace.layers == 0 || trace.topK == 0)
        throw Error(ErrorCode::Format, name + ": no routing records");
    return trace;
}

RoutingTrace loadRoutingTrace(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw Error(ErrorCode::Io, path + ": cannot open routing trace");
    std::ostringstream ss;
    ss << f.rdbuf();
    return parseRoutingTrace(ss.str(), path);
}

} // namespace waste::cache
