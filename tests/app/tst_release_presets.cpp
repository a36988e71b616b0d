// The releases the Models page offers (download/releasepresets): each names a repository,
// a size written the way the hub lists it, and a note; each size agrees with the release's
// config.json (tests/fixtures/release-configs) by arithmetic: a bf16 release weighs two bytes
// a parameter; a release whose experts are quantized weighs at least the container of its own
// expert records (those bytes are the release's) and less than 1.6 times it (the release's
// trunk is bf16 or FP8 where the container's is 4-bit). And every offered release is one the
// engine plans: its config is of a supported architecture.
#include "download/hubendpoint.h"
#include "download/releasepresets.h"

#include <waste/release_plan.hpp>

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

namespace {

struct Release {
    const char *config; // under tests/fixtures/release-configs
    bool bf16;          // no quantized experts: two bytes a parameter
};

// Presets whose architecture and sizes share a config there (R1 and V3.1 are V3's shape).
const QHash<QString, Release> &releases()
{
    static const QHash<QString, Release> r{
        {QStringLiteral("moonshotai/Kimi-Linear-48B-A3B-Instruct"), {"kimi-linear-48b.json", true}},
        {QStringLiteral("moonshotai/Kimi-K3"), {"kimi-k3.json", false}},
        {QStringLiteral("moonshotai/Kimi-K2-Instruct"), {"kimi-k2.json", false}},
        {QStringLiteral("deepseek-ai/DeepSeek-V3.1"), {"deepseek-v3.json", false}},
        {QStringLiteral("deepseek-ai/DeepSeek-R1-0528"), {"deepseek-v3.json", false}},
        {QStringLiteral("Qwen/Qwen3.5-397B-A17B"), {"qwen3.5-397b-a17b.json", true}},
        {QStringLiteral("Qwen/Qwen3.5-122B-A10B"), {"qwen3.5-122b-a10b.json", true}},
        {QStringLiteral("Qwen/Qwen3-235B-A22B"), {"qwen3-235b-a22b.json", true}},
        {QStringLiteral("Qwen/Qwen3-30B-A3B"), {"qwen3-30b-a3b.json", true}},
        {QStringLiteral("zai-org/GLM-4.7"), {"glm-4.7.json", true}},
        {QStringLiteral("zai-org/GLM-5.1"), {"glm-5.json", true}}, // GLM-5's geometry
        {QStringLiteral("deepseek-ai/DeepSeek-V3.2"), {"deepseek-v3.2.json", false}},
        {QStringLiteral("zai-org/GLM-4.5-Air"), {"glm-4.5-air.json", true}},
        {QStringLiteral("deepseek-ai/DeepSeek-V4-Flash"), {"deepseek-v4-flash.json", false}},
        {QStringLiteral("openai/gpt-oss-120b"), {"gpt-oss-120b.json", false}},
        {QStringLiteral("openai/gpt-oss-20b"), {"gpt-oss-20b.json", false}},
    };
    return r;
}

std::string readConfig(const char *name)
{
    QFile f(QStringLiteral(WASTE_FIXTURES_DIR "/release-configs/") + QLatin1String(name));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll().toStdString();
}

} // namespace

class TestReleasePresets : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sizeTextReadsLikeTheHub()
    {
        constexpr qint64 GB = 1000LL * 1000 * 1000;
        QCOMPARE(ReleasePresets::sizeText(98 * GB), QStringLiteral("about 98 GB"));
        QCOMPARE(ReleasePresets::sizeText(14 * GB), QStringLiteral("about 14 GB"));
        QCOMPARE(ReleasePresets::sizeText(689 * GB), QStringLiteral("about 690 GB"));
        QCOMPARE(ReleasePresets::sizeText(1030 * GB), QStringLiteral("about 1.0 TB"));
        QCOMPARE(ReleasePresets::sizeText(1500 * GB), QStringLiteral("about 1.5 TB"));
    }

    void everyPresetIsComplete()
    {
        const QList<ReleasePresets::Preset> all = ReleasePresets::all();
        QVERIFY(all.size() >= 10);
        QSet<QString> names, objectNames, repos;
        for (const ReleasePresets::Preset &p : all) {
            QVERIFY2(HubEndpoint::normalizeRepo(p.repo) == p.repo, qPrintable(p.repo));
            QVERIFY2(!p.note.isEmpty() && p.approxBytes > 0, qPrintable(p.name));
            names << p.name;
            repos << p.repo;
            // The Models page names each button after the preset's letters and digits.
            objectNames << QString(p.name).remove(QRegularExpression(QStringLiteral("[^A-Za-z0-9]")));
        }
        QCOMPARE(names.size(), all.size());
        QCOMPARE(repos.size(), all.size());
        QCOMPARE(objectNames.size(), all.size());
        const QVariantList variants = ReleasePresets::asVariants();
        QCOMPARE(variants.size(), all.size());
        QCOMPARE(variants.first().toMap().value(QStringLiteral("sizeText")).toString(),
                 ReleasePresets::sizeText(all.first().approxBytes));
    }

    void sizesAgreeWithTheReleaseConfigs()
    {
        int checked = 0;
        for (const ReleasePresets::Preset &p : ReleasePresets::all()) {
            const auto it = releases().find(p.repo);
            if (it == releases().end())
                continue; // no config fixture of this one (K2-Thinking's INT4 layout)
            const std::string config = readConfig(it->config);
            QVERIFY2(!config.empty(), it->config);
            const waste::ReleasePlan plan = waste::planRelease(config);
            const double bytes = double(p.approxBytes);
            if (it->bf16) {
                const double expected = 2.0 * double(plan.total_params);
                QVERIFY2(bytes > 0.95 * expected && bytes < 1.05 * expected,
                         qPrintable(QStringLiteral("%1: %2 bytes offered, %3 params in bf16").arg(p.name).arg(bytes).arg(expected)));
            } else {
                QVERIFY2(plan.has_native, qPrintable(p.name));
                const double container = double(plan.native.container_bytes);
                QVERIFY2(bytes >= container && bytes < 1.6 * container,
                         qPrintable(QStringLiteral("%1: %2 bytes offered, the native container takes %3")
                                        .arg(p.name).arg(bytes).arg(container)));
            }
            ++checked;
        }
        QCOMPARE(checked, releases().size());
    }
};

QTEST_GUILESS_MAIN(TestReleasePresets)
#include "tst_release_presets.moc"
