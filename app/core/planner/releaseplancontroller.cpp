#include "planner/releaseplancontroller.h"

#include "planner/folderdisk.h"

#include "download/hubendpoint.h"
#include "download/hubrequest.h"
#include "library/modellibrary.h"
#include "planner/engineplansource.h"
#include "settings/appsettings.h"
#include "units/units.h"

#include <waste/release_plan.hpp>

#include <QDir>
#include <QMutex>
#include <QNetworkReply>
#include <QStorageInfo>
#include <QtConcurrent/QtConcurrentRun>

namespace {

constexpr qint64 GiB = qint64(1) << 30;
const qint64 kMachineSizes[] = {16 * GiB, 32 * GiB, 64 * GiB, 128 * GiB, 256 * GiB};

double tokensPerSecond(const waste::ReleaseLayout &l, int64_t budget, const FolderDisk &disk)
{
    if (disk.gbPerSecond <= 0)
        return 0;
    const waste::Forecast fc =
        waste::forecastBudgets(l.plan, {budget}, forecastInputsOf(l, disk));
    return fc.budgets.empty() ? 0 : fc.budgets.front().tok_per_s;
}

QString speed(double tps)
{
    return tps >= 10 ? QString::number(tps, 'f', 0)
           : tps >= 0.1 ? QString::number(tps, 'f', tps >= 1 ? 1 : 2)
                        : QString::number(tps, 'g', 2); // 0.0017, not 0.00
}

} // namespace

ReleasePlanController::ReleasePlanController(QObject *parent) : QObject(parent)
{
    m_chartSource = std::make_shared<ReleasePlanSource>();
    m_chart = new PlannerController(m_chartSource, this);
    m_typing.setSingleShot(true);
    m_typing.setInterval(600);
    connect(&m_typing, &QTimer::timeout, this, &ReleasePlanController::fetch);
    connect(&m_watcher, &QFutureWatcher<Figures>::finished, this, [this] {
        const Figures f = m_watcher.result();
        if (!f.error.isEmpty() && m_state == Planning) {
            m_error = f.error;
            m_state = Failed;
        } else if (m_state == Planning) {
            m_fits = f.fits;
            m_headline = headlineFor(f);
            m_details = detailsFor(f);
            m_layouts.clear();
            m_layoutCells.clear();
            for (const LayoutFigures &l : f.layouts) {
                // The table's cells row by row, as shown: the format, then five sizes.
                const QStringList cells{l.format, Units::bytes(l.containerBytes), Units::bytes(l.recordBytes),
                                        Units::bytes(l.bytesPerToken), Units::bytes(l.floor), Units::bytes(l.defaultBudget)};
                for (int i = 0; i < cells.size(); ++i)
                    m_layoutCells << QVariantMap{{QStringLiteral("text"), cells[i]},
                                                 {QStringLiteral("name"), QStringLiteral("releaseLayout_%1_%2").arg(l.format).arg(i)},
                                                 {QStringLiteral("first"), i == 0}};
                m_layouts << QVariantMap{{QStringLiteral("format"), l.format},
                                         {QStringLiteral("containerBytes"), l.containerBytes},
                                         {QStringLiteral("recordBytes"), l.recordBytes},
                                         {QStringLiteral("bytesPerToken"), l.bytesPerToken},
                                         {QStringLiteral("floor"), l.floor},
                                         {QStringLiteral("defaultBudget"), l.defaultBudget},
                                         {QStringLiteral("tokPerS"), l.tokPerS}};
            }
            m_state = Ready;
            // The chart, where there is something to draw: a floor this machine holds and a
            // speed (the disk measured). Its planner re-plans the same config the same way.
            m_chartShown = f.floor <= f.usable && f.tokPerS > 0;
            if (m_chartShown) {
                const AppSettings *settings = AppSettings::instance();
                m_chartSource->setRelease(m_config, m_machineRam, settings ? settings->modelsFolder() : QString(),
                                          settings ? settings->dataFolder() : QString());
                const QString key = QStringLiteral("release:%1@%2").arg(m_repo).arg(m_machineRam);
                if (m_chart->container() == key)
                    m_chart->refresh(); // the same release planned again (a new context, say)
                else
                    m_chart->setContainer(key);
            }
        } else {
            m_chartShown = false;
        }
        Q_EMIT planChanged();
        if (m_again) {
            m_again = false;
            planConfig(m_config);
        }
    });
}

ReleasePlanController::~ReleasePlanController()
{
    if (m_reply)
        m_reply->abort();
    m_watcher.waitForFinished();
}

QVariantList ReleasePlanController::machines() const
{
    QVariantList out{QVariantMap{{QStringLiteral("label"), tr("This machine")}, {QStringLiteral("bytes"), qint64(0)}}};
    for (qint64 b : kMachineSizes)
        if (b <= 128 * GiB)
            out << QVariantMap{{QStringLiteral("label"), Units::bytes(b)}, {QStringLiteral("bytes"), b}};
    return out;
}

QString ReleasePlanController::widestMachineLabel() const
{
    QString widest;
    for (const QVariant &m : machines()) {
        const QString label = m.toMap().value(QStringLiteral("label")).toString();
        if (label.size() > widest.size())
            widest = label;
    }
    return widest;
}

void ReleasePlanController::setState(State s)
{
    m_state = s;
    Q_EMIT planChanged();
}

void ReleasePlanController::setRepo(const QString &repo)
{
    const QString id = HubEndpoint::normalizeRepo(repo);
    if (id == m_repo)
        return;
    m_repo = id;
    m_config.clear();
    m_again = false;
    // What the card said is about the repository before: it now says this one is read (once
    // the typing pauses), and a reply or plan for the old one still on its way is dropped.
    if (QNetworkReply *old = m_reply.data()) {
        m_reply = nullptr;
        old->abort();
    }
    m_error.clear();
    Q_EMIT repoChanged();
    setState(m_repo.isEmpty() ? Idle : Fetching);
    m_typing.start();
}

void ReleasePlanController::setEndpoint(const QString &endpoint)
{
    if (endpoint == m_endpoint)
        return;
    m_endpoint = endpoint;
    Q_EMIT repoChanged();
    if (!m_repo.isEmpty())
        m_typing.start();
}

void ReleasePlanController::setSourceBytes(qint64 bytes)
{
    if (bytes == m_sourceBytes)
        return;
    m_sourceBytes = bytes;
    if (!m_config.isEmpty())
        planConfig(m_config);
}

void ReleasePlanController::setMachineRam(qint64 bytes)
{
    if (bytes == m_machineRam)
        return;
    m_machineRam = bytes;
    if (!m_config.isEmpty())
        planConfig(m_config);
    else
        Q_EMIT planChanged();
}

void ReleasePlanController::fetch()
{
    if (m_reply)
        m_reply->abort();
    m_error.clear();
    if (m_repo.isEmpty()) {
        setState(Idle);
        return;
    }
    try {
        const HubEndpoint endpoint(HubEndpoint::resolve(m_endpoint), HubEndpoint::resolveToken({}));
        m_reply = m_network.get(hubrequest::make(endpoint.fileUrl(m_repo, QStringLiteral("main"), QStringLiteral("config.json")), endpoint));
        QNetworkReply *r = m_reply;
        connect(r, &QNetworkReply::finished, this, [this, r] { onFetched(r, 0); });
        setState(Fetching);
    } catch (const std::exception &e) {
        m_error = QString::fromUtf8(e.what());
        setState(Failed);
    }
}

void ReleasePlanController::onFetched(QNetworkReply *reply, int redirects)
{
    reply->deleteLater();
    if (reply != m_reply)
        return; // an older repository's answer
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status >= 300 && status < 400 && redirects < 5) {
        QString why;
        const QUrl next = hubrequest::redirectTarget(reply, &why);
        if (next.isEmpty()) {
            m_error = why;
            setState(Failed);
            return;
        }
        const HubEndpoint endpoint(HubEndpoint::resolve(m_endpoint), HubEndpoint::resolveToken({}));
        m_reply = m_network.get(hubrequest::make(next, endpoint));
        QNetworkReply *r = m_reply;
        connect(r, &QNetworkReply::finished, this, [this, r, redirects] { onFetched(r, redirects + 1); });
        return;
    }
    if (reply->error() != QNetworkReply::NoError || status != 200) {
        m_error = status == 404 ? tr("%1 has no config.json on the hub, so it cannot be planned before the download.").arg(m_repo)
                                : tr("Could not read %1's config.json: %2").arg(m_repo, hubrequest::describeError(reply));
        setState(Failed);
        return;
    }
    planConfig(reply->readAll());
}

void ReleasePlanController::planConfig(const QByteArray &configJson)
{
    m_config = configJson;
    if (m_watcher.isRunning()) {
        m_again = true;
        return;
    }
    m_error.clear();
    setState(Planning);
    AppSettings *s = AppSettings::instance();
    const QString models = s ? s->modelsFolder() : QString();
    const QString data = s ? s->dataFolder() : QString();
    const int ctx = s ? s->contextTokens() : 4096;
    m_watcher.setFuture(QtConcurrent::run([config = m_config.toStdString(), ram = m_machineRam,
                                           source = m_sourceBytes, models, data, ctx]() -> Figures {
        Figures f;
        try {
            const waste::ComputeCalibration cal =
                waste::cachedCalibration(QDir::toNativeSeparators(EnginePlanSource::calibrationFile()).toStdString());
            waste::ReleasePlanOptions o;
            o.ctx = ctx;
            o.ramBytes = ram;
            o.calibration = &cal;
            const waste::ReleasePlan rp = waste::planRelease(config, o);
            f.decodeScaleFallback = QString::fromStdString(cal.decodeScaleError);
            // The container a person gets from `convert` as it comes: the plan is of that one.
            const waste::ReleaseLayout &made = rp.convertDefault();
            const waste::MemoryPlan &p = made.plan;
            const FolderDisk disk = measureModelsFolderDisk(models, data);
            f.onThisMachine = ram <= 0;
            f.floor = p.floor_bytes;
            f.defaultBudget = waste::resolveBudget(p, 0).budget_bytes;
            f.cliff = p.cliff_bytes;
            f.usable = p.usable_ram_bytes;
            f.physical = p.physical_ram_bytes;
            f.tokPerS = tokensPerSecond(made, f.defaultBudget, disk);
            f.diskNeeded = made.container_bytes + source;
            QString folder = models;
            while (!folder.isEmpty() && !QDir(folder).exists())
                folder = QFileInfo(folder).absolutePath() == folder ? QString() : QFileInfo(folder).absolutePath();
            if (f.onThisMachine && !folder.isEmpty())
                f.diskFree = QStorageInfo(folder).bytesAvailable();
            f.fits = f.floor <= f.usable && (f.diskFree < 0 || f.diskNeeded <= f.diskFree);
            for (const waste::ReleaseLayout *l : {&rp.vq, &rp.native}) {
                if (l == &rp.native && !rp.has_native)
                    break;
                LayoutFigures lf;
                lf.format = QString::fromStdString(l->expert_format);
                lf.containerBytes = l->container_bytes;
                lf.recordBytes = l->record_bytes;
                lf.bytesPerToken = l->plan.working_set_bytes;
                lf.floor = l->plan.floor_bytes;
                lf.defaultBudget = waste::resolveBudget(l->plan, 0).budget_bytes;
                lf.tokPerS = tokensPerSecond(*l, lf.defaultBudget, disk);
                f.layouts << lf;
            }
            f.madeFormat = QString::fromStdString(made.expert_format);
            if (rp.has_native) { // the other choice convert offers: VQ3R records
                f.otherFormat = QString::fromStdString(rp.vq.expert_format);
                f.otherFloor = rp.vq.plan.floor_bytes;
                f.otherContainer = rp.vq.container_bytes;
            }
            // The smallest machine up that is worth naming: where the release first fits, or
            // where the larger default at least doubles the speed. A size that gains a few
            // percent (the disk bounds a release far larger than the RAM) is not advice.
            for (qint64 b : kMachineSizes) {
                if (b <= p.physical_ram_bytes + GiB)
                    continue;
                waste::ReleasePlanOptions up = o;
                up.ramBytes = b;
                const waste::ReleasePlan big = waste::planRelease(config, up);
                const qint64 bigDefault = waste::resolveBudget(big.convertDefault().plan, 0).budget_bytes;
                const double bigTokPerS = tokensPerSecond(big.convertDefault(), bigDefault, disk);
                const bool firstFits = f.floor > f.usable && big.convertDefault().plan.floor_bytes <= big.convertDefault().plan.usable_ram_bytes;
                f.largestRam = b;
                f.largestTokPerS = bigTokPerS;
                if (firstFits || (f.tokPerS > 0 && bigTokPerS >= 2 * f.tokPerS) || (f.tokPerS <= 0 && disk.gbPerSecond <= 0)) {
                    f.largerRam = b;
                    f.largerDefault = bigDefault;
                    f.largerTokPerS = bigTokPerS;
                    break;
                }
            }
        } catch (const std::exception &e) {
            f.error = QString::fromUtf8(e.what());
        }
        return f;
    }));
}

QString ReleasePlanController::headlineFor(const Figures &f)
{
    const QString where = f.onThisMachine ? tr("On this machine") : tr("On a %1 machine").arg(Units::bytes(f.physical));
    if (!f.fits) {
        QStringList needs;
        if (f.floor > f.usable)
            needs << tr("%1 of RAM (its floor; %2 here)").arg(Units::bytes(f.floor), Units::bytes(f.usable));
        if (f.diskFree >= 0 && f.diskNeeded > f.diskFree)
            needs << tr("%1 of disk (%2 free)").arg(Units::bytes(f.diskNeeded), Units::bytes(f.diskFree));
        return tr("%1 it will not fit: needs %2.").arg(where, needs.join(tr(" and ")));
    }
    const QString base = tr("%1: floor %2, default %3").arg(where, Units::bytes(f.floor), Units::bytes(f.defaultBudget));
    if (f.tokPerS > 0)
        return tr("%1, about %2 tok/s from this disk.").arg(base, speed(f.tokPerS));
    return tr("%1; speed not known until a model is on this disk to measure.").arg(base);
}

QString ReleasePlanController::detailsFor(const Figures &f)
{
    QStringList parts;
    if (f.floor > f.cliff)
        parts << tr("Even the floor is past the paging cliff (%1): it would open but the OS would page it, "
                    "about 8× slower.").arg(Units::bytes(f.cliff));
    else
        parts << tr("The paging cliff lies at %1: budgets past it run about 8× slower.").arg(Units::bytes(f.cliff));
    if (f.diskNeeded > 0)
        parts << tr("Needs %1 of disk for the download and the container (%2 experts, as Convert makes it).")
                     .arg(Units::bytes(f.diskNeeded), f.madeFormat);
    if (!f.otherFormat.isEmpty())
        parts << tr("Converted with %1 experts instead, the container takes %2 and the floor is %3.")
                     .arg(f.otherFormat, Units::bytes(f.otherContainer), Units::bytes(f.otherFloor));
    if (f.largerRam > 0) {
        QString more = tr("With %1 of RAM: default %2").arg(Units::bytes(f.largerRam), Units::bytes(f.largerDefault));
        if (f.largerTokPerS > 0)
            more += tr(", about %1 tok/s").arg(speed(f.largerTokPerS));
        parts << more + QLatin1Char('.');
    } else if (f.fits && f.tokPerS > 0 && f.largestRam > 0) {
        parts << tr("More RAM would not make it much faster from this disk: with %1, about %2 tok/s.")
                     .arg(Units::bytes(f.largestRam), speed(f.largestTokPerS));
    }
    if (!f.decodeScaleFallback.isEmpty() && (f.tokPerS > 0 || f.largerTokPerS > 0))
        parts << tr("The decode was not measured on this machine (%1), so these speeds count the kernels alone and "
                    "are likely too high; press Measure compute on the Planner page.")
                     .arg(f.decodeScaleFallback);
    return parts.join(QLatin1Char(' '));
}
