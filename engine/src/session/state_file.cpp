#include "session/state_file.hpp"

#include "format/file.hpp"
#include "waste/waste.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

namespace waste::session {
namespace {

constexpr uint32_t kMagic = 0x53545357u; // "WSTS"
constexpr uint32_t kVersion = 1;

std::vector<int64_t> shapeWords(const format::ModelConfig &c, const model::State &s, bool withLogits)
{
    return {kMagic, kVersion, c.layers, c.hidden, c.vocab, c.kdaHeads, c.kdaDim, c.convK, c.heads,
            c.qkNope, c.qkRope, c.vHead, c.kvLora, s.pos, withLogits ? 1 : 0};
}

} // namespace

void saveState(const std::string &path, const format::ModelConfig &c, const model::State &s)
{
    std::vector<char> buf;
    auto put = [&](const void *p, size_t n) { buf.insert(buf.end(), static_cast<const char *>(p), static_cast<const char *>(p) + n); };
    const auto words = shapeWords(c, s, !s.lastLogits.empty());
    put(words.data(), words.size() * sizeof(int64_t));
    for (int L = 0; L < c.layers; ++L) {
        const model::LayerState &l = s.layers[static_cast<size_t>(L)];
        put(l.S.data(), l.S.size() * 4);
        put(l.convQ.data(), l.convQ.size() * 4);
        put(l.convK.data(), l.convK.size() * 4);
        put(l.convV.data(), l.convV.size() * 4);
        if (!l.latent.empty())
            put(l.latent.data(), size_t(s.pos) * size_t(c.kvLora + c.qkRope) * 4);
    }
    put(s.lastLogits.data(), s.lastLogits.size() * 4);

    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw Error(ErrorCode::Io, path + ": cannot write session state (" + std::strerror(errno) + ")");
    size_t done = 0;
    while (done < buf.size()) {
        const ssize_t n = ::write(fd, buf.data() + done, buf.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ::close(fd);
            ::unlink(tmp.c_str());
            throw Error(ErrorCode::Io, path + ": writing session state failed (" + std::strerror(errno) + ")");
        }
        done += static_cast<size_t>(n);
    }
    ::fsync(fd);
    ::close(fd);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        ::unlink(tmp.c_str());
        throw Error(ErrorCode::Io, path + ": cannot replace session state (" + std::strerror(errno) + ")");
    }
}

void loadState(const std::string &path, const format::ModelConfig &c, model::State &s)
{
    format::File f(path);
    auto bad = [&](const std::string &what) {
        throw Error(ErrorCode::Format, path + ": " + what + " (the state was saved from a different model or is damaged)");
    };
    const size_t nWords = shapeWords(c, s, false).size();
    if (f.size() < int64_t(nWords * 8))
        bad("too short");
    std::vector<int64_t> words(nWords);
    f.readAt(words.data(), int64_t(nWords * 8), 0);
    const int64_t pos = words[13];
    const bool withLogits = words[14] == 1;
    if (pos < 0 || pos > s.ctx || (words[14] != 0 && words[14] != 1))
        bad("position " + std::to_string(pos) + " does not fit the context of " + std::to_string(s.ctx));
    model::State tmp = s;
    tmp.pos = static_cast<int>(pos);
    if (words != shapeWords(c, tmp, withLogits))
        bad("model shapes differ");
    int64_t off = int64_t(nWords * 8);
    auto get = [&](std::vector<float> &v, size_t n) {
        if (n == 0)
            return;
        if (off + int64_t(n * 4) > f.size())
            bad("truncated");
        f.readAt(v.data(), int64_t(n * 4), off);
        off += int64_t(n * 4);
    };
    for (int L = 0; L < c.layers; ++L) {
        model::LayerState &l = tmp.layers[static_cast<size_t>(L)];
        get(l.S, l.S.size());
        get(l.convQ, l.convQ.size());
        get(l.convK, l.convK.size());
        get(l.convV, l.convV.size());
        if (!l.latent.empty()) {
            std::fill(l.latent.begin(), l.latent.end(), 0.0f);
            get(l.latent, size_t(pos) * size_t(c.kvLora + c.qkRope));
        }
    }
    tmp.lastLogits.assign(withLogits ? size_t(c.vocab) : 0, 0.0f);
    get(tmp.lastLogits, tmp.lastLogits.size());
    if (off != f.size())
        bad("unexpected trailing bytes");
    s = std::move(tmp);
}

} // namespace waste::session
