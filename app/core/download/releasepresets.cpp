#include "releasepresets.h"

#include <QCoreApplication>
#include <QVariantMap>

#include <cmath>

namespace ReleasePresets {

namespace {

constexpr qint64 GB = 1000LL * 1000 * 1000;

QString tr(const char *text) { return QCoreApplication::translate("ReleasePresets", text); }

} // namespace

QList<Preset> all()
{
    // Kimi first (the engine's own families), then by how often people ask for them.
    return {
        {QStringLiteral("Kimi-Linear-48B-A3B-Instruct"), QStringLiteral("moonshotai/Kimi-Linear-48B-A3B-Instruct"), 98 * GB,
         tr("48B total, 3B active; bf16"), true},
        {QStringLiteral("Kimi K3"), QStringLiteral("moonshotai/Kimi-K3"), 1500 * GB,
         tr("2.78T total; MXFP4 experts; text and images"), true},
        {QStringLiteral("Kimi K2 Instruct"), QStringLiteral("moonshotai/Kimi-K2-Instruct"), 1030 * GB,
         tr("1T total, 32B active; FP8")},
        {QStringLiteral("Kimi K2 Thinking"), QStringLiteral("moonshotai/Kimi-K2-Thinking"), 594 * GB,
         tr("1T total, 32B active; INT4 experts; reasons before it answers")},
        {QStringLiteral("DeepSeek-V3.1"), QStringLiteral("deepseek-ai/DeepSeek-V3.1"), 689 * GB,
         tr("671B total, 37B active; FP8; thinking or not, per request")},
        // DeepSeek-V3.2: V3's size plus each layer's lightning indexer (0.9B parameters,
        // mostly FP8), by arithmetic from its config; not read off the hub.
        {QStringLiteral("DeepSeek-V3.2"), QStringLiteral("deepseek-ai/DeepSeek-V3.2"), 690 * GB,
         tr("671B total, 37B active; FP8; sparse attention over long contexts")},
        {QStringLiteral("DeepSeek-R1"), QStringLiteral("deepseek-ai/DeepSeek-R1-0528"), 689 * GB,
         tr("671B total, 37B active; FP8; reasons before it answers")},
        // Qwen3.5-MoE: sizes by arithmetic from the configs (two bytes a parameter: the text
        // model as planned, plus its MTP layer and the vision tower the container leaves out;
        // 403B and 125B), not read off the hub.
        {QStringLiteral("Qwen3.5-397B-A17B"), QStringLiteral("Qwen/Qwen3.5-397B-A17B"), 807 * GB,
         tr("397B total, 17B active; bf16; reasons before it answers; linear attention in three layers of four")},
        {QStringLiteral("Qwen3.5-122B-A10B"), QStringLiteral("Qwen/Qwen3.5-122B-A10B"), 250 * GB,
         tr("122B total, 10B active; bf16; reasons before it answers; linear attention in three layers of four")},
        {QStringLiteral("Qwen3-Next-80B-A3B"), QStringLiteral("Qwen/Qwen3-Next-80B-A3B-Instruct"), 163 * GB,
         tr("80B total, 3B active; bf16; linear attention in three layers of four")},
        {QStringLiteral("Qwen3-235B-A22B"), QStringLiteral("Qwen/Qwen3-235B-A22B"), 470 * GB,
         tr("235B total, 22B active; bf16")},
        {QStringLiteral("Qwen3-30B-A3B"), QStringLiteral("Qwen/Qwen3-30B-A3B"), 61 * GB,
         tr("30B total, 3B active; bf16")},
        // GLM: sizes by arithmetic from the configs (two bytes a parameter, the MTP layer
        // included), not read off the hub.
        {QStringLiteral("GLM-4.7"), QStringLiteral("zai-org/GLM-4.7"), 714 * GB,
         tr("355B total, 32B active; bf16; reasons before it answers")},
        {QStringLiteral("GLM-5.1"), QStringLiteral("zai-org/GLM-5.1"), 1508 * GB,
         tr("744B total, 40B active; bf16; sparse attention; reasons before it answers")},
        {QStringLiteral("GLM-4.5-Air"), QStringLiteral("zai-org/GLM-4.5-Air"), 218 * GB,
         tr("106B total, 12B active; bf16; reasons before it answers")},
        // DeepSeek V4 Flash: FP4 experts (half a byte a weight and an E8M0 scale per 32: 147 GB
        // for 43 layers of 256), the FP8 trunk, the BF16 embedding and head and the MTP block;
        // 159.6 GB by this arithmetic with the MTP block; a public planner test quotes 160 GB for the repository.
        {QStringLiteral("DeepSeek-V4-Flash"), QStringLiteral("deepseek-ai/DeepSeek-V4-Flash"), 160 * GB,
         tr("284B total, 13B active; FP4 experts, FP8 trunk")},
        {QStringLiteral("gpt-oss-120b"), QStringLiteral("openai/gpt-oss-120b"), 65 * GB,
         tr("117B total, 5B active; MXFP4 experts")},
        {QStringLiteral("gpt-oss-20b"), QStringLiteral("openai/gpt-oss-20b"), 14 * GB,
         tr("21B total, 3.6B active; MXFP4 experts")},
    };
}

QString sizeText(qint64 bytes)
{
    const double gb = double(bytes) / double(GB);
    if (gb >= 1000) {
        const double tb = gb / 1000;
        return tr("about %1 TB").arg(tb >= 10 ? QString::number(std::round(tb)) : QString::number(tb, 'f', 1));
    }
    // Two significant figures: "about 98 GB", "about 690 GB", "about 14 GB".
    const double step = gb >= 100 ? 10 : 1;
    return tr("about %1 GB").arg(QString::number(std::round(gb / step) * step, 'f', 0));
}

QVariantList asVariants()
{
    QVariantList out;
    for (const Preset &p : all())
        out << QVariantMap{{QStringLiteral("name"), p.name},
                           {QStringLiteral("repo"), p.repo},
                           {QStringLiteral("approxBytes"), p.approxBytes},
                           {QStringLiteral("sizeText"), sizeText(p.approxBytes)},
                           {QStringLiteral("label"), p.name + QStringLiteral(" · ") + sizeText(p.approxBytes)},
                           {QStringLiteral("note"), p.note},
                           {QStringLiteral("featured"), p.featured}};
    return out;
}

} // namespace ReleasePresets
