// waste::Batch (waste/batch.hpp): the sequences, their states, and the step that samples
// the ready ones and then reads one chunk over all of them with Forward::runParts.
#include "waste/batch.hpp"

#include "model/forward.hpp"
#include "session/model_impl.hpp"
#include "session/sequence_decoder.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

namespace waste {
namespace {

session::ModelImpl &implOf(Model &model)
{
    auto *m = dynamic_cast<session::ModelImpl *>(&model);
    if (!m)
        throw Error(ErrorCode::Unsupported, "a batch needs a model opened by waste::Model::open");
    return *m;
}

// Prompt: its tokens are being read; Sample: the logits after the last token are ready;
// Feed: the token just sampled is to be read.
enum class Phase { Prompt, Sample, Feed };

} // namespace

struct Batch::Impl {
    struct Sequence {
        Id id = 0;
        Request req;
        bool session = false;
        model::State *state = nullptr;
        std::unique_ptr<model::State> own; // null on the session, and while preempted
        int64_t ownBytes = 0;              // own's share of the state room
        int reach = 0;                     // the positions its own state may grow to
        std::optional<session::SequenceDecoder> decoder;
        size_t promptRead = 0;
        Phase phase = Phase::Prompt;
        bool endAfterFeed = false;
        bool ended = false;
        // Preemption: the generated tokens read so far; a preempted sequence reads its prompt
        // again (reading = true: no prefill callbacks), then these one a step as they were read
        // the first time (refeedAt of them so far), so its logits stay bit for bit the same.
        std::vector<int32_t> fed;
        bool rereading = false;
        size_t refeedAt = 0;
        size_t refeedLeft() const { return rereading ? fed.size() - refeedAt : 0; }
        int32_t nextFeed() const { return refeedLeft() > 0 ? fed[refeedAt] : decoder->lastToken(); }
    };

    explicit Impl(Model &m) : model(implOf(m)) {}

    session::ModelImpl &model;
    std::vector<std::unique_ptr<Sequence>> seqs; // in the order added
    Id nextId = 1;

    bool hasMla() const
    {
        const format::ModelConfig &c = model.manifest().config;
        return c.kdaLayerCount() < c.layers;
    }
    bool sessionInUse() const
    {
        return std::any_of(seqs.begin(), seqs.end(), [](const auto &s) { return s->session; });
    }
    // The bytes of the own states, out of model.statePoolBytes(); the model keeps the count,
    // since what they hold of the floor's prompt room is not a pass's (ModelImpl::promptRoom).
    int64_t used() const { return model.statesHeld(); }
    void hold(int64_t delta) { model.setStatesHeld(model.statesHeld() + delta); }
    ~Impl()
    {
        for (const auto &s : seqs)
            hold(-s->ownBytes);
    }

    // The positions a sequence can reach: its prompt and what it may generate, at most the
    // context (a prompt longer than that is refused by add()).
    int reachFor(size_t promptTokens, int maxTokens) const
    {
        const int ctx = model.info().ctxMax;
        if (maxTokens <= 0)
            return ctx;
        return int(std::min<int64_t>(ctx, int64_t(promptTokens) + int64_t(maxTokens)));
    }
    // The positions its state starts with: the prompt and the first kAnswerRoom tokens of the
    // answer, at most its reach. Most answers end well before max_tokens (a client that sends
    // none gets the context's end), so states grow as answers do (grow()).
    int firstPositionsFor(size_t toRead, int reach) const
    {
        return int(std::min<int64_t>(reach, int64_t(toRead) + kAnswerRoom));
    }
    int64_t stateBytesFor(size_t promptTokens, int maxTokens) const
    {
        return model::State::bytesFor(model.manifest().config,
                                      firstPositionsFor(promptTokens, reachFor(promptTokens, maxTokens)));
    }
    std::unique_ptr<model::State> takeState(int positions)
    {
        auto s = std::make_unique<model::State>();
        s->allocate(model.manifest().config, positions);
        return s;
    }
    // A state for a sequence that has none (new, or preempted): false while the room lacks it.
    bool giveState(Sequence &s, size_t toRead)
    {
        toRead += s.refeedLeft();
        const int positions = firstPositionsFor(toRead, s.reach);
        const int64_t bytes = model::State::bytesFor(model.manifest().config, positions);
        // The room holds one full-context state, so a sequence alone always gets one.
        if (used() > 0 && used() + bytes > model.statePoolBytes())
            return false;
        model.roomForStates(bytes); // the cache lets go of the prompt room they use first
        s.own = takeState(positions);
        s.ownBytes = s.own->bytes();
        hold(s.ownBytes);
        s.state = s.own.get();
        return true;
    }
    // More positions for a full own state: twice as many, or kAnswerRoom more where twice
    // does not fit the room, at most its reach. False when neither fits.
    bool grow(Sequence &s)
    {
        const int cur = s.state->ctx;
        if (!s.own || cur >= s.reach)
            return false;
        const format::ModelConfig &c = model.manifest().config;
        for (int64_t want : {std::min<int64_t>(s.reach, 2 * int64_t(cur)), std::min<int64_t>(s.reach, int64_t(cur) + kAnswerRoom)}) {
            const int64_t bytes = model::State::bytesFor(c, int(want));
            if (used() - s.ownBytes + bytes > model.statePoolBytes())
                continue;
            model.roomForStates(bytes - s.ownBytes);
            s.own->grow(c, int(want));
            hold(s.own->bytes() - s.ownBytes);
            s.ownBytes = s.own->bytes();
            return true;
        }
        return false;
    }
    // Frees a sequence's state for an older one that needs the room; once the room has it
    // again it reads what it had read: its prompt in passes (whose logits do not depend on
    // the cut), then its generated tokens one a step, as the first time (a prompt pass's
    // logits are not bit for bit a decode step's).
    void preempt(Sequence &s)
    {
        if (s.phase == Phase::Feed && s.refeedLeft() == 0)
            s.fed.push_back(s.decoder->lastToken()); // sampled, not read yet
        s.rereading = s.rereading || s.phase != Phase::Prompt;
        s.refeedAt = 0;
        s.promptRead = 0;
        s.phase = Phase::Prompt;
        s.own.reset();
        hold(-s.ownBytes);
        s.ownBytes = 0;
        s.state = nullptr;
        ++preemptions;
    }
    bool anyWaiting() const
    {
        return std::any_of(seqs.begin(), seqs.end(), [](const auto &s) {
            return !s->ended && (s->state == nullptr || (s->own && s->phase == Phase::Feed && s->state->pos >= s->state->ctx));
        });
    }
    int64_t preemptions = 0;
};

std::unique_ptr<Model> openForBatch(const std::string &containerPath, const OpenOptions &options, int sequences)
{
    if (sequences < 1 || sequences > kMaxSequences)
        throw Error(ErrorCode::Argument, "sequences at once must be in [1, " + std::to_string(kMaxSequences) + "] (got " +
                                             std::to_string(sequences) + ")");
    return std::make_unique<session::ModelImpl>(containerPath, options, sequences);
}

BatchShare batchShareAt(const MemoryPlan &plan, int64_t cacheBytes, int sequences)
{
    const int wanted = std::clamp(sequences, 1, kMaxSequences);
    // While sequences decode, a prompt is read a piece at a time in the floor's own prompt
    // room (Batch::step): what such a piece leaves of it holds states until a pass needs it.
    const int64_t piece = plan.pass_fixed_bytes + int64_t(kPromptPieceWhileDecoding) * plan.pass_token_bytes;
    const int64_t promptSpare = std::max<int64_t>(0, plan.pass_floor_bytes - piece);
    const int64_t cacheSpare = std::max<int64_t>(0, cacheBytes - plan.min_expert_cache) / 2;
    const int64_t each = std::max<int64_t>(1, plan.state_bytes);
    BatchShare s;
    s.sequences = int(std::min<int64_t>(wanted - 1, (promptSpare + cacheSpare) / each)) + 1;
    s.cache_bytes = cacheBytes;
    if (s.sequences > 1) {
        // All of the prompt room's spare, and from the cache what whole states need beyond it.
        s.state_room = std::min(std::max(promptSpare, int64_t(s.sequences - 1) * each), int64_t(wanted - 1) * each);
        s.from_prompt_room = std::min(promptSpare, s.state_room);
        s.cache_bytes -= s.state_room - s.from_prompt_room;
    }
    return s;
}

int batchSequences(const Model &model)
{
    const auto *m = dynamic_cast<const session::ModelImpl *>(&model);
    return m ? m->sequences() : 1;
}

Batch::Batch(Model &model) : m(std::make_unique<Impl>(model)) {}

Batch::~Batch() = default;

int Batch::active() const { return int(m->seqs.size()); }

int Batch::capacity() const { return m->model.mostSequences(); }

bool Batch::admits(size_t promptTokens, int maxTokens, bool useSession) const
{
    if (active() >= capacity())
        return false;
    if (useSession)
        return !m->sessionInUse();
    const int ownInUse = active() - (m->sessionInUse() ? 1 : 0);
    if (ownInUse >= capacity() - 1)
        return false;
    // The room is at least one full-context state (batchShareAt), so the first own state
    // always fits: nothing waits for ever. A sequence waiting for room (to grow, or after
    // preemption) goes first.
    if (m->anyWaiting())
        return false;
    return m->used() == 0 || m->used() + m->stateBytesFor(promptTokens, maxTokens) <= m->model.statePoolBytes();
}

bool Batch::sessionInUse() const { return m->sessionInUse(); }

int64_t Batch::preemptions() const { return m->preemptions; }

int Batch::chunkTokens() { return model::Forward::kMaxChunk; }

Batch::Id Batch::add(Request request)
{
    const int cap = capacity();
    if (active() >= cap)
        throw Error(ErrorCode::Argument, "the batch is full (" + std::to_string(cap) +
                                             " sequences at once, as the RAM budget allows); add after one ends, or open "
                                             "with a larger budget or OpenOptions::sequences");
    if (request.useSession && m->sessionInUse())
        throw Error(ErrorCode::Argument, "the session is already in use by another sequence of the batch");
    const int ownInUse = active() - (m->sessionInUse() ? 1 : 0);
    if (!request.useSession && ownInUse >= cap - 1)
        throw Error(ErrorCode::Argument, "the budget holds the session's state and " + std::to_string(cap - 1) +
                                             " more; this sequence must continue the session (useSession)");
    if (!request.useSession && !admits(request.prompt.size(), request.params.maxTokens, false))
        throw Error(ErrorCode::Argument,
                    "the states of the sequences running take the budget's room for more: add this one after one "
                    "ends, give it fewer tokens (maxTokens), or open with a larger budget");
    if (!m->model.pendingImageMarkup().empty())
        throw Error(ErrorCode::Unsupported, "images are not batched: generate a prompt with images with Model::generate alone");
    const int vocab = m->model.info().vocab;
    for (int32_t t : request.prompt)
        if (t < 0 || t >= vocab)
            throw Error(ErrorCode::Argument,
                        "token id " + std::to_string(t) + " is out of range [0, " + std::to_string(vocab) + ")");
    const text::Tokenizer &tok = m->model.tokenizerForBatch();

    auto seq = std::make_unique<Impl::Sequence>();
    seq->session = request.useSession;
    if (seq->session) {
        seq->state = &m->model.sessionState();
    } else {
        seq->reach = m->reachFor(request.prompt.size(), request.params.maxTokens);
        if (m->hasMla() && int64_t(request.prompt.size()) > seq->reach)
            throw Error(ErrorCode::ContextFull, "prompt of " + std::to_string(request.prompt.size()) +
                                                    " tokens does not fit the " + std::to_string(seq->reach) +
                                                    " positions of the context");
        if (!m->giveState(*seq, request.prompt.size()))
            throw Error(ErrorCode::Argument, "the states of the sequences running take the budget's room for more: add "
                                             "this one after one ends, or open with a larger budget");
    }
    const model::State &st = *seq->state;
    if (m->hasMla() && int64_t(st.pos) + int64_t(request.prompt.size()) > st.ctx)
        throw Error(ErrorCode::ContextFull, "prompt of " + std::to_string(request.prompt.size()) +
                                                " tokens does not fit the " + std::to_string(st.ctx - st.pos) +
                                                " positions left in the context");
    if (request.prompt.empty() && st.lastLogits.empty())
        throw Error(ErrorCode::Argument, "a sequence needs a prompt unless it continues a session that has read one");
    seq->decoder.emplace(tok, request.params);
    seq->req = std::move(request);
    seq->id = m->nextId++;
    if (seq->req.prompt.empty()) {
        seq->phase = Phase::Sample;
        m->model.readHistory().mark(*seq->state); // the start of the answer
    }
    const Id id = seq->id;
    m->seqs.push_back(std::move(seq));
    return id;
}

std::vector<Batch::Ended> Batch::step()
{
    std::vector<Ended> ended;
    session::ModelImpl &model = m->model;
    const bool hasMla = m->hasMla();
    auto statsNow = [&model] { return model.stats(); };
    auto release = [&](Impl::Sequence &s) {
        s.own.reset(); // its RAM goes back to the room for states
        m->hold(-s.ownBytes);
        s.ownBytes = 0;
        s.state = nullptr;
        s.ended = true;
    };
    auto finish = [&](Impl::Sequence &s) {
        Ended e;
        e.id = s.id;
        e.result = s.decoder->finish(int(s.req.prompt.size()), model.stats());
        ended.push_back(std::move(e));
        release(s);
    };
    auto fail = [&](Impl::Sequence &s, ErrorCode code, const std::string &message) {
        Ended e;
        e.id = s.id;
        e.failed = true;
        e.code = code;
        e.message = message;
        ended.push_back(std::move(e));
        release(s);
    };

    // 1. Every sequence whose logits are ready picks its next token.
    for (auto &sp : m->seqs) {
        Impl::Sequence &s = *sp;
        if (s.phase != Phase::Sample)
            continue;
        model.countBatch(0, 1, 0);
        // An own state grows to its reach before the token is read (2.).
        const bool roomLeft = !(hasMla && s.state->pos >= (s.own ? s.reach : s.state->ctx));
        session::SequenceDecoder::Next next;
        try {
            next = s.decoder->step(s.state->lastLogits, roomLeft, s.req.onToken, statsNow);
        } catch (const std::exception &e) {
            // Sampling, a constraint or the caller's callback failed: this sequence ends with
            // the error; the others and the states they share nothing with go on.
            const auto *err = dynamic_cast<const Error *>(&e);
            fail(s, err ? err->code() : ErrorCode::OutOfMemory, e.what());
            continue;
        }
        if (next == session::SequenceDecoder::Next::End) {
            finish(s);
            continue;
        }
        s.phase = Phase::Feed;
        s.endAfterFeed = next == session::SequenceDecoder::Next::FeedThenEnd;
    }
    auto dropEnded = [&] {
        m->seqs.erase(std::remove_if(m->seqs.begin(), m->seqs.end(), [](const auto &s) { return s->ended; }),
                      m->seqs.end());
    };
    dropEnded();

    // 2. The step's tokens: each decoding sequence's token (a chunk of generated tokens),
    // then prompt pieces (a prompt's pass): the whole pass the budget allows when nothing is
    // decoding, else a piece of kPromptPieceWhileDecoding, so a long prompt holds the others'
    // next tokens up by one piece at most.
    //
    // First the room: a sequence whose own state is full grows it, oldest first, taking the
    // states of younger sequences where the room lacks it (they read their tokens again
    // later); a sequence without a state (preempted) gets one, oldest first, where it fits.
    // If nothing can run then, the youngest holder gives its state up, until one can: the
    // room holds one full-context state, so the oldest alone always runs.
    auto full = [](const Impl::Sequence &s) { return s.own && s.state && s.state->pos >= s.state->ctx; };
    auto youngestHolderAfter = [&](size_t i) -> Impl::Sequence * {
        for (size_t j = m->seqs.size(); j-- > i + 1;)
            if (m->seqs[j]->own)
                return m->seqs[j].get();
        return nullptr;
    };
    auto makeRoom = [&] {
        bool runnable = false;
        for (size_t i = 0; i < m->seqs.size(); ++i) {
            Impl::Sequence &s = *m->seqs[i];
            if (s.phase == Phase::Feed && hasMla && full(s))
                while (!m->grow(s)) {
                    Impl::Sequence *y = youngestHolderAfter(i);
                    if (!y)
                        break;
                    m->preempt(*y);
                }
            if (!s.session && !s.own && !m->giveState(s, s.req.prompt.size()))
                continue;
            runnable = runnable || !(s.phase == Phase::Feed && hasMla && full(s));
        }
        return runnable;
    };
    while (!makeRoom()) {
        Impl::Sequence *y = youngestHolderAfter(0);
        if (!y)
            break; // nothing left to give up (cannot happen: the oldest alone fits)
        m->preempt(*y);
    }

    std::vector<int32_t> tokens;
    std::vector<model::Forward::Part> parts;
    std::vector<Impl::Sequence *> members;
    int room = chunkTokens();
    for (auto &sp : m->seqs)
        if (sp->phase == Phase::Feed && room > 0 && !(hasMla && full(*sp))) {
            tokens.push_back(sp->nextFeed());
            parts.push_back({sp->state, 1});
            members.push_back(sp.get());
            --room;
        }
    const size_t decoding = parts.size();
    // With nothing decoding, the prompts are read in one pass, which borrows the cache's RAM
    // for the step (ModelImpl::borrowForPass); while others decode, a piece a step in the
    // floor's own room, so their records stay put and their tokens keep coming.
    struct Borrowed {
        session::ModelImpl *m = nullptr;
        ~Borrowed()
        {
            if (m)
                m->returnPassRoom();
        }
    } borrowed;
    // The floor's prompt room is the expert cache's while no prompt waits (ModelImpl::roomToCache).
    const bool promptsWaiting = std::any_of(m->seqs.begin(), m->seqs.end(), [](const auto &sp) {
        return sp->phase == Phase::Prompt && sp->state;
    });
    if (promptsWaiting)
        model.roomToPass();
    else
        model.roomToCache();
    if (decoding > 0) {
        room = std::min(kPromptPieceWhileDecoding, model.unborrowedPassTokens());
    } else {
        size_t left = 0;
        for (auto &sp : m->seqs)
            if (sp->phase == Phase::Prompt && sp->state)
                left += sp->req.prompt.size() - sp->promptRead;
        room = left > 0 ? model.borrowForPass(int(std::min<size_t>(left, size_t(1) << 30))) : 0;
        borrowed.m = left > 0 ? &model : nullptr;
    }
    // Shortest prompt left first: a short prompt starts answering at once instead of
    // waiting behind a long one, which takes the room the others leave.
    std::vector<Impl::Sequence *> prompts;
    for (auto &sp : m->seqs)
        if (sp->phase == Phase::Prompt && sp->state)
            prompts.push_back(sp.get());
    std::stable_sort(prompts.begin(), prompts.end(), [](const Impl::Sequence *a, const Impl::Sequence *b) {
        return a->req.prompt.size() - a->promptRead < b->req.prompt.size() - b->promptRead;
    });
    for (Impl::Sequence *sp : prompts) {
        if (room == 0)
            break;
        size_t left = sp->req.prompt.size() - sp->promptRead;
        if (sp->session && sp->promptRead < sp->req.markAt)
            left = std::min(left, sp->req.markAt - sp->promptRead); // the pass ends at the mark
        const int n = int(std::min<size_t>(size_t(room), left));
        tokens.insert(tokens.end(), sp->req.prompt.begin() + std::ptrdiff_t(sp->promptRead),
                      sp->req.prompt.begin() + std::ptrdiff_t(sp->promptRead + size_t(n)));
        parts.push_back({sp->state, n});
        members.push_back(sp);
        room -= n;
    }
    if (parts.empty())
        return ended;

    // 3. The forward passes: the generated tokens together, then the prompts' pass. A pass
    // that fails (or a lone prompt stopped midway) leaves undefined only the states it was
    // reading: those sequences end with the error, the others go on.
    const auto t0 = std::chrono::steady_clock::now();
    auto failMembers = [&](size_t from, size_t to, const std::exception &e) {
        const auto *err = dynamic_cast<const Error *>(&e);
        for (size_t i = from; i < to; ++i) {
            Impl::Sequence *s = members[i];
            if (s->session) {
                model.sessionState().reset();
                model.readHistory().clear();
            }
            fail(*s, err ? err->code() : ErrorCode::OutOfMemory, e.what());
        }
    };
    size_t decodeTokens = 0;
    for (size_t i = 0; i < decoding; ++i)
        decodeTokens += size_t(parts[i].count);
    const std::span<const int32_t> all(tokens);
    const std::span<const model::Forward::Part> allParts(parts);
    if (decoding > 0) {
        try {
            model.forward().runParts(all.first(decodeTokens), allParts.first(decoding), model.experts(),
                                     model::Forward::Tokens::Generated);
        } catch (const std::exception &e) {
            failMembers(0, decoding, e); // the prompts wait, unread, for the next step
            dropEnded();
            return ended;
        }
    }
    if (decoding < parts.size()) {
        // The pass's progress after every layer, for each prompt in it; a stop takes effect
        // at the next layer when the pass reads that prompt alone (else at the pass's end).
        model::Forward &forward = model.forward();
        const bool alone = parts.size() - decoding == 1;
        forward.setLayerProgress([&](int layer, int layers) {
            bool go = true;
            for (size_t i = decoding; i < members.size() && layer < layers; ++i) {
                Impl::Sequence &sq = *members[i];
                if (!sq.req.onPrefill || sq.rereading)
                    continue;
                const size_t read = sq.promptRead + size_t(parts[i].count) * size_t(layer) / size_t(layers);
                go = sq.req.onPrefill(int(read), int(sq.req.prompt.size())) || !alone;
            }
            return go;
        });
        struct Unhook {
            model::Forward &f;
            ~Unhook() { f.setLayerProgress({}); }
        } unhook{forward};
        try {
            forward.runParts(all.subspan(decodeTokens), allParts.subspan(decoding), model.experts(),
                             model::Forward::Tokens::Prompt);
        } catch (const std::exception &e) {
            failMembers(decoding, members.size(), e);
            members.resize(decoding); // the decoded tokens are read: step 4 takes them
            parts.resize(decoding);
        }
    }
    model.countBatch(0, 0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

    // 4. What each sequence read.
    size_t off = 0;
    for (size_t i = 0; i < members.size(); ++i) {
        Impl::Sequence &s = *members[i];
        const int n = parts[i].count;
        if (s.session)
            model.readHistory().append(std::span<const int32_t>(tokens.data() + off, size_t(n)), model.mediaToken());
        off += size_t(n);
        if (s.phase == Phase::Feed) {
            if (s.refeedLeft() > 0) {
                // A preempted sequence reading its answer again: on to the next, or done.
                if (++s.refeedAt < s.fed.size())
                    continue;
                s.rereading = false;
                if (s.endAfterFeed)
                    finish(s);
                else
                    s.phase = Phase::Sample;
                continue;
            }
            if (s.endAfterFeed)
                finish(s);
            else {
                s.fed.push_back(tokens[off - 1]);
                s.phase = Phase::Sample;
            }
            continue;
        }
        s.promptRead += size_t(n);
        if (s.rereading) {
            model.countBatch(n, 0, 0);
            if (s.promptRead == s.req.prompt.size()) {
                if (s.refeedLeft() > 0)
                    s.phase = Phase::Feed;
                else {
                    s.rereading = false;
                    s.phase = Phase::Sample;
                }
            }
            continue;
        }
        model.countBatch(n, 0, 0);
        const int total = int(s.req.prompt.size());
        if (s.req.onPrefill && !s.req.onPrefill(int(s.promptRead), total)) {
            fail(s, ErrorCode::Cancelled, "prefill stopped by the caller");
            continue;
        }
        if (s.session && s.promptRead == s.req.markAt && s.req.onMark)
            s.req.onMark();
        if (s.promptRead == s.req.prompt.size()) {
            if (s.session)
                model.readHistory().mark(*s.state); // the start of the answer
            s.phase = Phase::Sample;
        }
    }
    dropEnded();
    return ended;
}

} // namespace waste
