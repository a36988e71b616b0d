#include "session/state_file.hpp"

#include "format/file.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

namespace waste::session {
namespace {

constexpr uint32_t kMagic = 0x53545357u; // "WSTS"
// Version 2 adds what the state read (one token per position) and its checkpoints
// (read_history.hpp); version 1 files still load, with nothing to match a prompt against.
// Version 3 adds the shapes of the GQA families' key/value rows, sliding windows and
// linear-attention states, and each layer's kind: a state of a model with 2 key/value
// heads of 32 has the bytes of one with 1 head of 64, and must not load into it.
constexpr uint32_t kVersion = 3;
constexpr size_t kFixedWords = 15; // the words every version starts with; 13 = pos, 14 = logits

struct ShapeWord {
    std::string name;
    int64_t value;
};

// What a layer keeps (model::State::allocate's choice): 0 MLA latent rows, 1 a linear-
// attention state (KDA, Gated DeltaNet), 2 GQA key/value rows, 3 a GQA sliding ring.
int64_t layerKind(const format::ModelConfig &c, int L)
{
    if (c.v4.on) // DeepSeek V4: 4 + its compress ratio (window, ratio and indexer shapes say the rest)
        return 4 + c.v4.ratio(L);
    const bool linear = c.isKda[size_t(L)];
    if (c.g.next && linear)
        return 1;
    if (c.g.on)
        return c.g.window > 0 && c.g.sliding[size_t(L)] ? 3 : 2;
    return linear ? 1 : 0;
}

std::vector<ShapeWord> shapeWords(const format::ModelConfig &c, const model::State &s, bool withLogits,
                                  uint32_t version = kVersion)
{
    std::vector<ShapeWord> w = {{"magic", kMagic}, {"version", version}, {"layers", c.layers},
                                {"hidden size", c.hidden}, {"vocabulary", c.vocab}, {"KDA heads", c.kdaHeads},
                                {"KDA head size", c.kdaDim}, {"convolution taps", c.convK},
                                {"attention heads", c.heads}, {"MLA nope size", c.qkNope},
                                {"MLA rope size", c.qkRope}, {"MLA value size", c.vHead},
                                {"MLA latent size", c.kvLora}, {"position", s.pos}, {"logits", withLogits ? 1 : 0}};
    if (version >= 3) {
        const format::GqaConfig &g = c.g;
        w.insert(w.end(), {{"key/value heads", g.kvHeads}, {"key/value head size", g.headDim},
                           {"sliding window", g.window}, {"linear key heads", g.linKeyHeads},
                           {"linear value heads", g.linValueHeads}, {"linear key size", g.linKeyDim},
                           {"linear value size", g.linValueDim}});
        for (int L = 0; L < c.layers; ++L)
            w.push_back({"the kind of layer " + std::to_string(L), layerKind(c, L)});
        if (c.v4.on) { // DeepSeek V4: the shapes its layers' recurrent state and rows take
            const format::Dsv4Config &v = c.v4;
            w.insert(w.end(), {{"V4 head size", v.headDim}, {"V4 window", v.window}, {"V4 indexer size", v.indexDim},
                               {"V4 streams", v.hcMult}});
        }
    }
    return w;
}

} // namespace

void saveState(const std::string &path, const format::ModelConfig &c, const model::State &s, const ReadHistory &h,
               SavedParts parts)
{
    // What is written: the live state, or the state as it was at the newest checkpoint (its
    // recurrent copy and logits, the latent rows before it, which are the live ones); with
    // Everything, the checkpoints after the live state.
    const Checkpoint *at = parts == SavedParts::Checkpoint && !h.checkpoints().empty() ? &h.checkpoints().back() : nullptr;
    const int pos = at ? at->pos : s.pos;
    const std::vector<model::LayerState> &recurrent = at ? at->recurrent : s.layers;
    const std::vector<float> &logits = at ? at->logits : s.lastLogits;
    const std::span<const int32_t> tokens = std::span<const int32_t>(h.tokens()).first(size_t(pos));
    const std::span<const Checkpoint> checkpoints =
        parts == SavedParts::Everything ? std::span<const Checkpoint>(h.checkpoints()) : std::span<const Checkpoint>();

    // Written through an 8 MiB buffer: a full-size K3 state with its checkpoint is over a
    // GiB, which must not be copied into memory whole first.
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw Error(ErrorCode::Io, path + ": cannot write session state (" + std::strerror(errno) + ")");
    std::vector<char> buf;
    const auto flush = [&] {
        size_t done = 0;
        while (done < buf.size()) {
            const ssize_t n = ::write(fd, buf.data() + done, buf.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                const std::string why = std::strerror(errno);
                ::close(fd);
                ::unlink(tmp.c_str());
                throw Error(ErrorCode::Io, path + ": writing session state failed (" + why + ")");
            }
            done += static_cast<size_t>(n);
        }
        buf.clear();
    };
    constexpr size_t kBuffer = size_t(8) << 20;
    auto put = [&](const void *p, size_t n) {
        const char *from = static_cast<const char *>(p);
        while (n > 0) {
            const size_t take = std::min(n, kBuffer - buf.size());
            buf.insert(buf.end(), from, from + take);
            from += take;
            n -= take;
            if (buf.size() == kBuffer)
                flush();
        }
    };
    model::State shape;
    shape.pos = pos;
    for (const ShapeWord &w : shapeWords(c, shape, !logits.empty()))
        put(&w.value, sizeof(int64_t));
    for (int L = 0; L < c.layers; ++L) {
        const model::LayerState &l = recurrent[static_cast<size_t>(L)];
        put(l.S.data(), l.S.size() * 4);
        put(l.convQ.data(), l.convQ.size() * 4);
        put(l.convK.data(), l.convK.size() * 4);
        put(l.convV.data(), l.convV.size() * 4);
        const std::vector<float> &latent = s.layers[static_cast<size_t>(L)].latent;
        if (!latent.empty())
            put(latent.data(), model::latentFloatsAt(c, L, pos) * 4);
        const std::vector<float> &indexKeys = s.layers[static_cast<size_t>(L)].indexKeys;
        if (!indexKeys.empty()) // DSA: the indexer's keys of the positions read
            put(indexKeys.data(), size_t(pos) * size_t(c.dsa.headDim) * 4);
        // GQA keys and values: a sliding ring whole (recurrent), else the rows before pos.
        const model::LayerState &live = s.layers[static_cast<size_t>(L)];
        const size_t kvRows = live.kvRing ? l.keys.size() : size_t(pos) * size_t(c.g.kvHeads) * size_t(c.g.headDim);
        if (!live.keys.empty()) {
            put((live.kvRing ? l : live).keys.data(), kvRows * 4);
            put((live.kvRing ? l : live).values.data(), kvRows * 4);
        }
    }
    put(logits.data(), logits.size() * 4);
    const int64_t nTokens = int64_t(tokens.size());
    put(&nTokens, 8);
    put(tokens.data(), tokens.size() * 4);
    const int64_t nCheckpoints = int64_t(checkpoints.size());
    put(&nCheckpoints, 8);
    for (const Checkpoint &cp : checkpoints) {
        const int64_t pos = cp.pos;
        put(&pos, 8);
        for (const model::LayerState &l : cp.recurrent) {
            put(l.S.data(), l.S.size() * 4);
            put(l.convQ.data(), l.convQ.size() * 4);
            put(l.convK.data(), l.convK.size() * 4);
            put(l.convV.data(), l.convV.size() * 4);
            if (l.kvRing) {
                put(l.keys.data(), l.keys.size() * 4);
                put(l.values.data(), l.values.size() * 4);
            }
        }
        put(cp.logits.data(), cp.logits.size() * 4);
    }

    flush();
    ::fsync(fd);
    ::close(fd);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        ::unlink(tmp.c_str());
        throw Error(ErrorCode::Io, path + ": cannot replace session state (" + std::strerror(errno) + ")");
    }
}

void loadState(const std::string &path, const format::ModelConfig &c, model::State &s, ReadHistory &h)
{
    format::File f(path);
    auto bad = [&](const std::string &what) {
        throw Error(ErrorCode::Format, path + ": " + what + " (the state was saved from a different model or is damaged)");
    };
    if (f.size() < int64_t(kFixedWords * 8))
        bad("too short");
    std::vector<int64_t> words(kFixedWords);
    f.readAt(words.data(), int64_t(kFixedWords * 8), 0);
    if (words[0] != kMagic)
        bad("not a session state");
    if (words[1] < 1 || words[1] > kVersion)
        bad("format version " + std::to_string(words[1]) + " is not one this build reads (1 to " +
            std::to_string(kVersion) + "); save it again with this build");
    const uint32_t version = uint32_t(words[1]);
    const int64_t pos = words[13];
    const bool withLogits = words[14] == 1;
    if (pos < 0 || pos > s.ctx || (words[14] != 0 && words[14] != 1))
        bad("position " + std::to_string(pos) + " does not fit the context of " + std::to_string(s.ctx));
    model::State tmp = s;
    tmp.pos = static_cast<int>(pos);
    const std::vector<ShapeWord> expected = shapeWords(c, tmp, withLogits, version);
    const size_t nWords = expected.size();
    if (f.size() < int64_t(nWords * 8))
        bad("too short");
    words.resize(nWords);
    if (nWords > kFixedWords)
        f.readAt(words.data() + kFixedWords, int64_t((nWords - kFixedWords) * 8), int64_t(kFixedWords * 8));
    for (size_t i = 0; i < nWords; ++i)
        if (words[i] != expected[i].value)
            bad("model shapes differ: " + expected[i].name + " is " + std::to_string(words[i]) + " in the state, " +
                std::to_string(expected[i].value) + " in this model");
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
            get(l.latent, model::latentFloatsAt(c, L, int(pos)));
        }
        if (!l.indexKeys.empty()) {
            std::fill(l.indexKeys.begin(), l.indexKeys.end(), 0.0f);
            get(l.indexKeys, size_t(pos) * size_t(c.dsa.headDim));
        }
        if (!l.keys.empty()) {
            const size_t kvRows = l.kvRing ? l.keys.size() : size_t(pos) * size_t(c.g.kvHeads) * size_t(c.g.headDim);
            std::fill(l.keys.begin(), l.keys.end(), 0.0f);
            std::fill(l.values.begin(), l.values.end(), 0.0f);
            get(l.keys, kvRows);
            get(l.values, kvRows);
        }
    }
    tmp.lastLogits.assign(withLogits ? size_t(c.vocab) : 0, 0.0f);
    get(tmp.lastLogits, tmp.lastLogits.size());
    // Version 1 did not say what was read: positions that match nothing.
    std::vector<int32_t> tokens(size_t(pos), kUnmatchable);
    std::vector<Checkpoint> checkpoints;
    if (version >= 2) {
        auto count = [&](int64_t most) {
            int64_t n = 0;
            if (off + 8 > f.size())
                bad("truncated");
            f.readAt(&n, 8, off);
            off += 8;
            if (n < 0 || n > most)
                bad("a count of " + std::to_string(n) + " is out of range");
            return n;
        };
        if (count(pos) != pos)
            bad("the tokens read do not match the position");
        if (pos > 0) {
            if (off + pos * 4 > f.size())
                bad("truncated");
            f.readAt(tokens.data(), pos * 4, off);
            off += pos * 4;
        }
        const int64_t nCheckpoints = count(64);
        for (int64_t i = 0; i < nCheckpoints; ++i) {
            Checkpoint cp;
            cp.pos = int(count(pos));
            if (cp.pos == 0)
                bad("a checkpoint at position 0");
            cp.recurrent.resize(size_t(c.layers));
            for (int L = 0; L < c.layers; ++L) {
                const model::LayerState &shape = tmp.layers[size_t(L)];
                model::LayerState &l = cp.recurrent[size_t(L)];
                l.S.resize(shape.S.size());
                l.convQ.resize(shape.convQ.size());
                l.convK.resize(shape.convK.size());
                l.convV.resize(shape.convV.size());
                get(l.S, l.S.size());
                get(l.convQ, l.convQ.size());
                get(l.convK, l.convK.size());
                get(l.convV, l.convV.size());
                if (shape.kvRing) {
                    l.kvRing = true;
                    l.keys.resize(shape.keys.size());
                    l.values.resize(shape.values.size());
                    get(l.keys, l.keys.size());
                    get(l.values, l.values.size());
                }
            }
            cp.logits.resize(size_t(c.vocab));
            get(cp.logits, cp.logits.size());
            checkpoints.push_back(std::move(cp));
        }
    }
    if (off != f.size())
        bad("unexpected trailing bytes");
    s = std::move(tmp);
    h.assign(std::move(tokens), std::move(checkpoints));
}

} // namespace waste::session
