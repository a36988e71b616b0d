#include "session/model_impl.hpp"

#include "plan/pass_plan.hpp"

#include "cache/streamed_expert_source.hpp"
#include "format/dsv4_config.hpp"
#include "format/expert_banks.hpp"
#include "format/file.hpp"
#include "format/native_record.hpp"
#include "io/aligned_buffer.hpp"
#include "session/sequence_decoder.hpp"
#include "session/state_file.hpp"
#include "waste/prefix.hpp"
#include "waste/usage_paths.hpp"
#include "text/family_reply_parser.hpp"
#include "text/harmony_reply_parser.hpp"
#include "text/chat_format.hpp"
#include "text/k3_output_parser.hpp"
#include "text/output_stream.hpp"
#include "text/declared_tools_parser.hpp"
#include "text/reply_parsers.hpp"
#include "text/reply_stream.hpp"
#include "text/tagged_reply_parser.hpp"
#include "text/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <malloc.h>
#include <optional>
#include <set>
#include <sys/stat.h>

namespace waste::session {
namespace {

bool isDirectory(const std::string &p)
{
    struct stat st{};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string expertFormatName(const format::ExpertQuant &q)
{
    if (q.isNative())
        return format::nativeFmtName(q.native);
    if (q.indexBits == 6)
        return "VQ4P";
    return "VQ" + std::to_string(q.stages) + "R";
}

// Images are used by the evaluation that places them (its tokens hold a placeholder); their
// positions then live in the state. Tokens with none leave them waiting (a prompt's text-only
// head can be read, and kept, before the part with its images).
struct ClearImagesAfter {
    Model &model;
    bool places;
    ~ClearImagesAfter()
    {
        if (places)
            model.clearImages();
    }
};

} // namespace

ModelImpl::ModelImpl(const std::string &path, const OpenOptions &options, int sequences)
    : m_dir(path), m_opts(options)
{
    while (m_dir.size() > 1 && m_dir.back() == '/')
        m_dir.pop_back();
    if (!isDirectory(m_dir))
        throw Error(ErrorCode::Io, m_dir + ": not a container directory (expected manifest.json, trunk.bin, ... inside)");
    if (m_opts.ctxTokens < 1 || m_opts.ctxTokens > (1 << 20))
        throw Error(ErrorCode::Argument, "context of " + std::to_string(m_opts.ctxTokens) + " tokens is out of range [1, 1048576]");
    auto step = [&](double f) {
        if (m_opts.progress && !m_opts.progress(f))
            throw Error(ErrorCode::Cancelled, m_dir + ": open cancelled");
    };
    step(0.0);
    const std::string manifestPath = m_dir + "/manifest.json";
    m_manifest = format::parseManifest(format::readWholeFile(manifestPath, int64_t(256) << 20), manifestPath);
    if (m_opts.trainedRounding && m_manifest.config.v4.on) {
        format::checkTrainedRounding(m_manifest.config);
        m_manifest.config.v4.trainedRounding = true;
    }
    const format::ModelConfig &c = m_manifest.config;

    // The planner reads the manifest on its own; a budget below the floor is refused here,
    // before any weight is loaded.
    m_plan = planMemory(m_dir, m_opts.ctxTokens);
    BudgetChoice choice = resolveBudget(m_plan, m_opts.ramBudget);
    // The checkpoint (waste/prefix.hpp) is inside the budget, in the expert cache, where
    // resolveBudget found room for it.
    if (!choice.checkpoint_kept) {
        m_read.setCapacity(0);
        const int64_t kib = (m_plan.checkpoint_bytes + 1023) >> 10; // a tiny model's is under 1 MiB
        m_warnings.push_back("the budget leaves no room for a state checkpoint (" +
                             (kib >= 1024 ? std::to_string(kib >> 10) + " MiB" : std::to_string(kib) + " KiB") +
                             "): a turn whose chat format rewrites the last answer reads the whole conversation again");
    }
    // Sequences beyond the first (waste/batch.hpp): their states live in the floor's prompt
    // room a decoding step leaves, then in at most half of the expert cache above its
    // smallest size, so the budget still bounds the whole.
    {
        const BatchShare share = batchShareAt(m_plan, choice.expert_cache_bytes, sequences);
        m_sequences = share.sequences;
        m_statePool = share.state_room;
        m_statePromptShare = share.from_prompt_room;
        m_mostSequences = m_sequences > 1 ? std::max(m_sequences, sequences) : 1;
        if (m_sequences > 1) {
            choice.expert_cache_bytes = share.cache_bytes;
            choice.cache_slots = m_plan.max_record_bytes > 0 ? choice.expert_cache_bytes / m_plan.max_record_bytes : 0;
        }
    }
    m_passTokens = choice.pass_tokens; // its RAM is out of the cache already (expertCacheAt)
    const int64_t budget = choice.budget_bytes, cache = choice.expert_cache_bytes;

    m_trunk = std::make_unique<format::Trunk>(m_dir + "/trunk.bin", m_manifest);
    step(0.1);
    std::map<int, std::shared_ptr<format::ExpertBank>> banks;
    const bool native = m_manifest.quant.isNative();
    if (c.experts > 0) {
        if (!native) // native records carry the release's own scales; there is no codebooks.bin
            m_books = format::Codebooks(m_dir + "/codebooks.bin", m_manifest.quant);
        banks = format::openExpertBanks(m_dir, m_manifest, m_books, manifestPath);
    }
    step(0.2);
    // Where every expert will be read at open too, the bar's share of the trunk and of the
    // experts goes by their bytes (the experts are then often most of the wait).
    int64_t records = 0;
    for (const auto &[layer, bank] : banks)
        records += bank->experts();
    // (The stream decides exactly, once its cache is made; this only weighs the bar.)
    const bool loadAll = m_opts.loadEveryExpert && m_opts.expertCache && records > 0 && records <= choice.cache_slots;
    const double trunkShare =
        loadAll ? double(m_plan.trunk_bytes) / double(std::max<int64_t>(1, m_plan.trunk_bytes + m_plan.expert_bytes_total))
                : 1.0;
    const double weightsDone = 0.2 + 0.7 * trunkShare;
    m_weights = model::loadWeights(m_manifest, *m_trunk);
    step(weightsDone);
    if (banks.empty()) {
        m_experts = std::make_unique<model::PreadExpertSource>(std::move(banks), m_opts.verifyRecords);
    } else {
        // Cache, direct reads, read-ahead and lookahead; none of them changes a logit.
        cache::StreamOptions so;
        so.cacheSlots = choice.cache_slots;
        // The floor's prompt room, the cache's while tokens are generated (roomToCache), as
        // the forecast counts it.
        if (m_plan.max_record_bytes > 0)
            so.roomSlots = plan::promptRoomSlots(m_plan.pass_floor_bytes, io::alignUp(m_plan.max_record_bytes),
                                                 choice.cache_slots, m_plan.expert_bytes_total / m_plan.max_record_bytes);
        so.cacheEnabled = m_opts.expertCache;
        so.readAhead = m_opts.readAhead;
        so.directIo = m_opts.directIo;
        so.verifyCrc = m_opts.verifyRecords;
        // By default one reader per record a step can miss in a layer: top-k for each sequence
        // a batch decodes together (one sequence: top-k, as before), at most 16. A disk serves
        // more reads in flight faster (this project's virtual disk: 0.53 GB/s at one 292 KiB
        // read in flight, 1.15 at 4, 2.8 at 16, `fio`), so a 4-stream step's 16 misses
        // should not queue behind 4 readers.
        so.readerThreads = m_opts.ioThreads >= 0 ? std::clamp(m_opts.ioThreads, 0, 64)
                                                 : std::clamp(std::max(int(c.topK), 1) * m_sequences, 2, 16);
        so.ioRing = m_opts.ioRing;
        so.lookahead = m_opts.lookahead ? std::clamp(m_opts.lookaheadExperts, 0, 64) : 0;
        if (!m_opts.cachePolicy.empty())
            so.policy = cache::parsePolicy(m_opts.cachePolicy);
        auto stream = std::make_unique<cache::StreamedExpertSource>(std::move(banks), c.topK, so);
        m_stream = stream.get();
        m_unusedCacheBytes = std::max<int64_t>(0, cache - m_stream->slots() * m_stream->slotBytes());
        m_experts = std::move(stream);
        for (const std::string &w : m_stream->warnings())
            m_warnings.push_back(w);
        const std::string usage = usageRecordPath(m_dir, m_opts.usagePath);
        if (m_opts.warmFromUsage && m_opts.expertCache && format::fileExists(usage))
            m_stream->warmFrom(usage);
        if (m_opts.loadEveryExpert && m_stream->holdsEveryExpert()) {
            const auto t0 = std::chrono::steady_clock::now();
            m_info.expertsLoadedAtOpen = m_stream->loadEveryExpert([&](double f) {
                return !m_opts.progress || m_opts.progress(weightsDone + (0.9 - weightsDone) * f);
            });
            m_info.expertsLoadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
    }
    for (const std::string &w : choice.warnings)
        m_warnings.push_back(w);
    m_pool = std::make_unique<compute::ThreadPool>(m_opts.threads); // 0: one per hardware thread
    m_forward = std::make_unique<model::Forward>(m_manifest, m_weights, m_books, m_pool.get());
    m_state.allocate(c, m_opts.ctxTokens);

    if (text::Tokenizer::present(m_dir))
        m_tokenizer = text::Tokenizer::load(m_dir, -1, c.eosId > 0 ? static_cast<int32_t>(c.eosId) : -1, c.arch);

    // Info, with the reference's counting rules.
    m_info.arch = c.arch;
    m_info.layers = c.layers;
    m_info.experts = c.experts;
    m_info.topK = c.topK;
    m_info.hidden = c.hidden;
    m_info.vocab = c.vocab;
    m_info.ctxMax = m_opts.ctxTokens;
    m_info.trainedRounding = c.v4.trainedRounding;
    int64_t moeLayers = 0;
    for (int L = 0; L < c.layers; ++L)
        moeLayers += c.moeLayer(L) ? 1 : 0;
    const int64_t expertParams = 3 * int64_t(c.expertWidth()) * c.moeInter * moeLayers;
    int64_t trunkParams = 0, embedParams = 0;
    std::set<int, std::greater<int>> fmts;
    for (const format::TrunkEntry &e : m_manifest.trunk) {
        if (!m_manifest.prefix.empty() && e.name.rfind(m_manifest.prefix, 0) != 0)
            continue;
        trunkParams += e.elements();
        if (e.name == m_manifest.prefix + "model.embed_tokens.weight" || (c.v4.on && e.name == "embed.weight"))
            embedParams += e.elements();
        fmts.insert(static_cast<int>(e.format));
    }
    m_info.paramsTotal = expertParams * c.experts + trunkParams;
    m_info.paramsActive = expertParams * c.topK + trunkParams - embedParams;
    // Trunk formats listed as the reference does: Q3G, Q4G, Q8G, F32 (then our F16/BF16).
    std::string trunkFmts;
    for (format::TrunkFormat f : {format::TrunkFormat::Q3G, format::TrunkFormat::Q4G, format::TrunkFormat::Q8G,
                                  format::TrunkFormat::F32, format::TrunkFormat::F16, format::TrunkFormat::BF16})
        if (fmts.count(static_cast<int>(f)))
            trunkFmts += (trunkFmts.empty() ? "" : "/") + std::string(format::trunkFormatName(f));
    m_info.quantization = (c.experts > 0 ? "experts " + expertFormatName(m_manifest.quant) + ", " : std::string()) +
                          "trunk " + trunkFmts;
    if (c.experts > 0) {
        m_info.expertFormat = expertFormatName(m_manifest.quant);
        if (!m_manifest.banks.empty())
            m_info.recordBytes = m_manifest.banks.begin()->second.recordBytes;
    }
    m_info.expertCacheBytes = cache;
    m_info.checkpointBytes = choice.checkpoint_kept ? m_plan.checkpoint_bytes : 0;
    m_info.budgetBytes = budget;
    m_info.hasVision = format::fileExists(m_dir + "/vision.json");
    m_info.hasChatTemplate = text::hasChatTemplateFile(m_dir);
    m_info.chatFormat = text::decideChatFormat(m_info.arch, m_tokenizer ? &*m_tokenizer : nullptr, m_info.hasChatTemplate,
                                               text::chatTemplateText(m_dir));
    if (m_tokenizer) {
        m_info.bosId = m_tokenizer->bosId();
        m_info.eosId = m_tokenizer->eosId();
    } else if (c.eosId > 0) {
        m_info.eosId = static_cast<int32_t>(c.eosId);
    }
    m_info.warnings = m_warnings;
    m_stats.directIo = m_stream ? m_stream->directIo() : false;
    step(1.0);
}

const text::Tokenizer &ModelImpl::tokenizer() const
{
    if (!m_tokenizer)
        throw Error(ErrorCode::Unsupported, m_dir + ": the container has no tokenizer (tokenizer.json or tokenizer.model); copy the model's tokenizer into it");
    return *m_tokenizer;
}

std::vector<int32_t> ModelImpl::tokenize(std::string_view text, bool markup) const { return tokenizer().encode(text, markup); }

std::string ModelImpl::detokenize(std::span<const int32_t> ids) const { return tokenizer().decode(ids); }

std::string ModelImpl::tokenText(int32_t id) const { return std::string(tokenizer().piece(id)); }

bool ModelImpl::isSpecialToken(int32_t id) const { return tokenizer().isSpecial(id); }

std::unique_ptr<ReplyParser> ModelImpl::replyParser(std::span<const int32_t> prompt) const
{
    // The reply is read in the format the prompt was written in (ModelInfo::chatFormat).
    return text::replyParserFor(m_info.chatFormat, tokenizer(), prompt);
}

int ModelImpl::borrowForPass(int tokens)
{
    const plan::PassCost cost{m_plan.pass_token_bytes, m_plan.pass_fixed_bytes, m_plan.pass_piece_token_bytes};
    // The budget's plan counted on the cache's room above slotsKept(); batch states in the
    // prompt room, or taken from the cache, may ask for more.
    const int64_t slot = m_stream ? std::max<int64_t>(1, m_stream->slotBytes()) : 1;
    const int64_t lendable = m_stream ? std::max<int64_t>(0, m_stream->slots() - slotsKept()) * slot : 0;
    // The prompt's passes: as few as the room allows, evenly long (plan::passFor).
    plan::PassChoice pass = plan::passFor(cost, promptRoom(), lendable, tokens, m_passTokens);
    pass.piece = std::min(pass.piece, m_mostPiece);
    m_forward->setPassPiece(pass.piece);
    const int64_t need = plan::passBorrows(cost, promptRoom(), pass.tokens, pass.piece);
    if (need <= 0 || !m_stream)
        return std::max(pass.tokens, plan::kMinPassTokens);
    const int lent = m_stream->lendSlots(int(std::min<int64_t>((need + slot - 1) / slot, lendable / slot)));
    // Fewer slots free than asked (pinned by others): a shorter pass.
    const int64_t room = promptRoom() + int64_t(lent) * slot - cost.fixedAt(pass.piece);
    return int(std::clamp<int64_t>(room / std::max<int64_t>(1, m_plan.pass_token_bytes), plan::kMinPassTokens, pass.tokens));
}

int64_t ModelImpl::slotsKept() const
{
    const int64_t slot = m_stream ? std::max<int64_t>(1, m_stream->slotBytes()) : 1;
    return 2 * ((m_plan.min_expert_cache + slot - 1) / slot);
}

int64_t ModelImpl::promptRoom() const
{
    return m_plan.pass_floor_bytes - std::min(m_statesHeld, m_statePromptShare);
}

void ModelImpl::fitRoom(int64_t moreStates, bool grow)
{
    if (!m_stream || m_stream->roomSlots() == 0)
        return;
    const int64_t slot = std::max<int64_t>(1, m_stream->slotBytes());
    const int64_t idle = m_plan.pass_floor_bytes - std::min(m_statesHeld + std::max<int64_t>(0, moreStates), m_statePromptShare);
    const int target = int(std::clamp<int64_t>(idle / slot, 0, m_stream->roomSlots()));
    const int now = m_stream->roomInCache();
    if (target < now) {
        m_stream->withholdRoom(now - target);
    } else if (grow && target > now) {
        // What a pass or a state freed goes back to the system before the cache fills the
        // room: glibc keeps freed heap pages, which would count twice.
        ::malloc_trim(0);
        m_stream->restoreRoom(target - now);
    }
}

void ModelImpl::roomToPass()
{
    if (m_stream && m_stream->roomInCache() > 0)
        m_stream->withholdRoom(m_stream->roomInCache());
}

int ModelImpl::unborrowedPassTokens() const
{
    const int64_t room = promptRoom() - m_plan.pass_fixed_bytes;
    return int(std::clamp<int64_t>(room / std::max<int64_t>(1, m_plan.pass_token_bytes), plan::kMinPassTokens,
                                   std::max(m_passTokens, plan::kMinPassTokens)));
}

void ModelImpl::borrowForExpandedAttention(int64_t positions)
{
    m_forward->setMlaExpandRoom(0);
    const int64_t bytes = m_forward->mlaExpandBytes(positions);
    if (bytes <= 0 || !m_stream)
        return;
    // First the budget's cache bytes that no slot holds (a cache never has more slots than
    // records), then slots above slotsKept(), as a pass borrows them.
    if (bytes <= m_unusedCacheBytes) {
        m_forward->setMlaExpandRoom(m_unusedCacheBytes);
        return;
    }
    const int64_t slot = std::max<int64_t>(1, m_stream->slotBytes());
    const int64_t left = m_stream->slots() - slotsKept() - m_stream->cache().lent();
    const int64_t want = (bytes - m_unusedCacheBytes + slot - 1) / slot;
    if (want > left)
        return;
    const int got = m_stream->lendSlots(int(want));
    if (got >= want)
        m_forward->setMlaExpandRoom(m_unusedCacheBytes + int64_t(got) * slot);
}

void ModelImpl::returnPassRoom()
{
    m_forward->setPassPiece(model::Forward::kPassPiece);
    m_forward->setMlaExpandRoom(0);
    if (m_stream)
        m_stream->returnSlots();
}

void ModelImpl::feed(std::span<const int32_t> tokens, const PrefillCallback &progress, model::Forward::Tokens kind)
{
    const auto t0 = std::chrono::steady_clock::now();
    // A prompt borrows the cache's RAM for its passes while it is read, and gives it back.
    struct Borrowed {
        ModelImpl *m = nullptr;
        ~Borrowed()
        {
            if (m)
                m->returnPassRoom();
        }
    } borrowed;
    size_t chunk = size_t(model::Forward::kMaxChunk);
    if (kind == model::Forward::Tokens::Prompt) {
        roomToPass(); // the floor's prompt room leaves the expert cache for the pass
        chunk = size_t(borrowForPass(int(std::min<size_t>(tokens.size(), size_t(1) << 30))));
        borrowed.m = this;
        // Where the first pass would attend in MLA's expanded form (model/mla_form.hpp): room
        // for the rows of every position the prompt's passes reach.
        if (m_forward->mlaExpands(m_state.pos, int64_t(std::min(chunk, tokens.size()))))
            borrowForExpandedAttention(int64_t(m_state.pos) + int64_t(tokens.size()));
    } else {
        roomToCache();
    }
    for (size_t done = 0; done < tokens.size(); done += chunk) {
        const size_t n = std::min(chunk, tokens.size() - done);
        // A prompt's pass reports after every layer, and a stop takes effect at the next
        // layer: the state is then half-read, so it starts again from nothing.
        bool stoppedMidPass = false;
        if (kind == model::Forward::Tokens::Prompt)
            m_forward->setLayerProgress([&](int layer, int layers) {
                const bool go = !m_cancel.load(std::memory_order_relaxed) &&
                                (!progress || layer == layers ||
                                 progress(static_cast<int>(done + n * size_t(layer) / size_t(layers)),
                                          static_cast<int>(tokens.size())));
                stoppedMidPass = !go && layer < layers;
                return go;
            });
        struct Unhook {
            model::Forward &f;
            ~Unhook() { f.setLayerProgress({}); }
        } unhook{*m_forward};
        try {
            m_forward->run(tokens.subspan(done, n), m_state, *m_experts, &m_cancel, kind, int(n));
        } catch (const Error &e) {
            if (stoppedMidPass) {
                resetState();
                throw Error(ErrorCode::Cancelled, "prefill stopped by the caller");
            }
            throw;
        }
        m_read.append(tokens.subspan(done, n), m_vision ? int32_t(m_vision->config().mediaTokenId) : -1);
        if (progress && !progress(static_cast<int>(done + n), static_cast<int>(tokens.size())))
            throw Error(ErrorCode::Cancelled, "prefill stopped by the caller");
    }
    m_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<float> ModelImpl::eval(std::span<const int32_t> tokens, const PrefillCallback &progress)
{
    m_cancel.store(false);
    if (tokens.empty()) {
        if (m_state.lastLogits.empty())
            throw Error(ErrorCode::Argument, "eval needs at least one token");
        return m_state.lastLogits;
    }
    const ClearImagesAfter clearAfter{*this, holdsPlaceholder(tokens)};
    const std::vector<int32_t> placed = placeImages(tokens);
    feed(placed, progress, placed.size() == 1 ? model::Forward::Tokens::Generated : model::Forward::Tokens::Prompt);
    m_stats.tokensPrefilled += static_cast<int64_t>(placed.size());
    return m_state.lastLogits;
}

GenResult ModelImpl::generate(std::span<const int32_t> prompt, const GenParams &params, const TokenCallback &onToken,
                              const PrefillCallback &progress)
{
    m_cancel.store(false);
    const text::Tokenizer &tok = tokenizer(); // before any work: a container without one is refused first
    GenResult res;
    const ClearImagesAfter clearAfter{*this, holdsPlaceholder(prompt)};
    const std::vector<int32_t> placedPrompt = placeImages(prompt);
    prompt = placedPrompt;
    res.promptTokens = static_cast<int>(prompt.size());
    if (!prompt.empty()) {
        if (m_state.pos + int64_t(prompt.size()) > m_state.ctx && m_manifest.config.kdaLayerCount() < m_manifest.config.layers)
            throw Error(ErrorCode::ContextFull, "prompt of " + std::to_string(prompt.size()) + " tokens does not fit the " +
                                                 std::to_string(m_state.ctx - m_state.pos) + " positions left in the context");
        feed(prompt, progress);
        m_stats.tokensPrefilled += static_cast<int64_t>(prompt.size());
    } else if (m_state.lastLogits.empty()) {
        throw Error(ErrorCode::Argument, "generate needs a prompt on a fresh session");
    }
    m_read.mark(m_state); // the start of the answer
    SequenceDecoder decoder(tok, params);
    const bool hasMla = m_manifest.config.kdaLayerCount() < m_manifest.config.layers;
    for (;;) {
        m_stats.tokensGenerated += 1;
        const SequenceDecoder::Next next =
            decoder.step(m_state.lastLogits, !(hasMla && m_state.pos >= m_state.ctx), onToken, [this] { return stats(); });
        if (next == SequenceDecoder::Next::End)
            break;
        // Feed the token (also after a length stop, so the session can continue).
        try {
            const int32_t token = decoder.lastToken();
            feed(std::span<const int32_t>(&token, 1), {}, model::Forward::Tokens::Generated);
        } catch (const Error &e) {
            if (e.code() != ErrorCode::Cancelled)
                throw;
            decoder.cancelled();
            break;
        }
        if (next == SequenceDecoder::Next::FeedThenEnd)
            break;
    }
    return decoder.finish(res.promptTokens, stats());
}

int ModelImpl::addImage(const std::string &path)
{
    if (!m_opts.vision)
        throw Error(ErrorCode::Unsupported, path + ": images are disabled for this model (OpenOptions::vision)");
    if (!m_vision) {
        m_vision = std::make_unique<vision::VisionRuntime>(vision::manifestTensors(m_manifest, m_trunk->file(), m_dir),
                                                           m_opts.threads);
        m_forward->setMediaRows(&m_vision->rows());
    }
    return m_vision->addImage(path);
}

void ModelImpl::clearImages()
{
    if (m_vision)
        m_vision->clearImages();
}

std::string ModelImpl::pendingImageMarkup() const { return m_vision ? m_vision->markup() : std::string(); }

bool ModelImpl::holdsPlaceholder(std::span<const int32_t> tokens) const
{
    return m_vision && m_vision->available() &&
           std::find(tokens.begin(), tokens.end(), int32_t(m_vision->config().mediaTokenId)) != tokens.end();
}

std::vector<int32_t> ModelImpl::placeImages(std::span<const int32_t> tokens) const
{
    if (!holdsPlaceholder(tokens))
        return std::vector<int32_t>(tokens.begin(), tokens.end()); // any images added wait
    return m_vision->expand(tokens);
}

void ModelImpl::resetState()
{
    m_state.reset();
    m_read.clear();
}

void ModelImpl::saveState(const std::string &path) const { saveState(path, SavedParts::Everything); }

void ModelImpl::saveState(const std::string &path, SavedParts parts) const
{
    session::saveState(path, m_manifest.config, m_state, m_read, parts);
}

void ModelImpl::loadState(const std::string &path) { session::loadState(path, m_manifest.config, m_state, m_read); }

Stats ModelImpl::stats() const
{
    Stats s = m_stats;
    const model::ExpertFetchStats f = m_experts->stats();
    s.demandHits = f.hits;
    s.demandMisses = f.misses;
    s.bytesRead = f.bytesRead;
    s.secondsIoWait = f.secondsIo;
    s.speculativeFills = f.speculativeFills;
    s.lookaheadUseful = f.speculativeUsed;
    s.lookaheadPredicted = f.lookaheadPredicted;
    s.lookaheadCorrect = f.lookaheadCorrect;
    s.rereads = f.rereads;
    s.directIo = m_stream ? f.directIo : false;
    s.ioRing = m_stream ? f.ioRing : false;
    s.secondsTotal = m_seconds;
    return s;
}

void ModelImpl::saveUsage()
{
    if (!m_stream)
        throw Error(ErrorCode::Unsupported, m_dir + ": the container has no routed experts; there is no usage to record");
    m_stream->saveUsage(usageRecordPath(m_dir, m_opts.usagePath));
}

} // namespace waste::session

namespace waste {

std::unique_ptr<ReplyParser> Model::replyParser(std::span<const int32_t> prompt, std::string_view toolsJson) const
{
    return std::make_unique<text::DeclaredToolsParser>(replyParser(prompt), info().chatFormat, toolsJson);
}

std::unique_ptr<Model> Model::open(const std::string &containerPath, const OpenOptions &options)
{
    return std::make_unique<session::ModelImpl>(containerPath, options);
}

} // namespace waste
