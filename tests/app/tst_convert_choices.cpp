// The Convert page offers the ways to store a release's experts side by side and the person
// chooses: native, VQ3R and q4 with the container's size, the record, the bytes a token reads,
// the quality (exact, or the error the converter's tests measure) and the time at this
// machine's measured speed. The default follows the release (native for an MXFP4 K3, VQ3R for
// a bf16 one); a poor choice (q4 of MXFP4 experts) is explained, not refused; choosing replans.
// Screenshots, light and dark, go to <build>/screenshots/convert-choices-*.png.
#include "studioapplication.h"

#include "convert/conversionjob.h"
#include "settings/appsettings.h"
#include "units/units.h"
#include "windowtest.h"

#include <waste/convert.hpp>

#include <QApplication>
#include <QDir>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTest>

namespace {

QVariantMap optionOf(const ConversionJob &job, const QString &key)
{
    for (const QVariant &v : job.expertOptions())
        if (v.toMap().value(QStringLiteral("key")).toString() == key) return v.toMap();
    return {};
}

qint64 num(const QVariantMap &m, const char *key) { return m.value(QLatin1String(key)).toLongLong(); }

// The engine's own plan of the release with this encoding (what `waste convert` would make).
waste::ConvertPlan enginePlan(const QString &src, waste::ExpertEncoding e)
{
    waste::ConvertOptions o;
    o.experts = e;
    return waste::planConversion(src.toStdString(), QDir::tempPath().toStdString() + "/convert-choices-none", o);
}

QQuickItem *item(QQuickWindow *window, const QString &name)
{
    const QList<QQuickItem *> found = WindowTest::itemsNamed(window->contentItem(), name);
    return found.isEmpty() ? nullptr : found.first();
}

} // namespace

class TestConvertChoices : public QObject {
    Q_OBJECT
    const QString m_base = QStringLiteral(WASTE_TEST_OUTPUT_DIR "/convert-choices");
    const QString m_k3 = m_base + QStringLiteral("/k3-mxfp4");
    const QString m_bf16 = m_base + QStringLiteral("/kimi-linear-bf16");

private Q_SLOTS:
    void initTestCase()
    {
        StudioApplication::configure();
        WindowTest::useOwnAppData(QStringLiteral("convert choices test"));
        WindowTest::collectWarnings();
        QDir(m_base).removeRecursively();
        waste::TinyModelOptions k3;
        k3.k3 = true; // MXFP4 routed experts, as K3 ships them
        waste::makeTinyHf(m_k3.toStdString(), k3);
        waste::makeTinyHf(m_bf16.toStdString(), {});
    }

    void anMxfp4ReleaseDefaultsToNativeAndExplainsQ4()
    {
        ConversionJob job;
        job.prepare(m_k3);
        QTRY_VERIFY_WITH_TIMEOUT(job.state() == ConversionJob::Ready, 60000);
        QCOMPARE(job.expertOptions().size(), 3);
        QCOMPARE(job.chosenExperts(), QStringLiteral("native"));
        QCOMPARE(job.expertFormat(), QStringLiteral("MXFP4"));
        QVERIFY(job.diskBytesPerSecond() > 0);
        QVERIFY(job.diskWriteBytesPerSecond() > 0); // measured where the container goes

        const QVariantMap native = optionOf(job, QStringLiteral("native")), vq = optionOf(job, QStringLiteral("vq3r")),
                          q4 = optionOf(job, QStringLiteral("q4"));
        QVERIFY(native.value("isDefault").toBool());
        QVERIFY(!vq.value("isDefault").toBool() && !q4.value("isDefault").toBool());
        QVERIFY(native.value("exact").toBool());
        QCOMPARE(native.value("quality").toString(), QStringLiteral("exact: the release's own bytes"));
        QCOMPARE(native.value("format").toString(), QStringLiteral("MXFP4"));
        QCOMPARE(vq.value("format").toString(), QStringLiteral("VQ3R"));
        QCOMPARE(q4.value("format").toString(), QStringLiteral("INT4G32"));

        // Sizes are the converter's own plan of each encoding; a token reads top-k records per MoE layer.
        const struct { QVariantMap m; waste::ExpertEncoding e; } rows[] = {
            {native, waste::ExpertEncoding::Native}, {vq, waste::ExpertEncoding::VQ3R}, {q4, waste::ExpertEncoding::Q4}};
        for (const auto &r : rows) {
            const waste::ConvertPlan p = enginePlan(m_k3, r.e);
            QCOMPARE(num(r.m, "recordBytes"), p.recordBytes);
            QCOMPARE(num(r.m, "outputBytes"), p.outputBytes);
            QCOMPARE(num(r.m, "topK"), 4);
            QCOMPARE(num(r.m, "bytesPerToken"), p.recordBytes * 4 * p.moeLayers);
            QVERIFY(r.m.value("estimatedSeconds").toDouble() > 0);
        }
        QVERIFY(num(vq, "recordBytes") < num(native, "recordBytes"));
        QVERIFY(num(native, "outputBytes") == job.outputBytes());

        // The re-encodings quote the error the converter's tests measure (tst_convert_k3: VQ3R of
        // MXFP4 experts; tst_native_experts: q4 of bf16 experts).
        QVERIFY2(vq.value("quality").toString().contains(QStringLiteral("21 % relative weight error")), qPrintable(vq.value("quality").toString()));
        QVERIFY(vq.value("weightError").toDouble() > 0.1);
        // VQ3R needs k-means: it takes longer than a repack of the same release.
        QVERIFY(vq.value("estimatedSeconds").toDouble() > native.value("estimatedSeconds").toDouble());

        // q4 of 4-bit experts: offered, but said plainly to be a loss for nothing.
        QVERIFY(q4.value("available").toBool());
        QVERIFY(q4.value("discouraged").toBool());
        QVERIFY2(q4.value("advice").toString().contains(QStringLiteral("already 4-bit (MXFP4)")), qPrintable(q4.value("advice").toString()));
        QVERIFY(q4.value("advice").toString().contains(QStringLiteral("Choose native")));

        // Choosing replans: the sizes below are q4's, from the rates already measured (the
        // disk is not read and written again for a choice among the options shown).
        const double readRate = job.diskBytesPerSecond(), writeRate = job.diskWriteBytesPerSecond();
        QSignalSpy replanned(&job, &ConversionJob::planChanged);
        job.setExpertEncoding(QStringLiteral("q4"));
        QTRY_VERIFY_WITH_TIMEOUT(job.planned() && job.state() == ConversionJob::Ready, 60000);
        QVERIFY(replanned.count() >= 2);
        QCOMPARE(job.chosenExperts(), QStringLiteral("q4"));
        QCOMPARE(job.expertFormat(), QStringLiteral("INT4G32"));
        QCOMPARE(job.outputBytes(), num(q4, "outputBytes"));
        QCOMPARE(job.expertOptions().size(), 3);
        QCOMPARE(job.diskBytesPerSecond(), readRate);
        QCOMPARE(job.diskWriteBytesPerSecond(), writeRate);
    }

    void aBf16ReleaseDefaultsToVq3rAndOffersExactBf16()
    {
        ConversionJob job;
        job.prepare(m_bf16);
        QTRY_VERIFY_WITH_TIMEOUT(job.state() == ConversionJob::Ready, 60000);
        QCOMPARE(job.chosenExperts(), QStringLiteral("vq3r"));
        QCOMPARE(job.expertFormat(), QStringLiteral("VQ3R"));
        const QVariantMap native = optionOf(job, QStringLiteral("native")), vq = optionOf(job, QStringLiteral("vq3r")),
                          q4 = optionOf(job, QStringLiteral("q4"));
        QVERIFY(vq.value("isDefault").toBool());
        QCOMPARE(native.value("format").toString(), QStringLiteral("BF16"));
        QVERIFY(native.value("exact").toBool());
        QVERIFY(!q4.value("discouraged").toBool());
        // BF16 > q4 > VQ3R per token, and the advice says what the big one costs.
        QVERIFY(num(native, "bytesPerToken") > num(q4, "bytesPerToken"));
        QVERIFY(num(q4, "bytesPerToken") > num(vq, "bytesPerToken"));
        QVERIFY(native.value("advice").toString().contains(QStringLiteral("largest container")));
        QVERIFY(vq.value("quality").toString().contains(QStringLiteral("bf16")));
    }

    void thePageShowsTheTradeOffAndTheChoice()
    {
        auto services = StudioApplication::createServices();
        QQmlApplicationEngine qml;
        QQuickWindow *window = WindowTest::showMainWindow(qml);
        QVERIFY(window);
        window->resize(1100, 1000);
        QMetaObject::invokeMethod(window, "convertModel", Q_ARG(QVariant, m_k3));
        auto *job = window->findChild<ConversionJob *>(QStringLiteral("conversionJob"));
        QVERIFY(job);
        QTRY_VERIFY_WITH_TIMEOUT(job->state() == ConversionJob::Ready && job->expertOptions().size() == 3, 60000);
        QTest::qWait(200);

        const QVariantMap native = optionOf(*job, QStringLiteral("native"));
        auto *figures = item(window, QStringLiteral("expertFigures_native"));
        QVERIFY(figures && figures->isVisible());
        const QString text = figures->property("text").toString();
        QVERIFY2(text.contains(Units::bytes(num(native, "outputBytes"))) && text.contains(Units::bytes(num(native, "recordBytes"))) &&
                     text.contains(Units::bytes(num(native, "bytesPerToken"))) && text.contains(QStringLiteral("to convert")),
                 qPrintable(text));
        QCOMPARE(item(window, QStringLiteral("expertQuality_native"))->property("text").toString(),
                 QStringLiteral("Quality: exact: the release's own bytes"));
        QVERIFY(item(window, QStringLiteral("expertChoice_native"))->property("checked").toBool());
        QVERIFY(item(window, QStringLiteral("expertChoice_native"))->property("text").toString().contains(QStringLiteral("default")));

        // The person picks q4: the page says why not, in the warning colour, and the plan follows.
        QQuickItem *q4 = item(window, QStringLiteral("expertChoice_q4"));
        QVERIFY(q4 && q4->isVisible() && q4->isEnabled());
        const QPointF centre = q4->mapToScene(QPointF(q4->width() / 2, q4->height() / 2));
        QVERIFY(QRectF(0, 0, window->width(), window->height()).contains(centre));
        QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, centre.toPoint());
        QTRY_COMPARE(job->expertEncoding(), QStringLiteral("q4"));
        QTRY_VERIFY_WITH_TIMEOUT(job->planned() && job->state() == ConversionJob::Ready, 60000);
        QCOMPARE(job->expertFormat(), QStringLiteral("INT4G32"));
        QTRY_VERIFY(item(window, QStringLiteral("expertChoice_q4"))->property("checked").toBool());
        QQuickItem *advice = item(window, QStringLiteral("expertAdvice_q4"));
        QVERIFY(advice->isVisible());
        QVERIFY(advice->property("text").toString().contains(QStringLiteral("Not advised")));
        // In the warning colour, unlike the plain advice of a sound choice.
        QVERIFY(advice->property("color").value<QColor>() != item(window, QStringLiteral("expertAdvice_native"))->property("color").value<QColor>());

        QString shotError;
        QVERIFY2(WindowTest::shootBothThemes(window, services->settings.get(), QStringLiteral("convert-choices-%1"), &shotError),
                 qPrintable(shotError));
        QVERIFY2(WindowTest::warnings().isEmpty(), qPrintable(WindowTest::warnings()));
    }
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    TestConvertChoices t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_convert_choices.moc"
