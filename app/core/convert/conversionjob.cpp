#include "convert/conversionjob.h"

#include "threads/threadpriority.h"

#include <waste/convert.hpp>
#include <waste/waste.hpp>

#include <QDir>
#include <QFileInfo>
#include <QPointer>
#include <QVariantMap>
#include <QtConcurrent/QtConcurrentRun>

#include <chrono>

struct ConversionJob::Snapshot {
    double progress = 0, eta = -1, rate = 0;
    int layer = -1, unit = 0;
    QString phase, tensor;
    bool resumed = false;
};

namespace {

QString phaseText(waste::ConvertProgress::Phase p)
{
    using P = waste::ConvertProgress::Phase;
    switch (p) {
    case P::Planning: return QStringLiteral("planning");
    case P::Trunk: return QStringLiteral("trunk");
    case P::Codebooks: return QStringLiteral("codebooks");
    case P::Experts: return QStringLiteral("experts");
    case P::Finishing: return QStringLiteral("finishing");
    case P::Done: return QStringLiteral("done");
    }
    return {};
}

waste::ExpertEncoding encodingOf(const QString &key)
{
    for (auto e : {waste::ExpertEncoding::Native, waste::ExpertEncoding::VQ3R, waste::ExpertEncoding::Q4})
        if (key == QLatin1String(waste::expertEncodingName(e))) return e;
    return waste::ExpertEncoding::Auto;
}

waste::ConvertOptions optionsOf(int trunkBits, bool reclaim, int jobs, const QString &experts)
{
    waste::ConvertOptions o;
    o.trunkBits = trunkBits;
    o.reclaim = reclaim;
    o.jobs = jobs;
    o.experts = encodingOf(experts);
    return o;
}

QVariantMap optionMap(const waste::ExpertOption &o)
{
    QVariantMap m;
    m[QStringLiteral("key")] = QString::fromLatin1(waste::expertEncodingName(o.encoding));
    m[QStringLiteral("format")] = QString::fromStdString(o.expertFormat);
    m[QStringLiteral("available")] = o.available;
    m[QStringLiteral("isDefault")] = o.isDefault;
    m[QStringLiteral("discouraged")] = o.discouraged;
    m[QStringLiteral("exact")] = o.exact;
    m[QStringLiteral("recordBytes")] = qint64(o.recordBytes);
    m[QStringLiteral("outputBytes")] = qint64(o.outputBytes);
    m[QStringLiteral("bytesPerToken")] = qint64(o.bytesPerToken);
    m[QStringLiteral("topK")] = o.topK;
    m[QStringLiteral("weightError")] = o.weightError;
    m[QStringLiteral("quality")] = QString::fromStdString(o.quality);
    m[QStringLiteral("advice")] = QString::fromStdString(o.advice);
    m[QStringLiteral("estimatedSeconds")] = o.estimatedSeconds;
    return m;
}

} // namespace

ConversionJob::ConversionJob(QObject *parent) : QObject(parent) {}

ConversionJob::~ConversionJob()
{
    m_cancel->store(true);
    m_future.waitForFinished(); // the worker touches only shared state and queued calls
}

void ConversionJob::setSourceDir(const QString &v)
{
    if (v == m_source) return;
    m_source = v;
    m_planned = false;
    m_expertOptions.clear(); // another release: its own choices, its own default
    m_encoding.clear();
    Q_EMIT settingsChanged();
    Q_EMIT planChanged();
}

void ConversionJob::setOutputDir(const QString &v)
{
    if (v == m_output) return;
    m_output = v;
    m_planned = false;
    Q_EMIT settingsChanged();
    Q_EMIT planChanged();
}

void ConversionJob::setTrunkBits(int v)
{
    if (v == m_trunkBits || (v != 4 && v != 8)) return;
    m_trunkBits = v;
    m_planned = false;
    Q_EMIT settingsChanged();
    Q_EMIT planChanged();
}

void ConversionJob::setExpertEncoding(const QString &v)
{
    const QString key = encodingOf(v) == waste::ExpertEncoding::Auto ? QString() : v;
    if (key == m_encoding) return;
    m_encoding = key;
    const bool replan = m_planned;
    m_planned = false;
    Q_EMIT settingsChanged();
    Q_EMIT planChanged();
    // A choice among the options already shown: the sizes below follow it at once.
    if (replan) plan();
}

QString ConversionJob::chosenExperts() const
{
    if (!m_encoding.isEmpty()) return m_encoding;
    for (const QVariant &v : m_expertOptions) {
        const QVariantMap m = v.toMap();
        if (m.value(QStringLiteral("isDefault")).toBool()) return m.value(QStringLiteral("key")).toString();
    }
    return {};
}

void ConversionJob::setReclaim(bool v)
{
    if (v == m_reclaim) return;
    m_reclaim = v;
    Q_EMIT settingsChanged();
}

void ConversionJob::setJobs(int v)
{
    if (v == m_jobs || v < 0) return;
    m_jobs = v;
    Q_EMIT settingsChanged();
}

QString ConversionJob::suggestOutput(const QString &source) const
{
    QString s = QDir::cleanPath(source);
    if (s.isEmpty()) return {};
    return s + QStringLiteral(".waste");
}

void ConversionJob::setState(State s, const QString &error)
{
    m_state = s;
    m_error = error;
    Q_EMIT stateChanged();
}

void ConversionJob::prepare(const QString &source)
{
    if (busy()) return;
    setSourceDir(QDir::cleanPath(source));
    setOutputDir(suggestOutput(source));
    applySnapshot(Snapshot{});
    setState(Idle);
    plan();
}

void ConversionJob::plan()
{
    if (busy()) return;
    setState(Planning);
    const std::string src = m_source.toStdString(), out = m_output.toStdString();
    const waste::ConvertOptions o = optionsOf(m_trunkBits, m_reclaim, m_jobs, m_encoding);
    QPointer<ConversionJob> self(this);
    const QString ratesKey = m_source + QLatin1Char('\n') + m_output + QLatin1Char('\n') + QString::number(o.jobs);
    const std::shared_ptr<const waste::ConvertRates> known = ratesKey == m_ratesKey ? m_rates : nullptr;
    m_future = QtConcurrent::run([self, src, out, o, known, ratesKey] {
        waste::ConvertPlan p;
        QVariantList options;
        waste::ConvertRates rates;
        QString error;
        try {
            p = waste::planConversion(src, out, o);
            if (p.moeLayers > 0) {
                rates = known ? *known : waste::measureConvertRates(src, o.jobs, out);
                for (const waste::ExpertOption &x : waste::expertOptions(src, o, &rates))
                    options << optionMap(x);
            }
        } catch (const std::exception &e) {
            error = QString::fromStdString(e.what());
        }
        if (!self) return;
        QMetaObject::invokeMethod(self.data(), [self, p, options, rates, error, ratesKey] {
            if (!self) return;
            if (!error.isEmpty()) {
                self->m_planned = false;
                Q_EMIT self->planChanged();
                self->setState(Failed, error);
                return;
            }
            self->m_planned = true;
            self->m_arch = QString::fromStdString(p.arch);
            self->m_layers = p.layers;
            self->m_moeLayers = p.moeLayers;
            self->m_experts = p.experts;
            self->m_sourceBytes = p.sourceBytes;
            self->m_outputBytes = p.outputBytes;
            self->m_remainingBytes = p.remainingOutputBytes;
            self->m_freeBytes = p.freeBytes;
            self->m_unitsDone = p.unitsDone;
            self->m_unitsTotal = p.unitsTotal;
            self->m_alreadyComplete = p.alreadyComplete;
            self->m_expertFormat = QString::fromStdString(p.expertFormat);
            self->m_recordBytes = p.recordBytes;
            self->m_expertOptions = options;
            if (p.moeLayers > 0) {
                self->m_rates = std::make_shared<const waste::ConvertRates>(rates);
                self->m_ratesKey = ratesKey;
            }
            self->m_diskRate = rates.diskReadBytesPerSecond;
            self->m_diskWriteRate = rates.diskWriteBytesPerSecond;
            self->m_diskDirect = rates.diskDirect;
            self->m_encodeJobs = rates.jobs;
            Q_EMIT self->planChanged();
            self->setState(p.alreadyComplete ? Finished : Ready);
        }, Qt::QueuedConnection);
    });
}

void ConversionJob::applySnapshot(const Snapshot &s)
{
    m_progress = s.progress;
    m_eta = s.eta;
    m_rate = s.rate;
    m_layer = s.layer;
    m_unit = s.unit;
    m_phase = s.phase;
    m_tensor = s.tensor;
    m_resumed = s.resumed;
    Q_EMIT progressChanged();
}

void ConversionJob::start()
{
    if (busy()) return;
    m_cancel->store(false);
    setState(Running);
    applySnapshot(Snapshot{});
    const std::string src = m_source.toStdString(), out = m_output.toStdString();
    const waste::ConvertOptions o = optionsOf(m_trunkBits, m_reclaim, m_jobs, m_encoding);
    QPointer<ConversionJob> self(this);
    auto cancel = m_cancel;
    m_future = QtConcurrent::run([self, src, out, o, cancel] {
        // The converter's workers are started from here and inherit the lowered priority.
        setCurrentThreadRole(ThreadRole::Background);
        // Progress reaches the GUI thread at most every 50 ms (and on every phase change).
        auto last = std::chrono::steady_clock::time_point{};
        waste::ConvertProgress::Phase lastPhase = waste::ConvertProgress::Phase::Planning;
        const auto progress = [&](const waste::ConvertProgress &p) {
            const auto now = std::chrono::steady_clock::now();
            if (p.phase == lastPhase && now - last < std::chrono::milliseconds(50)) return;
            last = now;
            lastPhase = p.phase;
            Snapshot s;
            s.progress = p.sourceBytesTotal > 0 ? double(p.sourceBytesDone) / double(p.sourceBytesTotal) : 0.0;
            if (p.phase == waste::ConvertProgress::Phase::Done) s.progress = 1.0;
            s.eta = p.etaSeconds;
            s.rate = p.elapsedSeconds > 0 ? double(p.sourceBytesDone) / p.elapsedSeconds : 0.0;
            s.layer = p.layer;
            s.unit = p.unit;
            s.phase = phaseText(p.phase);
            s.tensor = QString::fromStdString(p.tensor);
            s.resumed = p.resumed;
            QMetaObject::invokeMethod(self.data(), [self, s] {
                if (self) self->applySnapshot(s);
            }, Qt::QueuedConnection);
        };
        State end = Finished;
        QString error;
        try {
            waste::convertModel(src, out, o, progress, cancel.get());
        } catch (const waste::Error &e) {
            end = e.code() == waste::ErrorCode::Cancelled ? Cancelled : Failed;
            error = QString::fromStdString(e.what());
        } catch (const std::exception &e) {
            end = Failed;
            error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(self.data(), [self, end, error] {
            if (!self) return;
            if (end == Finished) {
                // What plan() said about an interrupted run is history now: every part is
                // done and nothing is left to write (no stale "Start resumes it").
                self->m_unitsDone = self->m_unitsTotal;
                self->m_remainingBytes = 0;
                Q_EMIT self->planChanged();
                Snapshot s;
                s.progress = 1.0;
                s.phase = QStringLiteral("done");
                s.eta = 0;
                s.layer = self->m_layer;
                s.unit = self->m_unit;
                s.rate = self->m_rate;
                s.resumed = self->m_resumed;
                self->applySnapshot(s);
            }
            self->setState(end, error);
            Q_EMIT self->finished(end == Finished);
        }, Qt::QueuedConnection);
    });
}

void ConversionJob::cancel()
{
    if (m_state != Running) return;
    m_cancel->store(true);
    setState(Cancelling);
}
