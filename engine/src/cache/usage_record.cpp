#include "cache/usage_record.hpp"

#include <waste/waste.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace waste::cache {

namespace {

constexpr uint32_t kUsageMagic = 0x47535557u; // "WUSG"
constexpr uint32_t kUsageVersion = 1;
constexpr size_t kMaxEntries = size_t(1) << 24;

void put16(std::string &out, uint32_t v)
{
    out.push_back(char(v & 0xff));
    out.push_back(char((v >> 8) & 0xff));
}
void put32(std::string &out, uint32_t v)
{
    put16(out, v & 0xffff);
    put16(out, v >> 16);
}
uint32_t get(const unsigned char *p, int bytes)
{
    uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}

// Written to a temporary file and renamed, so a crash never leaves half a record.
void writeAtomically(const std::string &path, const std::string &bytes)
{
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f)
            throw Error(ErrorCode::Io, tmp + ": cannot write the usage record (is the container read-only? set a usage path)");
        f.write(bytes.data(), std::streamsize(bytes.size()));
        if (!f)
            throw Error(ErrorCode::Io, tmp + ": write failed");
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec)
        throw Error(ErrorCode::Io, path + ": cannot replace the usage record: " + ec.message());
}

} // namespace

void writeUsage(const std::string &path, const std::vector<UsageEntry> &entries, uint64_t clock)
{
    std::string out;
    put32(out, kUsageMagic);
    put32(out, kUsageVersion);
    put32(out, uint32_t(clock & 0xffffffffu));
    put32(out, uint32_t(clock >> 32));
    for (const UsageEntry &e : entries) {
        put16(out, uint32_t(e.layer));
        put16(out, uint32_t(e.expert));
        put32(out, e.hits);
        put32(out, e.lastSeen);
        put32(out, 0);
    }
    writeAtomically(path, out);
}

std::vector<UsageEntry> readUsage(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return {};
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
    if (bytes.size() < 16 || get(p, 4) != kUsageMagic || get(p + 4, 4) != kUsageVersion || (bytes.size() - 16) % 16 != 0 ||
        (bytes.size() - 16) / 16 > kMaxEntries)
        throw Error(ErrorCode::Format, path + ": not a WASTE usage record (delete it; the next --learn run rewrites it)");
    std::vector<UsageEntry> out;
    for (size_t off = 16; off < bytes.size(); off += 16) {
        UsageEntry e;
        e.layer = int(get(p + off, 2));
        e.expert = int(get(p + off + 2, 2));
        e.hits = get(p + off + 4, 4);
        e.lastSeen = get(p + off + 8, 4);
        out.push_back(e);
    }
    return out;
}

void writeRouting(const std::string &path, const std::vector<std::vector<std::vector<int>>> &passes)
{
    std::string out;
    int tok = 0;
    for (const auto &pass : passes) {
        if (pass.empty())
            continue; // a prefill chunk
        out += "{\"tok\":" + std::to_string(tok++) + ",\"layers\":[";
        for (size_t l = 0; l < pass.size(); ++l) {
            out += l ? ",[" : "[";
            for (size_t i = 0; i < pass[l].size(); ++i)
                out += (i ? "," : "") + std::to_string(pass[l][i]);
            out += "]";
        }
        out += "]}\n";
    }
    writeAtomically(path, out);
}

} // namespace waste::cache
