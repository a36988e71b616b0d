// `waste mktiny OUT_DIR`: a tiny, deterministic Kimi-Linear-shaped (or, with --k3, Kimi
// K3-shaped) model for tests, benchmarks and the first-run demo, in the Hugging Face
// layout or as a container.
#include "verb.h"

#include "units/units.h"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <cstdio>
#include <filesystem>

namespace {

int runMktiny(const cli::Args &args)
{
    waste::TinyModelOptions o;
    o.seed = static_cast<uint64_t>(args.integer("--seed", 1));
    o.vision = args.flag("--vision");
    o.k3 = args.flag("--k3");
    if (auto arch = args.value("--arch")) {
        if (*arch == "kimi-k3") o.k3 = true;
        else if (*arch == "deepseek-v3" || *arch == "kimi-k2" || *arch == "qwen3-moe" || *arch == "qwen3-next" ||
                 *arch == "qwen3.5-moe" || *arch == "gpt-oss" || *arch == "glm4-moe" || *arch == "deepseek-v32" ||
                 *arch == "glm-moe-dsa" || *arch == "deepseek-v4")
            o.arch = *arch;
        else if (*arch != "kimi-linear")
            throw cli::UsageError("--arch must be kimi-linear, kimi-k3, deepseek-v3, kimi-k2, deepseek-v32, deepseek-v4, qwen3-moe, "
                                  "qwen3-next, qwen3.5-moe, gpt-oss, glm4-moe or glm-moe-dsa, not '" +
                                  *arch + "'");
    }
    if (args.flag("--air")) {
        if (o.arch != "glm4-moe") throw cli::UsageError("--air (GLM-4.5-Air's switches) needs --arch glm4-moe");
        o.glmAir = true;
    }
    if (auto tpl = args.value("--chat-template")) {
        if (o.arch != "deepseek-v3" && o.arch != "kimi-k2")
            throw cli::UsageError("--chat-template needs --arch deepseek-v3 or kimi-k2 (the families with two release templates)");
        o.chatTemplate = *tpl;
    }
    if (args.flag("--int4")) {
        if (o.arch != "kimi-k2") throw cli::UsageError("--int4 (K2-Thinking's INT4 experts) needs --arch kimi-k2");
        o.experts = waste::TinyExperts::INT4G32;
    }
    o.jobs = static_cast<int>(args.integer("--jobs", 0));
    o.trunkBits = static_cast<int>(args.integer("--trunk-bits", 4));
    if (auto layout = args.value("--experts-layout")) {
        bool known = false;
        for (auto e : {waste::TinyExperts::BF16, waste::TinyExperts::MXFP4, waste::TinyExperts::FP8B128, waste::TinyExperts::INT4G32,
                       waste::TinyExperts::FP8B64, waste::TinyExperts::FP8Channel, waste::TinyExperts::FP8Tensor,
                       waste::TinyExperts::INT4G128})
            if (*layout == waste::tinyExpertsName(e)) {
                o.experts = e;
                known = true;
            }
        if (!known)
            throw cli::UsageError("--experts-layout must be bf16, mxfp4, fp8b128, int4g32, fp8b64, fp8-channel, fp8-tensor or int4g128, not '" +
                                  *layout + "'");
    }
    if (auto enc = args.value("--experts")) {
        bool known = false;
        for (auto e : {waste::ExpertEncoding::Native, waste::ExpertEncoding::VQ3R, waste::ExpertEncoding::Q4})
            if (*enc == waste::expertEncodingName(e)) {
                o.expertEncoding = e;
                known = true;
            }
        if (!known) throw cli::UsageError("--experts must be native, vq3r or q4, not '" + *enc + "'");
    }
    if (auto size = args.value("--size")) o.targetBytes = waste::parseSize(*size);
    if (auto like = args.value("--like")) {
        std::ifstream in(*like, std::ios::binary);
        if (!in)
            throw cli::UsageError("--like: cannot read " + *like);
        o.likeConfig.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        if (o.k3 || o.targetBytes > 0)
            throw cli::UsageError("--like takes the whole shape from the config: leave --k3 and --size out");
    }
    if (args.flag("--hf") && args.flag("--container")) throw cli::UsageError("choose one of --hf and --container");
    const std::string out = args.positional(0);
    const char *what = o.arch == "deepseek-v3" ? "DeepSeek-V3"
                       : o.arch == "deepseek-v32" ? "DeepSeek-V3.2"
                       : o.arch == "glm-moe-dsa" ? "GLM-5.2"
                       : o.arch == "kimi-k2"   ? "Kimi K2"
                       : o.arch == "qwen3-moe" ? "Qwen3-MoE"
                       : o.arch == "qwen3-next" ? "Qwen3-Next"
                       : o.arch == "qwen3.5-moe" ? "Qwen3.5-MoE"
                       : o.arch == "gpt-oss"   ? "gpt-oss"
                       : o.arch == "glm4-moe"  ? (o.glmAir ? "GLM-4.5-Air" : "GLM-4.5")
                       : o.arch == "deepseek-v4" ? "DeepSeek V4 Flash"
                       : o.k3                  ? "Kimi K3"
                                               : "Kimi-Linear";
    if (args.flag("--hf")) {
        waste::makeTinyHf(out, o);
        const bool quantised = o.experts != waste::TinyExperts::Default && o.experts != waste::TinyExperts::BF16;
        const std::string layout = quantised ? std::string(", ") + waste::tinyExpertsName(o.experts) + " experts"
                                   : o.k3 && o.experts == waste::TinyExperts::Default ? ", mxfp4 experts"
                                   : (o.arch == "deepseek-v3" || o.arch == "deepseek-v32" || o.arch == "kimi-k2") &&
                                           o.experts == waste::TinyExperts::Default
                                       ? ", fp8 trunk and experts"
                                   : o.arch == "gpt-oss" ? ", mxfp4 experts"
                                   : o.arch == "deepseek-v4" ? ", fp8 trunk with ue8m0 scales, fp4 experts"
                                   : !o.arch.empty()     ? ", bf16" // the Qwen and GLM families ship BF16 throughout
                                                         : "";
        std::fprintf(stderr, "wrote a tiny %s model (Hugging Face layout%s) to %s\n", what, layout.c_str(), out.c_str());
    } else {
        // At --size a conversion takes minutes: say where it is, one line per unit.
        int lastUnit = -1;
        waste::makeTinyContainer(out, o, [&](const waste::ConvertProgress &p) {
            if (o.targetBytes <= 0 || p.unit == lastUnit) return;
            lastUnit = p.unit;
            std::fprintf(stderr, "unit %d/%d, %s", p.unit, p.units, qPrintable(Units::duration(std::llround(p.elapsedSeconds))));
            if (p.etaSeconds >= 0) std::fprintf(stderr, ", about %s left", qPrintable(Units::duration(std::llround(p.etaSeconds))));
            std::fprintf(stderr, "\n");
        });
        uintmax_t bytes = 0;
        for (const auto &e : std::filesystem::directory_iterator(out))
            if (e.is_regular_file()) bytes += e.file_size();
        std::fprintf(stderr, "wrote a tiny %s container (%s) to %s\n", what, qPrintable(Units::bytes(qint64(bytes))), out.c_str());
    }
    return 0;
}

} // namespace

WASTE_CLI_VERB({"mktiny", "OUT_DIR [--hf | --container] [--k3 | --arch NAME] [--air] [--chat-template NAME] [--int4] [--experts-layout LAYOUT] [--vision] [--seed N] [--size SIZE | --like CONFIG]",
                "write a tiny deterministic model of a supported family: Kimi-Linear, Kimi K3, DeepSeek-V3, Kimi K2, DeepSeek-V3.2, DeepSeek V4 Flash, Qwen3-MoE, Qwen3-Next, Qwen3.5-MoE, gpt-oss, GLM-4.5 or GLM-5 (container by default)",
                {{{"--hf", cli::OptionKind::Flag, "Hugging Face layout (safetensors shards, config, tokenizer)"},
                  {"--container", cli::OptionKind::Flag, "a streaming container (the default)"},
                  {"--k3", cli::OptionKind::Flag, "Kimi K3-shaped: every K3 text feature; MXFP4 experts with --hf"},
                  {"--arch", cli::OptionKind::Value,
                   "kimi-linear|kimi-k3|deepseek-v3|kimi-k2|deepseek-v32|deepseek-v4|qwen3-moe|qwen3-next|qwen3.5-moe|gpt-oss|glm4-moe|glm-moe-dsa  "
                   "the release layout (deepseek-v3, kimi-k2, deepseek-v32: FP8 trunk and experts; gpt-oss: fused MXFP4 experts; "
                   "qwen3.5-moe: the multimodal wrapper with fused experts; deepseek-v32, glm-moe-dsa: a lightning indexer with "
                   "index_topk 8, GLM-5.2's shared indexer layers; deepseek-v4: FP8 trunk with ue8m0 scales, FP4 experts)"},
                  {"--air", cli::OptionKind::Flag, "with --arch glm4-moe: GLM-4.5-Air's switches (no q/k norm, routed_scaling_factor 1.0)"},
                  {"--chat-template", cli::OptionKind::Value,
                   "NAME  the release template it ships: deepseek-r1 or deepseek-v3.1 (deepseek-v3), kimi-k2-thinking or kimi-k2-instruct (kimi-k2)"},
                  {"--int4", cli::OptionKind::Flag, "with --arch kimi-k2: INT4 experts and a BF16 trunk, as K2-Thinking"},
                  {"--experts-layout", cli::OptionKind::Value,
                   "LAYOUT  routed experts as releases store them: BF16, MXFP4 _packed/_scale (K3's default), "
                   "FP8 with 128x128 _scale_inv (DeepSeek-V3, Kimi K2), INT4 pack-quantized groups of 32 (K2-Thinking); "
                   "fp8b64|fp8-channel|fp8-tensor|int4g128: FP8 per 64x64 block, per row or per tensor, INT4 groups of 128"},
                  {"--experts", cli::OptionKind::Value, "native|vq3r|q4  how a container stores them (as `waste convert --experts`)"},
                  {"--vision", cli::OptionKind::Flag, "include a tiny vision tower"},
                  {"--seed", cli::OptionKind::Value, "N  weights seed (default 1)"},
                  {"--size", cli::OptionKind::Value, "SIZE  scale the model to about SIZE of bf16 source weights (e.g. 2G; a container is about a fifth of it)"},
                  {"--like", cli::OptionKind::Value, "CONFIG  a Kimi-Linear release's config.json: its exact shape with generated weights"},
                  {"--trunk-bits", cli::OptionKind::Value, "4|8  trunk format of a container"},
                  {"--jobs", cli::OptionKind::Value, "N  worker threads"}},
                 1, 1},
                &runMktiny});
