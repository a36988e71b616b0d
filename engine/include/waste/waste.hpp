// libwaste public C++ API.
//
// One Model = one open container + one generation session (like a conversation).
// A Model is not thread-safe: one thread drives it (the app's EngineWorker does).
// Only cancel() may be called from another thread.
//
// Errors are reported by throwing waste::Error, whose message is one line that names
// the file or record at fault and, where it helps, what to do.
#pragma once

#include "waste/chat.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waste {

inline constexpr const char *kVersion = "0.1.0";

// ContextFull: the prompt does not fit the positions left in the context.
enum class ErrorCode { Io, Format, RamBudget, OutOfMemory, Argument, Unsupported, Cancelled, ContextFull };

class Error : public std::runtime_error {
public:
    // argument: the caller's argument at fault (GenParams "max_tokens", ...), when one is.
    Error(ErrorCode code, const std::string &message, std::string argument = {})
        : std::runtime_error(message), m_code(code), m_argument(std::move(argument))
    {
    }
    ErrorCode code() const noexcept { return m_code; }
    const std::string &argument() const noexcept { return m_argument; }

private:
    ErrorCode m_code;
    std::string m_argument;
};

// What the RAM planner computes from the manifest alone (no weights read).
// Field names follow the reference CLI's `plan --json`.
struct MemoryPlan {
    int64_t ctx = 0;
    int64_t trunk_bytes = 0;       // resident trunk tensors
    int64_t state_bytes = 0;       // KDA recurrent state + conv rings + MLA latent cache for ctx
    int64_t scratch_bytes = 0;     // activations, LUTs, read buffers
    int64_t min_expert_cache = 0;  // two layers' worth of expert records
    int64_t vision_bytes = 0;      // vision tower when the container has one
    int64_t floor_bytes = 0;       // below this the engine refuses to open
    int64_t recommended_bytes = 0; // default budget (floor + k working sets under 7/8 RAM)
    int64_t working_set_bytes = 0; // one token's expert records: record bytes * top_k * moe layers
    int64_t physical_ram_bytes = 0;
    int64_t usable_ram_bytes = 0;  // min(physical, cgroup limit)
    // Beyond the reference:
    int64_t cap_bytes = 0;             // 7/8 of usable RAM: the default budget stays under it
    int64_t other_process_bytes = 0;   // RAM other processes hold right now
    int64_t cliff_bytes = 0;           // budgets above this are likely to page (see plan/budget.cpp)
    int64_t max_record_bytes = 0;      // expert cache slot size
    int64_t moe_layers = 0;
    int64_t top_k = 0;
    int64_t expert_bytes_total = 0;    // every expert record of the container
    bool generated_weights = false;    // its config's waste_generated_weights (waste mktiny): a random router
    // One state checkpoint (waste/prefix.hpp): recurrent state and a row of logits. An open
    // model keeps it inside its budget, in the expert cache (resolveBudget says when).
    int64_t checkpoint_bytes = 0;
    // A prompt's pass (model/forward.hpp): what each of its tokens holds for the whole pass,
    // and what it holds whatever its length (plan/pass_plan.hpp).
    int64_t pass_token_bytes = 0;
    int64_t pass_fixed_bytes = 0;
    int64_t pass_piece_token_bytes = 0; // of pass_fixed_bytes, per token of its pieces (shorter when the room is short)
    int64_t pass_floor_bytes = 0; // of scratch_bytes: what only a prompt chunk uses, a pass's own
    std::string container;             // where the plan was read from
};

// The expert cache a budget at or above the floor gives. The reference's is budget - floor +
// min_expert_cache; the state checkpoint comes out of it when what is left stays at least
// min_expert_cache, else no checkpoint is kept and the cache is whole. The one rule for the
// engine's open, resolveBudget and the forecast, for every budget, the default included.
// A prompt's pass takes its RAM from the floor's prompt scratch (pass_floor_bytes) and, while
// it runs, borrows slots of the cache above twice its smallest size (ExpertCache::lend),
// given back when the prompt has been read; at the floor, passes are 64 tokens.
struct ExpertCacheShare {
    int64_t cache_bytes = 0;
    bool checkpoint_kept = false;
    int pass_tokens = 64;   // the most prompt tokens one pass reads
    int64_t pass_bytes = 0; // what the longest pass borrows from the cache while it runs
    // What the cache has left beside that pass and the slots a prompt never borrows: the room
    // MLA's expanded rows find while a long prompt is read (model/mla_form.hpp).
    int64_t expand_room_bytes = 0;
};
ExpertCacheShare expertCacheAt(const MemoryPlan &plan, int64_t budgetBytes);

// A budget resolved against a plan (reference waste_open rules, ARCHITECTURE.md §5).
struct BudgetChoice {
    int64_t budget_bytes = 0;
    int64_t expert_cache_bytes = 0;    // expertCacheAt(budget): what the engine opens with
    int64_t cache_slots = 0;           // expert_cache_bytes / max_record_bytes
    bool checkpoint_kept = false;      // plan.checkpoint_bytes of the budget hold a checkpoint
    int pass_tokens = 64;              // the most prompt tokens one pass reads (ExpertCacheShare)
    int64_t expand_room_bytes = 0;     // ExpertCacheShare::expand_room_bytes
    bool chosen_by_engine = false;     // no --budget: floor + 3, 2 or 1 working sets
    std::vector<std::string> warnings; // over 7/8 of usable RAM, past the paging cliff
};
// requested 0: the default. Throws Error(RamBudget) with the floor in the message when
// a requested budget is below the floor (before anything is allocated).
BudgetChoice resolveBudget(const MemoryPlan &plan, int64_t requestedBytes);

// The budget at which the expert cache holds every expert record (and the checkpoint).
int64_t everyExpertBudget(const MemoryPlan &plan);

// What a budget is predicted to give.
struct BudgetForecast {
    int64_t budget_bytes = 0;
    int64_t cache_slots = 0;          // the expert cache the engine opens with (resolveBudget)
    int64_t room_slots = 0;           // and the floor's prompt room it holds while tokens are
                                      // generated (no pass runs then); the hit rate counts both
    double hit_rate = 0;              // demand hit rate
    double io_seconds_per_token = 0;  // reading the misses: a lone read's latency per layer with
                                      // a miss, then the rest at the queue's bandwidth
    double compute_seconds_per_token = 0; // 0 when not measured
    double unhidden_io_seconds_per_token = 0; // the reads that outlast the compute beside them
    double read_cpu_seconds_per_token = 0;    // what the misses' reads cost the compute beside them
    double tok_per_s = 0;             // 1 / (compute + unhidden reads + their CPU); / 8 past the cliff; 0: unknown
    bool past_cliff = false;
    // Where the cache holds every routed expert, the open reads them all (OpenOptions::
    // loadEveryExpert): the banks at the disk's speed. 0 where it does not, or no disk speed.
    double open_load_seconds = 0;
};
struct Forecast {
    std::string hit_model;   // "replay:<file>" or the stated model
    double disk_gbps = 0;
    double decode_disk_gbps = 0;     // the same reads while a decode computes: a token's reads
    double read_latency_seconds = 0; // one record read alone
    int queue_depth = 0;             // reads in flight, as the engine's reader threads
    double read_cpu_seconds = 0;     // the compute time one record read costs (0: not counted)
    std::vector<BudgetForecast> budgets;
};

// Expert reads as the engine does them, measured with direct I/O on every bank of a
// container's record size: random whole records, `queue_depth` in flight (the engine's
// reader threads: max(2, top-k), at most 16) for the bandwidth (the middle of three probes),
// one at a time for latency, and the same reads beside the decode's largest kernel.
struct ExpertReadSpeed {
    double gbps = 0;
    double latency_seconds = 0;
    int queue_depth = 0;
    int64_t record_bytes = 0;
    bool direct_io = false;  // false: the page cache answered (the figure is RAM, not disk)
    // The process's CPU time per read while the bandwidth was measured: the system calls, the
    // pinning of the buffer's pages and, in a virtual machine, the exits to the host (11-17 us
    // for a 600 KB record on the development VM, read into huge pages as the cache reads it).
    double cpu_seconds_per_read = 0;
    // What the same reads cost a decode running beside them (plan/read_interference.hpp): the
    // compute time lost per read, at least cpu_seconds_per_read (19-46 us on that VM), and the
    // reads' speed while the decode kernel holds every core (2.3-2.6 GB/s there, against
    // 3.6-4.0 alone). 0: not measured.
    double compute_seconds_per_read = 0;
    double decode_gbps = 0;
    std::string warning;
};
ExpertReadSpeed measureExpertReads(const MemoryPlan &plan);

// The machine's side of a forecast.
struct ForecastInputs {
    double diskGBps = 0;           // <= 0: measured on the expert banks (measureExpertReads)
    double readLatencySeconds = 0; // <= 0: diskGBps's record time (or measured with it)
    int queueDepth = 0;            // 0: the engine's reader threads for this top-k
    double computeSeconds = 0;     // per token (ComputeEstimate::seconds)
    double computeOverlapSeconds = 0; // the part that runs while expert reads are in flight
    // Of that, the routed experts' (ComputeEstimate::routedExpertSeconds). Known (>= 0), the
    // reads are set against the compute each layer runs after issuing them
    // (plan/read_overlap.hpp); unknown (< 0), against all of computeOverlapSeconds.
    double routedExpertSeconds = -1;
    // The share of a layer's misses the router lookahead reads a layer early when the
    // budget leaves it slots: 0.5 is what the mid-size tiny container measured (50.4 %
    // of guesses right); the reference measured 81 % on K3, so the forecast errs slow.
    double lookaheadRecall = 0.5;
    // The compute time one expert read costs (ExpertReadSpeed::compute_seconds_per_read),
    // charged per predicted miss on top of the compute: on two busy cores it is time the
    // compute loses. <= 0: measured with the disk where diskGBps is measured here, else not
    // counted.
    double readCpuSeconds = 0;
    // The reads' speed while a decode computes (ExpertReadSpeed::decode_gbps): what a token's
    // reads stream at. <= 0: diskGBps (where diskGBps is measured here, measured with it).
    double decodeDiskGBps = 0;

    // The disk's side from a measurement: speed (alone and beside a decode), latency, queue
    // depth and what a read costs the compute.
    void setReads(const ExpertReadSpeed &r);
};
// Hit rates replay the routing a --learn run recorded (<container>/usage.routing.jsonl)
// through the real cache policy when present; otherwise they follow the stated model
// in plan/forecast.cpp.
Forecast forecastBudgets(const MemoryPlan &plan, const std::vector<int64_t> &budgets, const ForecastInputs &in);
// The older form: compute counted as fully overlapping the reads.
Forecast forecastBudgets(const MemoryPlan &plan, const std::vector<int64_t> &budgets, double diskGBps = 0,
                         double computeSecondsPerToken = 0);

// The budget above which the OS is likely to page the expert cache on a machine with this
// much physical and usable RAM while other processes hold `otherProcessBytes` (the rule
// behind MemoryPlan::cliff_bytes; public so a planner can be shown another machine).
int64_t pagingCliff(int64_t physicalBytes, int64_t usableBytes, int64_t otherProcessBytes);

// Reads the manifest and returns the plan for `ctx_tokens` positions.
MemoryPlan planMemory(const std::string &containerPath, int ctxTokens = 4096);
int64_t physicalRam();
int64_t usableRam();
// Parses "8G", "512M", "1024K", "123" (bytes); throws Error(Argument) on junk.
int64_t parseSize(std::string_view text);

struct OpenOptions {
    int64_t ramBudget = 0;      // 0: the engine chooses the default budget
    int ctxTokens = 4096;       // hard bound on positions
    int threads = 0;            // compute threads (the caller included); 0: one per hardware thread
    bool directIo = true;       // bypass the page cache for expert reads
    bool verifyRecords = false; // crc32 of every expert payload read
    bool readAhead = true;      // issue a layer's misses at once, consume in arrival order
    int ioThreads = -1;         // expert reads in flight (0..64); -1: top-k per sequence decoded together, 2..16
    bool ioRing = true;         // submit expert reads through io_uring where the kernel allows it, else reader threads
    bool lookahead = true;      // prefetch the next layer's likely experts
    int lookaheadExperts = 6;   // experts predicted per layer when lookahead is on (0..64; 0: none)
    std::string cachePolicy;    // expert cache eviction: "reuse", "layerfreq", "lru", "lfru"; empty: the default
    bool expertCache = true;    // false: every expert is read from disk every time
    bool vision = true;         // allow loading the vision tower when an image is given
    std::string usagePath;      // --learn record; empty: <container>/usage.waste
    bool warmFromUsage = true;  // preload the cache from the usage record if present
    // Where the budget's cache holds every routed expert, read them all at open (bank by
    // bank, many reads in flight), so the first answer runs at the speed of the rest.
    bool loadEveryExpert = true;
    // DeepSeek V4: round the key/value rows to FP8 and the indexer's queries and keys to FP4
    // (after a Hadamard transform), as the release was trained and as DeepSeek's model.py and
    // ds4 compute; off (the default), plain float, as HF's DeepseekV4 computes.
    bool trainedRounding = false;
    // Called during open with 0..1; return false to cancel (Error Cancelled).
    std::function<bool(double)> progress;
};

// `options` with the environment's settings applied, for programs that let the environment
// tune the engine (the CLI and the app; the library itself never reads the environment):
// WASTE_THREADS=N (when threads is 0), WASTE_DIRECT=0, WASTE_IO_THREADS=N, WASTE_IO_RING=0
// (reader threads instead of io_uring), WASTE_LOOKAHEAD=N (experts predicted per layer; 0: off),
// WASTE_CACHE_POLICY=NAME, WASTE_TRAINED_ROUNDING=1 and WASTE_LOAD_EVERY_EXPERT=0.
OpenOptions withEnvironment(OpenOptions options);

struct ModelInfo {
    std::string arch;         // "kimi-linear", "kimi-k3"
    int layers = 0;
    int experts = 0;
    int topK = 0;
    int hidden = 0;
    int vocab = 0;
    int ctxMax = 0;
    int64_t paramsTotal = 0;
    int64_t paramsActive = 0;
    std::string quantization; // e.g. "experts VQ3R, trunk Q4G/Q8G/F32"
    std::string expertFormat; // "VQ3R", "VQ4P", or a release's own: "MXFP4", "FP8B128", "INT4G32", "BF16"; empty: no experts
    int64_t recordBytes = 0;  // one routed expert's record (the first bank's), one read from disk
    int64_t expertCacheBytes = 0;
    int64_t expertsLoadedAtOpen = 0;   // records OpenOptions::loadEveryExpert read at open (0: none)
    double expertsLoadSeconds = 0;     // and the time it took
    int64_t checkpointBytes = 0; // the state checkpoint's share of the budget, taken from the expert cache; 0: none kept
    int64_t budgetBytes = 0;
    bool hasVision = false;
    bool hasChatTemplate = false;
    bool trainedRounding = false; // OpenOptions::trainedRounding took effect (a DeepSeek V4 model)
    ChatFormat chatFormat = ChatFormat::Plain; // how conversations are written (waste/chat.hpp), decided here once
    int32_t bosId = -1;
    int32_t eosId = -1;
    std::vector<std::string> warnings; // said once at open: page cache not bypassed, budget past the cliff...
};

// Cumulative counters since open (or since resetStats()).
struct Stats {
    int64_t tokensGenerated = 0;
    int64_t tokensPrefilled = 0;
    int64_t demandHits = 0;
    int64_t demandMisses = 0;
    int64_t speculativeFills = 0;   // records fetched by router lookahead
    int64_t lookaheadUseful = 0;    // speculative fills later demanded
    int64_t lookaheadPredicted = 0; // expert ids the lookahead predicted
    int64_t lookaheadCorrect = 0;   // of those, ids the real router then chose (accuracy = correct / predicted)
    int64_t rereads = 0;            // expert reads of records evicted in the same forward pass or the one before
    int64_t bytesRead = 0;
    double secondsTotal = 0;
    double secondsIoWait = 0;
    bool directIo = false;          // true only when every bank bypasses the page cache
    bool ioRing = false;            // expert reads go through io_uring (not one reader thread per read)
};

// A chat reply read back the way OpenAI-style clients show it: reasoning (K3's think
// channel, a leading <think>...</think>), the answer, and tool calls.
struct ReplyToolCall {
    std::string id;        // "call_1", "call_2", ... in order of appearance
    std::string name;
    std::string arguments; // JSON text (an object), or the raw text the model wrote
    bool operator==(const ReplyToolCall &) const = default;
};

struct ChatReply {
    std::string reasoning;
    std::string content;
    std::vector<ReplyToolCall> toolCalls;
    bool operator==(const ChatReply &) const = default;
};

// What one step of an incremental parse adds (text is always whole UTF-8 characters).
struct ReplyDelta {
    std::string reasoning;
    std::string content;
    std::vector<ReplyToolCall> toolCalls; // calls completed by this step
    bool done = false;                    // the message ended
    bool empty() const { return reasoning.empty() && content.empty() && toolCalls.empty(); }
    void append(const ReplyDelta &more); // concatenates; done if either is done
};

// Reads a reply token by token. Get one from Model::replyParser(); feed it the generated
// token ids in order (TokenEvent::token), then call finish() once generation has ended.
// Text that may still turn out to be structure (a "<tool_call>" cut between tokens) is
// held back until it is known; everything else is released by the step that completes it.
class ReplyParser {
public:
    virtual ~ReplyParser() = default;
    virtual ReplyDelta feed(int32_t token) = 0;
    // End of generation (EOS, a stop, the token limit, a cancel): releases held text and
    // any unfinished tool call. Further feeds return nothing.
    virtual ReplyDelta finish() = 0;
    virtual const ChatReply &reply() const = 0; // everything released so far
};

struct TokenEvent {
    int index = 0;       // 0-based index of the generated token
    int32_t token = 0;
    std::string text;    // UTF-8 text this token completes (may be empty mid-codepoint)
    float logprob = 0;
    Stats stats;         // cumulative
    ReplyDelta reply;    // with GenParams::reply: what this token added to the parsed reply
};

// Masks tokens that cannot continue a valid output (JSON, schema, tool call).
// allowed() fills mask[v] = true for tokens that may come next; accept() advances.
class TokenConstraint {
public:
    virtual ~TokenConstraint() = default;
    virtual void allowed(std::vector<bool> &mask) = 0;
    virtual void accept(int32_t token) = 0;
    virtual bool complete() const = 0; // a valid document is finished: generation may stop
};

class Model;

// Constrained decoding for response_format and forced tool calls (engine/src/text).
// The constraint keeps the output a JSON document that matches `schemaJson` (a JSON
// Schema: the OpenAI strict subset, anyOf, $ref; empty: any JSON object) and that
// closes within `maxTokens` generated tokens, EOS included. Throws Error(Unsupported)
// for schema keywords it cannot enforce.
//
// `prompt` is the prompt the output continues. The output is a whole reply in the chat
// format (ModelInfo::chatFormat; text/reply_frame.hpp), read back by replyParser() with the
// document as its content; where the format reasons first (R1, K2-Thinking, Qwen3, K3 think)
// the model may reason in at most half of the tokens the structure leaves spare. Plain: the
// bare document. Throws Error(Argument) when maxTokens cannot hold that structure.
std::shared_ptr<TokenConstraint> makeJsonConstraint(const Model &model, std::string_view schemaJson,
                                                    int maxTokens, std::span<const int32_t> prompt = {});
// Forced tool call: one call of a function of `toolsJson` (an OpenAI "tools" array), or
// only `functionName` if given, in the chat format's own call layout (K3 call element,
// DeepSeek / Kimi K2 markup, Qwen3 / ChatML <tool_call>), which replyParser() returns as a
// call. Plain: the bare document {"name": <tool>, "arguments": {...}}.
std::shared_ptr<TokenConstraint> makeToolCallConstraint(const Model &model, std::string_view toolsJson,
                                                        std::string_view functionName, int maxTokens,
                                                        std::span<const int32_t> prompt = {});

struct GenParams {
    float temperature = 0.0f; // 0: greedy
    float topP = 1.0f;
    int topK = 0;
    uint64_t seed = 0;
    int maxTokens = 256;
    std::vector<std::string> stopStrings;
    std::vector<int32_t> stopTokens; // EOS is always a stop token
    std::shared_ptr<TokenConstraint> constraint;
    // Parse the reply while generating (Model::replyParser): every generated token is fed
    // to it except stop tokens, TokenEvent::reply carries each step, stop strings apply
    // to the reply's content (GenResult::text stays the raw output), generation ends when
    // the parser says the message ended, and GenResult::reply holds the whole reply.
    std::shared_ptr<ReplyParser> reply;
    // Special tokens the model writes (markup other than the stop tokens that end it) are
    // in TokenEvent::text and GenResult::text only when set: for a conversation kept to be
    // rendered again token for token, or a client that asked for them (the raw completions
    // route). Otherwise they are not text; the reply's channels never hold them.
    bool keepSpecialText = false;
};

enum class FinishReason { Stop, Length, Cancelled, ContextFull };

struct GenResult {
    std::vector<int32_t> tokens;
    std::string text;
    FinishReason finish = FinishReason::Stop;
    int promptTokens = 0;
    Stats stats;
    ChatReply reply; // with GenParams::reply
};

// Per-token callback; return false to stop.
using TokenCallback = std::function<bool(const TokenEvent &)>;
// Progress over prompt positions during prefill: (done, total); return false to stop.
using PrefillCallback = std::function<bool(int, int)>;

class Model {
public:
    virtual ~Model() = default;

    static std::unique_ptr<Model> open(const std::string &containerPath, const OpenOptions &options = {});

    virtual const ModelInfo &info() const = 0;
    virtual MemoryPlan memoryPlan() const = 0;

    // Tokenizer. plain: special markers in text stay ordinary text.
    // markup: specials from specials.json are resolved (for templates only).
    virtual std::vector<int32_t> tokenize(std::string_view text, bool markup = false) const = 0;
    virtual std::string detokenize(std::span<const int32_t> ids) const = 0;
    virtual std::string tokenText(int32_t id) const = 0;
    // Whether the id is a special token: markup, never text in what a reply shows
    // (GenParams::keepSpecialText).
    virtual bool isSpecialToken(int32_t id) const = 0;

    // A parser for the reply that continues `prompt` (the whole prompt, or at least its
    // last message header); it is valid while this Model lives. K3 containers (chatFormat
    // K3): structure comes only from K3's special tokens (so text can never forge
    // it) and the parse starts in the channel the prompt opened (think or response).
    // Other models: a leading <think>...</think> (or a prompt that
    // ends inside <think>) is reasoning and <tool_call>{"name", "arguments"}</tool_call>
    // blocks are tool calls; a block whose JSON does not parse stays text.
    virtual std::unique_ptr<ReplyParser> replyParser(std::span<const int32_t> prompt) const = 0;
    // The same parser for a request that declared `toolsJson` (an OpenAI "tools" array; empty
    // or "[]": none, or none offered): only calls of declared functions are calls, any other
    // call is shown as text (<tool_call>{...}</tool_call>); and outside K3, content that is a
    // bare JSON call of declared functions ({"name", "arguments"}, or an array of them: what
    // a forced call writes in a plain transcript) is held to the end and read as calls, or
    // released as text. Call ids are "call_1", "call_2", ... Throws Error(Argument) when
    // toolsJson is not a JSON array.
    std::unique_ptr<ReplyParser> replyParser(std::span<const int32_t> prompt, std::string_view toolsJson) const;

    // Feeds tokens into the session and returns the logits after the last. Several tokens
    // are read as a prompt, in passes (model/forward.hpp); one token as a generated one, by
    // the decode kernels (a caller sampling its own tokens decodes this way).
    virtual std::vector<float> eval(std::span<const int32_t> tokens, const PrefillCallback &progress = {}) = 0;
    // Feeds the prompt then samples until a stop; the prompt may be empty to continue.
    virtual GenResult generate(std::span<const int32_t> prompt, const GenParams &params,
                               const TokenCallback &onToken = {}, const PrefillCallback &progress = {}) = 0;

    // Images: encodes a file now and returns how many prompt positions it takes. They wait
    // for the first eval/generate whose tokens hold placeholders, which become those positions.
    virtual int addImage(const std::string &path) = 0;
    virtual void clearImages() = 0;
    // The media blocks of the images added since the last evaluation, as markup text
    // ("<|media_begin|>image WxH<|media_content|><|media_pad|><|media_end|>" each): tokenize
    // it with markup=true and put it before the words of the prompt. Empty when none.
    virtual std::string pendingImageMarkup() const { return {}; }

    // Session state.
    virtual int position() const = 0;
    virtual void resetState() = 0;
    virtual void saveState(const std::string &path) const = 0;
    virtual void loadState(const std::string &path) = 0;

    virtual Stats stats() const = 0;
    virtual void saveUsage() = 0; // --learn: record resident experts for the next open

    // Thread-safe: makes the running eval/generate stop at the next token or layer.
    virtual void cancel() = 0;
};

// The next-token distribution as `waste eval` reports it: softmax over the whole
// vocabulary in double precision, the k largest logits, equal logits lowest id first.
struct TopToken {
    int32_t id = 0;
    float logit = 0;
    double prob = 0;
};
std::vector<TopToken> topTokens(std::span<const float> logits, int k);

// Builds a prompt with images, the same way for every front end: clears pending images, adds
// `images` in order (each encoded now), then returns the media blocks (markup) followed by
// `text` (markup or plain). eval/generate then expand each block's placeholder into the
// image's positions. A refused image leaves no image pending.
std::vector<int32_t> promptWithImages(Model &model, const std::vector<std::string> &images, std::string_view text,
                                      bool textMarkup = true);

std::string buildInfo(); // "WASTE Studio 0.1.0 (container v0, backend AVX2, x86_64)"

} // namespace waste
