// The forward pass over a chunk of tokens, of two kinds (Forward::Tokens):
//   - generated tokens (decode steps, one per sequence): the row kernels and VQ lookup
//     tables; a chunk of n gives the logits of n single-token steps bit for bit;
//   - a prompt's pass (thousands of tokens at once): every product of the pass through
//     decoded panels (quant/panel_product.hpp), the MoE expert-major (each token routed
//     first, each needed expert read once, in id order, and multiplied by all its tokens;
//     moe_pass.cpp). A prompt token's values do not depend on the pass's size, the thread
//     count or the SIMD level; they differ from the decode kernels' only in summation order
//     (tst_prefill_pass: within 1e-4 of token by token).
#pragma once

#include "compute/thread_pool.hpp"
#include "format/codebooks.hpp"
#include "format/manifest.hpp"
#include "format/native_record.hpp"
#include "model/dsv4_rope.hpp"
#include "model/expert_source.hpp"
#include "model/rotary.hpp"
#include "model/state.hpp"
#include "model/vision_placement.hpp"
#include "model/weights.hpp"
#include "model/yarn.hpp"
#include "quant/lut.hpp"
#include "quant/trunk_matvec.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

namespace waste::model {

class Forward {
public:
    // pool: the compute threads to split work over; null: this thread only.
    Forward(const format::Manifest &manifest, const Weights &weights, const format::Codebooks &books,
            compute::ThreadPool *pool = nullptr);

    enum class Tokens { Prompt, Generated };

    // Runs `tokens` at positions state.pos... and leaves the last token's logits in
    // state.lastLogits, in passes of at most `passTokens` (generated tokens: chunks of at most
    // kMaxChunk, each as that many single-token steps).
    // Throws Error(Cancelled), before touching the state, when `cancel` is set at the start
    // of a pass.
    void run(std::span<const int32_t> tokens, State &state, ExpertSource &experts, const std::atomic<bool> *cancel,
             Tokens kind = Tokens::Generated, int passTokens = kMaxChunk);

    // The most generated tokens one chunk takes (a batched decode step).
    static constexpr int kMaxChunk = 64;
    // A prompt's pass runs its attention, dense FFNs, routing and shared experts this many
    // tokens at a time: their scratch is a piece's; only the residual stream, the normed
    // input and the MoE's sums are held for the whole pass. An expert's users go this many
    // at a time too.
    static constexpr int kPassPiece = 256;
    // Shorter pieces (at least 16 tokens), where the budget's room would otherwise split a
    // prompt into more passes (plan/pass_plan.hpp). A token's values do not depend on the
    // piece it was in.
    void setPassPiece(int tokens) { m_piece = std::clamp(tokens, 16, kPassPiece); }
    int passPiece() const { return m_piece; }

    // MLA's form in a prompt's pass (model/mla_form.hpp). Auto: the expanded form where it
    // pays and the room lent for its keys and values (setMlaExpandRoom) holds every position
    // up to the pass's last; the absorbed form otherwise, and for passes of several sequences
    // or with DeepSeek Sparse Attention. Tests force either.
    enum class MlaForm { Auto, Absorbed, Expanded };
    void setMlaForm(MlaForm form) { m_mlaForm = form; }
    void setMlaExpandRoom(int64_t bytes) { m_mlaExpandRoom = bytes; }
    // What the expanded keys and values of `positions` positions take; 0 where no layer of
    // this model could attend in that form.
    int64_t mlaExpandBytes(int64_t positions) const;
    // Whether Auto takes the expanded form for a pass of n tokens from position `first`, given
    // the room.
    bool mlaExpands(int64_t first, int64_t n) const;
    // The form the last prompt pass took (tests).
    bool lastPassExpanded() const { return m_mlaExpandedLast; }

    // Several sequences in one pass (session/batch_*): `tokens` holds each part's tokens in
    // order, part i continuing parts[i].state. Attention runs per part against its own
    // state; the MoE sees the whole chunk, so an expert is read once for every token that
    // routes to it. Each state advances by its count and gets its last token's logits,
    // bit for bit what run() would give it alone. Generated tokens: at most kMaxChunk; no cancel.
    struct Part {
        State *state = nullptr;
        int count = 0;
    };
    void runParts(std::span<const int32_t> tokens, std::span<const Part> parts, ExpertSource &experts,
                  Tokens kind = Tokens::Generated);

    // Called after each layer of a prompt's pass with (layers done, layers): the pass's
    // progress for a caller's clock. Returning false stops the pass there with
    // Error(Cancelled); the states of its sequences are then half-read and must be reset.
    using LayerProgress = std::function<bool(int done, int layers)>;
    void setLayerProgress(LayerProgress progress) { m_layerProgress = std::move(progress); }

    // Image rows that stand in for the embedding of media-token positions; null: none.
    void setMediaRows(vision::MediaRowQueue *rows) { m_media = rows; }

    // One sub-layer over n tokens, exactly as run() evaluates it (component tests compare
    // these against independent implementations). attention: KDA or MLA of `layer` on the
    // normed inputs a (n × hidden) at positions pos0.., updating st; feedForward: the
    // dense FFN or the MoE layer (router, latent projections, routed + shared experts).
    void attention(int layer, int n, const float *a, float *out, LayerState &st, int pos0);
    void feedForward(int layer, int n, const float *b, float *out, ExpertSource &experts);
    // The token ids feedForward's hash-routed layers (DeepSeek V4) read, one per row; run()
    // sets them for each chunk, a component test before calling feedForward.
    void setTokenIds(const int32_t *ids) { m_tokens = ids; }

private:
    using Vec = std::vector<float>;
    // A prompt pass's scratch for one kind of call (the attention's projections, KDA's or
    // MLA's; a dense FFN's; MLA's 64-token pieces; an expert's users' rows in the MoE pass),
    // kept from piece to piece and layer to layer
    // until the pass ends (runParts): allocated afresh each piece, its pages were faulted in
    // again every time (KDA's and the dense layer's were two thirds of a 3,445-token pass's
    // page faults, MLA's a third of what was left). The pass plan counts them in a piece's
    // scratch and MLA's pieces (plan/pass_plan). Outside a pass the caller's own `local` holds
    // them, as before. Either way: `floats` values, left as the last call wrote them.
    enum class PassScratch { Attention, Ffn, MlaPieces, Experts };
    float *passScratch(PassScratch which, size_t floats, Vec &local);
    Vec m_passScratch[4];
    void embed(int32_t token, float *out) const;
    void runResidual(int n, float *h, std::span<const Part> parts, ExpertSource &experts);
    void normRows(int n, const float *x, const float *weight, float *y); // RMSNorm of n hidden rows, over the pool
    void runResidualPass(int n, float *h, std::span<const Part> parts, ExpertSource &experts);
    void runAttnRes(int n, float *h, std::span<const Part> parts, ExpertSource &experts);
    // attention() for every part of the chunk, each against its own state.
    void attentionParts(int layer, const float *a, float *out, std::span<const Part> parts);
    void attentionTokens(int layer, int n, const float *a, float *out, LayerState *const *st, const int *pos);
    // KDA and MLA over n tokens of a chunk, token t against *st[t] (at position pos[t]):
    // projections for the whole chunk at once, the recurrence / cache token by token.
    void kda(int layer, int n, const float *a, float *out, LayerState *const *st);
    void mla(int layer, int n, const float *a, float *out, LayerState *const *st, const int *pos);
    // DeepSeek Sparse Attention (dsa_indexer.cpp). indexer: `layer`'s lightning indexer for n
    // tokens (a: normed inputs, cq: normed q latents): each token's key into its state, then,
    // for each token that sees more than index_topk keys, the index_topk it keeps, into
    // m_selection. selection: the positions token (st, pos) attends over at `layer` (its own
    // indexer's, or a shared layer's nearest indexer layer's), ascending; null: every one.
    void indexer(int layer, int n, const float *a, const float *cq, LayerState *const *st, const int *pos);
    const std::vector<int32_t> *selection(int layer, const LayerState *st, int pos) const;
    void rotateIndexer(float *x, int pos) const;
    struct Selection {
        int layer = 0; // the indexer layer that chose
        std::vector<int32_t> positions;
    };
    // Keyed by the sequence (its layer 0 state) and the position; cleared by each runParts.
    std::map<std::pair<const LayerState *, int>, Selection> m_selection;
    // The attention of a prompt's piece (mla.cpp): n tokens' rotated queries (qAll) to their
    // heads' outputs (oAll), every token's latent already in its cache.
    void mlaPass(int layer, int n, const float *qAll, float *oAll, LayerState *const *st, const int *pos);
    // The same in the expanded form (one sequence): the piece's positions, and at a layer's
    // first piece every earlier one, go up through kv_b_proj into m_mlaKv, then each head's
    // queries attend over its rows there.
    void mlaExpandedPass(int layer, int n, const float *qAll, float *oAll, const LayerState &st, const int *pos);
    MlaForm m_mlaForm = MlaForm::Auto;
    int64_t m_mlaExpandRoom = 0;
    bool m_mlaExpanded = false, m_mlaExpandedLast = false; // this pass's form (runParts), the last one's
    // The pass's expanded rows, position-major: per position, per head [k_nope | k_rope | v].
    // Those of layer m_mlaKvLayer are filled for positions below m_mlaKvFilled.
    std::unique_ptr<float[]> m_mlaKv;
    int m_mlaKvLayer = -1;
    int64_t m_mlaKvFilled = 0;
    // n tokens, token t against *st[t] at position pos[t]: projections for all of them,
    // then attention / the recurrence token by token, then the output projection.
    void gqa(int layer, int n, const float *a, float *out, LayerState *const *st, const int *pos); // gqa_attention.cpp
    void gatedDeltaNet(int layer, int n, const float *a, float *out, LayerState *const *st);     // gated_deltanet.cpp
    // DeepSeek V4's attention (compressed_attention.cpp): the shared key=value head over the
    // window and the compressed rows (those the indexer picks on ratio-4 layers), sinks, the
    // grouped output projection; the window ring and compressors updated token by token.
    void dsv4Attention(int layer, int n, const float *a, float *out, LayerState *const *st, const int *pos);
    // DeepSeek V4's residual stream of hc_mult hyper-connection streams per token
    // (hyper_residual.cpp); on return h holds each token's streams merged for the head.
    void runHyper(int n, float *h, std::span<const Part> parts, ExpertSource &experts);
    // y_t = W x_t for n inputs of the running pass: decoded panels in a prompt's pass, the
    // row kernels otherwise (quant::matvecs, each y_t its matvec bit for bit).
    void product(const format::TrunkTensor &w, int64_t n, const float *x, int64_t xStride, float *y, int64_t yStride);
    void products(std::span<const quant::Product> ps, int64_t n); // several over the same n, one split
    // The MoE layer of a prompt's pass, expert-major (moe_pass.cpp); add: out already holds
    // each token's residual stream, which the experts and the shared expert are added to.
    void moePass(int layer, int n, const float *b, float *out, ExpertSource &experts, bool add = false);
    // What both MoE paths share (moe.cpp): the router (each token's top-k experts in
    // selection order, and their weights), and the end: routed sums acc (n x expertWidth;
    // K3's latent norm and up-projection) plus the shared expert's output into out.
    // first: the index in the running chunk of b's first row (the hash layers read its token id).
    void route(int layer, int n, const float *b, int *chosen, float *weight, int first = 0);
    void finishMoe(int layer, int n, float *acc, const float *shared, float *out);
    // The shared expert of a MoE layer into out (Hd): down(act(gate x) · up x), times
    // sigmoid(shared_expert_gate · x) where the family gates it (Qwen3-Next; shared_expert_gate.cpp).
    void sharedExpert(const MoeWeights &w, int n, const float *x, float *out, int64_t width); // n rows at once
    void denseFfn(const FfnWeights &w, const float *x, float *out, int64_t width);
    void denseFfn(const FfnWeights &w, int n, const float *x, float *out, int64_t width); // n rows at once
    void moe(int layer, int n, const float *b, float *out, ExpertSource &experts);
    // One routed expert kept in a native record (moe_native.cpp): y = down(act(gate x, up x)),
    // x of expertWidth inputs, g/u scratch of moeInter, rows split over the pool.
    void nativeExpert(const uint8_t *record, const float *x, float *g, float *u, float *y, int layer = -1, int expert = -1);
    // Several users of native records at once (a batched step's records as they land): one
    // split over every job's gate and up rows, then one over every job's down rows, so a
    // thread takes whole rows of any job and the two threads meet twice, not twice per job.
    struct NativeJob {
        const uint8_t *record;
        int expert;
        const float *x; // expertWidth inputs
        float *y;       // expertWidth outputs
    };
    void nativeExperts(std::span<const NativeJob> jobs, int layer);
    // gpt-oss: expert `expert`'s gate/up biases (interleaved in one row) into g and u; no-op elsewhere.
    void addExpertBias(int layer, int expert, float *g, float *u) const;
    void addDownBias(int layer, int expert, float *y) const;
    // Router lookahead (decode steps: one token of each part, so one sequence alone or
    // several decoding together): predicts the next MoE layer's experts for each of the n
    // tokens from what this layer knows before its routed experts run (the stream set by
    // the run loop below, plus `shared`, its shared expert's output, n rows) and lets the
    // source read them early. Reads only; changes no state.
    void lookahead(int layer, int n, const float *shared, ExpertSource &experts);
    // The same for the first MoE layer, from the tokens' residual input (their embeddings)
    // before layer 0 runs.
    void lookaheadFirst(int n, const float *h, ExpertSource &experts);
    void predictExperts(int layer, int n, const float *b, ExpertSource &experts);
    int nextMoeLayer(int layer) const; // the first MoE layer after `layer`; -1 if none
    void activate(const float *g, const float *u, float *out, int64_t n) const;

    const format::Manifest &m_manifest;
    const format::ModelConfig &m_c;
    const Weights &m_w;
    const format::Codebooks &m_books;
    std::unique_ptr<compute::ThreadPool> m_ownPool; // one thread, when no pool was given
    compute::ThreadPool &m_pool;
    vision::MediaRowQueue *m_media = nullptr;
    bool m_prompt = false; // the running pass reads a prompt (Tokens::Prompt)
    int m_piece = kPassPiece; // a prompt's pass's piece (setPassPiece)
    LayerProgress m_layerProgress;
    void layerDone(int layer); // a prompt pass's layer is done: progress, and a stop
    // Tokens of the running step that the lookahead predicts for: all of a decode step's
    // (one per part), none (0) for a prompt chunk, whose reads are all issued at once anyway.
    int m_lookaheadRows = 0;
    // Decode on the plain residual stream: the stream as the current layer's MoE sees it
    // (before its output is added, one row per token), for the lookahead; null otherwise.
    const float *m_moeResidual = nullptr;
    // The same for K3's Attention Residuals: the block histories (one per token) and the
    // partial sums as the current layer's MoE sees them.
    const std::vector<std::vector<std::vector<float>>> *m_moeHistories = nullptr;
    const float *m_moePartial = nullptr;
    // Scratch, sized once.
    Vec m_t1, m_t2, m_t3, m_t4, m_t5, m_t6;
    std::vector<quant::Lut> m_gateLut, m_upLut;
    quant::Lut m_downLut;
    Vec m_g, m_u; // one expert's gate and up activations (decode)
    Vec m_jobsG, m_jobsU; // the same for each job of nativeExperts()
    std::vector<int64_t> m_layerCodebook; // per layer: books of its last first record (-1: none yet)
    format::NativeLayout m_nativeLayout;  // the record layout of native banks (manifest.quant.native)
    Rope m_rope;                          // MLA's rotated dims (DeepSeek-V3 family) and score scale
    Rotary m_rotary;                      // GQA families' rotary tables
    Dsv4Rope m_v4Plain, m_v4Compressed;   // DeepSeek V4: window-only and compressed layers' tables
    const int32_t *m_tokens = nullptr;    // the running chunk's token ids (hash routing)
    // MXFP4 experts with int8 activations (quant/mxfp4_q8.hpp): WASTE_NATIVE_ACTIVATIONS=int8
    // at construction; f32 (the default) otherwise. Off by default: on the tiny K3 the
    // logits moved by 0.1 of their range on average, against the 1e-3 allowed (tst_mxfp4_q8).
    bool m_int8Activations = false;
};

} // namespace waste::model
